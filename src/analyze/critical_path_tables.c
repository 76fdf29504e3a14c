/*
 * critical_path_tables.c - the critical path's tables and its row of the
 * analysis table (critical_path.h): the path's breakdown by edge type and
 * what bounds it, its edges, the summary verdict, and the `critical-path`
 * options, combine and --write-trace step.  The graph and the path
 * themselves are critical_path.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/critical_path.h"
#include "analyze/trace_copy.h"

static const char *const type_names[CP_NTYPES] = {
	"critical_path_operator", "critical_path_dependency", "critical_path_kernel_launch_delay",
	"critical_path_kernel_kernel_delay", "critical_path_sync_dependency",
};

const char *cp_edge_type_name(enum cp_edge_type t) { return (unsigned)t < CP_NTYPES ? type_names[t] : "?"; }

/* ---- tables ---- */

/* HTA's shorten_name (semantics 1.7): memory names and names without '<'
 * or '(' as they are; else without "->" and the text in balanced <...>
 * and (...), the last space-separated word. */
static void short_name(const struct trace_rank *r, uint32_t row, struct buf *out)
{
	const char *s = trace_name(r, row);
	buf_reset(out);
	if (trace_ktype(r, row) == TRACE_KT_MEMORY || (!strchr(s, '<') && !strchr(s, '('))) {
		buf_append(out, s, strlen(s));
		return;
	}
	int angle = 0, paren = 0;
	for (const char *p = s; *p; p++) {
		if (p[0] == '-' && p[1] == '>') {
			p++;
			continue;
		}
		if (*p == '<')
			angle++;
		else if (*p == '(')
			paren++;
		else if (*p == '>' && angle > 0)
			angle--;
		else if (*p == ')' && paren > 0)
			paren--;
		else if (!angle && !paren)
			buf_append(out, p, 1);
	}
	/* the last word */
	size_t end = out->len;
	while (end > 0 && out->data[end - 1] == ' ')
		end--;
	size_t begin = end;
	while (begin > 0 && out->data[begin - 1] != ' ')
		begin--;
	memmove(out->data, out->data + begin, end - begin);
	out->len = end - begin;
	out->data[out->len] = 0;
}

static const char *bound_by(const struct trace_rank *r, const struct cp_path_edge *e)
{
	switch (e->type) {
	case CP_KERNEL_KERNEL:
		return "gpu_kernel_kernel_overhead";
	case CP_LAUNCH:
		return "gpu_kernel_launch_overhead";
	case CP_DEPENDENCY:
	case CP_SYNC:
		return "";
	default:
		break;
	}
	if (e->attr < 0)
		return "";
	if (r->stream[e->attr] < 0)
		return "cpu_bound";
	return trace_ktype(r, (size_t)e->attr) == TRACE_KT_COMMUNICATION ? "gpu_communication_bound"
									  : "gpu_compute_bound";
}

static void id_text(struct buf *b, const struct trace_rank *r, int64_t v)
{
	buf_reset(b);
	if (trace_id_is_str(v))
		buf_printf(b, "%s", trace_strtab_get(&r->strs, (uint32_t)(v - TRACE_ID_STR_BASE)));
	else
		buf_printf(b, "%lld", (long long)v);
}

/* breakdown order: attributed event (none last), type, duration */
static _Thread_local const struct cp_result *sort_res;
static _Thread_local const struct trace_rank *sort_rank;
static int brk_cmp(const void *a, const void *b)
{
	const struct cp_path_edge *x = &sort_res->path[*(const uint32_t *)a], *y = &sort_res->path[*(const uint32_t *)b];
	if ((x->attr < 0) != (y->attr < 0))
		return x->attr < 0 ? 1 : -1;
	if (x->attr >= 0 && x->attr != y->attr)
		return sort_rank->idx[x->attr] < sort_rank->idx[y->attr] ? -1 : 1;
	int c = strcmp(type_names[x->type], type_names[y->type]);
	if (c)
		return c;
	return x->weight < y->weight ? -1 : x->weight > y->weight;
}

