/*
 * dynolite.h - the C API of libdynolite.so: the trace engine of `dyno
 * analyze` (src/trace, src/analyze) for other languages (the Python
 * package in python/dynolite binds it with ctypes; docs/python.md).
 *
 *   dynolite_load(inputs, options)      -> a trace handle
 *   dynolite_run(trace, "idle", options) -> a result handle: named tables
 *   dynolite_table / dynolite_column     -> typed columns, read in place
 *   dynolite_free(handle)
 *
 * Handles are numbers, never pointers: a handle used after it was freed
 * (or one never issued) is an error with a message, not a crash.  Every
 * call returns 0 or -1; after -1, dynolite_error() is the message (the
 * engine's own: "FILE: byte OFFSET: what" for a bad trace).  Nothing is
 * printed.  Options are "name=value" texts: the load options below, and
 * for an analysis the long names of its `dyno analyze` options
 * ("consecutive-kernel-delay=30", "interval-stats=true").  Calls may come
 * from several threads; they are serialized (each call is parallel
 * inside).  The API is additive from version to version
 * (DYNOLITE_ABI is bumped only for a change that is not).
 */
#ifndef DYNOLITE_H
#define DYNOLITE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DYNOLITE_ABI 1

typedef uint64_t dynolite_handle; /* 0 is never a valid handle */

/* column types */
enum { DYNOLITE_INT = 0, DYNOLITE_FLOAT = 1, DYNOLITE_STR = 2 };

/* One output table of a result. */
struct dynolite_table {
	const char *name;     /* HTA's CSV file name without ".csv" (per-rank tables: rank appended) */
	const char *base;     /* per-rank tables: the name without the rank; else = name */
	const char *analysis; /* the analysis that made it ("events" for dynolite_events) */
	int64_t rank;         /* per-rank tables: the rank; else -1 */
	uint64_t nrows, ncols;
	const char *notes;    /* lines the CLI prints after the table ("" when none) */
	const char *partial;  /* NULL, or why the input was damaged (results up to the damage) */
	int32_t unavailable;  /* 1: the analysis is undefined on this trace (HTA raises); notes say why */
	int32_t per_rank;
};

/* One column, read in place: valid until the result is freed. */
struct dynolite_column {
	const char *name;
	int32_t type;     /* DYNOLITE_INT (int64), DYNOLITE_FLOAT (double, NaN = no value), DYNOLITE_STR */
	int32_t int_text; /* FLOAT holding HTA's int64 column (whole numbers, printed without ".0") */
	const void *data; /* INT/FLOAT: the first row's value; row i is at data + i * stride bytes */
	uint64_t stride;
	/* STR: every row's text, each followed by a NUL, in row order (UTF-8) */
	const char *strings;
	uint64_t strings_len;
	const uint8_t *nulls; /* STR: NULL when no row lacks a value, else 1 per row without one */
};

int dynolite_abi(void);
const char *dynolite_version(void);
/* The message of this thread's last failed call (valid until its next call). */
const char *dynolite_error(void);

/* Load a trace set: inputs are files (.json, .json.gz), directories of
 * per-rank traces, or "-" (stdin), the files of one job.  Options:
 *   rank=N                  rank of a file without distributedInfo.rank or rank-N in its name
 *   file_rank=PATH:N        that input is rank N, whatever it says (HTA's {rank: file})
 *   iterations=N[-M]        only the events of ProfilerStep#N..M
 *   time_range=START:END    only the events starting in [START, END) us
 *   keep_last_step=BOOL     do not drop the last ProfilerStep (HTA's include_last_profiler_step)
 *   no_ns_rounding=BOOL     keep fractional microseconds
 *   fixed_classification=BOOL
 *   threads=N               0: every core
 *   huge_pages=BOOL         big arrays on transparent huge pages (default true; process-wide)
 *   load=lazy|all           lazy (default): keep what the analyses run so far need, and load
 *                           again, keeping more, when one needs more; all: keep everything now
 * The trace is parsed here (a bad trace fails here). */
int dynolite_load(const char *const *inputs, size_t ninputs, const char *const *opts, size_t nopts,
		  dynolite_handle *out);
/* The loaded ranks, ascending: *n of them, the first min(cap, *n) into out. */
int dynolite_trace_ranks(dynolite_handle trace, int32_t *out, size_t cap, size_t *n);
/* The load's warnings, one per line ("" when none; valid until this
 * thread's next call). */
int dynolite_trace_warnings(dynolite_handle trace, const char **out);
/* The path of each rank's file, "rank\tpath" lines (valid until this
 * thread's next call). */
int dynolite_trace_files(dynolite_handle trace, const char **out);

/* Run one analysis ("temporal", "idle", ..., "summary": every analysis
 * `dyno analyze summary` runs) over the ranks given by the option
 * ranks=0,1 (default every rank), with that analysis's options.  test:
 * the second trace of an analysis of two (diff's TEST), else 0.  Every
 * table of the analysis is computed (shown on the terminal or not). */
int dynolite_run(dynolite_handle trace, dynolite_handle test, const char *analysis, const char *const *opts,
		 size_t nopts, dynolite_handle *out);
/* The loaded events as one table (rank, index, cat, name, pid, tid, ts,
 * dur, stream, correlation, external_id, index_correlation, iteration,
 * bytes, memory_bw_gbps); kind: NULL or "all", "gpu" (stream != -1),
 * "cpu", or a category ("kernel", "gpu_memcpy", "cuda_runtime", ...).
 * Option ranks=... as for dynolite_run. */
int dynolite_events(dynolite_handle trace, const char *kind, const char *const *opts, size_t nopts,
		    dynolite_handle *out);

int dynolite_result_ntables(dynolite_handle result, size_t *n);
/* summary: the analyses left out and why, "name\treason" lines. */
int dynolite_result_skipped(dynolite_handle result, const char **out);
int dynolite_table(dynolite_handle result, size_t table, struct dynolite_table *out);
int dynolite_column(dynolite_handle result, size_t table, size_t col, struct dynolite_column *out);

/* Free a trace or a result; the handle is dead afterwards (any use is an
 * error), and so are the pointers read from it. */
int dynolite_free(dynolite_handle h);

#ifdef __cplusplus
}
#endif

#endif
