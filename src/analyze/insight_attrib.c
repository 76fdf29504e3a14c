/*
 * insight_attrib.c - the one shared fact of the insight rules: every
 * microsecond of a step in which the GPU does no useful work, attributed
 * to what the host was doing, and the per-step waterfall
 *
 *     step = GPU busy + exposed communication + host gap + launch overhead
 *            + sync wait + copy wait + unattributed
 *
 * (exact: the parts partition the step's span).  Per rank:
 *
 *   - GPU busy: the union over all streams of kernels, memsets and copies
 *     other than communication kernels and copies from or to pageable host
 *     memory;
 *   - exposed communication: communication kernels (NCCL: HTA's kernel
 *     type) running while nothing else runs;
 *   - copy wait: GPU time in which only pageable copies run, and idle time
 *     while the host is inside an operator that copies from or to pageable
 *     memory (Memcpy HtoD (Pageable -> Device): the CPU stages the bytes
 *     and cannot queue anything meanwhile);
 *   - the rest is idle: each idle piece goes to the state of the host
 *     thread that launches the GPU work ending the idle interval (the
 *     next GPU activity, through its correlation), at that moment:
 *       sync wait   inside a blocking sync call (cudaStreamSynchronize,
 *                   cudaDeviceSynchronize, cudaEventSynchronize, a
 *                   synchronous cudaMemcpy) or an operator that makes one
 *                   (aten::item -> aten::_local_scalar_dense);
 *       launch      inside a PyTorch operator (it is dispatching and
 *                   launching the next kernels), or a CUDA call outside
 *                   every operator;
 *       host gap    outside every operator: Python, a data loader,
 *                   preprocessing, sleeping; named by the innermost
 *                   enclosing range (user annotation, python function,
 *                   enumerate(DataLoader)#...) when there is one, else by
 *                   the operators before and after it on that thread;
 *     with with_stack=True, the innermost python function around the
 *     operator says where in the program the sync, copy or launch is;
 *   - unattributed: idle time with no launching thread known (no
 *     correlation, the end of the trace).
 *
 * The steps come from insight_steps.c.  Two tables out: the waterfall (a
 * row per step) and the causes (a row per rank, cause, place and thread:
 * the time over all steps) the rules rank their findings by.
 *
 * Cost: radix sorts of the host rows by thread and time and of the GPU
 * rows by time, one stack sweep over each thread's rows (its timeline: a
 * segment per change of state), a merge of the GPU intervals, and per idle
 * interval a binary search into one timeline.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/insights.h"
#include "analyze/intervals.h"
#include "trace/rsort.h"

const char *insight_cause_name(enum insight_cause c)
{
	static const char *const names[INSIGHT_NCAUSES] = {"gpu_busy",  "exposed_comm", "host_gap", "launch_overhead",
							   "sync_wait", "copy_wait",    "unattributed"};
	return (unsigned)c < INSIGHT_NCAUSES ? names[c] : "?";
}

struct atable *insight_waterfall_new(void)
{
	static const char *const cols[] = {"rank:i",           "step:i",          "steps_from:s",
					   "start(us):f",      "dur(us):f",       "gpu_busy(us):f",
					   "exposed_comm(us):f", "host_gap(us):f",   "launch_overhead(us):f", "sync_wait(us):f",
					   "copy_wait(us):f",  "unattributed(us):f", NULL};
	return atable_new("insight_waterfall",
			  "Per step: GPU busy and every idle microsecond by what the launching host thread did", cols);
}

struct atable *insight_causes_new(void)
{
	static const char *const cols[] = {"rank:i", "cause:s", "where:s", "detail:s", "tid:i",
					   "time(us):f", "steps:i", "pieces:i", "python:s", NULL};
	return atable_new("insight_idle_causes", "GPU idle time by cause, place and host thread (all steps)", cols);
}

/* One piece of a thread's timeline: from s to the next piece's s. */
struct seg {
	double s, e;
	uint8_t cause;
	bool between;           /* a host gap named by the operators around it */
	uint32_t where, detail; /* string ids, TRACE_NO_STR: none */
	uint32_t py;            /* the innermost python function around the operator */
};

