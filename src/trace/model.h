/*
 * model.h - the columnar in-memory model of a Kineto trace, and the loader
 * API that fills it.  Every `dyno analyze` analysis reads this and nothing
 * else; the loader (src/trace/load.c) is the only writer.
 *
 * One struct trace_rank per trace file (= per rank).  Its events are stored
 * column by column (struct-of-arrays): an analysis that needs only stream,
 * ts and dur touches only those arrays, and a 5 GB trace costs a few tens of
 * bytes per kept event instead of the JSON text.  Names and categories are
 * interned per rank (struct trace_strtab): compare ids, decode for output.
 *
 * Semantics follow HTA's loader exactly (see
 * docs/analysis-semantics.md section 1 and docs/trace-model.md):
 *   - only complete events (ph X: have `dur` and `cat`) are rows; cat "Trace"
 *     is dropped; python_function rows only when asked for;
 *   - times are microseconds as doubles; when the file has any fractional
 *     `ts` (ns-resolution Kineto), ts is ceiled, ts+dur floored and dur
 *     recomputed (it can become 0 or -1), like HTA;
 *   - `idx` is the event's position in traceEvents (gaps where events were
 *     dropped), HTA's event id;
 *   - `stream` is -1 when the arg is absent or not a number; 4294967295
 *     (Context Sync) stays as is;
 *   - `link` pairs a CPU launch with its GPU activity (HTA's
 *     index_correlation, see trace_index_correlation());
 *   - `iteration` is the ProfilerStep#N number (HTA's rules, 1.2 step 17).
 * trace_set_load() then aligns all ranks on the global minimum ts and drops
 * the last (incomplete) ProfilerStep and uncorrelated GPU rows (HTA 1.3),
 * unless asked not to.
 *
 * The header is a stable contract: changes are additive only.
 */
#ifndef DYNO_TRACE_MODEL_H
#define DYNO_TRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* ---------------- interned strings ---------------- */

#define TRACE_NO_STR UINT32_MAX

struct trace_strtab {
	char **s;       /* NUL-terminated copies, s[id] */
	uint32_t *len;  /* byte length of s[id] */
	uint32_t n, cap;
	uint32_t *hash; /* open addressing: slot -> id + 1 (0 = empty) */
	uint32_t hcap;  /* power of two */
	/* recently interned ids (id + 1) by a cheap fingerprint: a trace
	 * repeats the same few hundred names, and hashing a 300-byte kernel
	 * name costs more than comparing it */
	uint32_t recent[512];
};

void trace_strtab_init(struct trace_strtab *t);
void trace_strtab_free(struct trace_strtab *t);
uint32_t trace_strtab_intern(struct trace_strtab *t, const char *s, size_t len);
/* Id of s, or TRACE_NO_STR when the trace never mentions it. */
uint32_t trace_strtab_find(const struct trace_strtab *t, const char *s, size_t len);
static inline const char *trace_strtab_get(const struct trace_strtab *t, uint32_t id)
{
	return id < t->n ? t->s[id] : "";
}

/* ---------------- categories and kernel types ---------------- */

/* The event categories the analyses care about (cat, including the old
 * Kineto spellings).  TRACE_CAT_OTHER covers the rest; the exact text is
 * always in trace_rank.cat. */
enum trace_cat {
	TRACE_CAT_OTHER = 0,
	TRACE_CAT_CPU_OP,
	TRACE_CAT_USER_ANNOTATION,
	TRACE_CAT_PYTHON_FUNCTION,
	TRACE_CAT_CUDA_RUNTIME, /* also old "Runtime" */
	TRACE_CAT_CUDA_DRIVER,
	TRACE_CAT_KERNEL,     /* "kernel" and old "Kernel" */
	TRACE_CAT_GPU_MEMCPY, /* also old "Memcpy" */
	TRACE_CAT_GPU_MEMSET, /* also old "Memset" */
	TRACE_CAT_CUDA_SYNC,
	TRACE_CAT_GPU_USER_ANNOTATION,
	TRACE_CAT_CUDA_PROFILER_RANGE,
	TRACE_CAT_MTIA_CCP_EVENTS,
	TRACE_CAT_MTIA_RUNTIME,
	TRACE_CAT__COUNT
};
/* Category of a cat string (exact match; unknown -> TRACE_CAT_OTHER). */
enum trace_cat trace_cat_of(const char *s, size_t len);
/* Kineto's spelling of c ("cpu_op", "kernel", ...). */
const char *trace_cat_name(enum trace_cat c);

