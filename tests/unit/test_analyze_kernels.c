/*
 * test_analyze_kernels.c - the kernel breakdown, the kernel duration
 * distribution and the comm/comp overlap against HTA's outputs
 * (conformance/<case>/kernel_type_breakdown.csv, kernel_metrics.csv,
 * kernel_metrics_all.csv, comm_comp_overlap.csv) on every shared trace that
 * has them, plus hand-made traces for the quirks (folding, ties, ns
 * rounding, no communication).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/distribution.h"
#include "analyze/kernel_breakdown.h"
#include "analyze/overlap.h"
#include "test.h"
#include "test_trace_util.h"
#include "trace/model.h"

#define REL 1e-6

/* want: a CSV cell ("" = NaN); got: our value.  Reports and returns false on
 * a difference. */
static bool num_eq(const char *what, size_t row, const char *col, const char *want, double got)
{
	if (*want == 0) {
		if (isnan(got))
			return true;
		test_fail(__FILE__, __LINE__, "%s row %zu %s: want NaN, got %.17g", what, row, col, got);
		return false;
	}
	char *end;
	double w = strtod(want, &end);
	if (*end != 0) {
		test_fail(__FILE__, __LINE__, "%s row %zu %s: bad CSV number '%s'", what, row, col, want);
		return false;
	}
	double d = fabs(w - got);
	if (d <= REL * fabs(w) || d < 1e-9)
		return true;
	test_fail(__FILE__, __LINE__, "%s row %zu %s: want %s, got %.17g", what, row, col, want, got);
	return false;
}

static bool load_case(const struct tt_case *c, struct trace_set *set)
{
	struct trace_load_opts o = {0};
	struct buf err = BUF_INIT;
	int rc = trace_set_load(set, c->input, &o, &err);
	if (rc != 0)
		test_fail(__FILE__, __LINE__, "%s: %s", c->name, err.data);
	buf_free(&err);
	return rc == 0;
}

static int check_type_csv(const char *cname, const struct kernel_breakdown *kb)
{
	struct tt_csv csv;
	if (!tt_csv_load(cname, "kernel_type_breakdown.csv", &csv))
		return 0;
	int bad = 0;
	char what[200];
	snprintf(what, sizeof what, "%.120s kernel_type_breakdown", cname);
	if (csv.nrows - 1 != kb->ntypes) {
		test_fail(__FILE__, __LINE__, "%s: %zu rows, HTA %zu", what, kb->ntypes, csv.nrows - 1);
		bad++;
	}
	/* rows with equal sums are in no defined order in HTA: match by label,
	 * and check that our order is by descending sum */
	for (size_t i = 1; i < csv.nrows; i++) {
		const struct kernel_type_row *t = NULL;
		for (size_t k = 0; k < kb->ntypes; k++)
			if (strcmp(kernel_type_label(kb->types[k].mask), csv.cells[i][0]) == 0)
				t = &kb->types[k];
		if (!t) {
			test_fail(__FILE__, __LINE__, "%s: no row '%s'", what, csv.cells[i][0]);
			bad++;
			continue;
		}
		bad += !num_eq(what, i, "sum", csv.cells[i][1], t->sum);
		bad += !num_eq(what, i, "percentage", csv.cells[i][2], t->percentage);
	}
	for (size_t k = 1; k < kb->ntypes; k++)
		CHECK(kb->types[k - 1].sum >= kb->types[k].sum);
	tt_csv_free(&csv);
	return bad;
}

