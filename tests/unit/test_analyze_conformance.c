/*
 * test_analyze_conformance.c - our analyses against HTA's outputs
 * (tests/data/conformance/<case>/ CSVs, results.json) for every shared trace
 * that has them: same rows, counts exact, numbers within 1e-6 relative.
 * Where HTA fails (no GPU rows), we must produce no rows and a note.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analysis.h"
#include "test.h"
#include "test_trace_util.h"

static bool has_file(const char *name, const char *file)
{
	struct buf p = BUF_INIT;
	buf_printf(&p, "%s/conformance/%s/%s", test_data_dir(), name, file);
	struct stat st;
	bool ok = stat(p.data, &st) == 0;
	buf_free(&p);
	return ok;
}

static bool stage_failed(const char *name, const char *stage)
{
	struct json_doc doc;
	if (!tt_results(name, &doc))
		return false;
	const struct json_value *s = json_get(json_get(json_get(doc.root, "stages"), stage), "status");
	bool failed = s && s->type == JV_STRING && strcmp(s->u.str, "error") == 0;
	json_doc_free(&doc);
	return failed;
}

static void compare(const char *name, const char *file, const struct atable *t)
{
	struct tt_csv want, got;
	REQUIRE(tt_csv_load(name, file, &want));
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_CSV, &b);
	tt_csv_parse(&got, b.data, b.len);
	char what[256];
	snprintf(what, sizeof what, "%s/%s", name, file);
	tt_csv_equal(&want, &got, 1e-6, what);
	tt_csv_free(&want);
	tt_csv_free(&got);
	buf_free(&b);
}

typedef void (*case_fn)(const struct tt_case *c, const struct trace_set *set, int *checked);

/* the options of the model for_each_case passes */
static const struct trace_load_opts *case_opts;

static void for_each_case(case_fn fn, int min_checked)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	int checked = 0;
	/* three times: the full model, and the reduced ones `dyno analyze`
	 * loads (CPU ops dropped; summary and annotations keep the
	 * user_annotation rows) */
	for (size_t i = 0; i < 3 * n; i++) {
		struct trace_set set;
		struct buf err = BUF_INIT;
		struct trace_load_opts o = {.skip_cpu_ops = i >= n, .keep_user_annotations = i >= 2 * n};
		if (trace_set_load(&set, cases[i % n].input, &o, &err) != 0) {
			test_fail(__FILE__, __LINE__, "%s: %s", cases[i % n].name, err.data);
			buf_free(&err);
			continue;
		}
		buf_free(&err);
		case_opts = &o;
		fn(&cases[i % n], &set, &checked);
		trace_set_free(&set);
	}
	CHECK(checked >= 3 * min_checked);
}

static void temporal_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct atable *t = analyze_temporal(set, NULL);
	if (has_file(c->name, "temporal_breakdown.csv")) {
		compare(c->name, "temporal_breakdown.csv", t);
		(*checked)++;
	} else {
		CHECK(stage_failed(c->name, "temporal"));
		CHECK_INT(t->nrows, 0);
		CHECK(strstr(t->notes.data, "unavailable") != NULL);
	}
	atable_free(t);
}

TEST(analyze_temporal_conformance) { for_each_case(temporal_case, 15); }

static void idle_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct atable *st = NULL;
	struct atable *t = analyze_idle(set, NULL, 30, &st);
	if (has_file(c->name, "idle_time_breakdown.csv")) {
		compare(c->name, "idle_time_breakdown.csv", t);
		compare(c->name, "idle_interval_stats.csv", st);
		(*checked)++;
	} else {
		CHECK(stage_failed(c->name, "idle"));
		CHECK_INT(t->nrows, 0);
		CHECK_INT(st->nrows, 0);
		CHECK(strstr(t->notes.data, "unavailable") != NULL);
	}
	atable_free(t);
	atable_free(st);
}

TEST(analyze_idle_conformance) { for_each_case(idle_case, 15); }

