/*
 * critical_path.c - HTA's lightweight critical path analysis (semantics doc
 * section 12, HTA critical_path_analysis.py): a graph of two nodes (start,
 * end) per CPU operator, CUDA runtime/driver call and GPU kernel of one
 * window of one rank, with edges for operator nesting, consecutive
 * top-level operators, the CUDA runtime lock, kernel launches, kernels
 * following each other on a stream, stream/context syncs and CUDA event
 * syncs (cudaEventSynchronize, cudaStreamWaitEvent); the critical
 * path is its longest weighted path, chosen the way networkx's
 * dag_longest_path chooses among ties (topological generations, first
 * maximum), so the path is HTA's and not just one of equal length.
 *
 * Cost: a few arrays per rank (rows, nodes, edges), sorts of the window's
 * nodes and points (O(n log n)), one pass per edge for the path; no
 * allocation per event.  The queue length at each launch (semantics 8.1)
 * is computed here over the whole rank (HTA uses the full trace too).
 *
 * The event syncs need two args of the wait rows, which the loader keeps
 * for this analysis only (ANALYSIS_LOAD_EVENT_WAITS, trace_rank.waits);
 * a rank loaded without them gets no such edge and a note.
 *
 * Deliberate difference (docs/analyze.md): every kernel of a
 * cudaGraphLaunch is in the window (HTA's join keeps only the one the
 * launch's correlation points to, HTA issue 290).
 *
 * The path's tables and the analysis row are critical_path_tables.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/critical_path.h"
#include "analyze/trace_copy.h"

/* One graph node: a point in time of an event. */
struct cp_node {
	double ts;
	uint32_t row;
	uint32_t ev; /* event id (idx), the sort's tie-break */
	uint8_t start;
};

struct cp_edge {
	uint32_t u, v;
	uint8_t type;
	bool dup;      /* a later add of an existing (u, v): merged into the first */
	double weight; /* HTA's edge object weight (what the tables print) */
	int32_t attr;  /* attributed row, -1 none, -2 thread root */
};

struct cp_graph {
	const struct trace_rank *r;
	size_t nn;
	struct cp_node *node;
	int32_t *start_of, *end_of; /* per row: node, -1 none */
	bool *lock, *blocking;      /* per string id */
	struct cp_edge *e;
	size_t ne, ecap;
};

static size_t add_edge(struct cp_graph *g, int32_t u, int32_t v, enum cp_edge_type t, bool zero)
{
	if (g->ne == g->ecap) {
		g->ecap = g->ecap ? 2 * g->ecap : 1024;
		g->e = xrealloc(g->e, g->ecap * sizeof *g->e);
	}
	struct cp_edge *e = &g->e[g->ne];
	e->u = (uint32_t)u;
	e->v = (uint32_t)v;
	e->type = (uint8_t)t;
	e->dup = false;
	e->weight = (t == CP_DEPENDENCY || t == CP_SYNC || zero) ? 0 : g->node[v].ts - g->node[u].ts;
	e->attr = -1;
	/* HTA's attribution: operator and kernel-kernel edges only */
	if (t == CP_KERNEL_KERNEL || (t == CP_OPERATOR && g->node[u].start))
		e->attr = (int32_t)g->node[u].row;
	else if (t == CP_OPERATOR && !g->node[v].start)
		e->attr = (int32_t)g->node[v].row;
	return g->ne++;
}

/* end -> start operator edge: attributed to the source's parent */
static void attribute_parent(struct cp_graph *g, size_t ei, int32_t parent)
{
	struct cp_edge *e = &g->e[ei];
	if (e->type == CP_OPERATOR && !g->node[e->u].start && g->node[e->v].start)
		e->attr = parent >= 0 ? parent : -2;
}

static int node_cmp(const void *a, const void *b)
{
	const struct cp_node *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ev != y->ev)
		return x->ev < y->ev ? -1 : 1;
	return (int)y->start - (int)x->start; /* start before end (pandas' stable sort) */
}

/* ---- strings ---- */

static uint32_t sid(const struct trace_rank *r, const char *s) { return trace_strtab_find(&r->strs, s, strlen(s)); }

static bool *name_set(const struct trace_rank *r, const char *const *names, size_t n)
{
	bool *set = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (size_t i = 0; i < n; i++) {
		uint32_t id = sid(r, names[i]);
		if (id != TRACE_NO_STR)
			set[id] = true;
	}
	return set;
}

/* ---- a small stream -> value map (a rank has a handful of streams) ---- */

struct smap {
	int64_t *key;
	int64_t *val;
	size_t n, cap;
};

static int64_t *smap_get(struct smap *m, int64_t key, int64_t init)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->key[i] == key)
			return &m->val[i];
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->key = xrealloc(m->key, m->cap * sizeof *m->key);
		m->val = xrealloc(m->val, m->cap * sizeof *m->val);
	}
	m->key[m->n] = key;
	m->val[m->n] = init;
	return &m->val[m->n++];
}

static int64_t smap_find(const struct smap *m, int64_t key)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->key[i] == key)
			return m->val[i];
	return 0;
}

static void smap_free(struct smap *m) { free(m->key), free(m->val); }

/* ---- queue length at every launch and kernel (semantics 8.1) ---- */

struct qpoint {
	double ts;
	uint32_t row;
	uint32_t seq; /* concat order: launches, then kernels */
	int8_t delta;
};

