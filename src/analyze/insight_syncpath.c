/*
 * insight_syncpath.c - which blocking sync calls lie on the critical path
 * of one iteration of a rank, and how much of that path is spent waiting
 * in them: the sync-points rule's measurement where HTA's critical path
 * (critical_path.c) is defined, one row per rank of insight_sync_path.
 *
 * The iteration is the rank's one with the largest share of blocking sync
 * time (insight_iterations); its ProfilerStep is the window, as
 * `critical-path --annotation ProfilerStep#N` would take it (the whole
 * trace without steps).  In HTA's graph the wait of a sync call is never
 * work: the call's own edge is blocking (weight 0) and the GPU side joins
 * it by a sync-dependency edge (weight 0) into the call's end.  So the
 * sync time on the path is, over the path's edges that end at the end of
 * a sync call (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, cudaMemcpy, hip*Synchronize), the part of the
 * edge inside the call: time the CPU was blocked while nothing on the
 * critical path advanced.  It is a share of the path's wall span (its first
 * node to its last).  A GPU-bound step that syncs at its end has the sync
 * on the path but spends microseconds there (the kernels before it are the
 * path's work); a sync that stalls the launches shows its whole wait.
 *
 * Not run (the row says why, the rule falls back to the CPU's blocking
 * time): no sync call, more rows than --cp-max-events (default
 * INSIGHT_CP_MAX_ROWS: it costs about a tenth of a load per million rows),
 * CPU operators not loaded, or HTA's analysis undefined on the rank.  Cost: one critical_path_run and a pass
 * over the path.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/critical_path.h"
#include "analyze/insights.h"

struct atable *insight_sync_path_new(void)
{
	static const char *const cols[] = {"rank:i",     "iteration:i",      "status:s",     "path_span(us):f",
					   "sync_on_path(us):f", "calls_on_path:i", "sync_calls:i", "top_call:s",
					   "calls:s", NULL};
	return atable_new("insight_sync_path", "Blocking sync calls on the critical path of one iteration", cols);
}

/* the instance of "ProfilerStep#N" critical_path's window() picks for
 * step n: rows whose name contains the text count in row order, the step's
 * own CPU row is the one wanted; -1 when the rank has none */
static int64_t step_instance(const struct trace_rank *r, const char *ann)
{
	size_t len = strlen(ann);
	bool *contains = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (uint32_t s = 0; s < r->strs.n; s++)
		contains[s] = strstr(r->strs.s[s], ann) != NULL;
	int64_t k = 0, found = -1;
	for (size_t i = 0; i < r->n && found < 0; i++) {
		if (!contains[r->name[i]])
			continue;
		if (r->kind[i] == TRACE_CAT_USER_ANNOTATION && r->strs.len[r->name[i]] == len)
			found = k;
		k++;
	}
	free(contains);
	return found;
}

struct call_sum {
	uint32_t name;
	int64_t calls;
	double t;
};

static void add_call(struct call_sum *c, size_t *n, size_t max, uint32_t name, double t)
{
	for (size_t k = 0; k < *n; k++)
		if (c[k].name == name) {
			c[k].calls++;
			c[k].t += t;
			return;
		}
	if (*n < max)
		c[(*n)++] = (struct call_sum){name, 1, t};
}

static int call_cmp(const void *a, const void *b)
{
	const struct call_sum *x = a, *y = b;
	return (x->t < y->t) - (x->t > y->t);
}

