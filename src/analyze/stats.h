/*
 * stats.h - pandas describe() over a vector of doubles, with pandas'
 * definitions: sample std (ddof 1), quantiles by numpy's linear
 * interpolation; an empty vector gives count 0 and NaN elsewhere.
 */
#ifndef DYNO_ANALYZE_STATS_H
#define DYNO_ANALYZE_STATS_H

#include <stddef.h>

struct describe {
	double count, mean, std, min, q25, q50, q75, max;
};

/* v is sorted in place. */
void describe(double *v, size_t n, struct describe *out);
/* numpy quantile (linear) of sorted v. */
double quantile_sorted(const double *v, size_t n, double q);

/* numpy's float64 sum of v in this order (pairwise: 8 accumulators over
 * blocks of up to 128, halves above), what pandas' Series.mean/std sum. */
double np_sum(const double *v, size_t n);
/* describe() as pandas' Series.describe computes it on v in this order:
 * mean and std from numpy sums in that order (the last digits depend on
 * it), quantiles from a sorted copy (scratch: n doubles).  v is kept. */
void describe_in_order(const double *v, size_t n, double *scratch, struct describe *out);

#endif
