/*
 * distribution.h - kernel duration distribution across ranks (HTA section
 * 5).  HTA only plots it: per kernel name, the mean of each rank with
 * min/max error bars, taken from kernel_metrics (so its "others" folding
 * applies).  We give the same numbers as a table, plus which ranks are the
 * fastest and slowest for each kernel and the ratio between them.
 */
#ifndef DYNO_ANALYZE_DISTRIBUTION_H
#define DYNO_ANALYZE_DISTRIBUTION_H

#include "analyze/kernel_breakdown.h"

/* For each kernel name (not "others") of kernel_metrics, its mean/min/max
 * on every rank, and how far apart the ranks are. */
struct kernel_dist_row {
	const char *name;
	enum trace_ktype type;
	size_t first, count;      /* rows of kb->metrics for this name, by rank */
	double mean_lo, mean_hi;  /* smallest and largest per-rank mean */
	int rank_lo, rank_hi;     /* the ranks that have them */
	double spread;            /* mean_hi / mean_lo (NaN when mean_lo <= 0) */
};

struct kernel_dist {
	struct kernel_dist_row *rows; /* sorted by type name, name */
	size_t nrows;
};

/* Built from a kernel breakdown (which must outlive it). */
void kernel_dist_run(const struct kernel_breakdown *kb, struct kernel_dist *out);
void kernel_dist_free(struct kernel_dist *kd);

#endif
