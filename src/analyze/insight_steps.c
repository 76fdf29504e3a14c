/*
 * insight_steps.c - where a rank's training steps (iterations) begin and
 * end, for insights' per-step figures, also when the trace has no
 * ProfilerStep#N.  A trace asked for through the daemon (`dyno gputrace`,
 * Kineto's on-demand duration mode) has none: PyTorch then only records its
 * optimizer's ranges.  In order of preference:
 *
 *   1. ProfilerStep#N user annotations (torch.profiler's schedule): one
 *      step each, its CPU span;
 *   2. PyTorch's optimizer ranges: a step ends where `Optimizer.step#...`
 *      ends (the forward, backward and update of the next step come after
 *      it), so the steps are the spans between consecutive ends; the part
 *      before the first end is an incomplete step and is not one.  With
 *      fewer than two ends, the starts of `Optimizer.zero_grad#...` instead;
 *   3. the period of the repeating kernel sequence: a kernel name that runs
 *      the same small number of times (at least three) at evenly spaced
 *      places of the kernel sequence marks each step's start (the least
 *      frequent such name: once per step);
 *   4. the whole trace as one span: from its first GPU activity to the end
 *      of its last (the host's start-up before is no step's time).
 *
 * Every output names the source (insight_step_source_name).  Cost: one
 * pass over the rows, a sort of the boundaries; the kernel period one
 * more pass and a sort of the kernels by start.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/insights.h"

const char *insight_step_source_name(enum insight_step_source s)
{
	switch (s) {
	case INSIGHT_STEPS_PROFILER:
		return "ProfilerStep";
	case INSIGHT_STEPS_OPTIMIZER:
		return "optimizer ranges";
	case INSIGHT_STEPS_KERNEL_PERIOD:
		return "kernel sequence period";
	default:
		return "whole trace";
	}
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int step_cmp(const void *a, const void *b)
{
	const struct insight_step *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

/* "ProfilerStep#12" -> 12; -1: not a step */
int64_t insight_profiler_step(const char *n)
{
	if (strncmp(n, "ProfilerStep#", 13) != 0)
		return -1;
	char *end;
	long long v = strtoll(n + 13, &end, 10);
	return *end || end == n + 13 || v < 0 || v > INT32_MAX ? -1 : (int64_t)v;
}

static bool is_host_range(const struct trace_rank *r, size_t i)
{
	uint8_t k = r->kind[i];
	return !trace_is_gpu(r, i) && (k == TRACE_CAT_USER_ANNOTATION || k == TRACE_CAT_CPU_OP);
}

/* a step whose rows the loader kept (HTA's filter drops the last step's
 * rows; its range can stay behind) */
static bool kept_step(const struct trace_rank *r, int64_t id)
{
	return insight_iter_index(r, id) >= 0;
}

/* HTA's filter keeps the rows that start before the last step range's
 * start.  Kineto also writes a copy of each range on the GPU's timeline,
 * starting later: then the host's range of the last step stays with the
 * few rows of its first microseconds.  Such a step (fewer than half the
 * rows of the median step) is not one. */
