/*
 * insights.h - `dyno analyze insights` (insights.c): rules over the results
 * of the other analyses and a few per-rank measurements of its own, each
 * finding with its severity, the numbers that triggered it, where, one
 * recommendation and, where it costs step time, that cost (ms per step, %
 * of the step; findings are ranked by it); rules that cannot be evaluated
 * say why.  `dyno report` renders the same tables as HTML.
 *
 * The data flows through tables, like everything in src/analyze: the
 * per-rank task of insights measures what no analysis gives: the steps
 * (insight_steps.c: ProfilerStep, else the optimizer's ranges, the kernel
 * period, the whole trace), the step waterfall and the idle time by cause
 * and place (insight_attrib.c), and per step, stream, copy direction,
 * collective and kernel name the facts of insight_facts.c, into tables that
 * are not shown; the rules (insight_idle.c on the waterfall,
 * insight_rules.c on the other facts, insight_host.c on --metrics) read
 * those and the tables of the analyses insights .uses (temporal, idle,
 * kernels, overlap, launch, counters, annotations) from the runner.
 * Declarations only.
 */
#ifndef DYNO_ANALYZE_INSIGHTS_H
#define DYNO_ANALYZE_INSIGHTS_H

#include "analyze/hostmetrics.h"
#include "analyze/run.h"

struct insight_options {
	const char *metrics; /* --metrics FILE: the daemon's history or JSON log */
	double link_gbps;    /* --link-gbps: host<->device link peak (GB/s) */
};

/* The measurement tables of the per-rank task, in this order (the rows of
 * insights_tables[] after the two shown ones). */
enum {
	INSIGHT_T_FINDINGS,   /* "insights": one row per finding */
	INSIGHT_T_RULES,      /* "insight_rules": one row per rule */
	INSIGHT_T_ITERATIONS, /* "insight_iterations": per rank and ProfilerStep */
	INSIGHT_T_STREAMS,    /* "insight_streams": per rank and stream */
	INSIGHT_T_MEMCPY,     /* "insight_memcpy": per rank and direction */
	INSIGHT_T_COLLECTIVES, /* "insight_collectives": per rank, each collective kernel */
	INSIGHT_T_OCCUPANCY,  /* "insight_kernel_occupancy": per rank and computation kernel name */
	INSIGHT_T_WATERFALL,  /* "insight_waterfall": per rank and step, the step time by cause */
	INSIGHT_T_CAUSES,     /* "insight_idle_causes": per rank, GPU idle time by cause, place, thread */
	INSIGHT_NTABLES
};

/* Columns of the findings table past the first eleven (insights.c) */
enum { INSIGHT_F_COST_MS = 11, INSIGHT_F_COST_PCT, INSIGHT_F_STEPS_FROM, INSIGHT_F_COST_KIND };
/* Columns of the measurement tables (insight_facts.c fills them). */
enum { IT_RANK, IT_ITER, IT_START, IT_DUR, IT_GPU_BUSY, IT_IDLE_START, IT_LOADER, IT_SYNC, IT_SYNC_CALLS,
       IT_ITEM_CALLS, IT_KERNELS, IT_SHORT_KERNELS, IT_TOP_SYNC };
enum { IS_RANK, IS_STREAM, IS_KERNELS, IS_SHORT, IS_KERNEL_TIME, IS_MEDIAN_DUR, IS_COMM_TIME };
enum { IM_RANK, IM_DIR, IM_COPIES, IM_BIG, IM_BYTES, IM_TIME, IM_GBPS, IM_PAGEABLE };
enum { IC_RANK, IC_NAME, IC_NTH, IC_ITER, IC_TS, IC_DUR };
enum { IO_RANK, IO_NAME, IO_KERNELS, IO_TIME, IO_OCC, IO_OCC_TIME };
enum { IW_RANK, IW_STEP, IW_FROM, IW_START, IW_DUR, IW_BUSY, IW_COMM, IW_HOST_GAP, IW_LAUNCH, IW_SYNC, IW_COPY, IW_OTHER };
enum { ICA_RANK, ICA_CAUSE, ICA_WHERE, ICA_DETAIL, ICA_TID, ICA_TIME, ICA_STEPS, ICA_PIECES, ICA_PY };

