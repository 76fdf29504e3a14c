/*
 * analyze.h - the `dyno analyze` analyses over a loaded struct trace_set
 * (src/trace/model.h).  Each returns result tables (src/analyze/table.h)
 * with the rows and column names of HTA's frames, computed with HTA's
 * definitions (docs/analysis-semantics.md; docs/analyze.md).
 * A rank on which an analysis is undefined (HTA raises) is left out with a
 * note on the table, never reported as zeros.
 */
#ifndef DYNO_ANALYZE_H
#define DYNO_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/kernels.h"
#include "analyze/table.h"
#include "trace/model.h"

/* Rank selection: NULL/0 = all ranks of the set. */
struct analyze_ranks {
	const int *ranks;
	size_t n;
};
bool analyze_rank_selected(const struct analyze_ranks *sel, int rank);

/* 2. temporal_breakdown.csv */
struct atable *analyze_temporal(const struct trace_set *set, const struct analyze_ranks *sel);

/* 3. idle_time_breakdown.csv (+ idle_interval_stats.csv into *stats when
 * stats is not NULL).  consecutive_kernel_delay in µs (HTA default 30). */
struct atable *analyze_idle(const struct trace_set *set, const struct analyze_ranks *sel,
			    double consecutive_kernel_delay, struct atable **stats);

/* 7. cuda_kernel_launch_stats_rank<r>.csv, one table per selected rank
 * (sorted by correlation), with the derived counts as notes. */
struct launch_opts {
	double runtime_cutoff;      /* µs, HTA 50 */
	double launch_delay_cutoff; /* µs, HTA 100 */
	bool include_memory_events; /* HTA true */
};
size_t analyze_launch(const struct trace_set *set, const struct analyze_ranks *sel,
		      const struct launch_opts *o, struct atable ***out);

/* 4. kernel_type_breakdown.csv into *types and kernel_metrics.csv into
 * *metrics (src/analyze/kernels.c; options and HTA defaults in kernels.h:
 * KERNEL_BREAKDOWN_OPTS_DEFAULT). */
void analyze_kernels(const struct trace_set *set, const struct analyze_ranks *sel,
		     const struct kernel_breakdown_opts *o, struct atable **types, struct atable **metrics);

/* 5. kernel duration distribution (distribution.c): *dist is
 * kernel_duration_distribution (per kernel and rank: mean/min/max/sum, HTA's
 * kernel_metrics without "others"), *spread is kernel_rank_spread (per
 * kernel: fastest and slowest rank by mean, and their ratio; not in HTA). */
void analyze_kernel_distribution(const struct trace_set *set, const struct analyze_ranks *sel,
				 const struct kernel_breakdown_opts *o, struct atable **dist,
				 struct atable **spread);

/* The tables of the two above from a breakdown already computed on view
 * (the selected ranks only), so that `summary` computes it once. */
void analyze_kernels_tables(const struct trace_set *view, const struct kernel_breakdown_opts *o,
			    const struct kernel_breakdown *kb, struct atable **types, struct atable **metrics);
void analyze_kernel_distribution_tables(const struct trace_set *view, const struct kernel_breakdown_opts *o,
					const struct kernel_breakdown *kb, struct atable **dist,
					struct atable **spread);

/* 6. comm_comp_overlap.csv (overlap.c) */
struct atable *analyze_overlap(const struct trace_set *set, const struct analyze_ranks *sel);

/* Several analyses at once, each rank of each on a thread of a pool
 * (run.c): the tables are the same, byte for byte, as those of the
 * functions above over the same selection, for any thread count. */
enum {
	AN_TEMPORAL = 1,
	AN_IDLE = 2,
	AN_KERNELS = 4, /* kernel_type_breakdown + kernel_metrics */
	AN_KDIST = 8,   /* kernel_duration_distribution + kernel_rank_spread */
	AN_OVERLAP = 16,
	AN_LAUNCH = 32,
	AN_ALL = 63,
};
struct analyze_run_opts {
	unsigned which;   /* AN_* bits */
	double delay;     /* idle: consecutive kernel delay, µs */
	bool idle_stats;  /* idle: also idle_interval_stats */
	struct kernel_breakdown_opts kernels;
	struct launch_opts launch;
	int threads;      /* <= 0: the number of online cores */
};
/* Wall time of one task: what ran, on which rank (-1: all ranks). */
struct analyze_timing {
	const char *what; /* static text */
	int rank;
	double s;
};
struct analyze_results {
	/* NULL where not asked for */
	struct atable *temporal, *idle, *idle_stats, *ktypes, *kmetrics, *kdist, *kspread, *overlap;
	struct atable **launch; /* one per selected rank */
	size_t nlaunch;
	struct analyze_timing *timings;
	size_t ntimings;
	double wall_s; /* the whole of analyze_run */
};
void analyze_run(const struct trace_set *set, const struct analyze_ranks *sel, const struct analyze_run_opts *o,
		 struct analyze_results *out);
void analyze_results_free(struct analyze_results *r);

#endif
