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

static void for_each_case(case_fn fn, int min_checked)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	int checked = 0;
	/* twice: the full model, and the reduced one `dyno analyze` loads */
	for (size_t i = 0; i < 2 * n; i++) {
		struct trace_set set;
		struct buf err = BUF_INIT;
		struct trace_load_opts o = {.skip_cpu_ops = i >= n};
		if (trace_set_load(&set, cases[i % n].input, &o, &err) != 0) {
			test_fail(__FILE__, __LINE__, "%s: %s", cases[i % n].name, err.data);
			buf_free(&err);
			continue;
		}
		buf_free(&err);
		fn(&cases[i % n], &set, &checked);
		trace_set_free(&set);
	}
	CHECK(checked >= 2 * min_checked);
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

/* counters: every rank's series, the summaries over all ranks.  HTA writes
 * no memory_bw files where no rank has a memcpy/memset ("empty" stage), and
 * an empty summary frame (header "index,...") where every bandwidth is 0:
 * we give no rows and a note saying why, under our own header. */
static void counters_case(const struct tt_case *c, const struct trace_set *set, int *checked)
{
	struct atable *all[COUNTERS_NTABLES] = {0};
	bool any_series = false;
	for (size_t k = 0; k < set->nranks; k++) {
		struct atable *one[COUNTERS_NTABLES];
		analyze_counters_rank(set->ranks[k], 1024, one);
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
