/*
 * analysis.h - the analyses of `dyno analyze` as one table.  Each analysis
 * is one file (src/analyze/<name>.c) defining one `const struct analysis`
 * row: its subcommand name and help, its options, what the loader must
 * keep for it, its per-rank task and cross-rank step, and its output
 * tables (HTA's CSV names, which are on stdout by default, how the terminal
 * shows them).  src/analyze/list.h lists the rows; the runner (run.h) and
 * the CLI (src/cli/analyze.c) only iterate that list, so adding an
 * analysis is its file plus one line there.
 *
 * The analyses compute HTA's frames with HTA's definitions
 * (docs/analysis-semantics.md, docs/analyze.md).  A rank on which an
 * analysis is undefined (HTA raises) is left out with a note on the table,
 * never reported as zeros.  Each existing analysis is also a plain function
 * over a set and a rank selection (below): the runner's tasks call it on
 * one-rank views, and tests, fuzzers and benches call it directly.
 * Declarations only; nothing here costs anything at run time.
 */
#ifndef DYNO_ANALYZE_ANALYSIS_H
#define DYNO_ANALYZE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/kernel_breakdown.h"
#include "analyze/table.h"
#include "core/args.h"
#include "trace/model.h"

/* ---- the table ---- */

/* What the loader must keep for an analysis (struct trace_load_opts drops
 * each unless an analysis that runs asks for it). */
enum {
	ANALYSIS_LOAD_CPU_OPS = 1,  /* CPU operator rows (skip_cpu_ops) */
	ANALYSIS_LOAD_FLOWS = 2,    /* flow events (no_flows) */
	ANALYSIS_LOAD_COUNTERS = 4, /* counter events (no_counters) */
	ANALYSIS_LOAD_ALL_STEPS = 8, /* no last-step filter (keep_last_step): HTA's parse_traces only */
	ANALYSIS_LOAD_PYTHON = 16,   /* python_function rows (keep_python) */
	ANALYSIS_LOAD_ANNOTATIONS = 32, /* user_annotation rows, even when CPU ops are skipped
					 * (keep_user_annotations) */
	ANALYSIS_LOAD_EVENT_WAITS = 64, /* the event-wait args of cuda_sync rows (keep_event_waits) */
	ANALYSIS_LOAD_PROFILER_ARGS = 128, /* numeric args of cuda_profiler_range rows
					   * (keep_profiler_args): the CUPTI counters */
	ANALYSIS_LOAD_OCCUPANCY = 256, /* kernels' "est. achieved occupancy %"
					* (keep_kernel_occupancy, trace_rank.occupancy) */
	ANALYSIS_LOAD_LAUNCH_OPS = 512, /* only the aten:: operators around kernel launches
					 * (launch_ops_only), unless CPU_OPS */
	ANALYSIS_LOAD_RANGE_OPS = 1024, /* every operator of a rank with cuda_profiler_range
					 * rows, the others' as LAUNCH_OPS (keep_range_ops) */
};

/* One command-line option: an args row whose value lives at offset in the
 * options struct of its analysis (arg.ptr and arg.seen are not used; the
 * CLI's row points into that analysis's options). */
struct analysis_opt {
	struct arg_opt arg;
	size_t offset;
};

/* An options struct, its defaults and the rows that set it. */
struct analysis_optdef {
	size_t size;                     /* 0: no options */
	const void *defaults;            /* size bytes */
	const struct analysis_opt *rows; /* ends with arg.name NULL; NULL: none */
	/* after parsing: refuse a bad value (message into err, return -1);
	 * NULL: every value is fine */
	int (*check)(const void *opts, struct buf *err);
};

/* What decides whether a table goes to stdout. */
struct analysis_show {
	enum aformat fmt;
	bool summary;     /* every analysis at once */
	bool every_table; /* --csv-dir: every table is written to a file */
};

/* One output table of an analysis. */
struct analysis_table {
	const char *csv; /* HTA's CSV file name without ".csv"; per_rank: the prefix the rank follows */
	bool per_rank;   /* one table per rank (not appended across ranks) */
	bool notes_only_in_terminal; /* --format table prints its title and notes, not its rows */
	/* on stdout?  NULL: always.  A table neither shown nor written to
	 * --csv-dir is not computed (when its analysis can skip it) or dropped. */
	bool (*shown)(const void *opts, const struct analysis_show *s);
};

struct analyze_results;

