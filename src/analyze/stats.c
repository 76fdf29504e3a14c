/*
 * stats.c - describe() statistics (see stats.h).
 */
#include "analyze/stats.h"

#include <math.h>
#include <stdlib.h>

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double quantile_sorted(const double *v, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos);
	size_t hi = lo + 1 < n ? lo + 1 : n - 1;
	double t = pos - (double)lo;
	double a = v[lo], b = v[hi], d = b - a;
	/* numpy's _lerp: symmetric form for t >= 0.5 */
	return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

void describe(double *v, size_t n, struct describe *o)
{
	o->count = (double)n;
	if (n == 0) {
		o->mean = o->std = o->min = o->q25 = o->q50 = o->q75 = o->max = NAN;
		return;
	}
	qsort(v, n, sizeof *v, dcmp);
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	o->mean = s / (double)n;
	if (n > 1) {
		double ss = 0;
		for (size_t i = 0; i < n; i++)
			ss += (v[i] - o->mean) * (v[i] - o->mean);
		o->std = sqrt(ss / (double)(n - 1));
	} else {
		o->std = NAN;
	}
	o->min = v[0];
	o->max = v[n - 1];
	o->q25 = quantile_sorted(v, n, 0.25);
	o->q50 = quantile_sorted(v, n, 0.5);
	o->q75 = quantile_sorted(v, n, 0.75);
}
