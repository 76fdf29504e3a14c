/*
 * live.h - gpusnoop's live table, one frame a second while it watches: the
 * outstanding bytes per space, launches and synchronisations per second
 * over the last second, and the top stacks by outstanding bytes (what a
 * leak looks like while it grows).  On a terminal each frame replaces the
 * last (ANSI home + clear); otherwise (--live into a pipe or file) frames
 * follow one another, each opened by its "gpusnoop live:" line.
 *
 * Cost per frame: grouping the live allocations (n log n over them) and
 * symbolizing the first frames of the top stacks (libdw caches).
 */
#ifndef DYNO_GPUSNOOP_LIVE_H
#define DYNO_GPUSNOOP_LIVE_H

#include <stdbool.h>
#include <stdio.h>

#include "gpusnoop/report.h"

struct live {
	FILE *out;
	bool tty;
	uint64_t prev_launches, prev_syncs, prev_sync_ns;
	double prev_seconds;
	double prev_launch_on_s, launch_rate; /* the launch probes' counting time; the last rate */
};

/* in->seconds: time since the start; in->top: stacks shown */
void live_frame(struct live *lv, const struct report_in *in);

#endif