/* What a task of an analysis gets. */
struct analysis_ctx {
	const void *opts;         /* the analysis's options */
	const bool *want;         /* per table: wanted (shown or --csv-dir) */
	const void *prepare_opts; /* the options of .prepare */
	const void *prepared;     /* the combined result of .prepare (combine only) */
	/* combine only: the tables of the analyses finished before this one
	 * (those of .uses among them) and the ones summary skipped, why (run.h) */
	const struct analyze_results *results;
};

/* A per-rank step several analyses share, computed once for all of them
 * (the kernel breakdown of `kernels` and `kernel-distribution`). */
struct analysis_step {
	const char *name; /* for --timings */
	struct analysis_optdef opts;
	double cost;      /* of one rank, relative to the analyses' (bigger runs first) */
	size_t part_size; /* the result of one rank */
	void (*rank)(const void *opts, const struct trace_rank *r, void *part);
	/* parts[0..n) in rank order: combine takes what they hold (the runner
	 * frees the array); its result is handed to the analyses, then to free */
	void *(*combine)(const void *opts, void *parts, size_t n);
	void (*free)(void *combined);
};

struct analysis {
	const char *name; /* the subcommand: "kernel-distribution" */
	const char *help; /* one line for --help */
	unsigned load;    /* ANALYSIS_LOAD_* */
	struct analysis_optdef opts;
	const struct analysis_table *tables; /* in output order */
	size_t ntables;
	const struct analysis_step *prepare; /* NULL: none */
	double cost; /* of one rank task, relative (bigger runs first) */
	/* runs only when asked for by name, not in `summary` (nor does its
	 * .load then cost `summary` anything) */
	bool own_command;
	/* One rank: fills out[t] for the wanted tables t (others may be left
	 * NULL or filled; the runner drops them).  view holds one rank, or none
	 * at all (then it runs once, so that its notes say so).  NULL: no
	 * per-rank work. */
	void (*rank)(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out);
	/* All ranks, after the rank tasks and .prepare: out[t] holds the rank
	 * tables appended in rank order (NULL for per_rank tables); it may fill
	 * them (or replace one, freeing it).  view holds the selected ranks.
	 * NULL: nothing. */
	void (*combine)(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out);
	/* An analysis of two sets (`dyno analyze diff CONTROL TEST`): called
	 * once, instead of .rank and .combine, with the selected ranks of
	 * each; fills out[t] like .rank.  Such an analysis is not part of
	 * `summary` (one input).  NULL: one set. */
	void (*pair)(const struct analysis_ctx *c, const struct trace_set *control, const struct trace_set *test,
		     struct atable **out);
	/* summary only: why the analysis is undefined on every selected rank
	 * (one static line, e.g. "no GPU events (no row has a stream)"); it is
	 * then not run, and summary says so.  NULL return: it runs.  Asked
	 * only when view holds at least one rank; must be cheap (an early-exit
	 * scan).  NULL: always defined.  Run alone, an analysis always runs
	 * and its notes say what is missing. */
	const char *(*skip)(const void *opts, const struct trace_set *view);
	/* Analyses whose tables .combine reads (ctx->results), NULL-terminated;
	 * NULL: none.  Run for it as summary would run them (their .skip
	 * applies, their tables are computed but not shown), before it: an
	 * analysis built on others' results, not a second copy of them.  They
	 * must come before it in list.h. */
	const struct analysis *const *uses;
	/* the string option it cannot run without when asked for by name
	 * ("operator": patterns' --operator NAME): a usage error (exit 2)
	 * before any loading.  NULL: none */
	const char *required;
};

/* Every analysis, in output order (list.h). */
#define ANALYSIS(n) extern const struct analysis analysis_##n;
#include "analyze/list.h"
#undef ANALYSIS
enum {
#define ANALYSIS(n) +1
	ANALYSIS_COUNT = 0
#include "analyze/list.h"
#undef ANALYSIS
};
extern const struct analysis *const analysis_list[ANALYSIS_COUNT];
/* by subcommand name; NULL: none */
const struct analysis *analysis_find(const char *name);
/* The loader options for running a (NULL: every analysis): skip what none
 * of them needs. */
void analysis_load_opts(const struct analysis *a, struct trace_load_opts *lo);

/* The options of every analysis and shared step (config.c): one block
 * each, at its defaults, and the command-line rows bound to the blocks. */
