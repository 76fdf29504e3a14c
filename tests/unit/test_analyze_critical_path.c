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
#include "test.h"
#include "test_trace_util.h"

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