/* A kernel shorter than this (µs) is "short" (launch overhead is ~5 µs). */
#define INSIGHT_SHORT_KERNEL_US 10.0
/* A host<->device copy at least this big counts for the bandwidth rule
 * (smaller ones are bound by latency, not the link). */
#define INSIGHT_BIG_COPY_BYTES (1 << 20)
/* dyno report computes HTA's critical path on its first rank only when
 * that rank has at most this many rows (--critical-path: always): it costs
 * about a tenth of a load per million rows. */
#define INSIGHT_CP_MAX_ROWS 1000000

/* ---- steps (insight_steps.c) ---- */
enum insight_step_source {
	INSIGHT_STEPS_PROFILER,      /* ProfilerStep#N */
	INSIGHT_STEPS_OPTIMIZER,     /* between the ends of Optimizer.step#... */
	INSIGHT_STEPS_KERNEL_PERIOD, /* the period of the repeating kernel sequence */
	INSIGHT_STEPS_WHOLE,         /* the whole trace as one span */
};
struct insight_step {
	double s, e; /* µs */
	int64_t id;  /* ProfilerStep number, else 0, 1, ... (-1: the whole trace) */
};
const char *insight_step_source_name(enum insight_step_source s);
/* a rank's steps, ascending (*out: free it); 0 only for an empty rank */
size_t insight_steps_find(const struct trace_rank *r, struct insight_step **out, enum insight_step_source *src);
/* the step of v[0..n) that contains ts; -1: none */
long insight_step_of(const struct insight_step *v, size_t n, double ts);
/* "ProfilerStep#12" -> 12; -1: not a step */
int64_t insight_profiler_step(const char *name);
/* A rank's steps, found once per rank (insights.c) for the facts and the
 * attribution. */
struct insight_steps {
	struct insight_step *v;
	size_t n;
	enum insight_step_source src;
};
/* the index of ProfilerStep it in r->iterations; -1: not one of them
 * (insight_facts.c) */
int insight_iter_index(const struct trace_rank *r, int64_t it);

/* ---- the attribution of GPU idle time (insight_attrib.c) ---- */
enum insight_cause {
	INSIGHT_C_BUSY,     /* the GPU runs kernels, memsets, pinned copies */
	INSIGHT_C_COMM,     /* it runs only communication kernels (exposed) */
	INSIGHT_C_HOST_GAP, /* idle, the launching thread outside every operator */
	INSIGHT_C_LAUNCH,   /* idle, the launching thread inside an operator */
	INSIGHT_C_SYNC,     /* idle, the launching thread in a blocking sync */
	INSIGHT_C_COPY,     /* a pageable copy runs or is staged by the host */
	INSIGHT_C_OTHER,    /* idle, no launching thread known */
	INSIGHT_NCAUSES
};
const char *insight_cause_name(enum insight_cause c);
struct atable *insight_waterfall_new(void);
struct atable *insight_causes_new(void);
void insight_attrib_rank(const struct trace_rank *r, const struct insight_steps *steps, struct atable *waterfall,
			 struct atable *causes);

struct atable *insight_iterations_new(void);
struct atable *insight_streams_new(void);
struct atable *insight_memcpy_new(void);
struct atable *insight_collectives_new(void);
struct atable *insight_occupancy_new(void);
/* one rank's measurement tables into out[INSIGHT_T_ITERATIONS..] */
void insight_facts_rank(const struct trace_rank *r, const struct insight_steps *steps, struct atable **out);
/* a blocking CUDA/HIP sync call: cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, cudaMemcpy, hipDeviceSynchronize, hipStreamSynchronize */
bool insight_is_sync_call(const char *name);

enum insight_severity { INSIGHT_INFO, INSIGHT_MEDIUM, INSIGHT_HIGH };
const char *insight_severity_name(enum insight_severity s);