static int qpoint_cmp(const void *a, const void *b)
{
	const struct qpoint *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* launches before kernels at one time (concat order); HTA's sort is
	 * not stable, so its order at such ties is not knowable */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* a runtime launch call with its GPU partner; a GPU row whose partner is one */
static bool is_launch_row(const struct trace_rank *r, const bool *is_launch, size_t i)
{
	int32_t l = r->link[i];
	return r->stream[i] == -1 && l >= 0 && is_launch[r->name[i]] && r->idx[l] > 0;
}

static bool is_kernel_row(const struct trace_rank *r, const bool *is_launch, size_t i)
{
	int32_t l = r->link[i];
	return r->stream[i] != -1 && l >= 0 && r->stream[l] == -1 && is_launch[r->name[l]] && r->idx[i] > 0;
}

/* q[row] = queue length after the row's +1 (launch) or -1 (kernel); NaN
 * for other rows.  Launch calls are HTA's runtime launch names with a GPU
 * partner. */
static void queue_lengths(const struct trace_rank *r, double *q)
{
	static const char *const launch[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
					     "cuLaunchKernelEx", "cudaMemcpyAsync", "cudaMemsetAsync",
					     "runFunction - job_prep_and_submit_for_execution",
					     "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync",
					     "hipMemsetAsync", "hipMemcpyWithStream"};
	bool *is_launch = name_set(r, launch, sizeof launch / sizeof *launch);
	/* A launch and a kernel each count on their own side: links need not
	 * pair one to one (several GPU rows may name one launch, as in a
	 * damaged or fuzzed trace), so "two points per launch" is not a bound. */
	size_t np = 0;
	for (size_t i = 0; i < r->n; i++) {
		q[i] = NAN;
		np += is_launch_row(r, is_launch, i) + is_kernel_row(r, is_launch, i);
	}
	struct qpoint *p = xmalloc((np ? np : 1) * sizeof *p);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (is_launch_row(r, is_launch, i))
			p[k] = (struct qpoint){r->ts[i], (uint32_t)i, (uint32_t)k, 1}, k++;
	for (size_t i = 0; i < r->n; i++)
		if (is_kernel_row(r, is_launch, i))
			p[k] = (struct qpoint){r->ts[i], (uint32_t)i, (uint32_t)k, -1}, k++;
	qsort(p, k, sizeof *p, qpoint_cmp);
	struct smap sum = {0};
	for (size_t j = 0; j < k; j++) {
		uint32_t row = p[j].row;
		int64_t stream = p[j].delta > 0 ? r->stream[r->link[row]] : r->stream[row];
		int64_t *s = smap_get(&sum, stream, 0);
		*s += p[j].delta;
		q[row] = (double)*s;
	}
	smap_free(&sum);
	free(p);
	free(is_launch);
}

/* ---- the window (HTA critical_path_analysis, "clipped_df") ---- */

static bool window(const struct trace_rank *r, const struct cp_options *o, double *start, double *end,
		   struct cp_result *out)
{
	const char *ann = o->annotation ? o->annotation : "ProfilerStep";
	*start = -INFINITY;
	*end = INFINITY;
	if (!*ann)
		return true; /* the whole trace */
	bool *match = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (uint32_t s = 0; s < r->strs.n; s++)
		match[s] = strstr(r->strs.s[s], ann) != NULL;
	size_t count = 0;
	for (size_t i = 0; i < r->n; i++)
		count += match[r->name[i]];
	if (count == 0) {
		free(match);
		if (!o->annotation)
			return true; /* no ProfilerStep: the whole trace, like the oracle's run */
		snprintf(out->why, sizeof out->why, "no event name contains annotation '%s'", ann);
		return false;
	}
	int64_t inst = o->instance >= 0 ? o->instance : count >= 2 ? 1 : 0;
	if ((size_t)inst >= count) {
		free(match);
		snprintf(out->why, sizeof out->why, "annotation '%s' has %zu instances; instance %lld asked for",
			 ann, count, (long long)inst);
		return false;
	}
	/* instances count in the loaded order of rows (GPU rows first in a
	 * filtered trace, as in HTA's frame) */
	for (size_t i = 0, k = 0; i < r->n; i++)
		if (match[r->name[i]] && (int64_t)k++ == inst) {
			*start = r->ts[i];
			*end = r->ts[i] + r->dur[i];
			break;
		}
	free(match);
	return true;
}

/* ---- call stacks (HTA's old builder, hta/common/call_stack.py) ---- */

struct cpoint {
	double time, dur;
	uint32_t row, ev;
	int8_t type; /* 1 start, -1 end */
};

static int cpoint_cmp(const void *a, const void *b)
{
	const struct cpoint *x = a, *y = b;
	if (x->row == y->row)
		return x->type == 1 ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->type == y->type) {
		if (x->type == 1) {
			if (x->dur == y->dur)
				return x->ev < y->ev ? -1 : x->ev > y->ev;
			return x->dur < y->dur ? 1 : -1;
		}
		if (x->dur == y->dur)
			return x->ev < y->ev ? 1 : x->ev > y->ev ? -1 : 0;
		return x->dur < y->dur ? -1 : 1;
	}
	if (x->dur > 0 && y->dur > 0)
		return x->type == 1 ? 1 : -1;
	if (x->dur == 0 && y->dur == 0)
		return x->ev < y->ev ? -1 : x->ev > y->ev;
	return x->type == 1 ? -1 : 1;
}

static bool shares_lock(const struct cp_graph *g, int32_t a, int32_t b)
{
	const struct trace_rank *r = g->r;
	return g->lock[r->name[g->node[a].row]] && g->lock[r->name[g->node[b].row]] &&
	       (g->node[a].start || !g->node[b].start);
}