static size_t drop_cut_last(const struct trace_rank *r, struct insight_step *v, size_t n)
{
	if (n < 2 || !r->stats.dropped_last_step)
		return n;
	size_t *rows = xcalloc(n, sizeof *rows);
	for (size_t i = 0; i < r->n; i++) {
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (v[mid].id < r->iteration[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && v[lo].id == r->iteration[i])
			rows[lo]++;
	}
	double *o = xmalloc((n - 1) * sizeof *o);
	for (size_t k = 0; k + 1 < n; k++)
		o[k] = (double)rows[k];
	qsort(o, n - 1, sizeof *o, dbl_cmp);
	double med = (n - 1) % 2 ? o[(n - 1) / 2] : (o[(n - 1) / 2 - 1] + o[(n - 1) / 2]) / 2;
	bool cut = (double)rows[n - 1] < 0.5 * med;
	free(o);
	free(rows);
	return cut ? n - 1 : n;
}

/* Threads that ran operators (a ProfilerStep range on a GPU's timeline
 * is a copy of the host's) */
static bool op_thread(const int64_t *tids, size_t n, int64_t tid)
{
	for (size_t k = 0; k < n; k++)
		if (tids[k] == tid)
			return true;
	return false;
}

static size_t profiler_steps(const struct trace_rank *r, struct insight_step **out)
{
	struct insight_step *v = NULL;
	size_t n = 0, cap = 0, nt = 0;
	int64_t tids[64];
	for (size_t i = 0; i < r->n && nt < 64; i++)
		if (r->kind[i] == TRACE_CAT_CPU_OP && !op_thread(tids, nt, r->tid[i]))
			tids[nt++] = r->tid[i];
	for (size_t i = 0; i < r->n; i++) {
		if (r->kind[i] != TRACE_CAT_USER_ANNOTATION || trace_is_gpu(r, i) ||
		    (nt && nt < 64 && !op_thread(tids, nt, r->tid[i])))
			continue;
		int64_t id = insight_profiler_step(trace_name(r, i));
		if (id < 0 || !kept_step(r, id))
			continue;
		size_t k = 0; /* the same step twice (a nested copy): one span */
		while (k < n && v[k].id != id)
			k++;
		if (k == n) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				v = xrealloc(v, cap * sizeof *v);
			}
			v[n++] = (struct insight_step){r->ts[i], r->ts[i] + r->dur[i], id};
		} else {
			v[k].s = fmin(v[k].s, r->ts[i]);
			v[k].e = fmax(v[k].e, r->ts[i] + r->dur[i]);
		}
	}
	if (n > 1)
		qsort(v, n, sizeof *v, step_cmp);
	*out = v;
	return drop_cut_last(r, v, n);
}

/* the spans between consecutive boundaries t[0..n) (sorted here) */
static size_t between(double *t, size_t n, struct insight_step **out)
{
	qsort(t, n, sizeof *t, dbl_cmp);
	size_t k = 0;
	struct insight_step *v = xmalloc((n ? n : 1) * sizeof *v);
	for (size_t i = 0; i + 1 < n; i++)
		if (t[i + 1] > t[i])
			v[k] = (struct insight_step){t[i], t[i + 1], (int64_t)k}, k++;
	*out = v;
	return k;
}

static size_t optimizer_steps(const struct trace_rank *r, struct insight_step **out)
{
	double *ends = NULL, *zero = NULL;
	size_t ne = 0, nz = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!is_host_range(r, i))
			continue;
		const char *nm = trace_name(r, i);
		if (strncmp(nm, "Optimizer.", 10) != 0)
			continue;
		if (strncmp(nm + 10, "step#", 5) == 0) {
			ends = xrealloc(ends, (ne + 1) * sizeof *ends);
			ends[ne++] = r->ts[i] + r->dur[i];
		} else if (strncmp(nm + 10, "zero_grad#", 10) == 0) {
			zero = xrealloc(zero, (nz + 1) * sizeof *zero);
			zero[nz++] = r->ts[i];
		}
	}
	size_t n = 0;
	*out = NULL;
	if (ne >= 2)
		n = between(ends, ne, out);
	else if (nz >= 2)
		n = between(zero, nz, out);
	free(ends);
	free(zero);
	if (!n) {
		free(*out);
		*out = NULL;
	}
	return n;
}

