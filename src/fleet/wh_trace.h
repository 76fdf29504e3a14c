/*
 * wh_trace.h - what the trace warehouse keeps of one trace file
 * (docs/fleet.md): its content hash (the key that makes ingest
 * idempotent), where it came from, and the figures the reports query:
 * iteration times, per-kernel-name calls/total/p50/p95, per-type totals,
 * GPU idle and host-wait shares.  wh_trace.c computes them (the existing
 * analyses through the runner), wh_store.c writes them in one transaction.
 * A value the trace cannot give (no GPU rows: no idle share) is absent,
 * never 0.  Declarations only.
 */
#ifndef DYNO_CLI_WH_TRACE_H
#define DYNO_CLI_WH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet/wh_db.h"
#include "core/buf.h"

struct wh_kernel {
	char *name;
	const char *type; /* "COMPUTATION", "COMMUNICATION", "MEMORY" */
	uint64_t calls;
	double total_us, mean_us, min_us, max_us, p50_us, p95_us;
};

struct wh_ktype {
	char *label; /* kernel_type_breakdown's: "COMPUTATION overlapping COMMUNICATION" */
	double total_us;
};

struct wh_iter {
	int64_t step; /* ProfilerStep#N */
	double dur_us;
};

struct wh_trace {
	char *path;
	char hash[33];     /* 128-bit content hash, hex */
	char *job, *host;  /* NULL: unknown */
	bool has_rank;     /* distributedInfo.rank or rank-N in the name */
	int rank;
	bool has_start;
	int64_t start_ns;  /* wall clock of the first event */
	bool failed;       /* could not be read: error says why */
	char *error;
	uint64_t events, gpu_rows;
	double span_us;
	struct wh_iter *iters;
	size_t niters;
	struct wh_kernel *kernels;
	size_t nkernels;
	struct wh_ktype *types;
	size_t ntypes;
	bool has_gpu;      /* temporal breakdown defined: the next three */
	double kernel_us, idle_us, idle_share;
	bool has_host_wait; /* idle breakdown defined: the next two */
	double host_wait_us, host_wait_share;
};

/* The content hash of a file's bytes (not cryptographic: two lanes of a
 * 64-bit multiply-rotate mix, ~the speed of reading it).  0, or -1 with
 * "PATH: why" in err. */
int wh_hash_file(const char *path, char out[33], struct buf *err);
/* The 63-bit ids the database refers to a trace and a kernel name by
 * (wh_db.c): the hash's first 63 bits; a 64-bit mix of the name's bytes,
 * less one bit (a collision between two of a million names: ~1e-7). */
int64_t wh_trace_id(const char *hash);
int64_t wh_name_id(const char *name);

/* Load t->path (one trace file) and fill t; a trace that cannot be read,
 * or is damaged, gets t->failed and the loader's message (file and byte
 * offset) in t->error.  Thread-safe: one trace per thread. */
void wh_trace_extract(struct wh_trace *t);
void wh_trace_free(struct wh_trace *t);

/* wh_store.c: t's rows in one transaction (nothing of t is left when any
 * write fails).  ingested_ns: the time recorded.  0, or -1 with the
 * database's message in err.  A trace already there (same hash) is left
 * as it is. */
int wh_trace_store(struct wh_db *db, const struct wh_trace *t, int64_t ingested_ns, struct buf *err);
/* Is a trace with this hash in the database?  1 yes, 0 no, -1 error. */
int wh_trace_known(struct wh_db *db, const char *hash, struct buf *err);

#endif