struct thread_line {
	int64_t tid;
	struct seg *v;
	size_t n, cap;
};

/* per host row: what its subtree does (propagated to the ancestors) */
enum { F_SYNC = 1, F_PAGEABLE = 2 };

/* rows[0..n) (ascending) in start order, the enclosing row first at one
 * start (the longer), and with host by thread first: stable radix passes
 * from the last key to the first, so ties keep the row order */
static void by_keys(const struct trace_rank *r, size_t *rows, size_t n, bool host)
{
	if (n < 2)
		return;
	uint64_t *key = xmalloc(n * sizeof *key);
	uint32_t *val = xmalloc(n * sizeof *val);
	size_t *tmp = xmalloc(n * sizeof *tmp);
	memcpy(tmp, rows, n * sizeof *tmp);
	for (size_t i = 0; i < n; i++)
		val[i] = (uint32_t)i;
	for (int pass = host ? 0 : 1; pass < (host ? 3 : 2); pass++) {
		for (size_t i = 0; i < n; i++) {
			size_t row = tmp[val[i]];
			key[i] = pass == 0 ? ~rsort_key_f64(r->dur[row]) : pass == 1 ? rsort_key_f64(r->ts[row])
										   : rsort_key_i64(r->tid[row]);
		}
		rsort_kv(key, val, n);
	}
	for (size_t i = 0; i < n; i++)
		rows[i] = tmp[val[i]];
	free(key);
	free(val);
	free(tmp);
}

static bool is_host_row(const struct trace_rank *r, size_t i)
{
	if (trace_is_gpu(r, i) || !(r->dur[i] >= 0))
		return false;
	uint8_t k = r->kind[i];
	return k == TRACE_CAT_CPU_OP || k == TRACE_CAT_USER_ANNOTATION || k == TRACE_CAT_PYTHON_FUNCTION ||
	       k == TRACE_CAT_CUDA_RUNTIME || k == TRACE_CAT_CUDA_DRIVER;
}

static bool is_pageable_copy(const struct trace_rank *r, size_t g)
{
	return r->kind[g] == TRACE_CAT_GPU_MEMCPY && strstr(trace_name(r, g), "Pageable") != NULL;
}

/* the host state of a stack of rows (outermost first) */
/* the innermost python function (with_stack=True) enclosing depth d */
static uint32_t py_above(const struct trace_rank *r, const size_t *stack, size_t d)
{
	while (d-- > 0)
		if (r->kind[stack[d]] == TRACE_CAT_PYTHON_FUNCTION)
			return r->name[stack[d]];
	return TRACE_NO_STR;
}

static void state_of(const struct trace_rank *r, const size_t *stack, const uint8_t *flags, const uint32_t *call,
		     const uint32_t *copy_call, size_t depth, struct seg *out)
{
	out->where = out->detail = out->py = TRACE_NO_STR;
	out->between = false;
	/* the outermost operator that copies from pageable memory, else the
	 * outermost that syncs: the whole operator waits */
	for (size_t d = 0; d < depth; d++)
		if (flags[d] & F_PAGEABLE) {
			out->cause = INSIGHT_C_COPY;
			out->where = r->name[stack[d]];
			out->detail = copy_call[d];
			out->py = py_above(r, stack, d);
			return;
		}
	for (size_t d = 0; d < depth; d++)
		if (flags[d] & F_SYNC) {
			out->cause = INSIGHT_C_SYNC;
			out->where = call[d];
			out->detail = r->name[stack[d]];
			out->py = py_above(r, stack, d);
			return;
		}
	/* an operator, or a CUDA call outside every operator (a program
	 * without PyTorch's operators launches through the runtime itself) */
	for (size_t d = 0; d < depth; d++)
		if (r->kind[stack[d]] == TRACE_CAT_CPU_OP || r->kind[stack[d]] == TRACE_CAT_CUDA_RUNTIME ||
		    r->kind[stack[d]] == TRACE_CAT_CUDA_DRIVER) {
			out->cause = INSIGHT_C_LAUNCH;
			out->where = r->name[stack[d]];
			out->py = py_above(r, stack, d);
			return;
		}
	out->cause = INSIGHT_C_HOST_GAP;
	/* the innermost enclosing range but a ProfilerStep (the step itself) */
	for (size_t d = depth; d-- > 0;) {
		size_t i = stack[d];
		if ((r->kind[i] == TRACE_CAT_USER_ANNOTATION || r->kind[i] == TRACE_CAT_PYTHON_FUNCTION) &&
		    insight_profiler_step(trace_name(r, i)) < 0) {
			out->where = r->name[i];
			return;
		}
	}
}

