/*
 * test_warehouse.c - the trace warehouse's parts below the CLI
 * (tests/integration/warehouse*.sh test the commands on both databases):
 * a trace's figures are the analyses' own numbers (temporal, idle, kernels
 * called here as plain functions) and the p50/p95 numpy's linear quantile
 * of the rows; absent stays absent; a damaged trace fails with its file
 * and byte offset; the content hash; rows read back are validated; a
 * stored trace is stored once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "fleet/wh_db.h"
#include "fleet/wh_gpu.h"
#include "fleet/wh_trace.h"
#include "test.h"
#include "test_trace_util.h"

static char *data_path(const char *rel)
{
	struct buf b = BUF_INIT;
	buf_printf(&b, "%s/traces/%s", test_data_dir(), rel);
	return buf_detach(&b, NULL);
}

static long col(const struct atable *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].name, name) == 0)
			return (long)c;
	return -1;
}

static double fnum(struct atable *t, size_t row, const char *name)
{
	long c = col(t, name);
	REQUIRE(c >= 0);
	union acell *v = atable_cell(t, row, (size_t)c);
	return t->cols[c].type == ACOL_INT ? (double)v->i : v->f;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* numpy.quantile(v, q) (linear), written out here independently */
static double np_q(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q, lo = floor(h);
	size_t i = (size_t)lo;
	return i + 1 < n ? v[i] + (h - lo) * (v[i + 1] - v[i]) : v[i];
}

TEST(warehouse_figures_are_the_analyses)
{
	struct wh_trace t = {.path = data_path("trace_filter/sampled_rank-0.json.gz")};
	wh_trace_extract(&t);
	REQUIRE(!t.failed);
	struct trace_set set;
	struct buf err = BUF_INIT;
	struct trace_load_opts lo = {0};
	REQUIRE(trace_set_load(&set, t.path, &lo, &err) == 0);
	const struct trace_rank *r = set.ranks[0];

	struct atable *tb = analyze_temporal(&set, NULL);
	REQUIRE(tb && tb->nrows == 1 && t.has_gpu);
	CHECK_NEAR(t.idle_us, fnum(tb, 0, "idle_time(us)"), 1e-12);
	CHECK_NEAR(t.idle_share, fnum(tb, 0, "idle_time_pctg") / 100, 1e-3);
	atable_free(tb);

	struct atable *idle = analyze_idle(&set, NULL, 30, NULL);
	REQUIRE(idle && t.has_host_wait);
	double all = 0, host = 0;
	for (size_t i = 0; i < idle->nrows; i++) {
		double v = fnum(idle, i, "idle_time");
		all += v;
		if (strcmp(atable_cell(idle, i, (size_t)col(idle, "idle_category"))->s, "host_wait") == 0)
			host += v;
	}
	CHECK_NEAR(t.host_wait_us, host, 1e-12);
	CHECK_NEAR(t.host_wait_share, host / all, 1e-12);
	atable_free(idle);

	struct kernel_breakdown_opts ko = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	ko.num_kernels = UINT64_MAX / 2;
	ko.duration_ratio = 1;
	struct atable *types, *metrics;
	analyze_kernels(&set, NULL, &ko, &types, &metrics);
	CHECK_INT(t.ntypes, types->nrows);
	for (size_t i = 0; i < types->nrows && i < t.ntypes; i++) {
		CHECK_STR(t.types[i].label, atable_cell(types, i, 0)->s);
		CHECK_NEAR(t.types[i].total_us, fnum(types, i, "sum"), 1e-12);
	}
	CHECK_INT(t.nkernels, metrics->nrows);
	REQUIRE(t.nkernels > 20);
	double *d = xmalloc(r->n * sizeof *d);
	for (size_t k = 0; k < t.nkernels; k++) {
		const struct wh_kernel *w = &t.kernels[k];
		size_t m = 0;
		for (; m < metrics->nrows; m++)
			if (strcmp(atable_cell(metrics, m, 0)->s, w->name) == 0)
				break;
		REQUIRE(m < metrics->nrows);
		CHECK_NEAR(w->total_us, fnum(metrics, m, "sum (us)"), 1e-12);
		CHECK_NEAR(w->max_us, fnum(metrics, m, "max (us)"), 1e-12);
		CHECK_NEAR(w->calls * w->mean_us, w->total_us, 1e-9);
		/* the percentiles of this kernel's rows */
		size_t n = 0;
		for (size_t i = 0; i < r->n; i++)
			if (r->stream[i] != -1 && strcmp(trace_name(r, i), w->name) == 0)
				d[n++] = r->dur[i];
		CHECK_INT(n, w->calls);
		if (n == 0)
			continue;
		qsort(d, n, sizeof *d, dcmp);
		CHECK_NEAR(w->p50_us, np_q(d, n, 0.5), 1e-12);
		CHECK_NEAR(w->p95_us, np_q(d, n, 0.95), 1e-12);
	}
	free(d);
	atable_free(types);
	atable_free(metrics);
	/* ProfilerSteps after the last-step filter; the start is HTA's
	 * min_ts (no baseTimeNanoseconds: ts are the wall clock) */
	CHECK_INT(t.niters, r->niterations);
	CHECK(t.has_start);
	CHECK_INT(t.start_ns, llround(set.min_ts * 1e3));
	CHECK_INT(t.start_ns / 1000000000, 1682725898LL);
	CHECK(t.has_rank && t.rank == 0);
	trace_set_free(&set);
	buf_free(&err);
	wh_trace_free(&t);
}