static int check_metrics_csv(const char *cname, const char *file, const struct kernel_breakdown *kb)
{
	struct tt_csv csv;
	if (!tt_csv_load(cname, file, &csv))
		return 0;
	int bad = 0;
	char what[200];
	snprintf(what, sizeof what, "%.120s %.60s", cname, file);
	REQUIRE(csv.nrows >= 1 && csv.ncols == 8);
	CHECK_STR(csv.cells[0][0], "name");
	CHECK_STR(csv.cells[0][5], "mean (us)");
	if (csv.nrows - 1 != kb->nmetrics) {
		test_fail(__FILE__, __LINE__, "%s: %zu rows, HTA %zu", what, kb->nmetrics, csv.nrows - 1);
		bad++;
	}
	for (size_t i = 1; i < csv.nrows && i - 1 < kb->nmetrics && bad < 10; i++) {
		const struct kernel_metric_row *m = &kb->metrics[i - 1];
		char **c = csv.cells[i];
		if (strcmp(c[0], m->name) != 0 || strcmp(c[6], trace_ktype_name(m->type)) != 0 ||
		    atoi(c[7]) != m->rank) {
			test_fail(__FILE__, __LINE__, "%s row %zu: want %.60s/%s/%s, got %.60s/%s/%d", what, i, c[0],
				  c[6], c[7], m->name, trace_ktype_name(m->type), m->rank);
			bad++;
			continue;
		}
		bad += !num_eq(what, i, "sum", c[1], m->sum);
		bad += !num_eq(what, i, "max", c[2], m->max);
		bad += !num_eq(what, i, "min", c[3], m->min);
		bad += !num_eq(what, i, "stddev", c[4], m->stddev);
		bad += !num_eq(what, i, "mean", c[5], m->mean);
	}
	tt_csv_free(&csv);
	return bad;
}

TEST(analyze_kernels_conformance)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	size_t checked = 0, rows = 0;
	for (size_t c = 0; c < n; c++) {
		struct tt_csv probe;
		if (!tt_csv_load(cases[c].name, "kernel_type_breakdown.csv", &probe))
			continue;
		tt_csv_free(&probe);
		struct trace_set set;
		if (!load_case(&cases[c], &set))
			continue;
		struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
		struct kernel_breakdown kb;
		kernel_breakdown_run(&set, &o, &kb);
		check_type_csv(cases[c].name, &kb);
		check_metrics_csv(cases[c].name, "kernel_metrics.csv", &kb);
		rows += kb.nmetrics;
		kernel_breakdown_free(&kb);

		/* HTA with num_kernels=10**12, duration_ratio=1.0: no folding */
		o.num_kernels = 1000000000000ull;
		o.duration_ratio = 1.0;
		kernel_breakdown_run(&set, &o, &kb);
		check_type_csv(cases[c].name, &kb);
		check_metrics_csv(cases[c].name, "kernel_metrics_all.csv", &kb);
		kernel_breakdown_free(&kb);
		trace_set_free(&set);
		checked++;
	}
	/* every file/dir case of the manifest has the CSVs */
	CHECK_INT(checked, n);
	CHECK(rows > 100);
}

TEST(analyze_overlap_conformance)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	size_t checked = 0, nan = 0, num = 0;
	for (size_t c = 0; c < n; c++) {
		struct tt_csv csv;
		if (!tt_csv_load(cases[c].name, "comm_comp_overlap.csv", &csv))
			continue;
		struct trace_set set;
		if (!load_case(&cases[c], &set)) {
			tt_csv_free(&csv);
			continue;
		}
		struct overlap_result ov;
		overlap_run(&set, &ov);
		char what[200];
		snprintf(what, sizeof what, "%.120s comm_comp_overlap", cases[c].name);
		CHECK_STR(csv.cells[0][1], "comp_comm_overlap_pctg");
		if (csv.nrows - 1 != ov.nrows)
			test_fail(__FILE__, __LINE__, "%s: %zu rows, HTA %zu", what, ov.nrows, csv.nrows - 1);
		for (size_t i = 1; i < csv.nrows && i - 1 < ov.nrows; i++) {
			CHECK_INT(atoi(csv.cells[i][0]), ov.rows[i - 1].rank);
			num_eq(what, i, "pctg", csv.cells[i][1], ov.rows[i - 1].pctg);
			if (*csv.cells[i][1])
				num++;
			else
				nan++;
		}
		overlap_free(&ov);
		trace_set_free(&set);
		tt_csv_free(&csv);
		checked++;
	}
	CHECK_INT(checked, n);
	/* both HTA outcomes occur in the oracle: a number, and NaN (no comm) */
	CHECK(num >= 4);
	CHECK(nan >= 4);
}