static const char *const summary_verdict[][2] = {
	{"cpu_bound", "CPU-bound (operators and runtime calls on the host)"},
	{"gpu_compute_bound", "GPU compute (kernels)"},
	{"gpu_communication_bound", "communication (collective kernels)"},
	{"gpu_kernel_launch_overhead", "kernel launch overhead"},
	{"gpu_kernel_kernel_overhead", "gaps between kernels on a stream"},
};

void critical_path_tables(const struct trace_rank *r, const struct cp_result *res, struct atable **breakdown,
			  struct atable **edges, struct atable **summary)
{
	static const char *const bcols[] = {"event_idx:f", "duration:f", "type:s", "s_name:s", "cat:s", "pid:s",
					    "tid:s", "stream:f", "index:f", "bound_by:s", NULL};
	static const char *const ecols[] = {"src_event:i", "src_is_start:s", "src_ts:f", "dst_event:i",
					    "dst_is_start:s", "dst_ts:f", "type:s", "weight:f",
					    "attributed_event:f", NULL};
	static const char *const scols[] = {"bound_by:s", "duration:f", "pct:f", NULL};
	struct atable *b = atable_new("critical_path_breakdown", "Critical path, one row per edge (us)", bcols);
	struct atable *e = atable_new("critical_path_edges", "Critical path edges in order (us)", ecols);
	struct atable *s = atable_new("critical_path_summary", "Critical path by what bounds it", scols);
	atable_int_text(e, 7);
	if (r && r->int_times) {
		atable_int_text(b, 1);
		atable_int_text(s, 1);
	}
	struct buf name = BUF_INIT;
	if (res && res->ok) {
		uint32_t *ord = xmalloc(res->path_edges * sizeof *ord);
		for (size_t i = 0; i < res->path_edges; i++)
			ord[i] = (uint32_t)i;
		sort_res = res;
		sort_rank = r;
		qsort(ord, res->path_edges, sizeof *ord, brk_cmp);
		for (size_t k = 0; k < res->path_edges; k++) {
			const struct cp_path_edge *pe = &res->path[ord[k]];
			size_t row = atable_add_row(b);
			atable_set_f(b, row, 1, pe->weight);
			atable_set_s(b, row, 2, type_names[pe->type]);
			atable_set_s(b, row, 9, bound_by(r, pe));
			if (pe->attr >= 0) {
				size_t a = (size_t)pe->attr;
				atable_set_f(b, row, 0, r->idx[a]);
				short_name(r, (uint32_t)a, &name);
				atable_set_s(b, row, 3, name.data);
				atable_set_s(b, row, 4, trace_strtab_get(&r->strs, r->cat[a]));
				id_text(&name, r, r->pid[a]);
				atable_set_s(b, row, 5, name.data);
				id_text(&name, r, r->tid[a]);
				atable_set_s(b, row, 6, name.data);
				atable_set_f(b, row, 7, (double)r->stream[a]);
				atable_set_f(b, row, 8, r->idx[a]);
			} else {
				atable_set_f(b, row, 0, pe->attr == -2 ? -1 : NAN);
				atable_set_f(b, row, 7, NAN);
				atable_set_f(b, row, 8, NAN);
			}
		}
		free(ord);
		double sum[5] = {0}, dep = 0, total = 0;
		bool seen[5] = {false}, seen_dep = false;
		for (size_t k = 0; k < res->path_edges; k++) {
			const struct cp_path_edge *pe = &res->path[k];
			size_t row = atable_add_row(e);
			atable_set_i(e, row, 0, r->idx[pe->src_row]);
			atable_set_s(e, row, 1, pe->src_start ? "True" : "False");
			atable_set_f(e, row, 2, pe->src_ts);
			atable_set_i(e, row, 3, r->idx[pe->dst_row]);
			atable_set_s(e, row, 4, pe->dst_start ? "True" : "False");
			atable_set_f(e, row, 5, pe->dst_ts);
			atable_set_s(e, row, 6, type_names[pe->type]);
			atable_set_f(e, row, 7, pe->weight);
			atable_set_f(e, row, 8, pe->attr >= 0 ? (double)r->idx[pe->attr] : pe->attr == -2 ? -1 : NAN);
			const char *bb = bound_by(r, pe);
			total += pe->weight;
			bool found = false;
			for (int v = 0; v < 5; v++)
				if (strcmp(bb, summary_verdict[v][0]) == 0)
					sum[v] += pe->weight, seen[v] = found = true;
			if (!found)
				dep += pe->weight, seen_dep = true;
		}
		/* HTA's summary(): per bound_by (sorted by name), share of the
		 * path's summed weights */
		const char *names[6];
		double vals[6];
		size_t nv = 0;
		if (seen_dep)
			names[nv] = "", vals[nv++] = dep;
		/* summary_verdict's rows in name order */
		static const int sorted[5] = {0, 2, 1, 4, 3};
		for (int k = 0; k < 5; k++)
			if (seen[sorted[k]])
				names[nv] = summary_verdict[sorted[k]][0], vals[nv++] = sum[sorted[k]];
		int top = -1;
		for (size_t k = 0; k < nv; k++) {
			size_t row = atable_add_row(s);
			atable_set_s(s, row, 0, names[k]);
			atable_set_f(s, row, 1, vals[k]);
			atable_set_f(s, row, 2, total != 0 ? vals[k] / total * 100 : NAN);
			if (names[k][0] && (top < 0 || vals[k] > vals[top]))
				top = (int)k;
		}
		atable_note(s, "rank %d: graph of %zu nodes and %zu edges; the path has %zu edges, %.17g us", res->rank,
			    res->nodes, res->edges, res->path_edges, res->length);
		struct buf types = BUF_INIT;
		for (int t = 0; t < CP_NTYPES; t++)
			if (res->type_count[t])
				buf_printf(&types, "%s%s %zu (%.6g us)", types.len ? ", " : "", type_names[t] + 14,
					   res->type_count[t], res->type_weight[t]);
		atable_note(s, "edges by type: %s", types.data ? types.data : "none");
		buf_free(&types);
		if (top >= 0 && total > 0)
			for (int v = 0; v < 5; v++)
				if (strcmp(names[top], summary_verdict[v][0]) == 0)
					atable_note(s, "bound by: %s, %.1f%% of the path", summary_verdict[v][1],
						    vals[top] / total * 100);
		if (res->event_sync_ignored)
			atable_note(s, "cudaEventSynchronize / cudaStreamWaitEvent dependencies are not modelled "
				       "(the trace was loaded without the event-wait args): no edge for them");
		if (res->cuda_graph_kernels)
			atable_note(s, "%zu kernels share a launch (CUDA graph): all are in the window, "
				       "HTA keeps one (HTA issue 290; --hta-graph-launch does the same)",
				    res->cuda_graph_kernels);
	} else if (res) {
		atable_note(s, "rank %d: critical path unavailable: %s", res->rank, res->why);
		b->unavailable = e->unavailable = s->unavailable = true;
	}
	buf_free(&name);
	*breakdown = b;
	*edges = e;
	*summary = s;
}