/* The depth-first walk of one thread's stack: nesting and top-level edges. */
static void walk_stack(struct cp_graph *g, int32_t first, const int32_t *parent, const int32_t *child,
		       const int32_t *sibling)
{
	int32_t last = -1, last_parent = -1;
	int depth = 0;
	int32_t cur = first;
	while (cur != -1) {
		/* enter */
		int32_t s = g->start_of[cur], e = g->end_of[cur];
		if (s >= 0 && e >= 0) {
			if (last >= 0 && !shares_lock(g, last, s)) {
				size_t ei = add_edge(g, last, s, depth == 0 ? CP_DEPENDENCY : CP_OPERATOR, false);
				attribute_parent(g, ei, last_parent);
			}
			last = s;
			last_parent = parent[cur];
			depth++;
		}
		if (child[cur] != -1) {
			cur = child[cur];
			continue;
		}
		while (cur != -1) {
			/* exit */
			s = g->start_of[cur];
			e = g->end_of[cur];
			if (s >= 0 && e >= 0) {
				if (last >= 0 && !shares_lock(g, last, e)) {
					bool zero = g->blocking[g->r->name[cur]];
					size_t ei = add_edge(g, last, e, CP_OPERATOR, zero);
					attribute_parent(g, ei, last_parent);
				}
				last = e;
				last_parent = parent[cur];
				depth--;
			}
			if (sibling[cur] != -1) {
				cur = sibling[cur];
				break;
			}
			cur = parent[cur];
		}
	}
}

/* tid of the only thread with cpu_op/user_annotation events whose name
 * contains what; -1 (none or several) otherwise */
static int64_t only_tid(const struct trace_rank *r, const uint8_t *in, const char *what, bool *found)
{
	uint32_t cpu_op = sid(r, "cpu_op"), ua = sid(r, "user_annotation");
	bool *match = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (uint32_t s = 0; s < r->strs.n; s++)
		match[s] = strstr(r->strs.s[s], what) != NULL;
	int64_t tid = 0;
	int n = 0;
	for (size_t i = 0; i < r->n && n < 2; i++)
		if (in[i] && match[r->name[i]] && (r->cat[i] == cpu_op || r->cat[i] == ua) && r->cat[i] != TRACE_NO_STR)
			if (n == 0 || r->tid[i] != tid)
				tid = r->tid[i], n++;
	free(match);
	*found = n == 1;
	return tid;
}

struct trow {
	int64_t pid, tid;
	uint32_t row;
};

static int trow_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static void call_stacks(struct cp_graph *g, const uint8_t *in)
{
	const struct trace_rank *r = g->r;
	bool fwd_ok, bwd_ok;
	int64_t fwd = only_tid(r, in, "forward", &fwd_ok), bwd = only_tid(r, in, "autograd", &bwd_ok);
	bool remap = fwd_ok && bwd_ok && fwd != bwd;
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++)
		m += in[i];
	struct trow *t = xmalloc((m ? m : 1) * sizeof *t);
	m = 0;
	for (size_t i = 0; i < r->n; i++)
		if (in[i])
			t[m++] = (struct trow){r->pid[i], remap && r->tid[i] == bwd ? fwd : r->tid[i], (uint32_t)i};
	qsort(t, m, sizeof *t, trow_cmp);
	int32_t *parent = xmalloc((r->n ? r->n : 1) * sizeof *parent);
	int32_t *child = xmalloc((r->n ? r->n : 1) * sizeof *child);
	int32_t *last_child = xmalloc((r->n ? r->n : 1) * sizeof *last_child);
	int32_t *sibling = xmalloc((r->n ? r->n : 1) * sizeof *sibling);
	struct cpoint *p = xmalloc((m ? 2 * m : 1) * sizeof *p);
	int32_t *stack = xmalloc((m ? m : 1) * sizeof *stack);
	for (size_t a = 0; a < m;) {
		size_t b = a;
		bool cpu = true;
		while (b < m && t[b].pid == t[a].pid && t[b].tid == t[a].tid)
			cpu &= r->stream[t[b++].row] < 0;
		/* a thread with a stream is a GPU one (HTA keeps only stream > 0
		 * rows there, or none qualifies as CPU) */
		if (!cpu) {
			a = b;
			continue;
		}
		size_t np = 0;
		for (size_t k = a; k < b; k++) {
			uint32_t i = t[k].row;
			double dur = r->dur[i] > 0 ? r->dur[i] : 0;
			p[np++] = (struct cpoint){r->ts[i], dur, i, r->idx[i], 1};
			p[np++] = (struct cpoint){r->ts[i] + dur, dur, i, r->idx[i], -1};
			parent[i] = child[i] = last_child[i] = sibling[i] = -1;
		}
		qsort(p, np, sizeof *p, cpoint_cmp);
		int32_t first = -1, root_last = -1;
		size_t sp = 0;
		for (size_t k = 0; k < np; k++) {
			int32_t i = (int32_t)p[k].row;
			if (p[k].type == 1) {
				int32_t par = sp ? stack[sp - 1] : -1;
				parent[i] = par;
				int32_t *lastc = par >= 0 ? &last_child[par] : &root_last;
				if (*lastc >= 0)
					sibling[*lastc] = i;
				else if (par >= 0)
					child[par] = i;
				else
					first = i;
				*lastc = i;
				stack[sp++] = i;
			} else if (sp) {
				sp--;
			}
		}
		walk_stack(g, first, parent, child, sibling);
		a = b;
	}
	free(stack);
	free(p);
	free(parent);
	free(child);
	free(last_child);
	free(sibling);
	free(t);
}

/* ---- the CUDA runtime lock (cudaHostAlloc, cudaLaunchKernel,
 * cudaMemcpyAsync share it across threads) ---- */