/* The distribution is kernel_metrics seen per name across ranks: on the
 * 2-rank directory, every non-"others" name of HTA's kernel_metrics.csv
 * has one entry per rank it ran on, with HTA's mean/min/max. */
TEST(analyze_kernel_distribution_2ranks)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	const struct tt_case *dir = NULL;
	for (size_t c = 0; c < n; c++)
		if (strcmp(cases[c].name, "trace_filter__dir_2ranks") == 0)
			dir = &cases[c];
	REQUIRE(dir);
	struct trace_set set;
	REQUIRE(load_case(dir, &set));
	REQUIRE(set.nranks == 2);
	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	struct kernel_breakdown kb;
	kernel_breakdown_run(&set, &o, &kb);
	struct kernel_dist kd;
	kernel_dist_run(&kb, &kd);
	struct tt_csv csv;
	REQUIRE(tt_csv_load(dir->name, "kernel_metrics.csv", &csv));
	size_t want = 0, two = 0;
	for (size_t i = 1; i < csv.nrows; i++)
		want += strcmp(csv.cells[i][0], "others") != 0;
	size_t got = 0;
	for (size_t k = 0; k < kd.nrows; k++) {
		const struct kernel_dist_row *d = &kd.rows[k];
		CHECK(strcmp(d->name, "others") != 0);
		got += d->count;
		two += d->count == 2;
		for (size_t j = d->first; j < d->first + d->count; j++) {
			CHECK_STR(kb.metrics[j].name, d->name);
			/* find HTA's row for this name and rank */
			bool found = false;
			for (size_t i = 1; i < csv.nrows; i++) {
				if (strcmp(csv.cells[i][0], d->name) != 0 || atoi(csv.cells[i][7]) != kb.metrics[j].rank)
					continue;
				found = true;
				num_eq("distribution", i, "mean", csv.cells[i][5], kb.metrics[j].mean);
				num_eq("distribution", i, "min", csv.cells[i][3], kb.metrics[j].min);
				num_eq("distribution", i, "max", csv.cells[i][2], kb.metrics[j].max);
			}
			CHECK(found);
			CHECK(kb.metrics[j].mean >= d->mean_lo && kb.metrics[j].mean <= d->mean_hi);
		}
		if (d->count == 2 && d->mean_lo > 0)
			CHECK_NEAR(d->spread, d->mean_hi / d->mean_lo, 1e-12);
	}
	CHECK_INT(got, want);
	CHECK(two >= 5); /* kernels that ran on both ranks */
	/* the NCCL kernel: rank 0 mean 39065.4, rank 1 33605.4 (HTA) */
	bool nccl = false;
	for (size_t k = 0; k < kd.nrows; k++) {
		if (strncmp(kd.rows[k].name, "ncclKernel_SendRecv", 19) != 0)
			continue;
		nccl = true;
		CHECK_INT(kd.rows[k].rank_hi, 0);
		CHECK_INT(kd.rows[k].rank_lo, 1);
		CHECK_NEAR(kd.rows[k].spread, 39065.4 / 33605.4, 1e-9);
	}
	CHECK(nccl);
	tt_csv_free(&csv);
	kernel_dist_free(&kd);
	kernel_breakdown_free(&kb);
	trace_set_free(&set);
}

/* ---------------- hand-made traces for the quirks ---------------- */

struct ev {
	const char *name;
	double ts, dur;
	int stream; /* -1: a CPU op */
};

/* Write a trace of the given GPU rows (cat kernel, or gpu_memcpy for
 * "Memcpy" names) to dir/name and return its path in out. */
