/*
 * gpu_jobs.h - per-process and per-job GPU accounting (gpu_jobs.c).
 *
 * Two halves.  The GPU collector (nvml.c) calls gpu_procs_list() on its
 * worker thread, once per device, and so puts the device's processes in
 * its frame.  The gpu_jobs collector (a row of collect/list.h riding on the
 * nvml tick) reads them back from that frame, finds each process's job and
 * user in /proc, and accumulates GPU-seconds and energy per job and per
 * user.  The frame keys between the two are the whole contract, so any
 * GPU backend that emits them gets the accounting:
 *
 *   gpu_processes.<dev>              the device's process list was read: how
 *                                    many pids it holds (absent: unknown)
 *   gpu_process.<dev>:<pid>          string "compute" or "graphics"
 *   gpu_process_memory_bytes.<dev>:<pid>  GPU memory the pid uses (when known)
 *   gpu_energy_mj.<gpu>              the GPU's energy over the interval
 *   @gpu_interval_s                  the GPU tick's period (export-only key,
 *                                    exported nowhere)
 */
#ifndef DYNO_COLLECT_GPU_JOBS_H
#define DYNO_COLLECT_GPU_JOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/collect/nvml_api.h"
#include "daemon/frame.h"

#define GPU_INTERVAL_KEY "@gpu_interval_s"

/* The worker's reusable array for the process lists. */
struct gpu_proc_buf {
	nvmlProcessInfo_t *p;
	unsigned cap;
};

/* List device h's compute processes (and graphics ones, graphics may be
 * NULL) into out under device name dev.  Returns the compute call's
 * status: on failure nothing is added (the list is absent, not empty). */
nvmlReturn_t gpu_procs_list(nvml_procs_fn compute, nvml_procs_fn graphics, nvmlDevice_t h, const char *dev,
			    struct frame *out, struct gpu_proc_buf *b);
void gpu_proc_buf_free(struct gpu_proc_buf *b);

/* A process's job, from its /proc/<pid>/cgroup text. */
enum gpu_job_kind { GJ_NONE, GJ_SLURM, GJ_K8S, GJ_CGROUP };
struct gpu_job_id {
	enum gpu_job_kind kind;
	char id[256];       /* SLURM job id, pod UID, or the cgroup path */
	char container[80]; /* Kubernetes container id, "" if none */
};
/* Parse the whole /proc/<pid>/cgroup text (v2 "0::/path" and v1
 * "N:ctrl:/path" lines): a SLURM job (.../job_<id>/...), a Kubernetes pod
 * (cgroupfs .../kubepods[/burstable|/besteffort]/pod<uid>/<container> and
 * systemd .../kubepods-<qos>-pod<uid>.slice/<runtime>-<id>.scope), else the
 * cgroup path itself.  False (kind GJ_NONE) on text that holds no path. */
bool gpu_job_from_cgroup(const char *text, size_t len, struct gpu_job_id *out);

/* The collector's options (--gpu_job_series, --gpu_pid_cache); tests
 * drive collector_gpu_jobs with it. */
struct gpu_jobs_config {
	int64_t series, cache;
};

#endif