static void launch_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct launch_opts o = {50, 100, true};
	struct atable **ts;
	size_t n = analyze_launch(set, NULL, &o, &ts);
	CHECK_INT(n, set->nranks);
	struct json_doc doc;
	REQUIRE(tt_results(c->name, &doc));
	const struct json_value *pr =
		json_get(json_get(json_get(json_get(doc.root, "stages"), "launch_stats"), "result"), "per_rank");
	for (size_t i = 0; i < n; i++) {
		char file[96];
		snprintf(file, sizeof file, "%s.csv", ts[i]->name);
		if (has_file(c->name, file)) {
			compare(c->name, file, ts[i]);
			(*checked)++;
		} else {
			test_fail(__FILE__, __LINE__, "%s: HTA has no %s", c->name, file);
		}
		/* the derived counts, as printed in our notes */
		char rk[16];
		snprintf(rk, sizeof rk, "%d", set->ranks[i]->rank);
		const struct json_value *v = json_get(pr, rk);
		int64_t rows = -1, sh = -1, ro = -1, lo = -1;
		json_get_i64(v, "rows", &rows);
		json_get_i64(v, "short_gpu_kernels", &sh);
		json_get_i64(v, "runtime_outliers", &ro);
		json_get_i64(v, "launch_delay_outliers", &lo);
		char want[512];
		snprintf(want, sizeof want,
			 "rank %s: %lld launches; short GPU kernels (cpu_duration <= 50 and gpu_duration < "
			 "cpu_duration): %lld; runtime outliers (cpu_duration > 50): %lld; launch delay outliers "
			 "(> 100): %lld",
			 rk, (long long)rows, (long long)sh, (long long)ro, (long long)lo);
		/* a rank without GPU events: HTA's 0 rows, said as unavailable */
		bool gpu = false;
		for (size_t k = 0; k < set->ranks[i]->n && !gpu; k++)
			gpu = trace_is_gpu(set->ranks[i], k);
		if (!gpu && rows == 0)
			snprintf(want, sizeof want, "rank %s: no GPU events (no row has a stream): launch statistics "
				 "unavailable", rk);
		if (!strstr(ts[i]->notes.data, want))
			test_fail(__FILE__, __LINE__, "%s: counts differ:\n want %s\n got  %s", c->name, want,
				  ts[i]->notes.data);
		atable_free(ts[i]);
	}
	free(ts);
	json_doc_free(&doc);
}

TEST(analyze_launch_conformance) { for_each_case(launch_case, 20); }

/* The kernel tables (kernels.c over kernel_breakdown.c), rendered, against
 * HTA's CSVs; test_analyze_kernels.c checks the results themselves. */
static void kernels_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT, all = o;
	all.num_kernels = 1000000000000ull;
	all.duration_ratio = 1.0;
	struct atable *t, *m, *ta, *ma;
	analyze_kernels(set, NULL, &o, &t, &m);
	analyze_kernels(set, NULL, &all, &ta, &ma);
	REQUIRE(has_file(c->name, "kernel_type_breakdown.csv"));
	compare(c->name, "kernel_type_breakdown.csv", t);
	compare(c->name, "kernel_metrics.csv", m);
	compare(c->name, "kernel_metrics_all.csv", ma);
	(*checked)++;
	atable_free(t);
	atable_free(m);
	atable_free(ta);
	atable_free(ma);
}

TEST(analyze_kernel_tables_conformance) { for_each_case(kernels_case, 20); }

static void overlap_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct atable *t = analyze_overlap(set, NULL);
	REQUIRE(has_file(c->name, "comm_comp_overlap.csv"));
	compare(c->name, "comm_comp_overlap.csv", t);
	(*checked)++;
	atable_free(t);
}

TEST(analyze_overlap_table_conformance) { for_each_case(overlap_case, 20); }

/* Trace diff (compare_traces_*, ops_diff.json) on the manifest's diff
 * cases, loaded as `dyno analyze diff` loads them (every ProfilerStep). */