static void write_trace(const char *dir, const char *file, int rank, const struct ev *ev, size_t n, struct buf *out)
{
	struct buf t = BUF_INIT;
	buf_printf(&t, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2},\n\"traceEvents\": [\n", rank);
	for (size_t i = 0; i < n; i++) {
		const char *cat = ev[i].stream < 0 ? "cpu_op" : strncmp(ev[i].name, "Memcpy", 6) == 0 ? "gpu_memcpy" : "kernel";
		buf_printf(&t, "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, ", i ? ",\n" : "",
			   cat, ev[i].name, ev[i].stream < 0 ? 1 : ev[i].stream);
		buf_printf(&t, "\"ts\": %.17g, \"dur\": %.17g", ev[i].ts, ev[i].dur);
		if (ev[i].stream >= 0)
			buf_printf(&t, ", \"args\": {\"stream\": %d, \"correlation\": %zu}", ev[i].stream, 100 + i);
		buf_puts(&t, "}");
	}
	buf_puts(&t, "\n]}\n");
	buf_reset(out);
	buf_printf(out, "%s/%s", dir, file);
	FILE *f = fopen(out->data, "w");
	REQUIRE(f);
	REQUIRE(fwrite(t.data, 1, t.len, f) == t.len);
	fclose(f);
	buf_free(&t);
}

static void load_path(const char *path, struct trace_set *set)
{
	struct trace_load_opts o = {0};
	struct buf err = BUF_INIT;
	int rc = trace_set_load(set, path, &o, &err);
	if (rc != 0)
		test_fail(__FILE__, __LINE__, "%s", err.data);
	buf_free(&err);
	REQUIRE(rc == 0);
}

static const struct kernel_type_row *type_row(const struct kernel_breakdown *kb, const char *label)
{
	for (size_t k = 0; k < kb->ntypes; k++)
		if (strcmp(kernel_type_label(kb->types[k].mask), label) == 0)
			return &kb->types[k];
	return NULL;
}

/* Folding: 12 computation kernels with totals 1000 ... 2 (two calls each).
 * cumsum = 1000,1500,1700,1800,1850,1890,1920,1940,1950,1956,1960,1962;
 * numpy's quantile at 0.8 is 1956 - 6 * 0.2 = 1954.8, so the first 9 keep
 * their names (with sum = max = min = mean = total, std 0: HTA's
 * re-aggregation) and 6, 4, 2 fold into others (sum 12, max 6, min 2,
 * mean 4, std 2).  At 0.5 the quantile is 1905: 6 names stay. */