static void seg_push(struct thread_line *l, double s, double e, const struct seg *st)
{
	if (!(e > s))
		return;
	if (l->n && l->v[l->n - 1].e == s && l->v[l->n - 1].cause == st->cause &&
	    l->v[l->n - 1].where == st->where && l->v[l->n - 1].detail == st->detail && l->v[l->n - 1].py == st->py) {
		l->v[l->n - 1].e = e;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n] = *st;
	l->v[l->n].s = s;
	l->v[l->n++].e = e;
}

/* The flags of rows[0..n) (one thread, in (ts, -dur) order): a row's own
 * kind, or'ed into every row that encloses it. */
static void subtree_flags(const struct trace_rank *r, const size_t *rows, size_t n, uint8_t *flags, uint32_t *call,
			  uint32_t *copy_call)
{
	size_t *stack = xmalloc((n ? n : 1) * sizeof *stack), depth = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = rows[k];
		double ts = r->ts[i];
		while (depth && r->ts[rows[stack[depth - 1]]] + r->dur[rows[stack[depth - 1]]] <= ts)
			depth--;
		uint8_t f = 0;
		uint32_t c = TRACE_NO_STR;
		uint8_t kind = r->kind[i];
		if (kind == TRACE_CAT_CUDA_RUNTIME || kind == TRACE_CAT_CUDA_DRIVER) {
			int32_t g = r->link[i];
			if (g >= 0 && is_pageable_copy(r, (size_t)g))
				f = F_PAGEABLE;
			else if (insight_is_sync_call(trace_name(r, i)))
				f = F_SYNC;
			if (f)
				c = r->name[i];
		}
		flags[k] = f;
		call[k] = f == F_SYNC ? c : TRACE_NO_STR;
		copy_call[k] = f == F_PAGEABLE ? c : TRACE_NO_STR;
		/* into the enclosing operators, not the ranges around them
		 * (ProfilerStep, a user annotation over the whole forward); the
		 * first call of each kind names it */
		for (size_t d = 0; f && d < depth; d++) {
			size_t a = stack[d];
			if (r->kind[rows[a]] == TRACE_CAT_CPU_OP && !(flags[a] & f)) {
				flags[a] |= f;
				if (f == F_SYNC)
					call[a] = c;
				else
					copy_call[a] = c;
			}
		}
		stack[depth++] = k;
	}
	free(stack);
}

/* The timeline of one thread's rows (sorted): a segment per state.  Rows
 * are taken as nested (Kineto's are, but for a few overlaps after ns
 * rounding): a row that outlives the one it started in keeps that one on
 * the stack until it ends itself, a microsecond or two of approximation. */
