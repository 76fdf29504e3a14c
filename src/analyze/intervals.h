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

#endif