TEST(analyze_kernels_folding)
{
	static const double totals[12] = {1000, 500, 200, 100, 50, 40, 30, 20, 10, 6, 4, 2};
	static const char *const names[12] = {"k00", "k01", "k02", "k03", "k04", "k05",
					      "k06", "k07", "k08", "k09", "k10", "k11"};
	struct ev ev[24];
	double ts = 0;
	for (int i = 0; i < 12; i++) {
		ev[2 * i] = (struct ev){names[i], ts, totals[i] / 2 - 1, 7};
		ts += 2000;
		ev[2 * i + 1] = (struct ev){names[i], ts, totals[i] / 2 + 1, 7};
		ts += 2000;
	}
	struct buf path = BUF_INIT;
	write_trace(test_tmpdir(), "fold.json", 0, ev, 24, &path);
	struct trace_set set;
	load_path(path.data, &set);

	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	struct kernel_breakdown kb;
	kernel_breakdown_run(&set, &o, &kb);
	REQUIRE(kb.ntypes == 1);
	CHECK_STR(kernel_type_label(kb.types[0].mask), "COMPUTATION");
	CHECK_NEAR(kb.types[0].sum, 1962, 1e-12);
	CHECK_NEAR(kb.types[0].percentage, 100.0, 1e-12);
	REQUIRE(kb.nmetrics == 10);
	/* sorted by name: k00..k08, then others */
	for (int i = 0; i < 9; i++) {
		const struct kernel_metric_row *m = &kb.metrics[i];
		CHECK_STR(m->name, names[i]);
		CHECK_NEAR(m->sum, totals[i], 1e-12);
		CHECK_NEAR(m->max, totals[i], 1e-12);
		CHECK_NEAR(m->min, totals[i], 1e-12);
		CHECK_NEAR(m->mean, totals[i], 1e-12);
		CHECK(m->stddev == 0);
		CHECK_INT(m->count, 2);
	}
	const struct kernel_metric_row *ot = &kb.metrics[9];
	CHECK_STR(ot->name, "others");
	CHECK(ot->others);
	CHECK_NEAR(ot->sum, 12, 1e-12);
	CHECK_NEAR(ot->max, 6, 1e-12);
	CHECK_NEAR(ot->min, 2, 1e-12);
	CHECK_NEAR(ot->mean, 4, 1e-12);
	CHECK_NEAR(ot->stddev, 2, 1e-12);
	kernel_breakdown_free(&kb);

	o.duration_ratio = 0.5;
	kernel_breakdown_run(&set, &o, &kb);
	REQUIRE(kb.nmetrics == 7);
	CHECK_STR(kb.metrics[5].name, "k05");
	CHECK_STR(kb.metrics[6].name, "others");
	CHECK_NEAR(kb.metrics[6].sum, 30 + 20 + 10 + 6 + 4 + 2, 1e-12);
	kernel_breakdown_free(&kb);

	/* no more than num_kernels names: true per-call statistics */
	o.num_kernels = 12;
	kernel_breakdown_run(&set, &o, &kb);
	REQUIRE(kb.nmetrics == 12);
	CHECK_STR(kb.metrics[0].name, "k00");
	CHECK_NEAR(kb.metrics[0].sum, 1000, 1e-12);
	CHECK_NEAR(kb.metrics[0].max, 501, 1e-12);
	CHECK_NEAR(kb.metrics[0].min, 499, 1e-12);
	CHECK_NEAR(kb.metrics[0].mean, 500, 1e-12);
	CHECK_NEAR(kb.metrics[0].stddev, sqrt(2.0), 1e-12);
	kernel_breakdown_free(&kb);

	/* the distribution never shows "others" */
	o = (struct kernel_breakdown_opts)KERNEL_BREAKDOWN_OPTS_DEFAULT;
	kernel_breakdown_run(&set, &o, &kb);
	struct kernel_dist kd;
	kernel_dist_run(&kb, &kd);
	CHECK_INT(kd.nrows, 9);
	for (size_t k = 0; k < kd.nrows; k++) {
		CHECK(strcmp(kd.rows[k].name, "others") != 0);
		CHECK_INT(kd.rows[k].count, 1);
		CHECK_NEAR(kd.rows[k].spread, 1.0, 1e-12);
	}
	kernel_dist_free(&kd);
	kernel_breakdown_free(&kb);
	trace_set_free(&set);
	buf_free(&path);
}

/* Overlapping types on three streams, a touching tie at t=300 (no zero row)
 * and numpy's half-to-even rounding of the percentages:
 *   comp [0,100) [150,250) [250,300); comm [50,200); mem [90,160) [300,320)
 * gives COMPUTATION 150, COMP+COMM 80, all three 20, COMM+MEM 50, MEMORY 20
 * of 320: 46.875 -> 46.9, 25.0, 6.25 -> 6.2 (twice), 15.625 -> 15.6.
 * Overlap: comm 150 us, 100 of them with computation -> 66.67 %. */