static void thread_timeline(const struct trace_rank *r, const size_t *rows, size_t n, struct thread_line *l)
{
	uint8_t *flags = xmalloc((n ? n : 1) * sizeof *flags);
	uint32_t *call = xmalloc((n ? n : 1) * sizeof *call), *ccall = xmalloc((n ? n : 1) * sizeof *ccall);
	subtree_flags(r, rows, n, flags, call, ccall);
	size_t *stack = xmalloc((n ? n : 1) * sizeof *stack), depth = 0;
	size_t *srow = xmalloc((n ? n : 1) * sizeof *srow);
	uint8_t *sfl = xmalloc((n ? n : 1) * sizeof *sfl);
	uint32_t *scall = xmalloc((n ? n : 1) * sizeof *scall), *sccall = xmalloc((n ? n : 1) * sizeof *sccall);
	struct seg st;
	double cursor = n ? r->ts[rows[0]] : 0;
	for (size_t k = 0; k <= n; k++) {
		double t = k < n ? r->ts[rows[k]] : INFINITY;
		/* close what ends before t, each piece with the state it had */
		while (depth) {
			size_t top = rows[stack[depth - 1]];
			double e = r->ts[top] + r->dur[top];
			if (e > t)
				break;
			state_of(r, srow, sfl, scall, sccall, depth, &st);
			seg_push(l, cursor, e, &st);
			cursor = fmax(cursor, e);
			depth--;
		}
		if (k == n)
			break;
		state_of(r, srow, sfl, scall, sccall, depth, &st);
		if (depth || l->n) /* outside every row: a gap, from the last end */
			seg_push(l, cursor, t, &st);
		cursor = fmax(cursor, t);
		stack[depth] = k;
		srow[depth] = rows[k];
		sfl[depth] = flags[k];
		scall[depth] = call[k];
		sccall[depth] = ccall[k];
		depth++;
	}
	free(flags);
	free(call);
	free(ccall);
	free(stack);
	free(srow);
	free(sfl);
	free(scall);
	free(sccall);
}

/* A host gap without an enclosing range is named by the operators around
 * it on its thread: "after X, before Y". */
static void name_gaps(struct thread_line *l)
{
	uint32_t prev = TRACE_NO_STR;
	for (size_t k = 0; k < l->n; k++) {
		struct seg *g = &l->v[k];
		if (g->cause != INSIGHT_C_HOST_GAP) {
			prev = g->cause == INSIGHT_C_SYNC ? g->detail : g->where;
			continue;
		}
		if (g->where != TRACE_NO_STR)
			continue;
		uint32_t next = TRACE_NO_STR;
		for (size_t q = k + 1; q < l->n && next == TRACE_NO_STR; q++)
			if (l->v[q].cause != INSIGHT_C_HOST_GAP)
				next = l->v[q].cause == INSIGHT_C_SYNC ? l->v[q].detail : l->v[q].where;
		g->detail = prev; /* after */
		g->where = next;  /* before */
		g->between = true;
	}
}

/* ---- accumulation ---- */

enum { EDGE_NONE, EDGE_BEFORE, EDGE_AFTER }; /* a thread's time before its first row, after its last */

struct cause_key {
	uint8_t cause;
	bool between; /* host gap named by the operators around it */
	uint8_t edge;  /* EDGE_*: host gap outside the thread's recorded rows */
	uint32_t where, detail, py;
	int64_t tid;
};

struct cause_acc {
	struct cause_key k;
	double t;
	int64_t pieces;
};

struct acc {
	struct cause_acc *v;
	size_t n, cap;
	uint32_t *hash; /* open addressing: index + 1 */
	size_t hcap;
};

static uint64_t key_hash(const struct cause_key *k)
{
	uint64_t h = k->cause * 0x9E3779B97F4A7C15ull ^ ((uint64_t)k->where << 20) ^ k->detail ^
		     ((uint64_t)k->tid * 0xC2B2AE3D27D4EB4Full) ^ (uint64_t)k->between << 60 ^ (uint64_t)k->edge << 56 ^
		     (uint64_t)k->py * 0x94D049BB133111EBull;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 32);
}