/* No GPU rows: the GPU figures are absent, not 0; a base time counts. */
TEST(warehouse_cpu_only_trace_is_absent_not_zero)
{
	struct wh_trace t = {.path = data_path("cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")};
	wh_trace_extract(&t);
	REQUIRE(!t.failed);
	CHECK(!t.has_gpu);
	CHECK(!t.has_host_wait);
	CHECK_INT(t.nkernels, 0);
	CHECK(t.has_rank && t.rank == 34);
	/* baseTimeNanoseconds 1719853884 s + the first ts (1212075548353 µs) */
	CHECK_INT(t.start_ns / 1000000000, 1719853884LL + 1212075);
	wh_trace_free(&t);
}

/* The start on the file's clock: ts relative to baseTimeNanoseconds (what
 * Kineto writes) get the base added; ts that are Unix times already (at or
 * past the base: a writer that kept both, as the demo's stand-in did) do
 * not get it a second time (a start in 2083). */
TEST(warehouse_start_absolute_ts_not_based_twice)
{
	static const char *const ts[2] = {"423333060.5", "1795839423333060.5"};
	for (int k = 0; k < 2; k++) {
		struct buf p = BUF_INIT;
		buf_printf(&p, "%s/base%d.json", test_tmpdir(), k);
		FILE *f = fopen(p.data, "w");
		REQUIRE(f);
		fprintf(f,
			"{\"baseTimeNanoseconds\": 1795839000000000000, \"traceEvents\": ["
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, "
			"\"ts\": %s, \"dur\": 10}]}",
			ts[k]);
		fclose(f);
		struct wh_trace t = {.path = buf_detach(&p, NULL)}; /* wh_trace_free frees it */
		wh_trace_extract(&t);
		REQUIRE(!t.failed);
		CHECK(t.has_start);
		CHECK_INT(t.start_ns / 1000000000, 1795839423LL);
		wh_trace_free(&t);
	}
}

TEST(warehouse_damaged_trace_fails_with_offset)
{
	char *src = data_path("call_stack/backward_thread.json");
	struct buf b = BUF_INIT, p = BUF_INIT;
	REQUIRE(tt_read_file(src, &b));
	buf_printf(&p, "%s/cut.json", test_tmpdir());
	FILE *f = fopen(p.data, "w");
	fwrite(b.data, 1, b.len / 2, f);
	fclose(f);
	struct wh_trace t = {.path = xstrdup(p.data)};
	wh_trace_extract(&t);
	CHECK(t.failed);
	CHECK(t.error && strstr(t.error, "cut.json: byte ") != NULL);
	wh_trace_free(&t);
	t = (struct wh_trace){.path = xstrdup("/nonexistent/x.json")};
	wh_trace_extract(&t);
	CHECK(t.failed && t.error && strstr(t.error, "/nonexistent/x.json") != NULL);
	wh_trace_free(&t);
	free(src);
	buf_free(&b);
	buf_free(&p);
}

TEST(warehouse_content_hash)
{
	char a[33], b[33], c[33];
	struct buf err = BUF_INIT, p = BUF_INIT;
	char *src = data_path("call_stack/backward_thread.json");
	REQUIRE(wh_hash_file(src, a, &err) == 0);
	struct buf t = BUF_INIT;
	REQUIRE(tt_read_file(src, &t));
	buf_printf(&p, "%s/copy.json", test_tmpdir());
	FILE *f = fopen(p.data, "w");
	fwrite(t.data, 1, t.len, f);
	fclose(f);
	REQUIRE(wh_hash_file(p.data, b, &err) == 0);
	CHECK_STR(a, b);
	/* one byte more (a space at the end: the same trace, other bytes) */
	f = fopen(p.data, "a");
	fputc(' ', f);
	fclose(f);
	REQUIRE(wh_hash_file(p.data, c, &err) == 0);
	CHECK(strcmp(a, c) != 0);
	CHECK_INT(strlen(a), 32);
	CHECK(wh_hash_file("/nonexistent/x", c, &err) != 0 && strstr(err.data, "/nonexistent/x") != NULL);
	free(src);
	buf_free(&t);
	buf_free(&p);
	buf_free(&err);
}

