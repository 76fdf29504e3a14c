/*
 * intervals.c - interval merging for the analyses (see intervals.h).
 */
#include "analyze/intervals.h"

#include <stdlib.h>

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

size_t ival_merge(struct ival *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, ival_cmp);
	size_t k = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].ts > v[k].end) {
			v[++k] = v[i];
		} else if (v[i].end > v[k].end) {
			v[k].end = v[i].end;
		}
	}
	return k + 1;
}

double ival_total(const struct ival *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i].end - v[i].ts;
	return s;
}
