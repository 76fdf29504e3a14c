/*
 * test_analyze_critical_path.c - `critical-path` against HTA's outputs
 * (tests/data/conformance/<case>/critical_path_*.csv and the graph figures
 * of results.json) on every shared trace where HTA completes, the
 * deliberate differences both ways, and a clear "unavailable" (no rows,
 * a note, exit 4) where HTA fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/critical_path.h"
#include "analyze/trace_copy.h"
#include "core/json.h"
#include "test.h"
#include "test_trace_util.h"
#include "trace/source.h"
#include "../lib/trace_check.h"

static bool compare(const char *name, const char *file, const struct atable *t)
{
	struct tt_csv want, got;
	if (!tt_csv_load(name, file, &want)) {
		test_fail(__FILE__, __LINE__, "%s/%s: cannot read", name, file);
		return false;
	}
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_CSV, &b);
	tt_csv_parse(&got, b.data, b.len);
	char what[256];
	snprintf(what, sizeof what, "%s/%s", name, file);
	bool ok = tt_csv_equal(&want, &got, 1e-6, what);
	tt_csv_free(&want);
	tt_csv_free(&got);
	buf_free(&b);
	return ok;
}

static const struct json_value *cp_stage(const struct json_doc *doc)
{
	return json_get(json_get(doc->root, "stages"), "critical_path");
}

static double num(const struct json_value *v)
{
	return v && v->type == JV_NUMBER ? json_value_f64(v) : NAN;
}

/* the figures of results.json: graph size, edges per type, the path.
 * Launch vs kernel-kernel edges depend on the queue length at a launch,
 * and HTA computes it with an unstable sort: where a launch and a kernel
 * of one stream share a timestamp the split can differ (by 2 of 1258 on
 * nccl_parser_config, 15 of 1571 on trace_diff control), their sum not. */
static void check_figures(const char *name, const struct json_value *res, const struct cp_result *r)
{
	CHECK_INT((long long)num(json_get(res, "num_nodes")), (long long)r->nodes);
	CHECK_INT((long long)num(json_get(res, "critical_path_num_edges")), (long long)r->path_edges);
	CHECK_NEAR(num(json_get(res, "critical_path_length")), r->length, 1e-9);
	const struct json_value *types = json_get(res, "edges_by_type");
	double want[CP_NTYPES];
	for (int t = 0; t < CP_NTYPES; t++) {
		const struct json_value *e = json_get(types, cp_edge_type_name((enum cp_edge_type)t));
		want[t] = e ? num(json_get(e, "count")) : 0;
	}
	bool ok = want[CP_OPERATOR] == (double)r->type_count[CP_OPERATOR] &&
		  want[CP_DEPENDENCY] == (double)r->type_count[CP_DEPENDENCY] &&
		  want[CP_LAUNCH] + want[CP_KERNEL_KERNEL] ==
			  (double)(r->type_count[CP_LAUNCH] + r->type_count[CP_KERNEL_KERNEL]) &&
		  want[CP_SYNC] == (double)r->type_count[CP_SYNC] && num(json_get(res, "num_edges")) == (double)r->edges;
	if (!ok)
		test_fail(__FILE__, __LINE__, "%s: edges by type differ: HTA op %g dep %g launch %g kk %g sync %g, "
			  "ours %zu %zu %zu %zu %zu", name, want[0], want[1], want[2], want[3], want[4], r->type_count[0],
			  r->type_count[1], r->type_count[2], r->type_count[3], r->type_count[4]);
}

/* the summary table against HTA's summary(): share per bound_by */
static void check_summary(const char *name, const struct json_value *res, const struct atable *s)
{
	const struct json_value *pct = json_get(res, "summary_pct_by_bound");
	REQUIRE(pct && pct->type == JV_OBJECT);
	CHECK_INT((long long)pct->len, (long long)s->nrows);
	for (size_t i = 0; i < s->nrows; i++) {
		const char *bb = atable_cell((struct atable *)s, i, 0)->s;
		double want = num(json_get(pct, bb));
		double got = atable_cell((struct atable *)s, i, 2)->f;
		if (!(fabs(want - got) <= 1e-9 * fabs(want) + 1e-12))
			test_fail(__FILE__, __LINE__, "%s: bound_by '%s': %.17g%% expected, got %.17g%%", name, bb, want,
				  got);
	}
}