/* The path's sync waits into the row (columns from status on). */
static void measure(const struct trace_rank *r, const struct cp_result *res, struct atable *t, size_t row)
{
	double first = INFINITY, last = -INFINITY, sync = 0;
	bool *is_sync = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (uint32_t s = 0; s < r->strs.n; s++)
		is_sync[s] = insight_is_sync_call(r->strs.s[s]);
	enum { MAXC = 16 };
	struct call_sum calls[MAXC] = {{0, 0, 0}};
	size_t nc = 0;
	int64_t on_path = 0;
	for (size_t k = 0; k < res->path_edges; k++) {
		const struct cp_path_edge *e = &res->path[k];
		first = fmin(first, fmin(e->src_ts, e->dst_ts));
		last = fmax(last, fmax(e->src_ts, e->dst_ts));
		uint32_t s = e->dst_row;
		/* an edge into the end of a sync call on the CPU: the call's own
		 * (blocking) edge, or the GPU's sync dependency */
		if (e->dst_start || r->stream[s] != -1 || !is_sync[r->name[s]])
			continue;
		double a = fmax(e->src_ts, r->ts[s]), b = fmin(e->dst_ts, r->ts[s] + r->dur[s]);
		double wait = b > a ? b - a : 0;
		sync += wait;
		on_path++; /* the path enters a node once: one edge per call */
		add_call(calls, &nc, MAXC, r->name[s], wait);
	}
	free(is_sync);
	qsort(calls, nc, sizeof *calls, call_cmp);
	struct buf txt = BUF_INIT;
	for (size_t k = 0; k < nc; k++) {
		buf_printf(&txt, "%s%s x%lld (", k ? ", " : "", trace_strtab_get(&r->strs, calls[k].name),
			   (long long)calls[k].calls);
		insight_fmt_us(&txt, calls[k].t);
		buf_puts(&txt, ")");
	}
	atable_set_s(t, row, 2, "ok");
	atable_set_f(t, row, 3, last > first ? last - first : 0);
	atable_set_f(t, row, 4, sync);
	atable_set_i(t, row, 5, on_path);
	atable_set_s(t, row, 7, nc ? trace_strtab_get(&r->strs, calls[0].name) : "");
	atable_set_s(t, row, 8, txt.data ? txt.data : "");
	buf_free(&txt);
}

void insight_sync_path_rank(const struct trace_rank *r, const struct atable *it, int64_t max_rows, struct atable *t)
{
	/* the iteration with the largest share of blocking sync time */
	long w = -1;
	double ws = 0;
	int64_t calls = 0;
	for (size_t i = 0; it && i < it->nrows; i++) {
		if (insight_i(it, i, IT_RANK) != r->rank || insight_i(it, i, IT_SYNC_CALLS) == 0)
			continue;
		double d = insight_f(it, i, IT_DUR), s = d > 0 ? insight_f(it, i, IT_SYNC) / d : 0;
		if (w < 0 || s > ws) {
			w = (long)i;
			ws = s;
		}
	}
	size_t row = atable_add_row(t);
	atable_set_i(t, row, 0, r->rank);
	atable_set_i(t, row, 1, w >= 0 ? insight_i(it, (size_t)w, IT_ITER) : -1);
	atable_set_f(t, row, 3, NAN);
	atable_set_f(t, row, 4, NAN);
	if (w >= 0)
		calls = insight_i(it, (size_t)w, IT_SYNC_CALLS);
	atable_set_i(t, row, 6, calls);
	char why[320];
	if (w < 0) {
		atable_set_s(t, row, 2, "no blocking sync call");
		return;
	}
	if ((int64_t)r->n > max_rows) {
		snprintf(why, sizeof why, "not computed: %zu events on the rank, over the limit of %lld (--cp-max-events; "
			 "it costs about a tenth of a load per million events)", r->n, (long long)max_rows);
		atable_set_s(t, row, 2, why);
		return;
	}
	if (r->stats.skipped_cpu_ops) {
		atable_set_s(t, row, 2, "CPU operators were not loaded");
		return;
	}
	int64_t iter = insight_i(it, (size_t)w, IT_ITER);
	char ann[48] = "";
	struct cp_options o = {.rank = r->rank, .annotation = ann, .instance = 0};
	if (iter >= 0) {
		snprintf(ann, sizeof ann, "ProfilerStep#%lld", (long long)iter);
		o.instance = step_instance(r, ann);
		if (o.instance < 0) {
			atable_set_s(t, row, 2, "the iteration's ProfilerStep row is not in the trace");
			return;
		}
	}
	struct cp_result res;
	critical_path_run(r, &o, &res);
	if (!res.ok) {
		snprintf(why, sizeof why, "critical path undefined: %s", res.why);
		atable_set_s(t, row, 2, why);
	} else {
		measure(r, &res, t, row);
	}
	critical_path_free(&res);
}
