/*
 * finish.c - the per-file steps HTA applies after parsing a trace
 * (semantics doc 1.2 steps 3, 12-17), run once per rank by the loader:
 *
 *   1. ns rounding: when any ts had a fraction, ts = ceil(ts),
 *      end = floor(ts + dur), dur = end - ts (can be -1; counted);
 *   2. kind (enum trace_cat) per row, kernel type per interned name;
 *   3. CPU<->GPU links: a GPU-side row (stream >= 0 and correlation >= 0,
 *      or an Event/Context Sync) pairs with the CPU-side row of the same
 *      correlation; with duplicates the last row wins, as in HTA;
 *   4. iteration: CPU rows get the ProfilerStep containing their ts (the
 *      last such step in trace order), GPU rows their launcher's;
 *   5. device type.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/load_internal.h"

/* ---- int64 -> int32 open-addressing map (correlation -> row) ---- */

struct i64map {
	int64_t *keys;
	int32_t *vals; /* -1 = empty slot */
	size_t cap;
};

static void map_init(struct i64map *m, size_t n)
{
	m->cap = 16;
	while (m->cap < n * 2)
		m->cap *= 2;
	m->keys = xmalloc(m->cap * sizeof *m->keys);
	m->vals = xmalloc(m->cap * sizeof *m->vals);
	memset(m->vals, 0xff, m->cap * sizeof *m->vals);
}

static void map_free(struct i64map *m)
{
	free(m->keys);
	free(m->vals);
}

static inline size_t map_slot(const struct i64map *m, int64_t k)
{
	uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17) & (m->cap - 1);
}

static void map_put(struct i64map *m, int64_t k, int32_t v)
{
	size_t s = map_slot(m, k);
	while (m->vals[s] >= 0 && m->keys[s] != k)
		s = (s + 1) & (m->cap - 1);
	m->keys[s] = k;
	m->vals[s] = v;
}

static int32_t map_get(const struct i64map *m, int64_t k)
{
	size_t s = map_slot(m, k);
	while (m->vals[s] >= 0) {
		if (m->keys[s] == k)
			return m->vals[s];
		s = (s + 1) & (m->cap - 1);
	}
	return -1;
}

bool trace_is_corr_gpu(const struct trace_rank *r, size_t i)
{
	if (r->stream[i] >= 0 && r->correlation[i] >= 0)
		return true;
	const char *n = r->strs.s[r->name[i]];
	return strcmp(n, "Event Sync") == 0 || strcmp(n, "Context Sync") == 0;
}

void trace_rank_link(struct trace_rank *r)
{
	size_t ngpu = 0, ncpu = 0;
	uint32_t ev_sync = trace_strtab_find(&r->strs, "Event Sync", 10);
	uint32_t ctx_sync = trace_strtab_find(&r->strs, "Context Sync", 12);
	uint8_t *side = xmalloc(r->n ? r->n : 1); /* 0 none, 1 cpu, 2 gpu */
	for (size_t i = 0; i < r->n; i++) {
		r->link[i] = -1;
		if (r->correlation[i] == -1) {
			side[i] = 0;
		} else if ((r->stream[i] >= 0 && r->correlation[i] >= 0) || r->name[i] == ev_sync ||
			   r->name[i] == ctx_sync) {
			side[i] = 2;
			ngpu++;
		} else {
			side[i] = 1;
			ncpu++;
		}
	}
	struct i64map g, c;
	map_init(&g, ngpu);
	map_init(&c, ncpu);
	for (size_t i = 0; i < r->n; i++) {
		if (side[i] == 2)
			map_put(&g, r->correlation[i], (int32_t)i);
		else if (side[i] == 1)
			map_put(&c, r->correlation[i], (int32_t)i);
	}
	for (size_t i = 0; i < r->n; i++) {
		if (side[i] == 1)
			r->link[i] = map_get(&g, r->correlation[i]);
		else if (side[i] == 2)
			r->link[i] = map_get(&c, r->correlation[i]);
	}
	map_free(&g);
	map_free(&c);
	free(side);
}

long trace_step_number(const char *s)
{
	if (strncmp(s, "ProfilerStep", 12) != 0)
		return -1;
	/* HTA extracts with ProfilerStep\s*#\s*(\d+) anywhere in the name */
	for (const char *p = s; (p = strstr(p, "ProfilerStep")) != NULL; p += 12) {
		const char *q = p + 12;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' || *q == '\v')
			q++;
		if (*q != '#')
			continue;
		q++;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' || *q == '\v')
			q++;
		if (*q < '0' || *q > '9')
			continue;
		long v = 0;
		while (*q >= '0' && *q <= '9' && v < 1000000000L)
			v = v * 10 + (*q++ - '0');
		return v;
	}
	return -1;
}