static void run_case(const struct trace_set *set, bool hta_graph, struct cp_result *res)
{
	struct cp_options o = {.rank = -1, .instance = -1, .hta_graph_launch = hta_graph};
	critical_path_run(set->ranks[0], &o, res);
}

TEST(analyze_critical_path_conformance)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	int matched = 0, failed_like_hta = 0, event_syncs = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tt_case *c = &cases[i];
		struct json_doc doc;
		if (!tt_results(c->name, &doc))
			continue;
		const struct json_value *st = cp_stage(&doc);
		const struct json_value *status = json_get(st, "status");
		bool ok = status && status->type == JV_STRING && strcmp(status->u.str, "ok") == 0;
		struct trace_set set;
		struct buf err = BUF_INIT;
		struct trace_load_opts lo = {0};
		analysis_load_opts(&analysis_critical_path, &lo); /* CPU ops and event waits */
		if (trace_set_load(&set, c->input, &lo, &err) != 0) {
			test_fail(__FILE__, __LINE__, "%s: %s", c->name, err.data);
			buf_free(&err);
			json_doc_free(&doc);
			continue;
		}
		buf_free(&err);
		REQUIRE(set.nranks > 0);
		/* HTA's run: the first rank; one kernel per graph launch */
		struct cp_result r;
		run_case(&set, true, &r);
		struct atable *b, *e, *s;
		critical_path_tables(set.ranks[0], &r, &b, &e, &s);
		if (!ok) {
			/* HTA fails: no rows, a note saying why, never zeros */
			CHECK(!r.ok);
			CHECK(r.why[0] != 0);
			CHECK(b->nrows == 0 && e->nrows == 0 && s->nrows == 0);
			CHECK(s->unavailable);
			CHECK(strstr(s->notes.data ? s->notes.data : "", "unavailable") != NULL);
			failed_like_hta++;
		} else {
			REQUIRE(r.ok);
			const struct json_value *res = json_get(st, "result");
			bool same = compare(c->name, "critical_path_edges.csv", e);
			same &= compare(c->name, "critical_path_breakdown.csv", b);
			check_figures(c->name, res, &r);
			check_summary(c->name, res, s);
			CHECK(!r.event_sync_ignored);
			matched += same;
			event_syncs += r.event_waits > 0;
		}
		atable_free(b);
		atable_free(e);
		atable_free(s);
		critical_path_free(&r);
		trace_set_free(&set);
		json_doc_free(&doc);
	}
	/* every trace where HTA completes, the three with event syncs included */
	CHECK(matched >= 17);
	CHECK(event_syncs >= 3);
	CHECK(failed_like_hta >= 5);
}

/* Without --hta-graph-launch every kernel of a cudaGraphLaunch is in the
 * window (HTA keeps the one the correlation points to): trace_diff/test
 * has two graph launches, 839 kernels HTA leaves out. */
TEST(analyze_critical_path_cuda_graph_kernels_both_ways)
{
	struct buf p = BUF_INIT;
	buf_printf(&p, "%s/traces/trace_diff/test/test.json.gz", test_data_dir());
	struct trace_set set;
	struct buf err = BUF_INIT;
	struct trace_load_opts lo = {0};
	REQUIRE(trace_set_load(&set, p.data, &lo, &err) == 0);
	struct cp_result hta, ours;
	run_case(&set, true, &hta);
	run_case(&set, false, &ours);
	REQUIRE(hta.ok && ours.ok);
	CHECK_INT((long long)hta.cuda_graph_kernels, 0);
	CHECK_INT((long long)ours.cuda_graph_kernels, 839);
	CHECK_INT((long long)ours.nodes, (long long)hta.nodes + 2 * 839);
	CHECK(ours.length > hta.length); /* the graph's kernels lengthen the path */
	struct atable *b, *e, *s;
	critical_path_tables(set.ranks[0], &ours, &b, &e, &s);
	CHECK(strstr(s->notes.data, "839 kernels share a launch (CUDA graph)") != NULL);
	atable_free(b);
	atable_free(e);
	atable_free(s);
	critical_path_free(&hta);
	critical_path_free(&ours);
	trace_set_free(&set);
	buf_free(&err);
	buf_free(&p);
}