static int row_ts_cmp(const void *a, const void *b, void *arg)
{
	const struct trace_rank *r = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (r->ts[i] != r->ts[j])
		return r->ts[i] < r->ts[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* A kernel name that occurs c >= 3 times, the fewest of all names seen
 * more than once, at evenly spaced positions of the kernel sequence (the
 * gaps between its occurrences within 10% of their mean), and whose
 * occurrences span at least half of the kernels: it runs once per step. */
static size_t kernel_period_steps(const struct trace_rank *r, struct insight_step **out)
{
	size_t nk = 0;
	for (size_t i = 0; i < r->n; i++)
		nk += r->kind[i] == TRACE_CAT_KERNEL && trace_is_gpu(r, i);
	*out = NULL;
	if (nk < 6)
		return 0;
	size_t *k = xmalloc(nk * sizeof *k), j = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->kind[i] == TRACE_CAT_KERNEL && trace_is_gpu(r, i))
			k[j++] = i;
	qsort_r(k, nk, sizeof *k, row_ts_cmp, (void *)r);
	size_t ns = r->strs.n ? r->strs.n : 1;
	uint32_t *count = xcalloc(ns, sizeof *count);
	for (j = 0; j < nk; j++)
		count[r->name[k[j]]]++;
	uint32_t best = UINT32_MAX;
	for (size_t s = 0; s < ns; s++)
		if (count[s] >= 3 && count[s] < best)
			best = count[s];
	size_t n = 0;
	size_t *pos = xmalloc((best == UINT32_MAX ? 1 : best) * sizeof *pos);
	/* candidates in the order of their first occurrence */
	for (j = 0; best != UINT32_MAX && j < nk && !n; j++) {
		uint32_t nm = r->name[k[j]];
		if (count[nm] != best)
			continue;
		count[nm] = 0; /* tried */
		size_t c = 0;
		for (size_t q = j; q < nk && c < best; q++)
			if (r->name[k[q]] == nm)
				pos[c++] = q;
		double mean = (double)(pos[c - 1] - pos[0]) / (double)(c - 1);
		bool even = mean >= 1 && (double)(pos[c - 1] - pos[0]) >= 0.5 * (double)nk;
		for (size_t q = 1; even && q < c; q++)
			even = fabs((double)(pos[q] - pos[q - 1]) - mean) <= 0.1 * mean;
		if (!even)
			continue;
		struct insight_step *v = xmalloc((c - 1) * sizeof *v);
		for (size_t q = 0; q + 1 < c; q++)
			v[q] = (struct insight_step){r->ts[k[pos[q]]], r->ts[k[pos[q + 1]]], (int64_t)q};
		*out = v;
		n = c - 1;
	}
	free(pos);
	free(count);
	free(k);
	return n;
}

size_t insight_steps_find(const struct trace_rank *r, struct insight_step **out, enum insight_step_source *src)
{
	size_t n = profiler_steps(r, out);
	if (n) {
		*src = INSIGHT_STEPS_PROFILER;
		return n;
	}
	free(*out);
	if ((n = optimizer_steps(r, out))) {
		*src = INSIGHT_STEPS_OPTIMIZER;
		return n;
	}
	if ((n = kernel_period_steps(r, out))) {
		*src = INSIGHT_STEPS_KERNEL_PERIOD;
		return n;
	}
	*src = INSIGHT_STEPS_WHOLE;
	/* the GPU's span (as HTA's temporal breakdown): before the first GPU
	 * work the host starts up (CUDA's lazy initialisation alone takes
	 * seconds), which is no step's time */
	double s = INFINITY, e = -INFINITY;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_gpu(r, i) && r->kind[i] != TRACE_CAT_GPU_USER_ANNOTATION) {
			s = fmin(s, r->ts[i]);
			e = fmax(e, r->ts[i] + r->dur[i]);
		}
	*out = xmalloc(sizeof **out);
	if (!(e > s)) {
		free(*out);
		*out = NULL;
		return 0;
	}
	(*out)[0] = (struct insight_step){s, e, -1};
	return 1;
}

long insight_step_of(const struct insight_step *v, size_t n, double ts)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the last step starting at or before ts */
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].s <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && ts < v[lo - 1].e ? (long)lo - 1 : -1;
}