/* HTA's kernel type classification (1.6), see src/trace/classify.c. */
enum trace_ktype {
	TRACE_KT_COMPUTATION = 0,
	TRACE_KT_COMMUNICATION = 1,
	TRACE_KT_MEMORY = 2,
	TRACE_KT_OTHER = 3,
};
const char *trace_ktype_name(enum trace_ktype t); /* "COMPUTATION", ... */
enum trace_ktype trace_classify(const char *name, size_t len);

/* Where we deliberately differ from HTA's classification (documented in
 * docs/trace-model.md); the analyses use trace_classify() (HTA) unless the
 * user asks for the fixed rules. */
enum trace_ktype trace_classify_fixed(const char *name, size_t len);

/* ---------------- one rank ---------------- */

enum trace_rank_rule {
	TRACE_RANK_DISTINFO = 0, /* distributedInfo.rank */
	TRACE_RANK_FILENAME,     /* "rank-N" / "rank_N" / "rankN" in the file name */
	TRACE_RANK_OPTION,       /* --rank */
	TRACE_RANK_DEFAULT,      /* none of the above: 0, like HTA */
	TRACE_RANK_ASSIGNED,     /* none, and 0 taken: a distinct one (set.c) */
};
const char *trace_rank_rule_name(enum trace_rank_rule r);

/* Non-numeric pid/tid ("Spans", "stream 7") are stored as
 * TRACE_ID_STR_BASE + string id. */
#define TRACE_ID_STR_BASE INT64_MIN
static inline bool trace_id_is_str(int64_t v) { return v < TRACE_ID_STR_BASE + (int64_t)UINT32_MAX + 1; }

#define TRACE_ITER_NONE (-1)        /* HTA -1: in no ProfilerStep */
#define TRACE_ITER_NAN INT32_MIN    /* HTA NaN: stream 0 and not a cpu_op */

/* Counts of what the loader skipped or found odd; warnings, not errors. */
struct trace_load_stats {
	uint64_t events;          /* elements of traceEvents */
	uint64_t complete;        /* ph X (dur and cat present) */
	uint64_t kept;            /* rows in the model */
	uint64_t dropped_trace_cat;   /* cat "Trace" */
	uint64_t dropped_python;      /* python_function, not requested */
	uint64_t bad_not_object;      /* an element that is not an object */
	uint64_t bad_missing;         /* X event without ts or name, or a non-numeric ts/dur */
	uint64_t bad_negative_dur;    /* dur < 0 in the file (Kineto never writes that) */
	uint64_t bad_huge_dur;        /* dur > TRACE_MAX_DUR_US */
	uint64_t flows, counters, instants, metadata;
	uint64_t neg_dur_after_rounding; /* dur -1 after ns rounding (kept, like HTA) */
	uint64_t stream_overlaps;     /* kernels starting before the previous one on the
				       * stream ended (ROCm): kept, counted */
	uint64_t dropped_last_step;   /* rows removed by the last-ProfilerStep filter */
	uint64_t replaced_utf8;       /* invalid UTF-8 replaced by U+FFFD */
	uint64_t skipped_cpu_ops;     /* rows dropped by trace_load_opts.skip_cpu_ops */
	uint32_t parse_threads;       /* 2 when a big plain file was parsed in two halves */
	uint64_t shared_text;         /* .json.gz in two parts: bytes of text the helper
				       * inflated for this parser too (load_split.c) */
	uint64_t dup_correlation_capped; /* GPU row copies the filter's join left out (a
					  * correlation shared by more than 16 CPU rows) */
	uint64_t fast_path_events;    /* elements decoded by the fast path (load_fast.c);
				       * diagnostics only: the model is the same either way */
	bool truncated;               /* input ended early; rows read so far are kept */
	char truncated_msg[200];      /* what and where (file, byte offset) */
};