static void diff_ops_compare(const char *name, const struct atable *ops)
{
	struct buf path = BUF_INIT, b = BUF_INIT;
	buf_printf(&path, "%s/conformance/%s/ops_diff.json", test_data_dir(), name);
	REQUIRE(tt_read_file(path.data, &b));
	struct json_doc doc;
	struct json_error e;
	REQUIRE(json_parse(b.data, b.len, &doc, &e));
	static const char *const cats[] = {"added", "deleted", "increased", "decreased", "unchanged"};
	size_t row = 0;
	for (int c = 0; c < 5; c++) {
		const struct json_value *list = json_get(doc.root, cats[c]);
		REQUIRE(list && list->type == JV_ARRAY);
		for (uint32_t i = 0; i < list->len; i++, row++) {
			REQUIRE(row < ops->nrows);
			CHECK_STR(ops->cells[row * ops->ncols].s, cats[c]);
			CHECK_STR(ops->cells[row * ops->ncols + 1].s, list->u.items[i].u.str);
		}
	}
	CHECK_INT(ops->nrows, row);
	json_doc_free(&doc);
	buf_free(&b);
	buf_free(&path);
}

TEST(analyze_diff_conformance)
{
	struct tt_diff_case cases[8];
	size_t n = tt_manifest_diff(cases, 8);
	CHECK_INT(n, 2);
	static const char *const files[] = {"compare_traces_all.csv", "compare_traces_all_short.csv",
					    "compare_traces_cpu.csv", "compare_traces_cpu_short.csv",
					    "compare_traces_gpu.csv", "compare_traces_gpu_short.csv"};
	for (size_t i = 0; i < n; i++) {
		struct trace_load_opts o = {0};
		analysis_load_opts(&analysis_diff, &o);
		CHECK(o.keep_last_step && !o.skip_cpu_ops);
		struct trace_set sets[2];
		struct buf err = BUF_INIT;
		REQUIRE(trace_set_load(&sets[0], cases[i].control, &o, &err) == 0);
		REQUIRE(trace_set_load(&sets[1], cases[i].test, &o, &err) == 0);
		buf_free(&err);
		struct atable *out[7] = {0};
		struct diff_select sel = {-1, -1};
		analyze_diff(&sets[0], &sets[1], &sel, out);
		for (int t = 0; t < 6; t++) {
			REQUIRE(out[t]);
			compare(cases[i].name, files[t], out[t]);
		}
		diff_ops_compare(cases[i].name, out[6]);
		for (int t = 0; t < 7; t++)
			atable_free(out[t]);
		trace_set_free(&sets[0]);
		trace_set_free(&sets[1]);
	}
}

/* HTA returns None (no CSV) where a rank set has no annotation row: we give
 * no rows and a note.  The CPU table needs the user_annotation rows: checked
 * on the models that keep them (ANALYSIS_LOAD_ANNOTATIONS). */
static void annotation_table(const struct tt_case *c, const struct atable *t, const char *file, int *checked)
{
	if (has_file(c->name, file)) {
		compare(c->name, file, t);
		(*checked)++;
	} else {
		CHECK(!stage_failed(c->name, "user_annotation"));
		CHECK_INT(t->nrows, 0);
		CHECK(strstr(t->notes.data, "unavailable") != NULL);
	}
}

static void annotations_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	if (strncmp(c->name, "diff__", 6) == 0)
		return;
	struct atable *gpu = NULL, *cpu = NULL;
	bool cpu_rows = !case_opts->skip_cpu_ops || case_opts->keep_user_annotations;
	analyze_annotations(set, NULL, &gpu, cpu_rows ? &cpu : NULL);
	annotation_table(c, gpu, "gpu_user_annotation_breakdown.csv", checked);
	if (cpu)
		annotation_table(c, cpu, "cpu_user_annotation_breakdown.csv", checked);
	atable_free(gpu);
	atable_free(cpu);
}

/* 3 traces with GPU annotations (x3 models) + 19 with CPU ones (x2) */
TEST(analyze_annotations_conformance) { for_each_case(annotations_case, 15); }

/* aten_op_kernels_and_delay rows: count descending, name, sequence */
static int op_kernels_row_cmp(const void *a, const void *b)
{
	char *const *x = *(char **const *)a, *const *y = *(char **const *)b;
	long long cx = atoll(x[2]), cy = atoll(y[2]);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	int c = strcmp(x[0], y[0]);
	return c ? c : strcmp(x[1], y[1]);
}

/* HTA's rows sorted (count descending, name, sequence): HTA's own order
 * of rows with equal counts is that of an unstable sort (docs/analyze.md) */
