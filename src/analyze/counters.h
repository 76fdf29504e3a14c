/*
 * counters.h - HTA's "augmented counters" as time series of one rank
 * (semantics doc section 8): the kernel launch queue length per stream and
 * the memcpy/memset bandwidth per memory type.  counters.c computes them
 * and builds the `counters` analysis tables from them; counters_trace.c
 * writes them into a copy of the trace as counter events (--write-trace).
 * Each series is one array sorted like HTA's output (by stream / type, then
 * time); computing one costs two radix sorts of its points.
 */
#ifndef DYNO_ANALYZE_COUNTERS_H
#define DYNO_ANALYZE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "trace/model.h"

/* One change of a stream's queue length: a launch (+1, at the runtime
 * call's start) or the start of its GPU activity (-1). */
struct queue_point {
	double ts;
	int64_t pid, tid, stream; /* of the GPU activity */
	uint32_t idx;             /* the event id (runtime call or GPU row) */
	int32_t queue_length;     /* after this point */
};

/* The queue length series of r, by stream, then ts (ties: launches in row
 * order, then GPU rows in row order).  *mismatch: launches and GPU rows
 * differ in number (HTA asserts they do not).  Returns the count; free
 * *out. */
size_t counters_queue_series(const struct trace_rank *r, struct queue_point **out, bool *mismatch);

/* One change of a memory type's aggregate bandwidth: a memcpy/memset start
 * (+GB/s) or end (-GB/s). */
struct bw_point {
	double ts;
	double gbps;   /* the running sum after this point (float residues kept) */
	int64_t pid;
	uint32_t n;    /* HTA's row number: starts 0..m-1, ends m..2m-1 */
	uint32_t type; /* into the type names */
};

/* The bandwidth series of r, by type name, then ts.  *types (free it and
 * each name) gets the memory type names ("Memcpy HtoD", "Memset", ...),
 * *ntypes their count.  Returns the count; free *out. */
size_t counters_bw_series(const struct trace_rank *r, struct bw_point **out, char ***types, size_t *ntypes);

/* Write the trace of r (its file, read again) plus the two series as
 * counter events ("Queue Length" per stream, "Memcpy BW" per memory type)
 * to out, gzip when out ends in ".gz".  0, or -1 with a message in err. */
int counters_write_trace(const struct trace_rank *r, const char *out, struct buf *err);

#endif