struct step {
	double ts, end;
	size_t row;
	int32_t n;
};

static int step_cmp(const void *a, const void *b)
{
	const struct step *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

struct query {
	double t;
	size_t row;
};

static int query_cmp(const void *a, const void *b)
{
	const struct query *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* max-heap of step indices, ordered by the step's row (trace order) */
static void heap_push(size_t *h, size_t *n, const struct step *st, size_t v)
{
	size_t i = (*n)++;
	h[i] = v;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (st[h[p]].row >= st[h[i]].row)
			break;
		size_t x = h[p];
		h[p] = h[i];
		h[i] = x;
		i = p;
	}
}

static void heap_pop(size_t *h, size_t *n, const struct step *st)
{
	h[0] = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, rr = l + 1, m = i;
		if (l < *n && st[h[l]].row > st[h[m]].row)
			m = l;
		if (rr < *n && st[h[rr]].row > st[h[m]].row)
			m = rr;
		if (m == i)
			break;
		size_t x = h[m];
		h[m] = h[i];
		h[i] = x;
		i = m;
	}
}

static int i32_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static void assign_iterations(struct trace_rank *r)
{
	/* step number per name id */
	int32_t *num = xmalloc((r->strs.n ? r->strs.n : 1) * sizeof *num);
	for (uint32_t id = 0; id < r->strs.n; id++)
		num[id] = (int32_t)trace_step_number(r->strs.s[id]);
	size_t ns = 0, cap = 0;
	struct step *st = NULL;
	for (size_t i = 0; i < r->n; i++) {
		if (num[r->name[i]] < 0)
			continue;
		if (ns == cap) {
			cap = cap ? cap * 2 : 64;
			st = xrealloc(st, cap * sizeof *st);
		}
		st[ns++] = (struct step){r->ts[i], r->ts[i] + r->dur[i], i, num[r->name[i]]};
	}
	if (ns)
		qsort(st, ns, sizeof *st, step_cmp);
	/* Sweep the CPU rows in ts order; a max-heap (by trace order) holds the
	 * steps started so far; a top that has ended is dropped (ts only grows,
	 * so it never contains a later row).  O((rows + steps) log), whatever
	 * the steps look like. */
	size_t nq = 0;
	for (size_t i = 0; i < r->n; i++)
		nq += r->stream[i] < 0 || (r->stream[i] == 0 && r->kind[i] == TRACE_CAT_CPU_OP);
	struct query *qs = xmalloc((nq ? nq : 1) * sizeof *qs);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->stream[i] < 0 || (r->stream[i] == 0 && r->kind[i] == TRACE_CAT_CPU_OP))
			qs[k++] = (struct query){r->ts[i], i};
	if (nq)
		qsort(qs, nq, sizeof *qs, query_cmp);
	size_t *heap = xmalloc((ns ? ns : 1) * sizeof *heap), nh = 0, j = 0;
	for (size_t q = 0; q < nq; q++) {
		double t = qs[q].t;
		for (; j < ns && st[j].ts <= t; j++)
			heap_push(heap, &nh, st, j);
		while (nh && st[heap[0]].end <= t)
			heap_pop(heap, &nh, st);
		r->iteration[qs[q].row] = nh ? st[heap[0]].n : TRACE_ITER_NONE;
	}
	free(heap);
	free(qs);
	for (size_t i = 0; i < r->n; i++) {
		if (r->stream[i] > 0) {
			int32_t l = r->link[i];
			/* HTA: index_correlation <= 0 gives -1 (event id 0 cannot be a partner) */
			r->iteration[i] = l >= 0 && r->idx[l] > 0 ? r->iteration[l] : TRACE_ITER_NONE;
			if (r->iteration[i] == TRACE_ITER_NAN)
				r->iteration[i] = TRACE_ITER_NONE;
		} else if (r->stream[i] == 0 && r->kind[i] != TRACE_CAT_CPU_OP) {
			r->iteration[i] = TRACE_ITER_NAN;
		}
	}
	free(st);
	free(num);
}

