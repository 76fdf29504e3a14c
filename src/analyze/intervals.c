/*
 * intervals.c - interval merging for the analyses (see intervals.h).
 */
#include "analyze/intervals.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "trace/rsort.h"

/* Sort v by ts, stably: intervals with equal ts keep their order, which
 * matters when ns rounding left one with end < ts (it merges or not
 * depending on what precedes it); qsort (glibc's merge sort) kept it too. */
static void ival_sort(struct ival *v, size_t n)
{
	size_t i = 1;
	while (i < n && v[i - 1].ts <= v[i].ts)
		i++;
	if (i >= n)
		return; /* already in order (often: rows come in time order) */
	uint64_t *key = xmalloc(n * sizeof *key);
	uint32_t *pos = xmalloc(n * sizeof *pos);
	for (i = 0; i < n; i++) {
		key[i] = rsort_key_f64(v[i].ts);
		pos[i] = (uint32_t)i;
	}
	rsort_kv(key, pos, n);
	free(key);
	struct ival *tmp = xmalloc(n * sizeof *tmp);
	for (i = 0; i < n; i++)
		tmp[i] = v[pos[i]];
	memcpy(v, tmp, n * sizeof *v);
	free(tmp);
	free(pos);
}

size_t ival_merge(struct ival *v, size_t n)
{
	if (n == 0)
		return 0;
	ival_sort(v, n);
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
	/* by (t, delta).  Each merged list gives a run that is (nearly) in
	 * time order, which the adaptive sort by t exploits; then points of
	 * equal t are ordered by delta (short runs).  Equal (t, delta) pairs
	 * are equal points, so this is the one sorted array. */
	uint64_t *key = xmalloc((n ? n : 1) * sizeof *key);
	uint32_t *pos = xmalloc((n ? n : 1) * sizeof *pos);
	for (j = 0; j < n; j++) {
		key[j] = rsort_key_f64(p[j].t);
		pos[j] = (uint32_t)j;
	}
	rsort_kv(key, pos, n);
	struct ival_point *q = xmalloc((n ? n : 1) * sizeof *q);
	for (j = 0; j < n; j++)
		q[j] = p[pos[j]];
	for (j = 1; j < n; j++) {
		struct ival_point x = q[j];
		size_t i = j;
		while (i > 0 && q[i - 1].t == x.t && q[i - 1].delta > x.delta) {
			q[i] = q[i - 1];
			i--;
		}
		q[i] = x;
	}
	free(p);
	free(key);
	free(pos);
	*out = q;
	return n;
}

double ival_overlap(const struct ival *m, size_t n, double s, double e)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first interval ending after s */
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	double t = 0;
	for (size_t i = lo; i < n && m[i].ts < e; i++)
		t += (m[i].end < e ? m[i].end : e) - (m[i].ts > s ? m[i].ts : s);
	return t;
}