struct analysis_config {
	size_t n;
	const struct analysis_optdef **defs;
	void **blocks;
	struct arg_opt *rows; /* every option row, in table order */
	size_t nrows;
	/* an option two analyses both define (--write-trace): one row, whose
	 * value analysis_config_check() copies into the later blocks */
	struct analysis_alias {
		void *dst;
		size_t row; /* the row that holds the value (rows move as they grow) */
		size_t size;
	} *aliases;
	size_t naliases;
};
void analysis_config_init(struct analysis_config *c);
/* the block of d (an analysis's or step's .opts) */
void *analysis_config_opts(const struct analysis_config *c, const struct analysis_optdef *d);
/* every check(): 0, or -1 with the first complaint in err */
int analysis_config_check(const struct analysis_config *c, struct buf *err);
void analysis_config_free(struct analysis_config *c);

/* ---- rank selection (view.c) ---- */

/* NULL/0 = all ranks of the set. */
struct analyze_ranks {
	const int *ranks;
	size_t n;
};
bool analyze_rank_selected(const struct analyze_ranks *sel, int rank);
/* "0,3,7" (non-negative ranks): 0 with *out (free it; NULL for "" or
 * NULL) and *n, or -1. */
int analyze_ranks_parse(const char *s, int **out, size_t *n);
/* Is every selected rank in set?  0, or -1 with "rank N is not in WHERE
 * (ranks: 0 1 ...)" in err. */
int analyze_ranks_check(const struct trace_set *set, const struct analyze_ranks *sel, const char *where,
			struct buf *err);
/* A set sharing the selected ranks of set (free .ranks only). */
struct trace_set analyze_view(const struct trace_set *set, const struct analyze_ranks *sel);
/* A set sharing rank k of set only (nothing to free). */
struct trace_set analyze_view_rank(const struct trace_set *set, size_t k);

/* The .skip of the analyses that need GPU rows: "no GPU events (no row
 * has a stream)" when no rank of view has a row with a stream, else NULL. */
const char *analyze_skip_no_gpu(const void *opts, const struct trace_set *view);

/* ---- each analysis as a plain function ---- */

/* temporal.c: temporal_breakdown */
struct atable *analyze_temporal(const struct trace_set *set, const struct analyze_ranks *sel);

/* idle.c: idle_time_breakdown (+ idle_interval_stats into *stats when
 * stats is not NULL).  consecutive_kernel_delay in µs (HTA default 30). */
struct idle_options {
	double delay;        /* --consecutive-kernel-delay */
	bool interval_stats; /* --interval-stats */
};
struct atable *analyze_idle(const struct trace_set *set, const struct analyze_ranks *sel,
			    double consecutive_kernel_delay, struct atable **stats);

/* launch.c: cuda_kernel_launch_stats_rank<r>, one table per selected rank
 * (sorted by correlation), with the derived counts as notes. */
struct launch_opts {
	double runtime_cutoff;      /* µs, HTA 50 */
	double launch_delay_cutoff; /* µs, HTA 100 */
	bool include_memory_events; /* HTA true */
};
struct launch_options {
	double runtime_cutoff, launch_delay_cutoff; /* --runtime-cutoff, --launch-delay-cutoff */
	bool no_memory_events;                      /* --no-memory-events */
};
size_t analyze_launch(const struct trace_set *set, const struct analyze_ranks *sel,
		      const struct launch_opts *o, struct atable ***out);

/* The shared kernel breakdown step (kernel_breakdown.c) and its options. */
extern const struct analysis_step analysis_step_kernel_breakdown;
struct kernel_step_options {
	int64_t num_kernels;    /* --num-kernels */
	double duration_ratio;  /* --duration-ratio */
	bool all_kernels;       /* --all-kernels: no folding */
	bool no_memory_kernels; /* --no-memory-kernels */
};
/* the breakdown's options from the command line's */
struct kernel_breakdown_opts kernel_step_breakdown_opts(const struct kernel_step_options *o);

/* kernels.c: kernel_type_breakdown into *types and kernel_metrics into
 * *metrics (options and HTA defaults in kernel_breakdown.h). */
struct kernels_options {
	bool top; /* --top: the per-kernel table on stdout instead of the type breakdown */
};
void analyze_kernels(const struct trace_set *set, const struct analyze_ranks *sel,
		     const struct kernel_breakdown_opts *o, struct atable **types, struct atable **metrics);
/* the same from a breakdown already computed on view (the selected ranks) */
void analyze_kernels_tables(const struct trace_set *view, const struct kernel_breakdown_opts *o,
			    const struct kernel_breakdown *kb, struct atable **types, struct atable **metrics);
/* Ranks of view with no row on a stream get a note on t ("no <what>"), and
 * an empty view one saying no selected rank is in the trace. */
void analyze_note_no_gpu(struct atable *t, const struct trace_set *view, const char *what);

