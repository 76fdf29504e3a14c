/*
 * perf.h - the perf_event collector (--enable_perf_monitor): system-wide
 * instructions, cycles, IPC, cache / LLC / dTLB misses where the PMU
 * allows, plus software page-fault and migration counts; upstream's
 * "mips" and "mega_cycles_per_second".  Unavailable events are absent.
 */
#ifndef DYNO_COLLECT_PERF_H
#define DYNO_COLLECT_PERF_H

#include <stdbool.h>

#include "daemon/frame.h"

struct perf_collector;

/* Opens the counters on every CPU; logs once what is unavailable and why. */
struct perf_collector *perf_collector_new(void);
void perf_collector_free(struct perf_collector *p);
/* Whether the event behind key ("perf_cycles") could be opened on any CPU. */
bool perf_collector_has(const struct perf_collector *p, const char *key);
/* Append this interval's counts (nothing on the first call: it sets the baseline). */
void perf_collect(struct perf_collector *p, struct frame *f);

#endif