TEST(analyze_kernels_overlap_synthetic)
{
	const struct ev ev[] = {
		{"aten::mm", 0, 400, -1},
		{"gemm", 0, 100, 7},
		{"gemm", 150, 100, 7},
		{"gemm2", 250, 50, 7},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 50, 150, 8},
		{"Memcpy HtoD (Pageable -> Device)", 90, 70, 9},
		{"Memcpy DtoH (Device -> Pageable)", 300, 20, 9},
	};
	struct buf path = BUF_INIT;
	write_trace(test_tmpdir(), "ov.json", 3, ev, sizeof ev / sizeof ev[0], &path);
	struct trace_set set;
	load_path(path.data, &set);
	REQUIRE(set.nranks == 1);
	CHECK_INT(set.ranks[0]->rank, 3);

	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	struct kernel_breakdown kb;
	kernel_breakdown_run(&set, &o, &kb);
	CHECK_INT(kb.ntypes, 5);
	static const struct {
		const char *label;
		double sum, pct;
	} want[] = {
		{"COMPUTATION", 150, 46.9},
		{"COMPUTATION overlapping COMMUNICATION", 80, 25.0},
		{"COMPUTATION overlapping COMMUNICATION overlapping MEMORY", 20, 6.2},
		{"COMMUNICATION overlapping MEMORY", 50, 15.6},
		{"MEMORY", 20, 6.2},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const struct kernel_type_row *t = type_row(&kb, want[i].label);
		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK_NEAR(t->sum, want[i].sum, 1e-12);
		CHECK_NEAR(t->percentage, want[i].pct, 1e-12);
	}
	CHECK(type_row(&kb, "COMPUTATION overlapping MEMORY") == NULL);
	/* metrics: the CPU op is not a GPU row; memory kernels included */
	CHECK_INT(kb.nmetrics, 5);
	CHECK_STR(kb.metrics[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	CHECK_STR(kb.metrics[1].name, "gemm");
	CHECK_NEAR(kb.metrics[1].sum, 200, 1e-12);
	CHECK_STR(kb.metrics[3].name, "Memcpy DtoH (Device -> Pageable)");
	CHECK_INT(kb.metrics[4].rank, 3);
	kernel_breakdown_free(&kb);

	o.include_memory = false;
	kernel_breakdown_run(&set, &o, &kb);
	/* comp [0,100) [150,300), comm [50,200) */
	CHECK_INT(kb.ntypes, 3);
	CHECK_INT(kb.nmetrics, 3);
	CHECK_NEAR(type_row(&kb, "COMPUTATION")->sum, 150, 1e-12);
	CHECK_NEAR(type_row(&kb, "COMPUTATION overlapping COMMUNICATION")->sum, 100, 1e-12);
	CHECK_NEAR(type_row(&kb, "COMMUNICATION")->sum, 50, 1e-12);
	kernel_breakdown_free(&kb);

	struct overlap_result ov;
	overlap_run(&set, &ov);
	REQUIRE(ov.nrows == 1);
	CHECK_INT(ov.rows[0].rank, 3);
	CHECK_NEAR(ov.rows[0].comm_time, 150, 1e-12);
	CHECK_NEAR(ov.rows[0].overlap_time, 100, 1e-12);
	CHECK_NEAR(ov.rows[0].pctg, 66.67, 1e-12);
	CHECK_INT(ov.rows[0].comm_kernels, 1);
	CHECK_INT(ov.rows[0].comp_kernels, 3);
	overlap_free(&ov);
	trace_set_free(&set);
	buf_free(&path);
}

/* A rank without communication kernels has NaN (HTA's empty field), a rank
 * without GPU rows gives no breakdown rows at all; HTA's classification
 * counts SyncBN kernels as OTHER (never reported) and hip* as communication;
 * the fixed rules do not. */
TEST(analyze_kernels_nan_and_fixed_rules)
{
	const struct ev ev0[] = {
		{"aten::add", 0, 50, -1},
		{"SyncBNForwardKernel", 0, 10, 7},
		{"hipMemcpyWithStream", 20, 10, 7},
		{"add_kernel", 40, 10, 7},
	};
	const struct ev ev1[] = {{"aten::add", 5, 50, -1}};
	char dir[600];
	snprintf(dir, sizeof dir, "%s/two", test_tmpdir());
	struct buf cmd = BUF_INIT;
	buf_printf(&cmd, "mkdir -p '%s'", dir);
	REQUIRE(system(cmd.data) == 0);
	buf_free(&cmd);
	struct buf path = BUF_INIT;
	write_trace(dir, "rank0.json", 0, ev0, 4, &path);
	write_trace(dir, "rank1.json", 1, ev1, 1, &path);
	struct trace_set set;
	load_path(dir, &set);
	REQUIRE(set.nranks == 2);

	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	struct kernel_breakdown kb;
	kernel_breakdown_run(&set, &o, &kb);
	/* HTA: hipMemcpy... is COMMUNICATION, SyncBN is OTHER */
	CHECK_INT(kb.ntypes, 2);
	CHECK_NEAR(type_row(&kb, "COMMUNICATION")->sum, 10, 1e-12);
	CHECK_NEAR(type_row(&kb, "COMPUTATION")->sum, 10, 1e-12);
	CHECK_INT(kb.nmetrics, 2);
	CHECK_STR(kb.metrics[0].name, "hipMemcpyWithStream");
	CHECK_STR(trace_ktype_name(kb.metrics[0].type), "COMMUNICATION");
	kernel_breakdown_free(&kb);

	struct overlap_result ov;
	overlap_run(&set, &ov);
	REQUIRE(ov.nrows == 2);
	CHECK_NEAR(ov.rows[0].pctg, 0.0, 1e-12); /* hip "communication" alone */
	CHECK(isnan(ov.rows[1].pctg));          /* no GPU rows at all */
	overlap_free(&ov);
	trace_set_free(&set);

	/* the same traces loaded with the fixed classification */
	struct trace_load_opts lo = {.fixed_classification = true};
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, dir, &lo, &err) == 0);
	buf_free(&err);
	kernel_breakdown_run(&set, &o, &kb);
	CHECK(type_row(&kb, "COMMUNICATION") == NULL);
	CHECK_NEAR(type_row(&kb, "MEMORY")->sum, 10, 1e-12);
	CHECK_NEAR(type_row(&kb, "COMPUTATION")->sum, 20, 1e-12);
	CHECK_INT(kb.nmetrics, 3);
	kernel_breakdown_free(&kb);
	overlap_run(&set, &ov);
	CHECK(isnan(ov.rows[0].pctg)); /* fixed: no communication left */
	CHECK(isnan(ov.rows[1].pctg));
	overlap_free(&ov);
	trace_set_free(&set);
	buf_free(&path);
}