static void acc_add(struct acc *a, const struct cause_key *k, double t)
{
	if (!(t > 0))
		return;
	if (a->n * 2 >= a->hcap) {
		size_t nc = a->hcap ? a->hcap * 2 : 64;
		uint32_t *nh = xcalloc(nc, sizeof *nh);
		for (size_t i = 0; i < a->n; i++) {
			size_t s = key_hash(&a->v[i].k) & (nc - 1);
			while (nh[s])
				s = (s + 1) & (nc - 1);
			nh[s] = (uint32_t)i + 1;
		}
		free(a->hash);
		a->hash = nh;
		a->hcap = nc;
	}
	size_t s = key_hash(k) & (a->hcap - 1);
	while (a->hash[s]) {
		struct cause_acc *c = &a->v[a->hash[s] - 1];
		if (c->k.cause == k->cause && c->k.where == k->where && c->k.detail == k->detail &&
		    c->k.tid == k->tid && c->k.between == k->between && c->k.edge == k->edge && c->k.py == k->py) {
			c->t += t;
			c->pieces++;
			return;
		}
		s = (s + 1) & (a->hcap - 1);
	}
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->v = xrealloc(a->v, a->cap * sizeof *a->v);
	}
	a->v[a->n] = (struct cause_acc){*k, t, 1};
	a->hash[s] = (uint32_t)++a->n;
}

struct rank_lines {
	struct thread_line *lines;
	size_t nlines;
};

static struct thread_line *line_of(struct rank_lines *rl, int64_t tid)
{
	size_t lo = 0, hi = rl->nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rl->lines[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rl->nlines && rl->lines[lo].tid == tid ? &rl->lines[lo] : NULL;
}

/* [a, b) of thread l into the sums per cause and the place table */
static void attribute(const struct thread_line *l, int64_t tid, double a, double b, double *sum, struct acc *ac)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) { /* first segment ending after a */
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[mid].e <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	double cur = a;
	for (size_t k = lo; k < l->n && cur < b; k++) {
		const struct seg *g = &l->v[k];
		double s = fmax(g->s, a), e = fmin(g->e, b);
		if (s > cur) { /* before the thread's first row: outside every range */
			struct cause_key k0 = {INSIGHT_C_HOST_GAP, false, EDGE_BEFORE, TRACE_NO_STR, TRACE_NO_STR,
					       TRACE_NO_STR, tid};
			sum[INSIGHT_C_HOST_GAP] += s - cur;
			acc_add(ac, &k0, s - cur);
		}
		if (e > s) {
			struct cause_key key = {g->cause, g->between, EDGE_NONE, g->where, g->detail, g->py, tid};
			sum[g->cause] += e - s;
			acc_add(ac, &key, e - s);
		}
		cur = fmax(cur, e);
	}
	if (b > cur) { /* after its last row */
		struct cause_key k0 = {INSIGHT_C_HOST_GAP, false, l->n ? EDGE_AFTER : EDGE_BEFORE, TRACE_NO_STR,
				       TRACE_NO_STR, TRACE_NO_STR, tid};
		sum[INSIGHT_C_HOST_GAP] += b - cur;
		acc_add(ac, &k0, b - cur);
	}
}

static bool is_gpu_work(const struct trace_rank *r, size_t i)
{
	uint8_t k = r->kind[i];
	return trace_is_gpu(r, i) &&
	       (k == TRACE_CAT_KERNEL || k == TRACE_CAT_GPU_MEMCPY || k == TRACE_CAT_GPU_MEMSET ||
		k == TRACE_CAT_MTIA_CCP_EVENTS);
}

/* the launching thread of the first GPU row starting at or after t (rows
 * by start); fallback: the thread of the last launch before t */
static const struct thread_line *launcher(const struct trace_rank *r, const size_t *g, size_t ng, double t,
					  struct rank_lines *rl)
{
	size_t lo = 0, hi = ng;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->ts[g[mid]] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < ng && k < lo + 64; k++)
		if (r->link[g[k]] >= 0)
			return line_of(rl, r->tid[r->link[g[k]]]);
	for (size_t k = lo; k-- > 0 && k + 64 >= lo;)
		if (r->link[g[k]] >= 0)
			return line_of(rl, r->tid[r->link[g[k]]]);
	return NULL;
}

