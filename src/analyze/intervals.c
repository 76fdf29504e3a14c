/*
 * intervals.c - interval merging for the analyses (see intervals.h).
 */
#include "analyze/intervals.h"

#include <stdlib.h>

#include "core/buf.h"

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

void ival_push(struct ival_list *l, double ts, double end)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n].ts = ts;
	l->v[l->n].end = end;
	l->n++;
}

void ival_list_merge(struct ival_list *l)
{
	l->n = ival_merge(l->v, l->n);
}

void ival_list_free(struct ival_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int point_cmp(const void *a, const void *b)
{
	const struct ival_point *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->delta > y->delta) - (x->delta < y->delta);
}

size_t ival_sweep_points(const struct ival_list *lists, const int *weight, size_t nlists,
			 struct ival_point **out)
{
	size_t n = 0;
	for (size_t k = 0; k < nlists; k++)
		n += 2 * lists[k].n;
	struct ival_point *p = xmalloc((n ? n : 1) * sizeof *p);
	size_t j = 0;
	for (size_t k = 0; k < nlists; k++) {
		for (size_t i = 0; i < lists[k].n; i++) {
			p[j].t = lists[k].v[i].ts;
			p[j++].delta = weight[k];
			p[j].t = lists[k].v[i].end;
			p[j++].delta = -weight[k];
		}
	}
	qsort(p, n, sizeof *p, point_cmp);
	*out = p;
	return n;
}