static void lock_chain(struct cp_graph *g)
{
	const struct trace_rank *r = g->r;
	int32_t *pending = xmalloc((g->nn ? g->nn : 1) * sizeof *pending);
	size_t np = 0;
	int32_t last = -1;
	for (size_t n = 0; n < g->nn; n++) {
		uint32_t row = g->node[n].row;
		if (!g->lock[r->name[row]])
			continue;
		if (g->node[n].start) {
			pending[np++] = (int32_t)n;
		} else {
			while (np) {
				int32_t s = pending[--np];
				add_edge(g, s, (int32_t)n, g->node[s].row == row ? CP_OPERATOR : CP_DEPENDENCY, false);
			}
			if (last >= 0 && !g->node[last].start)
				add_edge(g, last, (int32_t)n, CP_DEPENDENCY, false);
		}
		last = (int32_t)n;
	}
	free(pending);
}

/* ---- CUDA event syncs (cudaEventSynchronize, cudaStreamWaitEvent) ----
 *
 * A cuda_sync row that waits on a CUDA event names the event's stream
 * (wait_on_stream) and its cudaEventRecord call (by correlation); the
 * loader keeps those args when asked (trace_rank.waits).  HTA's rules:
 * the event stands for the last kernel launched on the recorded stream
 * (and GPU) before the cudaEventRecord; an Event Sync then ties that
 * kernel's end to the end of the cudaEventSynchronize call, a Stream Wait
 * Event ties it to the start of the next kernel launched from the
 * cudaStreamWaitEvent's thread onto the waiting stream.  All of it over
 * the whole rank, like HTA (its full trace): sorts of the launches, O(n
 * log n), and only for a trace that has such waits. */

struct wpoint {
	int64_t k1, k2, k3; /* the group: (gpu, stream, 0) or (pid, tid, stream) */
	double ts;
	uint32_t row;
	uint8_t launch; /* 1 launch, 0 the record / wait call (a launch first at a tie) */
};

static int wpoint_cmp(const void *a, const void *b)
{
	const struct wpoint *x = a, *y = b;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	if (x->k3 != y->k3)
		return x->k3 < y->k3 ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->launch != y->launch)
		return x->launch ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* a recorded event: its cudaEventRecord correlation, stream and GPU */
struct erec {
	int64_t corr, stream, gpu;
	int32_t record;      /* the cudaEventRecord row, -1 none seen */
	int32_t prev_launch; /* the launch before it on (gpu, stream), -1 none */
};