#define TRACE_MAX_DUR_US 1e11 /* ~28 hours: longer is a corrupt event */

/* An ac2g (or old async_gpu / async_cpu_to_gpu) flow point. */
struct trace_flow {
	uint64_t id;    /* = correlation for ac2g */
	double ts;      /* µs, same rounding/alignment as events */
	int64_t pid, tid;
	uint32_t cat;   /* strtab id */
	uint32_t idx;   /* position in traceEvents */
	char phase;     /* 's' or 'f' */
};

/* The CUDA event a cuda_sync row waits on (Event Sync, Stream Wait
 * Event): its args wait_on_stream and wait_on_cuda_event_record_corr_id
 * (-1 when absent, as HTA's defaults), by event id.  Kept only with
 * trace_load_opts.keep_event_waits (critical-path): a handful of rows. */
struct trace_event_wait {
	uint32_t idx;         /* the row's event id (trace_rank.idx) */
	int64_t stream;       /* wait_on_stream: where the event was recorded */
	int64_t record_corr;  /* wait_on_cuda_event_record_corr_id: the
			       * correlation of its cudaEventRecord call */
};

/* One numeric arg of a cuda_profiler_range row (a CUPTI range-profiler
 * counter), kept only with trace_load_opts.keep_profiler_args.  Keyed by
 * the row's event id (idx), which filters and selections do not change. */
struct trace_range_arg {
	uint32_t idx;   /* the row's position in traceEvents */
	uint32_t key;   /* strtab id of the arg key (the counter's name) */
	double value;
	bool is_int;    /* written as an integer in the file */
};

/* One value of a ph C counter event (one per numeric arg). */
struct trace_counter {
	double ts;
	double value;
	int64_t pid;
	uint32_t name;  /* strtab id of the event name */
	uint32_t key;   /* strtab id of the arg key */
};

struct trace_rank {
	char *path;     /* file it came from */
	int rank;
	enum trace_rank_rule rank_rule;
	bool float_ts;  /* some ts had a fraction: ns rounding was applied */
	bool gpu_device_mtia; /* distributedInfo.backend contains mtia:hccl */
	char *device_type;    /* HTA's: "NVIDIA GPU", "AMD GPU", "MTIA", "UNKNOWN GPU" */

	struct trace_strtab strs;
	/* kernel type of every interned string, by id (trace_classify) */
	uint8_t *str_ktype;

	/* ---- events (rows), all arrays of length n ---- */
	size_t n, cap;
	double *ts;          /* µs (aligned after trace_set_load) */
	double *dur;         /* µs */
	uint32_t *name;      /* strtab id */
	uint32_t *cat;       /* strtab id of the cat text */
	uint8_t *kind;       /* enum trace_cat */
	int64_t *pid, *tid;
	int64_t *stream;     /* -1 = none */
	int64_t *correlation;/* -1 = none */
	int64_t *external_id;/* -1 = none */
	int64_t *bytes;      /* -1 = none (memcpy/memset) */
	double *mem_bw_gbps; /* 0 = none */
	uint32_t *idx;       /* position in traceEvents */
	int32_t *link;       /* row of the CPU<->GPU partner, -1 = none */
	int32_t *iteration;  /* ProfilerStep N, TRACE_ITER_NONE, TRACE_ITER_NAN */
	/* columns.c: a mid-size load's columns lie in one block on huge pages
	 * (NULL: each column is its own allocation) */
	void *col_arena;
	size_t col_arena_len;  /* bytes mapped */
	size_t col_arena_cap;  /* rows each column has there */
	uint32_t col_in_arena; /* bit c: column c lies there (atomic) */

	/* ---- derived ---- */
	bool link_one_cpu;   /* trace_rank_link: no correlation id has two CPU rows */
	int32_t *iterations; /* distinct ProfilerStep numbers, ascending */
	size_t niterations;
	double min_ts;       /* subtracted by the alignment (0 before it) */

