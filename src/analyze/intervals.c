/*
 * intervals.c - interval merging and sweep points for the kernel breakdown
 * and the overlap analysis (see intervals.h).
 *
 * HTA sorts with an unstable sort, so the order of points that share a time
 * is not defined there.  Ties can only create zero-length segments, so we
 * order ties by delta to be deterministic; callers drop empty segments.
 */
#include <stdlib.h>

#include "analyze/intervals.h"
#include "core/buf.h"

void ivl_push(struct ivl_list *l, double ts, double end)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n].ts = ts;
	l->v[l->n].end = end;
	l->n++;
}

void ivl_free(struct ivl_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct ivl *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* same start: the order does not change the groups unless an end is
	 * before its start (dur -1); keep the longer first, deterministic */
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return 0;
}

void ivl_merge(struct ivl_list *l)
{
	if (l->n == 0)
		return;
	qsort(l->v, l->n, sizeof *l->v, cmp_ts);
	size_t out = 0;
	double maxend = l->v[0].end; /* largest end of all earlier intervals */
	struct ivl cur = l->v[0];
	for (size_t i = 1; i < l->n; i++) {
		struct ivl x = l->v[i];
		if (x.ts > maxend) {
			l->v[out++] = cur;
			cur = x;
		} else if (x.end > cur.end) {
			cur.end = x.end;
		}
		if (x.end > maxend)
			maxend = x.end;
	}
	l->v[out++] = cur;
	l->n = out;
}

static int cmp_point(const void *a, const void *b)
{
	const struct ivl_point *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->delta > y->delta) - (x->delta < y->delta);
}

size_t ivl_sweep_points(const struct ivl_list *lists, const int *weight, size_t nlists,
			struct ivl_point **out)
{
	size_t n = 0;
	for (size_t k = 0; k < nlists; k++)
		n += 2 * lists[k].n;
	struct ivl_point *p = xmalloc((n ? n : 1) * sizeof *p);
	size_t j = 0;
	for (size_t k = 0; k < nlists; k++) {
		for (size_t i = 0; i < lists[k].n; i++) {
			p[j].t = lists[k].v[i].ts;
			p[j++].delta = weight[k];
			p[j].t = lists[k].v[i].end;
			p[j++].delta = -weight[k];
		}
	}
	qsort(p, n, sizeof *p, cmp_point);
	*out = p;
	return n;
}