/* One finding (insight_add copies it into the findings table). */
struct insight_finding {
	enum insight_severity sev;
	int rank;          /* -1: all ranks (a cross-rank finding) */
	int64_t iteration; /* -1: none in particular */
	int64_t stream;    /* -1: none in particular */
	const char *where; /* the operator, kernel or key; NULL: none */
	double value;      /* the rule's metric, the number that triggered it */
	double threshold;  /* where it fires */
	const char *evidence; /* the numbers, one line */
	/* what it costs (0: no time cost): the mean µs per typical step, the
	 * step's µs, where the steps came from; findings are ranked by it */
	double cost_us, step_us;
	const char *steps_from;
	/* the cost is time the GPU spends on the finding's own work (a hot
	 * kernel, slow copies), not time lost: ranked after every lost-time
	 * finding */
	bool busy_cost;
};

/* A rank's waterfall (insight_waterfall rows) averaged over its typical
 * steps (of four or more: those within 25% of the median step duration);
 * -1: no step. */
struct insight_wmean {
	size_t nsteps, ntypical;
	double median, step, part[INSIGHT_NCAUSES];
	const char *from;
};
int insight_waterfall_mean(const struct atable *waterfall, int rank, struct insight_wmean *w);


/* What a rule reads and writes. */
struct insight_eval {
	const struct trace_set *view;
	const struct analyze_results *results; /* the used analyses' tables */
	struct atable *const *t;               /* insights' own tables (INSIGHT_T_*) */
	const struct insight_options *opts;
	const struct host_metrics *metrics;    /* NULL: no --metrics (or unreadable) */
	const char *metrics_why;               /* why metrics is NULL */
	const struct insight_rule *rule;       /* the rule being evaluated */
	size_t fired;                          /* its findings so far */
};

/* A rule: returns 0 evaluated (measured: the numbers it saw, fired or not)
 * or -1 not evaluated (measured: why). */
struct insight_rule {
	const char *name;
	const char *measures;  /* what it measures */
	const char *threshold; /* when it fires */
	const char *recommendation;
	const char *metric;    /* the unit of insight_finding.value */
	int (*eval)(struct insight_eval *e, struct buf *measured);
};

#define RULE(n) extern const struct insight_rule insight_rule_##n;
#include "analyze/insight_list.h"
#undef RULE

void insight_add(struct insight_eval *e, const struct insight_finding *f);
/* f's cost: total_us spread over the rank's steps (the trace's total for
 * its N steps), as a share of its mean typical step; nothing when the rank
 * has no step.  Appends "; per step: ..." to ev (insight_idle.c). */
void insight_cost_per_step(const struct insight_eval *e, int rank, double total_us, bool busy,
			   struct insight_finding *f, struct buf *ev);

/* Helpers for rules over the results. */
/* the result table named name (a per-rank table: its full name, e.g.
 * "cuda_kernel_launch_stats_rank0"); NULL: not computed (skipped, or the
 * analysis did not run) */
const struct atable *insight_table(const struct insight_eval *e, const char *name);
/* why summary skipped the analysis that makes table name; NULL: it ran */
const char *insight_skipped(const struct insight_eval *e, const char *analysis);
/* column index of name in t; -1: none */
int insight_col(const struct atable *t, const char *name);
static inline double insight_f(const struct atable *t, size_t row, int col)
{
	return col < 0 ? 0 : t->cols[col].type == ACOL_INT ? (double)t->cells[row * t->ncols + (size_t)col].i
							   : t->cells[row * t->ncols + (size_t)col].f;
}
static inline int64_t insight_i(const struct atable *t, size_t row, int col)
{
	return col < 0 ? 0 : t->cols[col].type == ACOL_INT ? t->cells[row * t->ncols + (size_t)col].i
							   : (int64_t)t->cells[row * t->ncols + (size_t)col].f;
}
static inline const char *insight_s(const struct atable *t, size_t row, int col)
{
	return col < 0 || t->cols[col].type != ACOL_STR ? "" : t->cells[row * t->ncols + (size_t)col].s;
}
/* median of v[0..n) (sorts v); NaN when n == 0 */
double insight_median(double *v, size_t n);
/* "12.3 ms", "450 us", "1.20 s" */
void insight_fmt_us(struct buf *b, double us);

#endif