/* distribution.c: *dist is kernel_duration_distribution (per kernel and
 * rank: mean/min/max/sum, HTA's kernel_metrics without "others"), *spread
 * is kernel_rank_spread (per kernel: fastest and slowest rank by mean, and
 * their ratio; not in HTA). */
void analyze_kernel_distribution(const struct trace_set *set, const struct analyze_ranks *sel,
				 const struct kernel_breakdown_opts *o, struct atable **dist,
				 struct atable **spread);
void analyze_kernel_distribution_tables(const struct trace_set *view, const struct kernel_breakdown_opts *o,
					const struct kernel_breakdown *kb, struct atable **dist,
					struct atable **spread);

/* diff.c: HTA's compare_traces_{all,cpu,gpu}[_short] and ops_diff into
 * out[0..7) (in that order) for one rank and ProfilerStep of each set. */
struct diff_options {
	int64_t iteration;  /* --iteration; -1: each side's first */
	const char *device; /* --device all|cpu|gpu: the table shown */
	bool short_names;   /* --short-names: the table by short names shown */
};
struct diff_select {
	int64_t rank;      /* -1: the first of each set */
	int64_t iteration; /* -1: the first of each side */
};
void analyze_diff(const struct trace_set *control, const struct trace_set *test, const struct diff_select *sel,
		  struct atable **out);

/* overlap.c: comm_comp_overlap */
struct atable *analyze_overlap(const struct trace_set *set, const struct analyze_ranks *sel);

/* annotations.c: gpu_user_annotation_breakdown into *gpu and
 * cpu_user_annotation_breakdown into *cpu (either may be NULL), HTA's
 * defaults (num_kernels 1000, duration_ratio 0.8). */
void analyze_annotations(const struct trace_set *set, const struct analyze_ranks *sel, struct atable **gpu,
			 struct atable **cpu);

/* op_kernels.c: aten_op_kernels_and_delay_rank<r>, one table per selected
 * rank (HTA's get_aten_op_kernels_and_delay). */
size_t analyze_op_kernels(const struct trace_set *set, const struct analyze_ranks *sel, struct atable ***out);

/* patterns.c: frequent_patterns of one rank (HTA's
 * get_frequent_cuda_kernel_sequences): the operators whose name contains op,
 * patterns of at least min_len GPU kernels; top_k only counts in the notes.
 * No rows, a note and .unavailable where HTA returns an empty frame. */
struct patterns_options {
	const char *op;  /* --operator; NULL: none given */
	int64_t min_len; /* --min-len, HTA's min_pattern_len 3 */
	int64_t top_k;   /* --top-k, HTA 5: the rows the notes count */
	int64_t rank;    /* --patterns-rank; -1: the first selected */
	const char *trace_out; /* --patterns-trace OUT: HTA's overlaid trace */
};
struct atable *analyze_patterns_rank(const struct trace_rank *r, const char *op, int64_t min_len, int64_t top_k);
/* The same, and marks[0..r->n) (the caller's array): for each row in the
 * subtree of a root of one of the top_k patterns (HTA's pattern_indices),
 * that pattern's row in the table; -1 elsewhere.  marks may be NULL. */
struct atable *analyze_patterns_marks(const struct trace_rank *r, const char *op, int64_t min_len, int64_t top_k,
				      int32_t *marks);
/* patterns_trace.c: r's trace file, unchanged but for a "Patterns" arg
 * ({pattern: count}) on each event marked (marks, t's rows) as HTA's
 * overlaid trace has, to out (gzip when it ends in ".gz").  0, or -1 with
 * a message in err. */
int patterns_write_trace(const struct trace_rank *r, const struct atable *t, const int32_t *marks, const char *out,
			 struct buf *err);

/* counters.c: the tables of one rank, in this order: queue_length_summary,
 * queue_length_time_series_rank<r>, time_blocked_on_full_queue,
 * memory_bw_summary, memory_bw_time_series_rank<r> (HTA's augmented
 * counters; max_queue_length HTA 1024).  Without series, the two series
 * tables are NULL and not built (the summaries are the same). */
enum { COUNTERS_NTABLES = 5 };
void analyze_counters_rank(const struct trace_rank *r, int64_t max_queue_length, bool series, struct atable **out);

/* cupti.c: cupti_counters_<r>, one table per selected rank (HTA's
 * get_cupti_counter_data_with_operators; needs a load with
 * keep_profiler_args and the CPU rows). */
struct atable *analyze_cupti_rank(const struct trace_rank *r);
size_t analyze_cupti(const struct trace_set *set, const struct analyze_ranks *sel, struct atable ***out);

#endif