void trace_rank_list_iterations(struct trace_rank *r)
{
	int32_t *num = xmalloc((r->strs.n ? r->strs.n : 1) * sizeof *num);
	for (uint32_t id = 0; id < r->strs.n; id++)
		num[id] = (int32_t)trace_step_number(r->strs.s[id]);
	free(r->iterations);
	size_t k = 0, cap = 16;
	r->iterations = xmalloc(cap * sizeof *r->iterations);
	for (size_t i = 0; i < r->n; i++) {
		if (num[r->name[i]] < 0)
			continue;
		if (k == cap) {
			cap *= 2;
			r->iterations = xrealloc(r->iterations, cap * sizeof *r->iterations);
		}
		r->iterations[k++] = num[r->name[i]];
	}
	qsort(r->iterations, k, sizeof *r->iterations, i32_cmp);
	size_t u = 0;
	for (size_t j = 0; j < k; j++)
		if (u == 0 || r->iterations[u - 1] != r->iterations[j])
			r->iterations[u++] = r->iterations[j];
	r->niterations = u;
	free(num);
}

static bool has_row_named(const struct trace_rank *r, const char *name)
{
	uint32_t id = trace_strtab_find(&r->strs, name, strlen(name));
	if (id == TRACE_NO_STR)
		return false;
	for (size_t i = 0; i < r->n; i++)
		if (r->name[i] == id)
			return true;
	return false;
}

static void classify_names(struct trace_rank *r, bool fixed)
{
	free(r->str_ktype);
	r->str_ktype = xmalloc(r->strs.n ? r->strs.n : 1);
	for (uint32_t id = 0; id < r->strs.n; id++)
		r->str_ktype[id] = (uint8_t)(fixed ? trace_classify_fixed(r->strs.s[id], r->strs.len[id])
						   : trace_classify(r->strs.s[id], r->strs.len[id]));
}

struct sk {
	int64_t stream;
	double ts, end;
};

static int sk_cmp(const void *a, const void *b)
{
	const struct sk *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Kernels starting before the previous one on their stream ended (ROCm
 * traces have them): kept like HTA does, but counted so the user hears. */
static void count_stream_overlaps(struct trace_rank *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += trace_is_idle_kernel(r, i);
	if (n < 2)
		return;
	struct sk *v = xmalloc(n * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_idle_kernel(r, i))
			v[k++] = (struct sk){r->stream[i], r->ts[i], r->ts[i] + r->dur[i]};
	qsort(v, n, sizeof *v, sk_cmp);
	for (size_t i = 1; i < n; i++)
		if (v[i].stream == v[i - 1].stream && v[i].ts < v[i - 1].end)
			r->stats.stream_overlaps++;
	free(v);
}

void trace_rank_finish(struct trace_rank *r, const struct trace_load_opts *opts)
{
	if (r->float_ts && !opts->no_ns_rounding) {
		for (size_t i = 0; i < r->n; i++) {
			double end = r->ts[i] + r->dur[i];
			r->ts[i] = ceil(r->ts[i]);
			r->dur[i] = floor(end) - r->ts[i];
			if (r->dur[i] < 0)
				r->stats.neg_dur_after_rounding++;
		}
		for (size_t i = 0; i < r->nflows; i++)
			r->flows[i].ts = ceil(r->flows[i].ts);
		for (size_t i = 0; i < r->ncounters; i++)
			r->counters[i].ts = ceil(r->counters[i].ts);
		r->skipped_min_ts = ceil(r->skipped_min_ts);
	}
	/* kind from the cat id, computed once per distinct cat */
	uint8_t *kind_of = xmalloc(r->strs.n ? r->strs.n : 1);
	memset(kind_of, 0xff, r->strs.n ? r->strs.n : 1);
	for (size_t i = 0; i < r->n; i++) {
		uint32_t c = r->cat[i];
		if (kind_of[c] == 0xff)
			kind_of[c] = (uint8_t)trace_cat_of(r->strs.s[c], r->strs.len[c]);
		r->kind[i] = kind_of[c];
	}
	free(kind_of);
	classify_names(r, opts->fixed_classification);
	trace_rank_link(r);
	assign_iterations(r);
	trace_rank_list_iterations(r);
	count_stream_overlaps(r);
	const char *dt = "UNKNOWN GPU";
	if (r->gpu_device_mtia)
		dt = "MTIA";
	else if (has_row_named(r, "cudaLaunchKernel"))
		dt = "NVIDIA GPU";
	else if (has_row_named(r, "hipLaunchKernel"))
		dt = "AMD GPU";
	else if (has_row_named(r, "runFunction - job_prep_and_submit_for_execution"))
		dt = "MTIA";
	free(r->device_type);
	r->device_type = xstrdup(dt);
	r->stats.kept = r->n;
}