static int erec_cmp(const void *a, const void *b)
{
	const struct erec *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

static struct erec *erec_find(struct erec *e, size_t n, int64_t corr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && e[lo].corr == corr ? &e[lo] : NULL;
}

struct cp_events {
	bool active;      /* a cudaEventRecord matched a wait: HTA's event-sync path */
	int32_t *src;     /* per row (Event Sync / Stream Wait Event): the kernel waited on, -1 */
	int32_t *dst;     /* per row (Stream Wait Event): the kernel that waits, -1 */
	size_t waits;     /* rows that wait on an event */
};

/* A launch row of HTA's runtime-call frame: a launch name, and a kernel
 * partner on a stream, both with a partner id > 0. */
static bool event_launch(const struct trace_rank *r, const bool *is_launch, size_t i)
{
	int32_t l = r->link[i];
	return is_launch[r->name[i]] && l >= 0 && r->stream[l] != -1 && r->idx[l] > 0 && r->idx[i] > 0 &&
	       trace_index_correlation(r, (size_t)l) > 0;
}

static bool event_syncs(const struct trace_rank *r, struct cp_events *ev, struct cp_result *out)
{
	memset(ev, 0, sizeof *ev);
	uint32_t ev_sync = sid(r, "Event Sync"), swe = sid(r, "Stream Wait Event"),
		 record = sid(r, "cudaEventRecord"), swe_call = sid(r, "cudaStreamWaitEvent");
	if (r->nwaits == 0 || record == TRACE_NO_STR)
		return true;
	/* the recorded events the waits name (wait_on_stream > -1) */
	size_t ne = 0, cap = 0;
	struct erec *e = NULL;
	for (size_t i = 0; i < r->n; i++) {
		if (r->kind[i] != TRACE_CAT_CUDA_SYNC)
			continue;
		const struct trace_event_wait *w = trace_event_wait_of(r, r->idx[i]);
		if (!w || w->stream <= -1)
			continue;
		if (ne == cap) {
			cap = cap ? 2 * cap : 16;
			e = xrealloc(e, cap * sizeof *e);
		}
		e[ne++] = (struct erec){w->record_corr, w->stream, r->pid[i], -1, -1};
	}
	if (ne > 1) /* qsort of a NULL array, even of 0 items, is undefined */
		qsort(e, ne, sizeof *e, erec_cmp);
	size_t m = 0;
	for (size_t k = 0; k < ne; k++) {
		if (m && erec_cmp(&e[m - 1], &e[k]) == 0)
			continue; /* drop_duplicates */
		if (m && e[m - 1].corr == e[k].corr) {
			snprintf(out->why, sizeof out->why,
				 "cudaEventRecord correlation %lld is waited on as two streams (HTA fails here too)",
				 (long long)e[k].corr);
			free(e);
			return false;
		}
		e[m++] = e[k];
	}
	ne = m;
	bool *is_launch = NULL;
	struct wpoint *p = NULL;
	size_t nrec = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->name[i] != record)
			continue;
		struct erec *x = erec_find(e, ne, r->correlation[i]);
		if (!x)
			continue;
		if (x->record >= 0) {
			snprintf(out->why, sizeof out->why,
				 "two cudaEventRecord calls share correlation %lld (HTA fails here too)",
				 (long long)x->corr);
			free(e);
			return false;
		}
		x->record = (int32_t)i;
		nrec++;
	}
	if (nrec == 0) {
		free(e);
		return true; /* HTA: no cudaEventRecord frame, no event-sync edge */
	}
	ev->active = true;
	static const char *const launch[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
					     "cuLaunchKernelEx", "cudaMemcpyAsync", "cudaMemsetAsync",
					     "runFunction - job_prep_and_submit_for_execution",
					     "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync",
					     "hipMemsetAsync", "hipMemcpyWithStream"};
	is_launch = name_set(r, launch, sizeof launch / sizeof *launch);
	size_t nl = 0;
	for (size_t i = 0; i < r->n; i++)
		nl += event_launch(r, is_launch, i);
	/* each recorded event's last launch on its (gpu, stream) */
	p = xmalloc((nl + nrec + 1) * sizeof *p);
	size_t np = 0;
	for (size_t i = 0; i < r->n; i++)
		if (event_launch(r, is_launch, i)) {
			int32_t k = r->link[i];
			p[np++] = (struct wpoint){r->pid[k], r->stream[k], 0, r->ts[i], (uint32_t)i, 1};
		}
	for (size_t k = 0; k < ne; k++)
		if (e[k].record >= 0)
			p[np++] = (struct wpoint){e[k].gpu, e[k].stream, 0, r->ts[e[k].record], (uint32_t)k, 0};
	qsort(p, np, sizeof *p, wpoint_cmp);
	for (size_t k = 0, last = SIZE_MAX; k < np; k++) {
		if (k && (p[k].k1 != p[k - 1].k1 || p[k].k2 != p[k - 1].k2))
			last = SIZE_MAX;
		if (p[k].launch)
			last = p[k].row;
		else
			e[p[k].row].prev_launch = last == SIZE_MAX ? -1 : (int32_t)last;
	}
	ev->src = xmalloc((r->n ? r->n : 1) * sizeof *ev->src);
	ev->dst = xmalloc((r->n ? r->n : 1) * sizeof *ev->dst);
	size_t nswe = 0;
	for (size_t i = 0; i < r->n; i++) {
		ev->src[i] = ev->dst[i] = -1;
		if (r->name[i] != ev_sync && r->name[i] != swe)
			continue;
		const struct trace_event_wait *w = trace_event_wait_of(r, r->idx[i]);
		struct erec *x = w ? erec_find(e, ne, w->record_corr) : NULL;
		if (!x || x->record < 0 || x->prev_launch < 0)
			continue;
		ev->waits++;
		ev->src[i] = r->link[x->prev_launch];
		nswe += r->name[i] == swe;
	}
	/* each cudaStreamWaitEvent's next launch from its thread onto the
	 * waiting stream (its Stream Wait Event row's) */
	if (nswe && swe_call != TRACE_NO_STR) {
		size_t nc = 0;
		for (size_t i = 0; i < r->n; i++) {
			int32_t g = r->link[i];
			if (r->name[i] == swe_call && g >= 0 && r->idx[g] > 0 && r->stream[g] != -1 &&
			    trace_index_correlation(r, (size_t)g) > 0)
				nc++;
		}
		p = xrealloc(p, (nl + nc + 1) * sizeof *p);
		np = 0;
		for (size_t i = 0; i < r->n; i++) {
			int32_t g = r->link[i];
			if (event_launch(r, is_launch, i))
				p[np++] = (struct wpoint){r->pid[i], r->tid[i], r->stream[g], r->ts[i], (uint32_t)i, 1};
			else if (r->name[i] == swe_call && g >= 0 && r->idx[g] > 0 && r->stream[g] != -1 &&
				 trace_index_correlation(r, (size_t)g) > 0)
				p[np++] = (struct wpoint){r->pid[i], r->tid[i], r->stream[g], r->ts[i], (uint32_t)i, 0};
		}
		qsort(p, np, sizeof *p, wpoint_cmp);
		int32_t *next = xmalloc((r->n ? r->n : 1) * sizeof *next); /* per call row: next launch */
		for (size_t k = np, nxt = SIZE_MAX; k-- > 0;) {
			if (k + 1 < np && (p[k].k1 != p[k + 1].k1 || p[k].k2 != p[k + 1].k2 || p[k].k3 != p[k + 1].k3))
				nxt = SIZE_MAX;
			if (p[k].launch)
				nxt = p[k].row;
			else
				next[p[k].row] = nxt == SIZE_MAX ? -1 : (int32_t)nxt;
		}
		for (size_t i = 0; i < r->n; i++) {
			if (r->name[i] != swe || ev->src[i] < 0)
				continue;
			int32_t c = r->link[i];
			bool call = c >= 0 && r->name[c] == swe_call && r->link[c] >= 0 && r->idx[r->link[c]] > 0 &&
				    r->stream[r->link[c]] != -1 && trace_index_correlation(r, (size_t)r->link[c]) > 0;
			ev->dst[i] = call && next[c] >= 0 ? r->link[next[c]] : -1;
		}
		free(next);
	}
	free(p);
	free(is_launch);
	free(e);
	return true;
}

static void event_syncs_free(struct cp_events *ev)
{
	free(ev->src);
	free(ev->dst);
}

/* ---- GPU kernels, launches and syncs ---- */

/* A longer gap between two kernels of a stream is not a kernel-kernel
 * delay (HTA's threshold, µs): something else held the stream. */
#define CP_MAX_KERNEL_GAP 1500.0