/* --annotation / --instance choose the window; a missing annotation or
 * instance is a note, not an empty success. */
TEST(analyze_critical_path_window_options)
{
	struct buf p = BUF_INIT;
	buf_printf(&p, "%s/traces/trace_diff/test/test.json.gz", test_data_dir());
	struct trace_set set;
	struct buf err = BUF_INIT;
	struct trace_load_opts lo = {0};
	REQUIRE(trace_set_load(&set, p.data, &lo, &err) == 0);
	const struct trace_rank *r = set.ranks[0];
	struct cp_result a, b, whole, none, far;
	struct cp_options o = {.rank = -1, .instance = -1, .hta_graph_launch = true};
	critical_path_run(r, &o, &a); /* default: ProfilerStep instance 1 */
	o.annotation = "ProfilerStep";
	o.instance = 1;
	critical_path_run(r, &o, &b);
	CHECK(a.ok && b.ok);
	CHECK_INT((long long)a.nodes, (long long)b.nodes);
	CHECK_NEAR(a.length, b.length, 1e-12);
	o.annotation = "";
	critical_path_run(r, &o, &whole);
	CHECK(whole.ok && whole.nodes > a.nodes);
	o.annotation = "no-such-annotation";
	critical_path_run(r, &o, &none);
	CHECK(!none.ok && strstr(none.why, "no-such-annotation") != NULL);
	o.annotation = "ProfilerStep";
	o.instance = 99;
	critical_path_run(r, &o, &far);
	CHECK(!far.ok && strstr(far.why, "instance 99") != NULL);
	critical_path_free(&a);
	critical_path_free(&b);
	critical_path_free(&whole);
	critical_path_free(&none);
	critical_path_free(&far);
	trace_set_free(&set);
	buf_free(&err);
	buf_free(&p);
}

/* The event-wait args are kept only when critical-path asks
 * (keep_event_waits): without them the Event Sync / Stream Wait Event rows
 * add no edge and a note says why; with them, HTA's three sync edges of
 * cuda_event_sync_multi_stream (two Event Syncs, one Stream Wait Event). */
TEST(analyze_critical_path_event_waits_load_flag)
{
	struct buf p = BUF_INIT;
	buf_printf(&p, "%s/traces/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
		   test_data_dir());
	struct trace_set with, without;
	struct buf err = BUF_INIT;
	struct trace_load_opts lo = {0};
	analysis_load_opts(&analysis_critical_path, &lo);
	CHECK(lo.keep_event_waits && !lo.skip_cpu_ops);
	REQUIRE(trace_set_load(&with, p.data, &lo, &err) == 0);
	lo.keep_event_waits = false;
	REQUIRE(trace_set_load(&without, p.data, &lo, &err) == 0);
	/* three rows name a recorded event (one Event Sync has -1 for both) */
	CHECK_INT((long long)with.ranks[0]->nwaits, 3);
	CHECK_INT((long long)without.ranks[0]->nwaits, 0);
	const struct trace_event_wait *w = &with.ranks[0]->waits[1];
	CHECK_INT((long long)w->stream, 20);
	CHECK_INT((long long)w->record_corr, 1385);
	CHECK(trace_event_wait_of(with.ranks[0], w->idx) == w);
	CHECK(trace_event_wait_of(with.ranks[0], w->idx + 1) == NULL);
	/* the other analyses do not ask for them */
	struct trace_load_opts all = {0};
	analysis_load_opts(NULL, &all);
	CHECK(!all.keep_event_waits);
	struct cp_result a, b;
	run_case(&with, true, &a);
	run_case(&without, true, &b);
	REQUIRE(a.ok && b.ok);
	CHECK(!a.event_sync_ignored && b.event_sync_ignored);
	CHECK_INT((long long)a.event_waits, 3);
	CHECK_INT((long long)a.type_count[CP_SYNC], (long long)b.type_count[CP_SYNC] + 3);
	struct atable *tb, *te, *ts;
	critical_path_tables(without.ranks[0], &b, &tb, &te, &ts);
	CHECK(strstr(ts->notes.data, "loaded without the event-wait args") != NULL);
	atable_free(tb);
	atable_free(te);
	atable_free(ts);
	critical_path_free(&a);
	critical_path_free(&b);
	trace_set_free(&with);
	trace_set_free(&without);
	buf_free(&err);
	buf_free(&p);
}