static void compare_sorted(const char *name, const char *file, const struct atable *t)
{
	struct tt_csv want, got;
	REQUIRE(tt_csv_load(name, file, &want));
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_CSV, &b);
	tt_csv_parse(&got, b.data, b.len);
	REQUIRE(want.nrows >= 1 && want.ncols == 5);
	qsort(want.cells + 1, want.nrows - 1, sizeof *want.cells, op_kernels_row_cmp);
	char what[256];
	snprintf(what, sizeof what, "%s/%s (rows sorted)", name, file);
	tt_csv_equal(&want, &got, 1e-6, what);
	tt_csv_free(&want);
	tt_csv_free(&got);
	buf_free(&b);
}

/* HTA's output exists for every trace with at most 3000 launches where it
 * does not raise (README of the conformance set); where it raised
 * (KeyError: no launch in an aten op; ValueError on cupti_profiler) we give
 * no rows and a note. */
static void op_kernels_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	if (case_opts->skip_cpu_ops)
		return; /* it needs the CPU operators */
	struct atable **ts;
	size_t n = analyze_op_kernels(set, NULL, &ts);
	CHECK_INT(n, set->nranks);
	for (size_t k = 0; k < n; k++) {
		char file[96];
		snprintf(file, sizeof file, "aten_op_kernels_and_delay_rank%d.csv", set->ranks[k]->rank);
		if (has_file(c->name, file)) {
			compare_sorted(c->name, file, ts[k]);
			(*checked)++;
		} else if (stage_failed(c->name, "aten_op_delay")) {
			CHECK_INT(ts[k]->nrows, 0);
			CHECK(strstr(ts[k]->notes.data, "unavailable") != NULL);
		}
		atable_free(ts[k]);
	}
	free(ts);
}

/* 10 traces have HTA's table (dir_2ranks: rank 0 only); 5 where HTA raises */
TEST(analyze_op_kernels_conformance) { for_each_case(op_kernels_case, 3); }

/* counters: every rank's series, the summaries over all ranks.  HTA writes
 * no memory_bw files where no rank has a memcpy/memset ("empty" stage), and
 * an empty summary frame (header "index,...") where every bandwidth is 0:
 * we give no rows and a note saying why, under our own header. */
static void counters_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct atable *all[COUNTERS_NTABLES] = {0};
	bool any_series = false;
	for (size_t k = 0; k < set->nranks; k++) {
		struct atable *one[COUNTERS_NTABLES], *lean[COUNTERS_NTABLES];
		analyze_counters_rank(set->ranks[k], 1024, true, one);
		/* without the series (summary): those two not built, the
		 * summaries and their notes the same */
		analyze_counters_rank(set->ranks[k], 1024, false, lean);
		CHECK(lean[1] == NULL && lean[4] == NULL);
		for (size_t t = 0; t < COUNTERS_NTABLES; t++) {
			if (t == 1 || t == 4)
				continue;
			struct buf a = BUF_INIT, b = BUF_INIT;
			atable_render(one[t], AFMT_CSV, &a);
			atable_render_notes(one[t], &a);
			atable_render(lean[t], AFMT_CSV, &b);
			atable_render_notes(lean[t], &b);
			CHECK_STR(a.data ? a.data : "", b.data ? b.data : "");
			buf_free(&a);
			buf_free(&b);
			atable_free(lean[t]);
		}
		for (size_t t = 0; t < COUNTERS_NTABLES; t++) {
			if (t == 1 || t == 4) { /* the per-rank series */
				char file[96];
				snprintf(file, sizeof file, "%s.csv", one[t]->name);
				if (has_file(c->name, file)) {
					compare(c->name, file, one[t]);
					any_series = true;
				} else {
					CHECK_INT(one[t]->nrows, 0);
					CHECK(strstr(one[t]->notes.data, "no ") != NULL);
				}
				atable_free(one[t]);
			} else if (all[t]) {
				atable_append(all[t], one[t]);
			} else {
				all[t] = one[t];
			}
		}
	}
	if (set->nranks) {
		if (has_file(c->name, "queue_length_summary.csv"))
			compare(c->name, "queue_length_summary.csv", all[0]);
		else {
			CHECK_INT(all[0]->nrows, 0);
			CHECK(strstr(all[0]->notes.data, "queue length unavailable") != NULL);
		}
		compare(c->name, "time_blocked_on_full_queue.csv", all[2]);
		struct tt_csv want;
		if (has_file(c->name, "memory_bw_summary.csv") && tt_csv_load(c->name, "memory_bw_summary.csv", &want)) {
			if (want.nrows > 1)
				compare(c->name, "memory_bw_summary.csv", all[3]);
			else { /* HTA's empty describe() frame */
				CHECK_INT(all[3]->nrows, 0);
				CHECK(strstr(all[3]->notes.data, "all 0") != NULL);
			}
			tt_csv_free(&want);
		} else {
			CHECK_INT(all[3]->nrows, 0);
			CHECK(strstr(all[3]->notes.data, "memory bandwidth unavailable") != NULL);
		}
	}
	if (any_series)
		(*checked)++;
	for (size_t t = 0; t < COUNTERS_NTABLES; t++)
		atable_free(all[t]);
}