/* ---- the `critical-path` row of the analysis table ---- */

static bool long_shown(const void *opts, const struct analysis_show *s)
{
	(void)opts;
	return s->fmt != AFMT_TABLE;
}

static const struct analysis_table cp_tables[] = {
	{.csv = "critical_path_summary"},
	{.csv = "critical_path_breakdown", .notes_only_in_terminal = true, .shown = long_shown},
	{.csv = "critical_path_edges", .notes_only_in_terminal = true, .shown = long_shown},
};

static const struct cp_options cp_defaults = {.rank = -1, .annotation = NULL, .instance = -1};
static const struct analysis_opt cp_opts[] = {
	{{"cp-rank", 0, ARG_INT, NULL, "N", "critical-path: the rank to analyse (default: the first selected)", 0, 0,
	  NULL},
	 offsetof(struct cp_options, rank)},
	{{"annotation", 0, ARG_STRING, NULL, "NAME",
	  "critical-path: window = an event whose name contains NAME (default ProfilerStep, else the whole trace; "
	  "\"\": the whole trace)",
	  0, 0, NULL},
	 offsetof(struct cp_options, annotation)},
	{{"instance", 0, ARG_INT, NULL, "I",
	  "critical-path: which instance of the annotation (default 1, or 0 when it occurs once)", 0, 0, NULL},
	 offsetof(struct cp_options, instance)},
	{{"hta-graph-launch", 0, ARG_BOOL, NULL, NULL,
	  "critical-path: of a cudaGraphLaunch's kernels keep only one, as HTA does (its issue 290)", 0, 0, NULL},
	 offsetof(struct cp_options, hta_graph_launch)},
	{{"write-trace", 0, ARG_STRING, NULL, "OUT",
	  "critical-path: write the trace with the path marked (HTA's overlay: args critical, flow events) to OUT "
	  "(gzip if it ends in .gz)",
	  0, 0, NULL},
	 offsetof(struct cp_options, write_trace)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

/* --write-trace: refuse at once an OUT that cannot be created */
static int cp_check(const void *opts, struct buf *err)
{
	const struct cp_options *o = opts;
	return o->write_trace ? tcopy_check_out(o->write_trace, err) : 0;
}

static void cp_write_trace(const struct trace_rank *r, const struct cp_options *o, const struct cp_result *res,
			   struct atable *summary)
{
	if (!o->write_trace)
		return;
	if (!res->ok) {
		atable_note(summary, "--write-trace: nothing written (no critical path)");
		return;
	}
	struct buf err = BUF_INIT;
	size_t marked = 0, flows = 0;
	if (critical_path_write_trace(r, res, o->write_trace, &marked, &flows, &err) != 0) {
		fprintf(stderr, "dyno analyze critical-path: --write-trace: %s\n", err.data);
		atable_note(summary, "--write-trace: %s", err.data);
		summary->output_failed = true;
	} else {
		atable_note(summary, "rank %d: trace with the critical path written to %s (%zu events marked, %zu flows)",
			    r->rank, o->write_trace, marked, flows);
	}
	buf_free(&err);
}

static void cp_combine(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct cp_options *o = c->opts;
	const struct trace_rank *r = NULL;
	for (size_t k = 0; k < view->nranks && !r; k++)
		if (o->rank < 0 || view->ranks[k]->rank == o->rank)
			r = view->ranks[k];
	for (int t = 0; t < 3; t++)
		atable_free(out[t]);
	if (!r) {
		struct cp_result none = {.rank = (int)o->rank};
		snprintf(none.why, sizeof none.why, "%s", view->nranks ? "no such rank selected" : "no rank selected");
		critical_path_tables(NULL, &none, &out[1], &out[2], &out[0]);
		return;
	}
	struct cp_result res;
	critical_path_run(r, o, &res);
	critical_path_tables(r, &res, &out[1], &out[2], &out[0]);
	if (r->stats.skipped_cpu_ops)
		atable_note(out[0], "CPU operators were not loaded: the path misses them");
	cp_write_trace(r, o, &res, out[0]);
	critical_path_free(&res);
}

const struct analysis analysis_critical_path = {
	.name = "critical-path",
	.help = "HTA's critical path of one iteration: what bounds it (CPU, GPU compute, communication, launches)",
	.load = ANALYSIS_LOAD_CPU_OPS | ANALYSIS_LOAD_EVENT_WAITS,
	.opts = {sizeof(struct cp_options), &cp_defaults, cp_opts, cp_check},
	.tables = cp_tables,
	.ntables = 3,
	.cost = 2,
	.own_command = true,
	.combine = cp_combine,
};
