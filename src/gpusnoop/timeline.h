/*
 * timeline.h - gpusnoop's --trace output, a Chrome trace
 * ({"traceEvents":[...]}) that loads beside a Kineto trace of the same
 * process: timestamps in us of the wall clock, pid the watched process.
 * Counter events for the outstanding bytes of each watched space (one per
 * allocation or free that changed them, and one at the end), and of each
 * device (a counter per device, "unknown" and pinned "host" included),
 * instant events for allocations of at least min_bytes (at most
 * max_instants: the rest are counted and said at the end), complete
 * events ("ph":"X") for synchronisations on the thread that waited, and a
 * launches-per-second counter (one point a second: bounded, however many
 * launches).
 *
 * Cost: ~150 bytes per point (two with devices), written through stdio.
 */
#ifndef DYNO_GPUSNOOP_TIMELINE_H
#define DYNO_GPUSNOOP_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpusnoop/event.h"
#include "gpusnoop/ledger.h"

struct timeline {
	FILE *f;
	int pid;
	unsigned spaces;         /* bit per enum snoop_space written in the bytes counter */
	bool devices;            /* the per-device counters */
	uint64_t min_bytes;      /* an instant event per allocation of at least this */
	uint64_t max_instants, instants, left_out;
	int64_t mono_to_real_ns; /* the records' CLOCK_MONOTONIC to the wall clock */
	bool first;
};

#define TIMELINE_MIN_BYTES (16ull << 20)
#define TIMELINE_MAX_INSTANTS 10000

/* false (errno set) when the file cannot be created; the caller sets
 * devices, min_bytes and max_instants after */
bool timeline_open(struct timeline *t, const char *path, int pid, unsigned spaces);
/* after a record that changed the outstanding bytes (ledger_event() 1) */
void timeline_bytes(struct timeline *t, const struct ledger *l, uint64_t ts_ns);
/* an allocation record that ledger_event() took: an instant if it is large */
void timeline_alloc(struct timeline *t, const struct snoop_event *ev);
void timeline_sync(struct timeline *t, const struct snoop_event *ev);
void timeline_launches(struct timeline *t, uint64_t ts_ns, double per_second);
/* the closing point and bracket; false (errno set) when writing failed */
bool timeline_close(struct timeline *t, const struct ledger *l, uint64_t ts_ns);

#endif