/* ---- --write-trace ---- */

/* A trace file (plain or gzip) parsed whole. */
static bool parse_file(const char *path, struct json_doc *doc)
{
	char eb[256];
	struct trace_source *src = trace_source_open(path, false, eb, sizeof eb);
	if (!src)
		return false;
	struct buf text = BUF_INIT;
	char chunk[65536];
	const char *rerr = NULL;
	ssize_t n;
	while ((n = trace_source_read(src, chunk, sizeof chunk, &rerr)) > 0)
		buf_append(&text, chunk, (size_t)n);
	trace_source_close(src);
	struct json_error je;
	bool ok = n == 0 && json_parse(text.data, text.len, doc, &je);
	buf_free(&text);
	return ok;
}

static const struct json_value *events_of(const struct json_doc *d)
{
	const struct json_value *ev = json_get(d->root, "traceEvents");
	return ev && ev->type == JV_ARRAY ? ev : NULL;
}

static const char *str_of(const struct json_value *v) { return v && v->type == JV_STRING ? v->u.str : ""; }

/* a JSON scalar as text, for keys */
static void scalar(struct buf *b, const struct json_value *v)
{
	if (v && v->type == JV_NUMBER)
		buf_printf(b, "%s", v->u.num.raw);
	else
		buf_printf(b, "\"%s\"", str_of(v));
}

