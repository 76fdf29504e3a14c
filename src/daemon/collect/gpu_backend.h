/*
 * gpu_backend.h - which GPU backend publishes GPU series
 * (--gpu_backend=auto|nvml|dcgm): exactly one of the NVML collector
 * (nvml.c) and the DCGM collector (dcgm.c), never both.
 *
 * The GPU monitor's options (--enable_gpu_monitor, --gpu_backend,
 * --gpu_collect_timeout_ms) are rows of the NVML collector, which comes
 * first in the table and states them here when it is applied; the DCGM
 * collector rides on its tick, reads them here, tries DCGM where the
 * backend allows it and says here whether DCGM is the one.  Loop thread
 * only.  Cost: a few words.
 */
#ifndef DYNO_COLLECT_GPU_BACKEND_H
#define DYNO_COLLECT_GPU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

/* the GPU monitor switched on (backend "auto", "nvml" or "dcgm") or off
 * (on false: also no DCGM) */
/* peaks_file: --gpu_peaks_file (NULL: the default places), which the
 * caller's configuration keeps alive */
void gpu_backend_configure(bool on, const char *backend, int64_t timeout_ms, int64_t interval_s,
			   const char *peaks_file);

bool gpu_backend_on(void);
const char *gpu_backend_wanted(void);
int64_t gpu_backend_timeout_ms(void);
int64_t gpu_backend_interval_s(void);
const char *gpu_backend_peaks_file(void);

/* DCGM started and publishes the GPU series (the NVML collector idles) */
void gpu_backend_set_dcgm(bool active);
bool gpu_backend_dcgm_active(void);

#endif