TEST(warehouse_rows_read_back_are_checked)
{
	struct wh_rows r;
	wh_rows_init(&r, 3);
	const char *cells[] = {"12.5", "abc", NULL, "1e999", "42", "7x"};
	for (size_t i = 0; i < 6; i++)
		wh_rows_put(&r, cells[i], cells[i] ? strlen(cells[i]) : 0, cells[i] == NULL);
	CHECK_INT(r.nrows, 2);
	struct buf err = BUF_INIT;
	double v;
	int64_t x;
	bool null;
	(void)null;
	CHECK(wh_cell_f64(&r, 0, 0, "q", false, &v, &err) && v == 12.5);
	CHECK(!wh_cell_f64(&r, 0, 1, "q", false, &v, &err));
	CHECK(strstr(err.data, "q: row 1, column 2: not a finite number: 'abc'") != NULL);
	buf_reset(&err);
	CHECK(!wh_cell_f64(&r, 0, 2, "q", false, &v, &err) && strstr(err.data, "NULL") != NULL);
	CHECK(wh_cell_f64(&r, 0, 2, "q", true, &v, &err) && isnan(v));
	buf_reset(&err);
	CHECK(!wh_cell_f64(&r, 1, 0, "q", false, &v, &err)); /* 1e999: not finite */
	CHECK(wh_cell_i64(&r, 1, 1, "q", false, &x, &err) && x == 42);
	CHECK(!wh_cell_i64(&r, 1, 2, "q", false, &x, &err));
	CHECK(!wh_cell_i64(&r, 0, 0, "q", false, &x, &err)); /* 12.5 is no integer */
	wh_rows_free(&r);
	buf_free(&err);
}

/* SQLite: a trace stored twice is one trace; a failed one keeps its error. */
TEST(warehouse_store_once_sqlite)
{
	struct buf spec = BUF_INIT, err = BUF_INIT;
	buf_printf(&spec, "%s/w.db", test_tmpdir());
	struct wh_db db;
	REQUIRE(wh_db_open(&db, spec.data, &err) == 0);
	struct wh_trace t = {.path = data_path("trace_filter/sampled_rank-1.json.gz"), .job = xstrdup("j")};
	REQUIRE(wh_hash_file(t.path, t.hash, &err) == 0);
	wh_trace_extract(&t);
	CHECK_INT(wh_trace_known(&db, t.hash, &err), 0);
	REQUIRE(wh_trace_store(&db, &t, 1, &err) == 0);
	REQUIRE(wh_trace_store(&db, &t, 2, &err) == 0);
	CHECK_INT(wh_trace_known(&db, t.hash, &err), 1);
	struct wh_rows r;
	REQUIRE(wh_db_exec(&db, "SELECT COUNT(*), MIN(ingested_ns) FROM traces", NULL, 0, &r, &err) == 0);
	CHECK_STR(wh_cell(&r, 0, 0), "1");
	CHECK_STR(wh_cell(&r, 0, 1), "1");
	wh_rows_free(&r);
	char n[24];
	snprintf(n, sizeof n, "%zu", t.nkernels);
	REQUIRE(wh_db_exec(&db, "SELECT COUNT(*) FROM kernels", NULL, 0, &r, &err) == 0);
	CHECK_STR(wh_cell(&r, 0, 0), n);
	wh_rows_free(&r);
	REQUIRE(wh_db_exec(&db, "SELECT version FROM wh_schema", NULL, 0, &r, &err) == 0);
	CHECK(r.nrows == 2 && strcmp(wh_cell(&r, 0, 0), "1") == 0 && strcmp(wh_cell(&r, 1, 0), "2") == 0);
	wh_rows_free(&r);
	wh_trace_free(&t);
	wh_db_close(&db);
	/* opened again: no migration runs twice */
	REQUIRE(wh_db_open(&db, spec.data, &err) == 0);
	wh_db_close(&db);
	buf_free(&spec);
	buf_free(&err);
}

/* GPU hours: a scrape stored once, per job/user/model; a bad line names
 * itself and stores nothing of its file. */
