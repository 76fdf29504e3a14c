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

#include "analyze/distribution.h"
#include "analyze/kernels.h"
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
		overlap_run(&set, false, &ov);
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
