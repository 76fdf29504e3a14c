/*
 * intervals.h - HTA's interval merging (semantics doc 1.8), shared by the
 * analyses: sort [ts, ts+dur) by ts; a new group starts where ts is
 * strictly greater than the running maximum end, so touching intervals
 * merge.
 */
#ifndef DYNO_ANALYZE_INTERVALS_H
#define DYNO_ANALYZE_INTERVALS_H

#include <stddef.h>

struct ival {
	double ts, end;
};

/* Sort v[0..n) by ts and merge in place; returns the merged count. */
size_t ival_merge(struct ival *v, size_t n);
/* Σ (end - ts). */
double ival_total(const struct ival *v, size_t n);
/* The time of the merged (sorted, disjoint) intervals m[0..n) inside
 * [s, e): a binary search, then the intervals that overlap. */
double ival_overlap(const struct ival *m, size_t n, double s, double e);

/* A growable list of intervals (kernel_breakdown.c, overlap.c collect one per
 * kernel type, then merge it with ival_merge). */
struct ival_list {
	struct ival *v;
	size_t n, cap;
};
void ival_push(struct ival_list *l, double ts, double end);
void ival_list_merge(struct ival_list *l);
void ival_list_free(struct ival_list *l);

/* The sweep of HTA's kernel type breakdown and comm/comp overlap
 * (semantics doc 4 and 6): one point per start (+weight) and end (-weight)
 * of each merged list, sorted by time.  Points at the same time are in no
 * defined order in HTA (unstable sort); that only makes zero-length
 * segments, so ours are ordered by delta.  The caller frees *out. */
struct ival_point {
	double t;
	int delta;
};
size_t ival_sweep_points(const struct ival_list *lists, const int *weight, size_t nlists,
			 struct ival_point **out);

#endif
