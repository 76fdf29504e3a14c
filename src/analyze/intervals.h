/*
 * intervals.h - HTA's interval merging and type sweep (analysis-semantics
 * 1.8, 4 and 6), shared by the kernel breakdown (kernels.c) and the
 * communication/computation overlap (overlap.c).
 *
 * An interval is [ts, end) in µs.  Kineto's ns rounding can leave end < ts
 * (dur -1); such intervals are kept as they are, because HTA keeps them and
 * its sums include them.
 */
#ifndef DYNO_ANALYZE_INTERVALS_H
#define DYNO_ANALYZE_INTERVALS_H

#include <stddef.h>

struct ivl {
	double ts, end;
};

struct ivl_list {
	struct ivl *v;
	size_t n, cap;
};

void ivl_push(struct ivl_list *l, double ts, double end);
void ivl_free(struct ivl_list *l);

/* Merge in place like HTA: sort by ts; an interval whose ts is strictly
 * greater than the largest end seen so far starts a new group; each group
 * becomes [min ts, max end].  Touching intervals are merged. */
void ivl_merge(struct ivl_list *l);

/* One point of a sweep: at time t the running value changes by delta. */
struct ivl_point {
	double t;
	int delta;
};

/* Points of several merged lists, list k weighted by weight[k] (+ at ts,
 * - at end), sorted by time.  The caller frees *out. */
size_t ivl_sweep_points(const struct ivl_list *lists, const int *weight, size_t nlists,
			struct ivl_point **out);

#endif