	/* ---- other event kinds ---- */
	struct trace_flow *flows;
	size_t nflows, flows_cap;
	struct trace_counter *counters;
	size_t ncounters, counters_cap;

	/* distributedInfo object as compact JSON ("" when absent) */
	char *distributed_info;

	struct trace_load_stats stats;

	/* added after the first version (additive) */
	double skipped_min_ts;       /* min ts (µs, rounded like ts) of rows dropped by
				      * skip_cpu_ops; +inf when none */
	bool int_times;              /* every element of traceEvents had an integer ts and
				      * dur: HTA's columns are then int64, and its CSVs
				      * print times as "4", not "4.0" */
	/* wall seconds, for `dyno analyze --timings` (additive) */
	double load_s;               /* trace_rank_load of this file: parse + finish */
	double finish_s;             /* trace_rank_finish alone (part of load_s) */
	/* rows with an event-wait arg, ascending idx (keep_event_waits only;
	 * additive): an id survives every row filter, a row number does not */
	struct trace_event_wait *waits;
	size_t nwaits, waits_cap;
	bool waits_kept; /* loaded with keep_event_waits: no entry means no wait */
	/* keep_profiler_args (additive): the numeric args of the
	 * cuda_profiler_range rows, ascending idx, each row's in file order */
	struct trace_range_arg *range_args;
	size_t nrange_args, range_args_cap;
	/* the file's top-level baseTimeNanoseconds (additive): its ts are µs
	 * since then (newer Kineto); absent: the ts are µs of the wall clock */
	int64_t base_time_ns;
	bool has_base_time;
	/* keep_kernel_occupancy (additive): an optional column (columns.h),
	 * Kineto's "est. achieved occupancy %" arg of each row, NaN where the
	 * row has none (CPU rows, copies, a trace without it); NULL and
	 * occupancy_kept false when not asked for */
	float *occupancy;
	bool occupancy_kept;
};