static int line_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The overlay's marks and flows, in a form two files compare by: one
 * line per event marked "critical": 1 (its position), one per flow pair
 * (both points and the args; ids and order left out, HTA's order is a
 * Python set's), sorted. */
static size_t overlay_lines(const struct json_value *ev, size_t n0, char ***out)
{
	char **lines = xmalloc((ev->len + 1) * sizeof *lines);
	size_t nl = 0;
	for (size_t i = 0; i < ev->len; i++) {
		const struct json_value *e = &ev->u.items[i];
		const struct json_value *crit = json_get(json_get(e, "args"), "critical");
		struct buf b = BUF_INIT;
		if (i < n0) {
			if (!crit)
				continue;
			buf_printf(&b, "event %zu critical ", i);
			scalar(&b, crit);
		} else if (strcmp(str_of(json_get(e, "ph")), "s") == 0 && i + 1 < ev->len) {
			const struct json_value *f = &ev->u.items[i + 1];
			const struct json_value *a = json_get(e, "args");
			buf_printf(&b, "flow %s/%s ", str_of(json_get(e, "cat")), str_of(json_get(e, "name")));
			scalar(&b, json_get(e, "pid"));
			buf_puts(&b, " ");
			scalar(&b, json_get(e, "tid"));
			buf_printf(&b, " %.17g -> ", json_value_f64(json_get(e, "ts")));
			scalar(&b, json_get(f, "pid"));
			buf_puts(&b, " ");
			scalar(&b, json_get(f, "tid"));
			buf_printf(&b, " %.17g %s bp %s id-match %d weight %.17g critical %d type %s",
				   json_value_f64(json_get(f, "ts")), str_of(json_get(f, "ph")),
				   str_of(json_get(f, "bp")),
				   json_value_f64(json_get(e, "id")) == json_value_f64(json_get(f, "id")),
				   json_value_f64(json_get(a, "weight")),
				   json_get(a, "critical") && json_get(a, "critical")->type == JV_BOOL &&
					   json_get(a, "critical")->u.b,
				   str_of(json_get(a, "type")));
			i++;
		} else {
			buf_printf(&b, "other event %zu", i);
		}
		lines[nl++] = b.data;
	}
	qsort(lines, nl, sizeof *lines, line_cmp);
	*out = lines;
	return nl;
}

static void free_lines(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* Perfetto binds a flow point ("bp": "e" and a start alike) to the slice
 * of its thread that encloses its time: an arrow whose point lies in no
 * complete event of that (pid, tid) is dropped.  Every point we write must
 * land in one. */
struct xspan {
	double s, e;
	char *who; /* "pid tid" as JSON text */
};

static void check_flows_bind(const char *what, const struct json_value *ev, size_t n0)
{
	/* the complete events once, their thread as text */
	struct xspan *x = xmalloc((n0 + 1) * sizeof *x);
	size_t nx = 0;
	for (size_t k = 0; k < n0; k++) {
		const struct json_value *e = &ev->u.items[k];
		if (strcmp(str_of(json_get(e, "ph")), "X") != 0)
			continue;
		struct buf w = BUF_INIT;
		scalar(&w, json_get(e, "pid"));
		buf_puts(&w, " ");
		scalar(&w, json_get(e, "tid"));
		double s0 = json_value_f64(json_get(e, "ts"));
		x[nx++] = (struct xspan){s0, s0 + json_value_f64(json_get(e, "dur")), w.data};
	}
	size_t unbound = 0, flows = 0;
	for (size_t i = n0; i < ev->len; i++) {
		const struct json_value *f = &ev->u.items[i];
		double ts = json_value_f64(json_get(f, "ts"));
		struct buf w = BUF_INIT;
		scalar(&w, json_get(f, "pid"));
		buf_puts(&w, " ");
		scalar(&w, json_get(f, "tid"));
		bool bound = false;
		for (size_t k = 0; k < nx && !bound; k++)
			bound = x[k].s <= ts && ts <= x[k].e && strcmp(x[k].who, w.data) == 0;
		unbound += !bound;
		flows++;
		buf_free(&w);
	}
	for (size_t k = 0; k < nx; k++)
		free(x[k].who);
	free(x);
	if (unbound)
		test_fail(__FILE__, __LINE__, "%s: %zu of %zu flow points in no event of their thread", what, unbound,
			  flows);
}

static size_t count_events(const char *path)
{
	struct json_doc d;
	if (!parse_file(path, &d))
		return 0;
	size_t n = events_of(&d) ? events_of(&d)->len : 0;
	json_doc_free(&d);
	return n;
}

/* The simple_add trace with its path marked equals HTA's overlay of it
 * (tests/data/traces/critical_path/end_to_end/simple_add/output): the same
 * events marked "critical": 1, the same flow events (points, weights,
 * types); the file follows Perfetto's rules, plain and gzip alike. */
TEST(analyze_critical_path_write_trace_equals_hta_overlay)
{
	struct buf in = BUF_INIT, hta = BUF_INIT;
	buf_printf(&in, "%s/traces/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
		   test_data_dir());
	buf_printf(&hta, "%s/traces/critical_path/end_to_end/simple_add/output/overlaid_critical_path_trace.json.gz",
		   test_data_dir());
	struct trace_set set;
	struct buf err = BUF_INIT;
	struct trace_load_opts lo = {0};
	analysis_load_opts(&analysis_critical_path, &lo);
	REQUIRE(trace_set_load(&set, in.data, &lo, &err) == 0);
	struct cp_result r;
	run_case(&set, true, &r);
	REQUIRE(r.ok);
	size_t n0 = count_events(in.data);
	REQUIRE(n0 == 1348);
	struct json_doc want;
	REQUIRE(parse_file(hta.data, &want));
	char **wl;
	size_t nw = overlay_lines(events_of(&want), n0, &wl);
	for (int gz = 0; gz < 2; gz++) {
		struct buf out = BUF_INIT;
		buf_printf(&out, "%s/cp_overlay.json%s", test_tmpdir(), gz ? ".gz" : "");
		size_t marked = 0, flows = 0;
		buf_reset(&err);
		REQUIRE(critical_path_write_trace(set.ranks[0], &r, out.data, &marked, &flows, &err) == 0);
		CHECK_INT((long long)marked, 624);
		CHECK_INT((long long)flows, 192);
		/* the input has events that overlap without nesting (so HTA's
		 * overlay too): the rule is that writing breaks nothing more */
		struct buf why = BUF_INIT, why0 = BUF_INIT;
		struct trace_check_stats st, st0;
		bool ok0 = trace_check_file(in.data, &st0, &why0), ok = trace_check_file(out.data, &st, &why);
		CHECK(ok == ok0);
		CHECK(strcmp(why.data ? why.data : "", why0.data ? why0.data : "") == 0);
		CHECK_INT((long long)st.events, (long long)(n0 + 2 * 192));
		buf_free(&why0);
		struct json_doc got;
		REQUIRE(parse_file(out.data, &got));
		REQUIRE(events_of(&got)->len == events_of(&want)->len);
		char **gl;
		size_t ng = overlay_lines(events_of(&got), n0, &gl);
		CHECK_INT((long long)ng, (long long)nw);
		for (size_t i = 0; i < ng && i < nw; i++)
			if (strcmp(gl[i], wl[i]) != 0) {
				test_fail(__FILE__, __LINE__, "overlay differs from HTA's: got '%s', want '%s'", gl[i], wl[i]);
				break;
			}
		/* every other member of the document and every event as it was */
		for (size_t i = 0; i < n0; i++) {
			const struct json_value *a = &events_of(&got)->u.items[i], *b = &events_of(&want)->u.items[i];
			CHECK_INT(a->len, b->len);
			CHECK(strcmp(str_of(json_get(a, "name")), str_of(json_get(b, "name"))) == 0);
			CHECK_INT(json_get(a, "args") ? json_get(a, "args")->len : 0,
				  json_get(b, "args") ? json_get(b, "args")->len : 0);
		}
		check_flows_bind(out.data, events_of(&got), n0);
		free_lines(gl, ng);
		json_doc_free(&got);
		buf_free(&why);
		buf_free(&out);
	}
	free_lines(wl, nw);
	json_doc_free(&want);
	critical_path_free(&r);
	trace_set_free(&set);
	buf_free(&err);
	buf_free(&in);
	buf_free(&hta);
}

/* On every shared trace with a path: the written trace follows Perfetto's
 * rules (where the input does), has one mark per event on the path and one
 * flow per dependency / launch / sync edge of the path, each bound to an
 * event of its thread; and it loads back with the same rows. */
TEST(analyze_critical_path_write_trace_every_trace)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	int written = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tt_case *c = &cases[i];
		struct trace_set set;
		struct buf err = BUF_INIT;
		struct trace_load_opts lo = {0};
		analysis_load_opts(&analysis_critical_path, &lo);
		if (trace_set_load(&set, c->input, &lo, &err) != 0 || set.nranks == 0) {
			buf_free(&err);
			continue;
		}
		struct cp_result r;
		run_case(&set, true, &r);
		if (r.ok && set.ranks[0]->path) {
			struct buf out = BUF_INIT;
			buf_printf(&out, "%s/%s_cp.json%s", test_tmpdir(), c->name, written % 2 ? ".gz" : "");
			size_t marked = 0, flows = 0, want_flows = 0;
			REQUIRE(critical_path_write_trace(set.ranks[0], &r, out.data, &marked, &flows, &err) == 0);
			written++;
			for (size_t k = 0; k < r.path_edges; k++)
				want_flows += r.path[k].type == CP_DEPENDENCY || r.path[k].type == CP_LAUNCH ||
					      r.path[k].type == CP_SYNC;
			CHECK_INT((long long)flows, (long long)want_flows);
			CHECK(marked > 0 && marked <= r.path_edges + 1);
			struct buf why = BUF_INIT, why0 = BUF_INIT;
			struct trace_check_stats st, st0;
			bool ok0 = trace_check_file(set.ranks[0]->path, &st0, &why0);
			bool ok = trace_check_file(out.data, &st, &why);
			if (ok0 && !ok)
				test_fail(__FILE__, __LINE__, "%s: %s", out.data, why.data);
			if (ok0 && ok)
				CHECK_INT((long long)st.events, (long long)(st0.events + 2 * flows));
			struct json_doc got;
			REQUIRE(parse_file(out.data, &got));
			size_t n0 = events_of(&got)->len - 2 * flows;
			check_flows_bind(c->name, events_of(&got), n0);
			json_doc_free(&got);
			struct trace_load_opts plain = {0};
			struct trace_rank *back = trace_rank_load(out.data, &plain, &err);
			struct trace_rank *orig = trace_rank_load(set.ranks[0]->path, &plain, &err);
			REQUIRE(back && orig);
			CHECK_INT((long long)back->n, (long long)orig->n);
			trace_rank_free(back);
			trace_rank_free(orig);
			buf_free(&why);
			buf_free(&why0);
			buf_free(&out);
		}
		critical_path_free(&r);
		trace_set_free(&set);
		buf_free(&err);
	}
	CHECK(written >= 17);
}