TEST(analyze_counters_conformance) { for_each_case(counters_case, 17); }

/* frequent_patterns: for each operator HTA ran on a trace (results.json
 * stages.frequent_patterns.result.operators, with its rank and
 * min_pattern_len), its CSV where HTA gave rows, else (an empty frame) no
 * rows, a note and .unavailable.  Where HTA raised (negative dur after ns
 * rounding) we give rows on purpose (docs/analyze.md): they must be
 * well-formed. */
static void patterns_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	if (case_opts->skip_cpu_ops)
		return; /* it needs the CPU operators */
	struct json_doc doc;
	if (!tt_results(c->name, &doc))
		return;
	const struct json_value *st = json_get(json_get(doc.root, "stages"), "frequent_patterns");
	const struct json_value *status = json_get(st, "status");
	const struct json_value *res = json_get(st, "result");
	if (status && status->type == JV_STRING && strcmp(status->u.str, "error") == 0) {
		const char *ops[] = {"aten::linear", "aten::mm", "aten::add"};
		for (size_t k = 0; k < set->nranks; k++)
			for (size_t o = 0; o < 3; o++) {
				struct atable *t = analyze_patterns_rank(set->ranks[k], ops[o], 3, 5);
				for (size_t i = 0; i < t->nrows; i++) {
					CHECK(atable_cell(t, i, 1)->i >= 1);
					CHECK(strncmp(atable_cell(t, i, 0)->s, ops[o], strlen(ops[o])) == 0 ||
					      strstr(atable_cell(t, i, 0)->s, ops[o]) != NULL);
				}
				CHECK(t->nrows > 0 || t->unavailable);
				atable_free(t);
			}
		(*checked)++;
		json_doc_free(&doc);
		return;
	}
	const struct json_value *ops = json_get(res, "operators");
	int64_t rank = 0, min_len = 3;
	json_get_i64(json_get(res, "params"), "rank", &rank);
	json_get_i64(json_get(res, "params"), "min_pattern_len", &min_len);
	const struct trace_rank *r = NULL;
	for (size_t k = 0; k < set->nranks; k++)
		if (set->ranks[k]->rank == rank)
			r = set->ranks[k];
	if (!ops || ops->type != JV_OBJECT || !r) {
		json_doc_free(&doc);
		return;
	}
	for (uint32_t m = 0; m < ops->len; m++) {
		const char *op = ops->u.members[m].key;
		struct atable *t = analyze_patterns_rank(r, op, min_len, 5);
		char file[128];
		snprintf(file, sizeof file, "frequent_patterns_%s.csv", op);
		for (char *p = strstr(file, "::"); p; p = strstr(p, "::"))
			memmove(p, p + 1, strlen(p)), *p = '_';
		if (has_file(c->name, file)) {
			compare(c->name, file, t);
			CHECK(!t->unavailable);
			(*checked)++;
		} else {
			CHECK_INT(t->nrows, 0);
			CHECK(t->unavailable);
			CHECK(strstr(t->notes.data, "unavailable") != NULL);
		}
		atable_free(t);
	}
	json_doc_free(&doc);
}

/* 9 operator tables of 5 traces + 2 traces where HTA raised, in the full
 * model only (for_each_case wants a third of that per model) */
TEST(analyze_patterns_conformance) { for_each_case(patterns_case, 11 / 3); }