/* The wait args of the row with event id idx, or NULL (none kept). */
static inline const struct trace_event_wait *trace_event_wait_of(const struct trace_rank *r, uint32_t idx)
{
	size_t lo = 0, hi = r->nwaits;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->waits[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nwaits && r->waits[lo].idx == idx ? &r->waits[lo] : NULL;
}

/* HTA's index_correlation of row i: the partner's event id, 0 when the row
 * has a correlation but no partner in the trace, else min(correlation, 0). */
static inline int64_t trace_index_correlation(const struct trace_rank *r, size_t i)
{
	if (r->link[i] >= 0)
		return r->idx[r->link[i]];
	return r->correlation[i] < 0 ? r->correlation[i] : 0;
}

/* The per-analysis notions of a GPU row (analysis-semantics 1.5). */
static inline bool trace_is_gpu(const struct trace_rank *r, size_t i) { return r->stream[i] != -1; }
/* Idle time breakdown: a kernel, memcpy, memset or MTIA kernel on a stream. */
static inline bool trace_is_idle_kernel(const struct trace_rank *r, size_t i)
{
	uint8_t k = r->kind[i];
	return r->stream[i] != -1 && (k == TRACE_CAT_KERNEL || k == TRACE_CAT_GPU_MEMCPY ||
				      k == TRACE_CAT_GPU_MEMSET || k == TRACE_CAT_MTIA_CCP_EVENTS);
}

static inline const char *trace_name(const struct trace_rank *r, size_t i)
{
	return r->strs.s[r->name[i]];
}
static inline enum trace_ktype trace_ktype(const struct trace_rank *r, size_t i)
{
	return (enum trace_ktype)r->str_ktype[r->name[i]];
}

/* ---------------- loading ---------------- */

struct trace_load_opts {
	int rank;              /* used when rank_given and the file has no distributedInfo.rank */
	bool rank_given;
	bool keep_python;      /* keep python_function rows (HTA keeps them; we skip by default) */
	bool no_ns_rounding;   /* like HTA_DISABLE_NS_ROUNDING=1 */
	bool keep_last_step;   /* do not apply HTA's last-ProfilerStep filter */
	bool no_flows;         /* do not store flow events */
	bool no_counters;      /* do not store counter events */
	int threads;           /* parallel rank loads (0 = number of online cores) */
	/* Drop cpu_op rows and user_annotation rows other than ProfilerStep#N
	 * that have neither a stream nor a correlation arg (kept: event id 0,
	 * which HTA's lookups can hit).  Temporal, idle,
	 * kernel, overlap and launch analyses never read them; this saves
	 * most of the memory and time of a load.  Their ts still counts for
	 * the alignment (trace_rank.skipped_min_ts). */
	bool skip_cpu_ops;
	/* Classify names with trace_classify_fixed() (HTA's bugs corrected)
	 * instead of HTA's rules: numbers then differ from HTA's on purpose. */
	bool fixed_classification;
	/* Parse every event with the general tokenizer, never the fast path
	 * (load_fast.c); tests and the fuzzer compare the two. */
	bool tokenizer_only;
	/* With skip_cpu_ops: drop the cpu_op rows only, keep every
	 * user_annotation row (the annotations analysis reads them; they are
	 * few next to the operators). */
	bool keep_user_annotations;
	/* Keep the wait_on_stream / wait_on_cuda_event_record_corr_id args
	 * of rows that have them (trace_rank.waits): critical-path's event
	 * syncs. */
	bool keep_event_waits;
	/* Keep the numeric args of cuda_profiler_range rows (the CUPTI
	 * counters, trace_rank.range_args); `dyno analyze cupti` only. */
	bool keep_profiler_args;
	/* Keep the "est. achieved occupancy %" arg of kernel rows in the
	 * optional column trace_rank.occupancy (4 bytes a row; insights'
	 * top-kernels rule).  Without it the column is not allocated. */
	bool keep_kernel_occupancy;
	/* A set of several files: a file that cannot be read or parsed at all
	 * is left out with a warning naming it and why (trace_set.warnings),
	 * the others are loaded; only when none loads is it an error.
	 * (Default: any such file fails the load.)  `dyno report`. */
	bool skip_unreadable;
	/* (additive) Without skip_cpu_ops: keep, of the operator rows
	 * skip_cpu_ops would drop, only the aten:: operators that
	 * trace_launch_ops() can choose for a launch (what op-kernels reads)
	 * and the latest ones (a rank's time span); dropped right after the
	 * parse and counted like skip_cpu_ops's (src/trace/launch_ops.c).  An
	 * MTIA rank keeps every row, and so does every row named by a launch
	 * API (the device type). */
	bool launch_ops_only;
	/* With launch_ops_only: a rank with cuda_profiler_range rows keeps
	 * every operator (cupti reads their call stacks). */
	bool keep_range_ops;
	/* Tests and fuzzing: a plain file is parsed in parts from this many
	 * bytes, each part at least split_part_bytes (0: 8 MiB and 4 MiB), so
	 * that small inputs take the parse in parts (load_split.c). */
	uint32_t split_min_bytes, split_part_bytes;
	/* Tests and fuzzing: a .json.gz in two parts shares the text before
	 * the helper's part (load_split.c) even where huge pages are off. */
	bool gz_share_always;
};

/* The end of the message of a file that is whole JSON but not a trace (no
 * traceEvents array: a config.json beside the traces): in a set of several
 * files it is left out with a warning, whatever skip_unreadable says. */
#define TRACE_ERR_NOT_KINETO "no traceEvents array: not a Kineto trace"

/* Load one file (.json or .json.gz, decided by the gzip magic bytes, not the
 * name).  No alignment, no filtering.  On failure returns NULL and writes
 * "FILE: byte OFFSET: what" into err.  A truncated file that still gave
 * events is not a failure: stats.truncated says so. */
struct trace_rank *trace_rank_load(const char *path, const struct trace_load_opts *opts,
				   struct buf *err);
/* The same from memory (fuzzing, tests).  name is used in messages and
 * for the file-name rank rule. */
struct trace_rank *trace_rank_load_mem(const char *name, const void *data, size_t len,
				       const struct trace_load_opts *opts, struct buf *err);
void trace_rank_free(struct trace_rank *r);

struct trace_set {
	struct trace_rank **ranks; /* ascending rank */
	size_t nranks;
	double min_ts;             /* the alignment offset (HTA min_ts_subtracted) */
	bool filtered;             /* the last-step filter was applied */
	char *warnings;            /* one warning per line ("" when none) */
	double finish_s;           /* wall seconds of trace_set_finish (additive) */
	size_t left_out;           /* files skip_unreadable left out (named in warnings); not
				    * those that are no trace at all (TRACE_ERR_NOT_KINETO) */
};

/* Load a file or a directory of traces (every *.json / *.json.gz entry, one
 * per rank, loaded in parallel threads), then align and filter like HTA
 * (1.3).  Returns 0, or -1 with a message in err. */
int trace_set_load(struct trace_set *set, const char *path, const struct trace_load_opts *opts,
		   struct buf *err);
/* The same from several inputs, the files of one job: each a file, a
 * directory (as above) or "-" (a trace on stdin, plain or gzip; once).
 * The rank rules are the directory's: a rank a file declares wins, files
 * without one get distinct ranks. */
int trace_set_load_paths(struct trace_set *set, const char *const *inputs, size_t ninputs,
			 const struct trace_load_opts *opts, struct buf *err);
/* Align and filter an already loaded set (used by trace_set_load and tests). */
void trace_set_finish(struct trace_set *set, const struct trace_load_opts *opts);
/* The set trace_set_load makes of one file, from a rank already loaded
 * (trace_rank_load_mem: tests, fuzzers): the set takes r over (freed by
 * trace_set_free), warnings as trace_set_load writes them, aligned and
 * filtered. */
void trace_set_from_rank(struct trace_set *set, struct trace_rank *r, const struct trace_load_opts *opts);
void trace_set_free(struct trace_set *set);

/* The rows every analysis sees (select.c), chosen once after the load:
 * ProfilerStep numbers and/or a span of the aligned time base. */
struct trace_select {
	bool iterations;        /* keep rows whose iteration is in [iter_lo, iter_hi] */
	int32_t iter_lo, iter_hi;
	bool time_range;        /* keep rows starting in [start, end) µs */
	double start, end;
};
/* Keep the selected rows of every rank (flows and counters inside the kept
 * rows' span); 0, or -1 with a message (what the trace holds) in err when
 * nothing would be left, the set then unchanged. */
int trace_set_select(struct trace_set *set, const struct trace_select *sel, struct buf *err);
/* The text forms (additive): "N" or "N-M" (0 <= N <= M) and "START:END"
 * (us, 0 <= START < END, finite).  0 with sel's part set, or -1 (sel
 * unchanged). */
int trace_select_parse_iterations(const char *s, struct trace_select *sel);
int trace_select_parse_time_range(const char *s, struct trace_select *sel);

/* The trace files of path appended to *paths (*np of *cap, malloc'd
 * strings): a directory's *.json / *.json.gz entries in name order, a file
 * or "-" as it is.  0, or -1 with the message in err. */
int trace_list_path(const char *path, char ***paths, size_t *np, size_t *cap, struct buf *err);
/* The file-name rank rule: "rank-N", "rank_N" or "rankN" in path's base name. */
bool trace_rank_from_name(const char *path, int *out);

/* The aten:: operator around each cudaLaunchKernel / cudaLaunchKernelExC
 * row (with kernel_only, only launches linked to a kernel row): the cpu_op
 * named aten::* on the launch's process and thread that encloses it, with
 * the latest start (the first in the trace at equal starts), HTA's rule in
 * get_aten_op_kernels_and_delay.  Returns the number of launches; their
 * rows in *launch (by thread and start) and each one's operator row or -1
 * in *op (both malloc'd).  (additive; src/trace/launch_ops.c) */
size_t trace_launch_ops(const struct trace_rank *r, bool kernel_only, uint32_t **launch, int32_t **op);

/* A human summary of what was skipped and why (empty when nothing was). */
void trace_load_stats_describe(const struct trace_rank *r, struct buf *out);

#endif
