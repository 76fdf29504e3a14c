/*
 * stats.c - describe() statistics (see stats.h).
 */
#include "analyze/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/order.h"
#include "core/buf.h"
#include "trace/rsort.h"

/* Sort v ascending, stably (the order qsort's merge sort gave: the sum
 * below runs in this order, and -0.0 stays where it was among zeros). */
static void sort_doubles(double *v, size_t n)
{
	uint64_t *key = xmalloc(n * sizeof *key);
	uint32_t *pos = order_identity(n);
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_f64(v[i]);
	rsort_kv(key, pos, n);
	order_apply(v, n, sizeof *v, pos);
	free(pos);
	free(key);
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
	sort_doubles(v, n);
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

double np_sum(const double *v, size_t n)
{
	if (n < 8) {
		double s = 0;
		for (size_t i = 0; i < n; i++)
			s += v[i];
		return s;
	}
	if (n <= 128) {
		double r[8];
		for (size_t j = 0; j < 8; j++)
			r[j] = v[j];
		size_t i;
		for (i = 8; i < n - n % 8; i += 8)
			for (size_t j = 0; j < 8; j++)
				r[j] += v[i + j];
		double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			s += v[i];
		return s;
	}
	size_t h = n / 2;
	h -= h % 8;
	return np_sum(v, h) + np_sum(v + h, n - h);
}

void describe_in_order(const double *v, size_t n, double *scratch, struct describe *o)
{
	memcpy(scratch, v, n * sizeof *v);
	describe(scratch, n, o); /* count, min, max, quantiles */
	if (n == 0)
		return;
	o->mean = (0.0 + np_sum(v, n)) / (double)n;
	if (n > 1) {
		for (size_t i = 0; i < n; i++)
			scratch[i] = (o->mean - v[i]) * (o->mean - v[i]);
		o->std = sqrt((0.0 + np_sum(scratch, n)) / (double)(n - 1));
	}
}
