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

#endif