TEST(warehouse_gpu_hours_scrape)
{
	struct buf spec = BUF_INIT, err = BUF_INIT;
	buf_printf(&spec, "%s/g.db", test_tmpdir());
	struct wh_db db;
	REQUIRE(wh_db_open(&db, spec.data, &err) == 0);
	const char *good = "n1 {\"interval_s\":1,\"metrics\":{\"gpu_job_seconds.7\":[[1000,1],[2000,2.5]],"
			   "\"gpu_job_energy_mj.7\":[[1000,3600000]],\"gpu_user_seconds.1000\":[[1000,3.5]],"
			   "\"cpu_u\":[[1000,9]]}}\n"
			   "\n{\"metrics\":{\"gpu_job_seconds.8\":[[1000,7200]]}}\n";
	size_t rows = 0;
	REQUIRE(wh_gpu_ingest(&db, good, strlen(good), "s.txt", "n2", &rows, &err) == 0);
	CHECK_INT(rows, 5);
	REQUIRE(wh_gpu_ingest(&db, good, strlen(good), "s.txt", "n2", &rows, &err) == 0);
	struct wh_rows r;
	REQUIRE(wh_db_exec(&db, "SELECT COUNT(*) FROM gpu_usage", NULL, 0, &r, &err) == 0);
	CHECK_STR(wh_cell(&r, 0, 0), "5"); /* the second time added nothing */
	wh_rows_free(&r);
	REQUIRE(wh_gpu_label(&db, "7", "llama", &err) == 0);
	REQUIRE(wh_gpu_label(&db, "7", "mixtral", &err) == 0); /* a label replaced */
	struct atable *t = wh_gpu_report(&db, WH_GPU_BY_JOB, 0, INT64_MAX / 1000, &err);
	REQUIRE(t && t->nrows == 2);
	CHECK_STR(atable_cell(t, 0, 0)->s, "8"); /* 2 h first */
	CHECK_NEAR(atable_cell(t, 0, 1)->f, 2, 1e-12);
	CHECK(isnan(atable_cell(t, 0, 2)->f)); /* no energy: absent, not 0 */
	CHECK_NEAR(atable_cell(t, 1, 1)->f, 3.5 / 3600, 1e-12);
	CHECK_NEAR(atable_cell(t, 1, 2)->f, 0.001, 1e-12); /* 3.6e6 mJ = 1 Wh */
	atable_free(t);
	t = wh_gpu_report(&db, WH_GPU_BY_MODEL, 0, INT64_MAX / 1000, &err);
	REQUIRE(t && t->nrows == 2);
	CHECK_STR(atable_cell(t, 0, 0)->s, "(no label)");
	CHECK_STR(atable_cell(t, 1, 0)->s, "mixtral");
	atable_free(t);
	/* a time range leaves the samples outside out */
	t = wh_gpu_report(&db, WH_GPU_BY_USER, 2, 3, &err);
	REQUIRE(t);
	CHECK_INT(t->nrows, 0);
	atable_free(t);

	const char *bad[] = {
		"{\"metrics\":{\"gpu_job_seconds.9\":[[1000,1]]}}\n{\"metrics\":{\"gpu_job_seconds.9\":[[1000]]}}\n",
		"{\"metrics\":{\"gpu_job_seconds.9\":[[1.5,1]]}}",
		"{\"metrics\":{\"gpu_job_seconds.9\":[[1000,1e999]]}}",
		"{\"metrics\":{\"gpu_job_seconds.9\":[[17000002000000000,1]]}}",
		"{\"metrics\":{\"gpu_job_seconds.\":[]}}",
		"{\"metrics\":[1]}",
		"{\"error\":\"unknown function\"}",
		"host-without-answer",
		"{\"metrics\":{}",
		"",
	};
	const char *want[] = {"b.txt: line 2: gpu_job_seconds.9: sample 1 is not", "sample 1 is not", "sample 1 is not",
			      "sample 1 is not [unix_ms, value >= 0] (a time before 2262)",
			      "not a series", "no \"metrics\" object", "the daemon answered an error: unknown function",
			      "line 1: not \"HOST {answer}\"", "b.txt: line 1: byte", "no getMetrics answer"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_reset(&err);
		CHECK(wh_gpu_ingest(&db, bad[i], strlen(bad[i]), "b.txt", "n", &rows, &err) != 0);
		if (!strstr(err.data, want[i]))
			test_fail(__FILE__, __LINE__, "bad %zu: '%s' lacks '%s'", i, err.data, want[i]);
	}
	REQUIRE(wh_db_exec(&db, "SELECT COUNT(*) FROM gpu_usage WHERE key = '9'", NULL, 0, &r, &err) == 0);
	CHECK_STR(wh_cell(&r, 0, 0), "0"); /* the first bad file's good line is not kept either */
	wh_rows_free(&r);
	wh_db_close(&db);
	buf_free(&spec);
	buf_free(&err);
}