struct krow {
	double key;
	uint32_t row;
};

static int krow_cmp(const void *a, const void *b)
{
	const struct krow *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static bool kernels(struct cp_graph *g, const uint8_t *in, const struct cp_events *ev, struct cp_result *out)
{
	const struct trace_rank *r = g->r;
	uint32_t sync_cat = sid(r, "cuda_sync"), ctx_sync = sid(r, "Context Sync"),
		 stream_sync = sid(r, "Stream Sync"), event_sync = sid(r, "Event Sync"),
		 wait_event = sid(r, "Stream Wait Event");
	double *q = xmalloc((r->n ? r->n : 1) * sizeof *q);
	queue_lengths(r, q);
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++)
		m += in[i] != 0;
	struct krow *k = xmalloc((m ? m : 1) * sizeof *k);
	m = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!in[i] || trace_index_correlation(r, i) < 0)
			continue;
		uint32_t nm = r->name[i];
		if (r->stream[i] == -1 && (nm == TRACE_NO_STR || (nm != event_sync && nm != ctx_sync)))
			continue;
		bool sync = r->cat[i] == sync_cat && sync_cat != TRACE_NO_STR;
		double ts = r->ts[i], dur = r->dur[i];
		if (ev->active) /* HTA's frame goes through astype(int) on that path */
			ts = trunc(ts), dur = trunc(dur);
		k[m++] = (struct krow){sync ? ts + dur : ts, (uint32_t)i};
	}
	qsort(k, m, sizeof *k, krow_cmp);
	struct smap last = {0}; /* stream -> last kernel's end node + 1 (0: none) */
	/* Stream Wait Event: the kernel that waits -> the kernel waited on */
	int32_t *ksync = NULL;
	if (ev->active) {
		ksync = xmalloc((r->n ? r->n : 1) * sizeof *ksync);
		for (size_t i = 0; i < r->n; i++)
			ksync[i] = -1;
	}
	bool ok = true;
	for (size_t j = 0; j < m && ok; j++) {
		uint32_t i = k[j].row;
		int32_t rt = r->link[i];
		if (r->cat[i] == sync_cat && sync_cat != TRACE_NO_STR) {
			uint32_t nm = r->name[i];
			if (nm == wait_event || nm == event_sync) {
				if (!r->waits_kept)
					out->event_sync_ignored = true;
				if (!ev->active || ev->src[i] < 0)
					continue;
				if (nm == wait_event) {
					if (ev->dst[i] >= 0)
						ksync[ev->dst[i]] = ev->src[i];
					continue;
				}
				int32_t se = g->end_of[ev->src[i]], de = rt >= 0 ? g->end_of[rt] : -1;
				if (se >= 0 && de >= 0) /* the kernel waited on may be outside the window */
					add_edge(g, se, de, CP_SYNC, false);
				continue;
			}
			if (nm != ctx_sync && nm != stream_sync)
				continue;
			int32_t dst = rt >= 0 ? g->end_of[rt] : -1;
			if (dst < 0)
				continue;
			if (nm == ctx_sync) {
				for (size_t s = 0; s < last.n; s++)
					if (last.val[s] > 0)
						add_edge(g, (int32_t)last.val[s] - 1, dst, CP_SYNC, false);
			} else {
				int64_t l = smap_find(&last, r->stream[i]);
				if (l > 0)
					add_edge(g, (int32_t)l - 1, dst, CP_SYNC, false);
			}
			continue;
		}
		int32_t s = g->start_of[i], e = g->end_of[i];
		if (s < 0 || e < 0)
			continue;
		add_edge(g, s, e, CP_OPERATOR, false);
		int64_t *l = smap_get(&last, r->stream[i], 0);
		/* a Stream Wait Event's kernel: a sync edge from the kernel it
		 * waits on, which also rules out a launch or kernel-kernel edge
		 * that ended earlier */
		int32_t kse = -1;
		if (ksync && ksync[i] >= 0) {
			kse = g->end_of[ksync[i]];
			if (kse >= 0)
				add_edge(g, kse, s, CP_SYNC, false);
			ksync[i] = -1;
		}
		double qk = q[i], qr = rt >= 0 ? q[rt] : NAN;
		if (qr == 1 && qk == 0 && (*l == 0 || g->node[*l - 1].ts < r->ts[rt]) &&
		    (kse < 0 || g->node[kse].ts < r->ts[rt])) {
			if (g->start_of[rt] < 0) {
				snprintf(out->why, sizeof out->why, "could not find runtime index %u (HTA fails here too)",
					 r->idx[rt]);
				ok = false;
				break;
			}
			add_edge(g, g->start_of[rt], s, CP_LAUNCH, false);
		} else if (*l > 0 && g->node[s].ts - g->node[*l - 1].ts < CP_MAX_KERNEL_GAP &&
			   (kse < 0 || g->node[kse].ts < g->node[*l - 1].ts)) {
			add_edge(g, (int32_t)*l - 1, s, CP_KERNEL_KERNEL, false);
		}
		*l = e + 1;
	}
	smap_free(&last);
	free(ksync);
	free(k);
	free(q);
	return ok;
}

/* ---- the longest path, as networkx.dag_longest_path picks it ---- */

struct ekey {
	uint32_t u, v, i;
};