void insight_attrib_rank(const struct trace_rank *r, const struct insight_steps *st, struct atable *wf,
			 struct atable *causes)
{
	const struct insight_step *steps = st->v;
	enum insight_step_source src = st->src;
	size_t nsteps = st->n;

	/* the host threads' timelines */
	size_t nh = 0;
	for (size_t i = 0; i < r->n; i++)
		nh += is_host_row(r, i);
	size_t *h = xmalloc((nh ? nh : 1) * sizeof *h), k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (is_host_row(r, i))
			h[k++] = i;
	by_keys(r, h, nh, true);
	struct rank_lines rl = {NULL, 0};
	for (size_t a = 0; a < nh;) {
		size_t b = a;
		while (b < nh && r->tid[h[b]] == r->tid[h[a]])
			b++;
		rl.lines = xrealloc(rl.lines, (rl.nlines + 1) * sizeof *rl.lines);
		struct thread_line *l = &rl.lines[rl.nlines++];
		*l = (struct thread_line){r->tid[h[a]], NULL, 0, 0};
		thread_timeline(r, h + a, b - a, l);
		name_gaps(l);
		a = b;
	}
	free(h);

	/* the GPU: busy (all but pageable copies) and pageable copies, merged */
	size_t ng = 0;
	for (size_t i = 0; i < r->n; i++)
		ng += is_gpu_work(r, i);
	size_t *g = xmalloc((ng ? ng : 1) * sizeof *g);
	struct ival *busy = xmalloc((ng ? ng : 1) * sizeof *busy), *pag = xmalloc((ng ? ng : 1) * sizeof *pag);
	struct ival *work = xmalloc((ng ? ng : 1) * sizeof *work);
	size_t nb = 0, np = 0, nw = 0;
	k = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!is_gpu_work(r, i))
			continue;
		g[k++] = i;
		struct ival v = {r->ts[i], r->ts[i] + fmax(r->dur[i], 0)};
		if (is_pageable_copy(r, i)) {
			pag[np++] = v;
			continue;
		}
		busy[nb++] = v; /* busy: any work; work: all but communication */
		if (!(r->kind[i] == TRACE_CAT_KERNEL && trace_ktype(r, i) == TRACE_KT_COMMUNICATION))
			work[nw++] = v;
	}
	by_keys(r, g, ng, false);
	nb = ival_merge(busy, nb);
	np = ival_merge(pag, np);
	nw = ival_merge(work, nw);

	struct acc ac = {0};
	for (size_t s = 0; s < nsteps; s++) {
		double a = steps[s].s, e = steps[s].e;
		double sum[INSIGHT_NCAUSES] = {0};
		/* the busy intervals overlapping [a, e) and the gaps between */
		size_t lo = 0, hi = nb;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (busy[mid].end <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		double cur = a;
		for (size_t q = lo; cur < e; q++) {
			double gs = cur, ge = q < nb ? fmin(busy[q].ts, e) : e;
			if (ge > gs) {
				/* the idle interval [gs, ge): pageable copies first */
				size_t plo = 0, phi = np;
				while (plo < phi) {
					size_t mid = plo + (phi - plo) / 2;
					if (pag[mid].end <= gs)
						plo = mid + 1;
					else
						phi = mid;
				}
				double c = gs;
				const struct thread_line *l = launcher(r, g, ng, ge, &rl);
				int64_t tid = l ? l->tid : -1;
				for (size_t p = plo; c < ge; p++) {
					double ps = p < np ? fmax(pag[p].ts, c) : ge, pe = p < np ? fmin(pag[p].end, ge) : ge;
					if (ps > ge)
						ps = pe = ge;
					if (ps > c) { /* idle, host's state */
						if (l)
							attribute(l, tid, c, ps, sum, &ac);
						else {
							struct cause_key k0 = {INSIGHT_C_OTHER, false, EDGE_NONE,
									       TRACE_NO_STR, TRACE_NO_STR,
									       TRACE_NO_STR, -1};
							sum[INSIGHT_C_OTHER] += ps - c;
							acc_add(&ac, &k0, ps - c);
						}
					}
					if (pe > ps) {
						struct cause_key kc = {INSIGHT_C_COPY, false, EDGE_NONE, TRACE_NO_STR,
								       TRACE_NO_STR, TRACE_NO_STR, tid};
						sum[INSIGHT_C_COPY] += pe - ps;
						acc_add(&ac, &kc, pe - ps);
					}
					c = fmax(c, pe);
					if (p >= np)
						break;
				}
			}
			if (q >= nb)
				break;
			double be = fmin(busy[q].end, e), bs = fmax(busy[q].ts, a);
			if (be > bs) { /* of which communication alone: exposed */
				double w = ival_overlap(work, nw, bs, be);
				sum[INSIGHT_C_BUSY] += w;
				sum[INSIGHT_C_COMM] += (be - bs) - w;
			}
			cur = fmax(cur, be);
		}
		size_t row = atable_add_row(wf);
		atable_set_i(wf, row, IW_RANK, r->rank);
		atable_set_i(wf, row, IW_STEP, steps[s].id);
		atable_set_s(wf, row, IW_FROM, insight_step_source_name(src));
		atable_set_f(wf, row, IW_START, a);
		atable_set_f(wf, row, IW_DUR, e - a);
		for (int c = 0; c < INSIGHT_NCAUSES; c++)
			atable_set_f(wf, row, IW_BUSY + (size_t)c, sum[c]);
	}
	for (size_t i = 0; i < ac.n; i++) {
		const struct cause_acc *c = &ac.v[i];
		size_t row = atable_add_row(causes);
		atable_set_i(causes, row, ICA_RANK, r->rank);
		atable_set_s(causes, row, ICA_CAUSE, insight_cause_name((enum insight_cause)c->k.cause));
		/* a host gap between two operators: "after X" in detail, the
		 * next operator in where; the rules phrase it */
		atable_set_s(causes, row, ICA_WHERE, c->k.where == TRACE_NO_STR ? "" : trace_strtab_get(&r->strs, c->k.where));
		struct buf d = BUF_INIT;
		if (c->k.between)
			buf_printf(&d, "between %s and %s",
				   c->k.detail == TRACE_NO_STR ? "the step's start" : trace_strtab_get(&r->strs, c->k.detail),
				   c->k.where == TRACE_NO_STR ? "the step's end" : trace_strtab_get(&r->strs, c->k.where));
		else if (c->k.detail != TRACE_NO_STR)
			buf_puts(&d, trace_strtab_get(&r->strs, c->k.detail));
		else if (c->k.edge)
			buf_puts(&d, c->k.edge == EDGE_BEFORE ? "before the thread's first recorded event"
							      : "after the thread's last recorded event");
		atable_set_s(causes, row, ICA_DETAIL, d.len ? d.data : "");
		if (c->k.between)
			atable_set_s(causes, row, ICA_WHERE, "");
		buf_free(&d);
		atable_set_i(causes, row, ICA_TID, c->k.tid);
		atable_set_f(causes, row, ICA_TIME, c->t);
		atable_set_i(causes, row, ICA_STEPS, (int64_t)nsteps);
		atable_set_i(causes, row, ICA_PIECES, c->pieces);
		atable_set_s(causes, row, ICA_PY, c->k.py == TRACE_NO_STR ? "" : trace_strtab_get(&r->strs, c->k.py));
	}
	free(ac.v);
	free(ac.hash);
	for (size_t i = 0; i < rl.nlines; i++)
		free(rl.lines[i].v);
	free(rl.lines);
	free(g);
	free(busy);
	free(work);
	free(pag);
}