/* ns-resolution traces: HTA ceils ts and floors ts + dur, so a kernel of
 * 0.3 us starting at 200.5 becomes ts 201, dur -1, and HTA's sums include
 * that -1. */
TEST(analyze_kernels_ns_rounding)
{
	const struct ev ev[] = {
		{"k", 0.25, 100.5, 7},  /* ts 1, end floor(100.75) = 100: dur 99 */
		{"k", 200.5, 0.3, 7},   /* ts 201, end 200: dur -1 */
		{"nccl_x", 0.5, 49.5, 8}, /* ts 1, end 50: dur 49 */
	};
	struct buf path = BUF_INIT;
	write_trace(test_tmpdir(), "ns.json", 0, ev, 3, &path);
	struct trace_set set;
	load_path(path.data, &set);
	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	struct kernel_breakdown kb;
	kernel_breakdown_run(&set, &o, &kb);
	REQUIRE(kb.nmetrics == 2);
	CHECK_STR(kb.metrics[1].name, "k");
	CHECK_NEAR(kb.metrics[1].sum, 98, 1e-12);
	CHECK_NEAR(kb.metrics[1].min, -1, 1e-12);
	CHECK_NEAR(kb.metrics[1].max, 99, 1e-12);
	/* comp [1,100) [201,200), comm [1,50): the running sum is -1 on
	 * [200,201), a segment HTA drops (it keeps positive sums only) */
	CHECK_INT(kb.ntypes, 2);
	CHECK_NEAR(type_row(&kb, "COMPUTATION")->sum, 50, 1e-12);
	CHECK_NEAR(type_row(&kb, "COMPUTATION")->percentage, 50.5, 1e-12);
	CHECK_NEAR(type_row(&kb, "COMPUTATION overlapping COMMUNICATION")->sum, 49, 1e-12);
	CHECK(type_row(&kb, "COMPUTATION overlapping COMMUNICATION overlapping MEMORY") == NULL);
	struct overlap_result ov;
	overlap_run(&set, &ov);
	CHECK_NEAR(ov.rows[0].pctg, 100.0, 1e-12); /* [1,50) inside [1,100) */
	overlap_free(&ov);
	kernel_breakdown_free(&kb);
	trace_set_free(&set);
	buf_free(&path);
}