static int ekey_cmp(const void *a, const void *b)
{
	const struct ekey *x = a, *y = b;
	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* networkx keeps one edge per (u, v): a later add_edge updates the first
 * one's attributes in place (its position in the adjacency stays). */
static void merge_duplicates(struct cp_graph *g)
{
	struct ekey *k = xmalloc((g->ne ? g->ne : 1) * sizeof *k);
	for (size_t i = 0; i < g->ne; i++)
		k[i] = (struct ekey){g->e[i].u, g->e[i].v, (uint32_t)i};
	qsort(k, g->ne, sizeof *k, ekey_cmp);
	for (size_t a = 0; a < g->ne;) {
		size_t b = a + 1;
		while (b < g->ne && k[b].u == k[a].u && k[b].v == k[a].v)
			b++;
		if (b - a > 1) {
			struct cp_edge keep = g->e[k[b - 1].i];
			keep.dup = false;
			g->e[k[a].i] = keep;
			for (size_t j = a + 1; j < b; j++)
				g->e[k[j].i].dup = true;
		}
		a = b;
	}
	free(k);
}

static double gweight(const struct cp_edge *e)
{
	/* HTA's validation zeroes weights of -1 and below in the graph (ns
	 * rounding leaves children ending after their parent) */
	return e->weight <= -1 ? 0 : e->weight;
}

static bool longest_path(struct cp_graph *g, struct cp_result *out)
{
	size_t nn = g->nn, ne = g->ne;
	int32_t *order = xmalloc((nn ? nn : 1) * sizeof *order); /* node -> insertion rank, -1 */
	uint32_t *nodes = xmalloc((nn ? nn : 1) * sizeof *nodes);
	for (size_t n = 0; n < nn; n++)
		order[n] = -1;
	size_t gn = 0, live = 0;
	uint32_t *outdeg = xcalloc(nn + 1, sizeof *outdeg), *indeg = xcalloc(nn + 1, sizeof *indeg);
	for (size_t i = 0; i < ne; i++) {
		const struct cp_edge *e = &g->e[i];
		if (e->dup)
			continue;
		live++;
		if (order[e->u] < 0)
			order[e->u] = (int32_t)gn, nodes[gn++] = e->u;
		if (order[e->v] < 0)
			order[e->v] = (int32_t)gn, nodes[gn++] = e->v;
		outdeg[e->u + 1]++;
		indeg[e->v + 1]++;
		out->type_count[e->type]++;
		out->type_weight[e->type] += e->weight;
	}
	out->nodes = gn;
	out->edges = live;
	/* successor and predecessor lists in insertion order (CSR) */
	for (size_t n = 0; n < nn; n++)
		outdeg[n + 1] += outdeg[n], indeg[n + 1] += indeg[n];
	uint32_t *succ = xmalloc((live ? live : 1) * sizeof *succ), *pred = xmalloc((live ? live : 1) * sizeof *pred);
	uint32_t *sfill = xmalloc((nn + 1) * sizeof *sfill), *pfill = xmalloc((nn + 1) * sizeof *pfill);
	memcpy(sfill, outdeg, (nn + 1) * sizeof *sfill);
	memcpy(pfill, indeg, (nn + 1) * sizeof *pfill);
	for (size_t i = 0; i < ne; i++)
		if (!g->e[i].dup) {
			succ[sfill[g->e[i].u]++] = (uint32_t)i;
			pred[pfill[g->e[i].v]++] = (uint32_t)i;
		}
	/* topological generations, in networkx's order */
	uint32_t *remaining = xmalloc((nn ? nn : 1) * sizeof *remaining);
	uint32_t *topo = xmalloc((gn ? gn : 1) * sizeof *topo);
	size_t nt = 0;
	for (size_t k = 0; k < gn; k++) {
		uint32_t n = nodes[k];
		remaining[n] = indeg[n + 1] - indeg[n];
		if (remaining[n] == 0)
			topo[nt++] = n;
	}
	for (size_t gen_start = 0; gen_start < nt;) {
		size_t gen_end = nt;
		for (size_t k = gen_start; k < gen_end; k++) {
			uint32_t n = topo[k];
			for (uint32_t j = outdeg[n]; j < outdeg[n + 1]; j++) {
				uint32_t c = g->e[succ[j]].v;
				if (--remaining[c] == 0)
					topo[nt++] = c;
			}
		}
		gen_start = gen_end;
	}
	bool ok = true;
	if (nt < gn) {
		snprintf(out->why, sizeof out->why, "the graph has a cycle (HTA fails here too)");
		ok = false;
	} else if (gn < 2) {
		snprintf(out->why, sizeof out->why, "the window has no edge: no critical path (HTA fails here too)");
		ok = false;
	}
	double *dist = NULL;
	int64_t *from = NULL;
	if (ok) {
		dist = xmalloc(nn * sizeof *dist);
		from = xmalloc(nn * sizeof *from); /* edge into the node, -1 = starts here */
		size_t best_k = 0;
		for (size_t k = 0; k < nt; k++) {
			uint32_t v = topo[k];
			double best = 0;
			int64_t be = -1;
			for (uint32_t j = indeg[v]; j < indeg[v + 1]; j++) {
				const struct cp_edge *e = &g->e[pred[j]];
				double d = dist[e->u] + gweight(e);
				if (be < 0 || d > best)
					best = d, be = pred[j];
			}
			if (be < 0 || best < 0)
				best = 0, be = -1;
			dist[v] = best;
			from[v] = be;
			if (dist[v] > dist[topo[best_k]])
				best_k = k;
		}
		uint32_t v = topo[best_k];
		out->length = dist[v];
		size_t len = 0;
		for (uint32_t x = v; from[x] >= 0; x = g->e[from[x]].u)
			len++;
		out->path_edges = len;
		out->path = xmalloc((len ? len : 1) * sizeof *out->path);
		size_t pos = len;
		for (uint32_t x = v; from[x] >= 0; x = g->e[from[x]].u) {
			const struct cp_edge *e = &g->e[from[x]];
			const struct cp_node *a = &g->node[e->u], *b = &g->node[e->v];
			out->path[--pos] = (struct cp_path_edge){a->row, b->row, a->start, b->start, a->ts, b->ts,
								 e->weight, e->type, e->attr};
		}
		if (len == 0) {
			snprintf(out->why, sizeof out->why, "the longest path has no edge (HTA fails here too)");
			ok = false;
		}
	}
	free(dist);
	free(from);
	free(topo);
	free(remaining);
	free(sfill);
	free(pfill);
	free(succ);
	free(pred);
	free(outdeg);
	free(indeg);
	free(nodes);
	free(order);
	return ok;
}

/* HTA refuses a graph with a sync edge between two events of one stream. */
static bool validate(const struct cp_graph *g, struct cp_result *out)
{
	const struct trace_rank *r = g->r;
	for (size_t i = 0; i < g->ne; i++) {
		const struct cp_edge *e = &g->e[i];
		if (e->dup || e->type != CP_SYNC)
			continue;
		int64_t a = r->stream[g->node[e->u].row], b = r->stream[g->node[e->v].row];
		if (a != -1 && a == b) {
			snprintf(out->why, sizeof out->why,
				 "a sync edge joins two events of stream %lld (HTA refuses the graph too)", (long long)a);
			return false;
		}
	}
	return true;
}

void critical_path_run(const struct trace_rank *r, const struct cp_options *o, struct cp_result *out)
{
	memset(out, 0, sizeof *out);
	out->rank = r->rank;
	double start, end;
	if (!window(r, o, &start, &end, out))
		return;
	uint32_t cpu_op = sid(r, "cpu_op"), rt = sid(r, "cuda_runtime"), drv = sid(r, "cuda_driver"),
		 swe = sid(r, "Stream Wait Event");
	/* the window: CPU rows starting in it (dur > 0), GPU rows whose launch
	 * does, and Stream Wait Event rows */
	uint8_t *in = xcalloc(r->n ? r->n : 1, 1);
	bool any_launch = false;
	for (size_t i = 0; i < r->n; i++) {
		if (r->stream[i] == -1) {
			in[i] = r->ts[i] >= start && r->ts[i] <= end && r->dur[i] > 0;
		} else {
			int32_t l = r->link[i];
			/* HTA joins the launch's partner only: one kernel of a CUDA graph */
			bool launch = l >= 0 && (!o->hta_graph_launch || r->link[l] == (int32_t)i);
			in[i] = (launch && r->stream[l] == -1 && r->ts[l] >= start && r->ts[l] <= end && r->dur[l] > 0) ||
				(swe != TRACE_NO_STR && r->name[i] == swe);
			any_launch |= l >= 0;
		}
	}
	if (!any_launch) {
		snprintf(out->why, sizeof out->why,
			 "no GPU activity linked to a launch: the queue length HTA's analysis needs is unavailable");
		free(in);
		return;
	}
	struct cp_graph g = {.r = r};
	g.start_of = xmalloc((r->n ? r->n : 1) * sizeof *g.start_of);
	g.end_of = xmalloc((r->n ? r->n : 1) * sizeof *g.end_of);
	size_t nev = 0;
	for (size_t i = 0; i < r->n; i++) {
		g.start_of[i] = g.end_of[i] = -1;
		uint32_t c = r->cat[i];
		bool op = c != TRACE_NO_STR && (c == cpu_op || c == rt || c == drv);
		if (in[i] && (op || (r->stream[i] != -1 && trace_index_correlation(r, i) >= 0)))
			in[i] = 2, nev++;
	}
	g.nn = 2 * nev;
	g.node = xmalloc((g.nn ? g.nn : 1) * sizeof *g.node);
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (in[i] == 2) {
			g.node[n++] = (struct cp_node){r->ts[i], (uint32_t)i, r->idx[i], 1};
			g.node[n++] = (struct cp_node){r->ts[i] + r->dur[i], (uint32_t)i, r->idx[i], 0};
		}
	qsort(g.node, g.nn, sizeof *g.node, node_cmp);
	for (size_t k = 0; k < g.nn; k++)
		*(g.node[k].start ? &g.start_of[g.node[k].row] : &g.end_of[g.node[k].row]) = (int32_t)k;
	static const char *const lock_names[] = {"cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"};
	static const char *const blocking_names[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
						     "cudaEventQuery", "cudaEventSynchronize", "cudaMemcpy",
						     "cudaMemcpyAsync"};
	g.lock = name_set(r, lock_names, 3);
	g.blocking = name_set(r, blocking_names, 6);
	for (size_t i = 0; i < r->n; i++) {
		/* kernels sharing one launch: a CUDA graph */
		int32_t l = r->link[i];
		if (r->stream[i] != -1 && l >= 0 && r->link[l] != (int32_t)i && in[i])
			out->cuda_graph_kernels++;
	out->hta_graph_launch = o->hta_graph_launch;
	}
	lock_chain(&g);
	call_stacks(&g, in);
	struct cp_events ev;
	out->ok = event_syncs(r, &ev, out) && kernels(&g, in, &ev, out);
	out->event_waits = ev.waits;
	event_syncs_free(&ev);
	if (out->ok) {
		merge_duplicates(&g);
		out->ok = validate(&g, out) && longest_path(&g, out);
	}
	free(g.lock);
	free(g.blocking);
	free(g.e);
	free(g.node);
	free(g.start_of);
	free(g.end_of);
	free(in);
}

void critical_path_free(struct cp_result *res)
{
	free(res->path);
	res->path = NULL;
}
