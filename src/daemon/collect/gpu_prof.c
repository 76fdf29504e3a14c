/*
 * gpu_prof.c - the deadline that pauses the GPU profiling metrics
 * (gpu_prof.h).  The state is process-wide: one daemon, one GPU backend at
 * a time, and the RPC handlers must reach it without knowing which
 * collector is on.  Everything runs on the loop thread.  Cost: none.
 */
#include "daemon/collect/gpu_prof.h"

#include <stddef.h>

#include "core/log.h"

static struct {
	bool attached;
	gpu_prof_hook hook;
	void *ud;
	bool paused;
	int64_t until_ns;
} prof;

void gpu_prof_attach(gpu_prof_hook hook, void *ud)
{
	prof.attached = true;
	prof.hook = hook;
	prof.ud = ud;
	prof.paused = false;
}

void gpu_prof_detach(void *ud)
{
	if (prof.attached && prof.ud == ud) {
		prof.attached = false;
		prof.hook = NULL;
		prof.ud = NULL;
		prof.paused = false;
	}
}

bool gpu_prof_pause(int64_t duration_s, int64_t now_ns)
{
	if (!prof.attached)
		return false;
	if (prof.hook && !prof.hook(prof.ud, true))
		return false;
	/* upstream pauses for "duration_s" whatever its sign: <= 0 resumes at
	 * the next tick; a huge one is capped at a year (no overflow) */
	if (duration_s < 0)
		duration_s = 0;
	if (duration_s > 366LL * 86400)
		duration_s = 366LL * 86400;
	prof.paused = true;
	prof.until_ns = now_ns + duration_s * 1000000000LL;
	log_info("GPU monitor: profiling metrics paused for %lld s (dcgmProfPause)", (long long)duration_s);
	return true;
}

bool gpu_prof_resume(void)
{
	if (!prof.attached)
		return false;
	if (prof.hook && !prof.hook(prof.ud, false))
		return false;
	if (prof.paused)
		log_info("GPU monitor: profiling metrics resumed (dcgmProfResume)");
	prof.paused = false;
	return true;
}

bool gpu_prof_paused(int64_t now_ns)
{
	if (prof.paused && now_ns >= prof.until_ns) {
		prof.paused = false;
		log_info("GPU monitor: the profiling pause has expired; profiling metrics resume");
	}
	return prof.paused;
}