/* The tables honour --ranks (a view of the set), and say so when none of
 * the asked ranks is in the trace instead of printing an empty result. */
TEST(analyze_kernel_tables_rank_selection)
{
	const struct ev ev0[] = {{"gemm", 0, 10, 7}, {"ncclKernel_x", 5, 10, 8}};
	const struct ev ev1[] = {{"gemm", 0, 30, 7}, {"ncclKernel_x", 40, 10, 8}};
	char dir[600];
	snprintf(dir, sizeof dir, "%s/sel", test_tmpdir());
	struct buf cmd = BUF_INIT;
	buf_printf(&cmd, "mkdir -p '%s'", dir);
	REQUIRE(system(cmd.data) == 0);
	buf_free(&cmd);
	struct buf path = BUF_INIT;
	write_trace(dir, "rank0.json", 0, ev0, 2, &path);
	write_trace(dir, "rank1.json", 1, ev1, 2, &path);
	struct trace_set set;
	load_path(dir, &set);
	REQUIRE(set.nranks == 2);

	const int one[] = {1}, none[] = {7};
	struct analyze_ranks sel1 = {one, 1}, sel7 = {none, 1};
	struct atable *t = analyze_overlap(&set, &sel1);
	REQUIRE(t->nrows == 1);
	CHECK_INT(atable_cell(t, 0, 0)->i, 1);
	CHECK_NEAR(atable_cell(t, 0, 1)->f, 0.0, 1e-12); /* comm [40,50) after gemm [0,30) */
	atable_free(t);
	t = analyze_overlap(&set, NULL);
	REQUIRE(t->nrows == 2);
	CHECK_NEAR(atable_cell(t, 0, 1)->f, 50.0, 1e-12); /* rank 0: [5,10) of [5,15) */
	atable_free(t);

	struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	struct atable *types, *metrics;
	analyze_kernels(&set, &sel7, &o, &types, &metrics);
	CHECK_INT(types->nrows, 0);
	CHECK_INT(metrics->nrows, 0);
	CHECK(strstr(types->notes.data, "none of the selected ranks") != NULL);
	atable_free(types);
	atable_free(metrics);
	analyze_kernels(&set, &sel1, &o, &types, &metrics);
	CHECK_INT(metrics->nrows, 2);
	for (size_t i = 0; i < metrics->nrows; i++)
		CHECK_INT(atable_cell(metrics, i, 7)->i, 1);
	atable_free(types);
	atable_free(metrics);

	struct atable *dist, *spread;
	analyze_kernel_distribution(&set, NULL, &o, &dist, &spread);
	CHECK_INT(dist->nrows, 4);
	REQUIRE(spread->nrows == 2);
	/* gemm: rank 0 mean 10, rank 1 mean 30 -> spread 3, first */
	CHECK_STR(atable_cell(spread, 0, 0)->s, "gemm");
	CHECK_INT(atable_cell(spread, 0, 3)->i, 0);
	CHECK_INT(atable_cell(spread, 0, 5)->i, 1);
	CHECK_NEAR(atable_cell(spread, 0, 7)->f, 3.0, 1e-12);
	CHECK_NEAR(atable_cell(spread, 1, 7)->f, 1.0, 1e-12);
	atable_free(dist);
	atable_free(spread);
	trace_set_free(&set);
	buf_free(&path);
}
