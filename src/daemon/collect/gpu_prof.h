/*
 * gpu_prof.h - the pause of the GPU profiling metrics (dcgmProfPause /
 * dcgmProfResume), shared by the RPC handlers and the GPU backends.
 *
 * Profiling counters (NVML GPM, DCGM's profiling fields, ids >= 1001) use
 * the same hardware as CUPTI: a trace collected while they are sampled
 * fails or is wrong.  A pause is a deadline: the backends' ticks ask
 * gpu_prof_paused(now) and leave their profiling series out (absent, never
 * 0) until it passes, so the pause ends by itself with no timer or thread.
 * A backend with profiling metrics attaches itself while it runs; with none
 * attached both RPCs answer false, as upstream's daemon without DCGM.  A
 * backend whose library has its own pause (DCGM) registers a hook that the
 * pause and resume call on the loop thread (bounded: see dcgm.c).
 * Cost: a few words of state, no thread, no timer.
 */
#ifndef DYNO_COLLECT_GPU_PROF_H
#define DYNO_COLLECT_GPU_PROF_H

#include <stdbool.h>
#include <stdint.h>

/* a backend's own pause/resume (NULL: the deadline alone is enough) */
typedef bool (*gpu_prof_hook)(void *ud, bool pause);

/* A backend with profiling metrics starts/stops; one at a time (the GPU
 * backend chosen by --gpu_backend).  ud is passed to hook. */
void gpu_prof_attach(gpu_prof_hook hook, void *ud);
void gpu_prof_detach(void *ud);

/* The RPCs.  False: no backend with profiling metrics, or its hook failed
 * (then nothing changes). */
bool gpu_prof_pause(int64_t duration_s, int64_t now_ns);
bool gpu_prof_resume(void);

/* Whether profiling metrics are paused at now_ns (monotonic). */
bool gpu_prof_paused(int64_t now_ns);

#endif