/* --write-trace into a directory that does not exist is refused before any
 * load; a trace that is not valid JSON leaves no file behind. */
TEST(analyze_critical_path_write_trace_bad)
{
	struct buf err = BUF_INIT;
	CHECK(tcopy_check_out("/nonexistent-dir/x.json", &err) == -1);
	CHECK(strstr(err.data, "/nonexistent-dir") != NULL);
	buf_reset(&err);
	CHECK(tcopy_check_out("", &err) == -1);
	buf_reset(&err);
	CHECK(tcopy_check_out("cp.json", &err) == 0);
	/* the shared option reaches critical-path's block too */
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	size_t rows = 0;
	for (size_t i = 0; i < cfg.nrows; i++)
		if (strcmp(cfg.rows[i].name, "write-trace") == 0) {
			*(const char **)cfg.rows[i].ptr = "/nonexistent-dir/y.json";
			rows++;
		}
	CHECK_INT((long long)rows, 1);
	buf_reset(&err);
	CHECK(analysis_config_check(&cfg, &err) == -1);
	const struct cp_options *o = analysis_config_opts(&cfg, &analysis_critical_path.opts);
	REQUIRE(o != NULL);
	CHECK(o->write_trace && strcmp(o->write_trace, "/nonexistent-dir/y.json") == 0);
	analysis_config_free(&cfg);
	/* a damaged input: an error naming it, no output left */
	struct buf bad = BUF_INIT, out = BUF_INIT;
	buf_printf(&bad, "%s/cp_bad.json", test_tmpdir());
	buf_printf(&out, "%s/cp_bad_out.json", test_tmpdir());
	FILE *f = fopen(bad.data, "w");
	REQUIRE(f != NULL);
	fputs("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"cpu_op\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}", f);
	fclose(f);
	struct trace_rank rk = {.path = bad.data};
	uint32_t idx = 0, row = 0;
	rk.idx = &idx;
	struct cp_path_edge pe = {.src_row = row, .dst_row = row, .type = CP_OPERATOR};
	struct cp_result res = {.ok = true, .path = &pe, .path_edges = 1};
	buf_reset(&err);
	CHECK(critical_path_write_trace(&rk, &res, out.data, NULL, NULL, &err) == -1);
	CHECK(strstr(err.data, "cp_bad.json") != NULL);
	FILE *g = fopen(out.data, "r");
	CHECK(g == NULL);
	if (g)
		fclose(g);
	buf_free(&bad);
	buf_free(&out);
	buf_free(&err);
}
