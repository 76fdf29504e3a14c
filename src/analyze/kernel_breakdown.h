/*
 * kernel_breakdown.h - the GPU kernel breakdown, HTA's
 * get_gpu_kernel_breakdown() (analysis-semantics section 4): the step that
 * `dyno analyze kernels` lays out as tables (kernels.c) and that the kernel
 * duration distribution across ranks builds on (section 5,
 * distribution.c).  The runner computes it once for both (the shared step
 * analysis_step_kernel_breakdown, declared in analysis.h).
 *
 * Model in, result out: no I/O.
 */
#ifndef DYNO_ANALYZE_KERNEL_BREAKDOWN_H
#define DYNO_ANALYZE_KERNEL_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/model.h"

/* Bits of a kernel type label: 1 << trace_ktype, so COMPUTATION = 1,
 * COMMUNICATION = 2, MEMORY = 4 (HTA's order). */
#define KB_MASK_MAX 8

struct kernel_breakdown_opts {
	double duration_ratio; /* HTA default 0.8 */
	uint64_t num_kernels;  /* HTA default 10 */
	bool include_memory;   /* HTA facade default true */
};
#define KERNEL_BREAKDOWN_OPTS_DEFAULT {.duration_ratio = 0.8, .num_kernels = 10, .include_memory = true}

/* One row of kernel_type_breakdown: a label (e.g. "COMPUTATION overlapping
 * COMMUNICATION"), its time summed over ranks, and its share. */
struct kernel_type_row {
	unsigned mask;
	double sum;        /* µs */
	double percentage; /* round(100 * sum / total, 1) */
};

/* One row of kernel_metrics.  name is "others" for the folded kernels. */
struct kernel_metric_row {
	const char *name; /* points into the rank's string table or is "others" */
	double sum, max, min, stddev, mean; /* µs */
	uint64_t count;   /* calls (for "others": folded kernels); not in HTA's CSV */
	enum trace_ktype type;
	int rank;
	bool others;
};

struct kernel_breakdown {
	struct kernel_type_row *types; /* sorted by sum, descending */
	size_t ntypes;
	struct kernel_metric_row *metrics; /* sorted by type name, name, rank */
	size_t nmetrics;
};

/* "COMPUTATION overlapping MEMORY" etc.; "" for 0. */
const char *kernel_type_label(unsigned mask);

/* Run the breakdown on every rank of set.  The result points into set's
 * string tables: free it before the set. */
void kernel_breakdown_run(const struct trace_set *set, const struct kernel_breakdown_opts *opts,
			  struct kernel_breakdown *out);
void kernel_breakdown_free(struct kernel_breakdown *kb);

/* The same in two steps, so that ranks can run in parallel threads:
 * kernel_breakdown_rank() reads one rank only; kernel_breakdown_combine()
 * takes the parts in rank order (it frees their rows) and gives exactly
 * kernel_breakdown_run()'s result. */
struct kernel_rank_part {
	double typesum[KB_MASK_MAX]; /* µs per label mask */
	struct kernel_metric_row *rows;
	size_t nrows;
};
void kernel_breakdown_rank(const struct trace_rank *r, const struct kernel_breakdown_opts *opts,
			   struct kernel_rank_part *out);
void kernel_breakdown_combine(struct kernel_rank_part *parts, size_t nparts, struct kernel_breakdown *out);

/* HTA's per-name statistics with its folding into "others" (the
 * per-kernel rows above) over the rows i of r where keep(r, i) holds,
 * e.g. the user annotations: *rows (malloc'd, type TRACE_KT_OTHER) in the
 * order of the folding (sum descending), *nrows of them. */
void kernel_name_metrics(const struct trace_rank *r, bool (*keep)(const struct trace_rank *r, size_t i),
			 const struct kernel_breakdown_opts *o, struct kernel_metric_row **rows, size_t *nrows);

#endif
