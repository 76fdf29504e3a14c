/*
 * gpu_backend.c - the GPU backend choice shared by nvml.c and dcgm.c (see
 * gpu_backend.h).  Process-wide: one daemon, one GPU monitor.  Cost: none.
 */
#include "daemon/collect/gpu_backend.h"

#include <stdio.h>

static struct {
	bool on, dcgm;
	char backend[8];
	int64_t timeout_ms, interval_s;
	const char *peaks_file;
} gb = {false, false, "auto", 500, 10, NULL};

void gpu_backend_configure(bool on, const char *backend, int64_t timeout_ms, int64_t interval_s,
			   const char *peaks_file)
{
	gb.on = on;
	gb.peaks_file = peaks_file;
	snprintf(gb.backend, sizeof gb.backend, "%s", backend ? backend : "auto");
	gb.timeout_ms = timeout_ms;
	gb.interval_s = interval_s;
	if (!on)
		gb.dcgm = false;
}

bool gpu_backend_on(void) { return gb.on; }
const char *gpu_backend_wanted(void) { return gb.backend; }
int64_t gpu_backend_timeout_ms(void) { return gb.timeout_ms; }
int64_t gpu_backend_interval_s(void) { return gb.interval_s; }
const char *gpu_backend_peaks_file(void) { return gb.peaks_file; }
void gpu_backend_set_dcgm(bool active) { gb.dcgm = active; }
bool gpu_backend_dcgm_active(void) { return gb.dcgm; }
