/*
 * kernel_tables.h - the result tables (analyze/table.h) of the kernel
 * breakdown, the kernel duration distribution and the comm/comp overlap,
 * for `dyno analyze kernels|kernel-distribution|overlap|summary`.  CSV
 * column names are HTA's: kernel_type_breakdown.csv, kernel_metrics.csv,
 * comm_comp_overlap.csv.  The computations are in kernels.c,
 * distribution.c and overlap.c; this file only lays out their results.
 */
#ifndef DYNO_ANALYZE_KERNEL_TABLES_H
#define DYNO_ANALYZE_KERNEL_TABLES_H

#include "analyze/analyze.h"
#include "analyze/kernels.h"

/* kernel_type_breakdown and kernel_metrics of the selected ranks. */
void analyze_kernels(const struct trace_set *set, const struct analyze_ranks *sel,
		     const struct kernel_breakdown_opts *o, struct atable **types, struct atable **metrics);

/* kernel_duration_distribution (per kernel and rank: mean/min/max) and
 * kernel_rank_spread (per kernel: slowest vs fastest rank), from the same
 * kernel_metrics as HTA's plots. */
void analyze_kernel_distribution(const struct trace_set *set, const struct analyze_ranks *sel,
				 const struct kernel_breakdown_opts *o, struct atable **dist,
				 struct atable **spread);

/* comm_comp_overlap. */
struct atable *analyze_overlap(const struct trace_set *set, const struct analyze_ranks *sel, bool fixed_classify);

#endif
