/*
 * warehouse_bench.c - report latency of `dyno warehouse` on a warehouse
 * of many traces (bench/warehouse.sh runs it on SQLite and PostgreSQL):
 *
 *   build/bench/warehouse_bench --db SPEC --template TRACE [--traces N]
 *
 * The N traces (default 10,000) are synthesized from one real trace's
 * figures (wh_trace_extract on TEMPLATE): each copy gets its own hash,
 * one of 100 jobs and 16 hosts, a start an hour after the previous
 * one's, every kernel's figures scaled by a jitter of up to 10% and, in
 * the newest 1%, one kernel 10x slower.  They go in through the real
 * writer (wh_trace_store, one transaction each) but without parsing N
 * files.  Then each report runs 3 times (wh_report, the command's own
 * code, its output rendered as a table) and the best wall time is printed
 * with its ratio to the 1 s target.  Prints figures; never fails on speed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/wh_report.h"
#include "fleet/wh_trace.h"
#include "core/clock.h"

static uint64_t rng = 88172645463325252ULL;
static double unit(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
	const char *db_spec = NULL, *tmpl = NULL;
	long n = 10000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--db") == 0)
			db_spec = argv[i + 1];
		else if (strcmp(argv[i], "--template") == 0)
			tmpl = argv[i + 1];
		else if (strcmp(argv[i], "--traces") == 0)
			n = strtol(argv[i + 1], NULL, 10);
	}
	if (!db_spec || !tmpl || n < 1) {
		fprintf(stderr, "usage: warehouse_bench --db SPEC --template TRACE [--traces N]\n");
		return 2;
	}
	struct wh_trace base = {.path = xstrdup(tmpl)};
	wh_trace_extract(&base);
	if (base.failed || base.nkernels == 0) {
		fprintf(stderr, "warehouse_bench: %s: %s\n", tmpl, base.failed ? base.error : "no kernels");
		return 1;
	}
	struct wh_db db;
	struct buf err = BUF_INIT;
	if (wh_db_open(&db, db_spec, &err) != 0) {
		fprintf(stderr, "%s\n", err.data);
		return 1;
	}
	/* the copies share base's strings; only numbers change */
	struct wh_trace t = base;
	t.kernels = xmalloc(base.nkernels * sizeof *t.kernels);
	char job[32], host[32];
	t.job = job, t.host = host;
	int64_t t0 = clock_mono_ns(), start0 = base.start_ns;
	for (long i = 0; i < n; i++) {
		/* a hash of its own (the id is its first 63 bits) */
		snprintf(t.hash, sizeof t.hash, "%016llx%016llx", (unsigned long long)(i * 0x9e3779b97f4a7c15ULL),
			 (unsigned long long)i);
		snprintf(job, sizeof job, "job%03ld", i % 100);
		snprintf(host, sizeof host, "host%02ld", i % 16);
		t.start_ns = start0 + i * 3600LL * 1000000000LL;
		t.rank = (int)(i % 8);
		for (size_t k = 0; k < base.nkernels; k++) {
			double f = 1 + 0.1 * (2 * unit() - 1);
			if (k == 0 && i >= n - n / 100)
				f *= 10;
			t.kernels[k] = base.kernels[k];
			t.kernels[k].total_us *= f, t.kernels[k].mean_us *= f, t.kernels[k].min_us *= f;
			t.kernels[k].max_us *= f, t.kernels[k].p50_us *= f, t.kernels[k].p95_us *= f;
		}
		if (wh_trace_store(&db, &t, clock_wall_ns(), &err) != 0) {
			fprintf(stderr, "%s\n", err.data);
			return 1;
		}
	}
	double synth = (double)(clock_mono_ns() - t0) / 1e9;
	printf("%s: %ld traces (%zu kernels each, %ld kernel rows) written in %.1f s (%.0f traces/s through "
	       "wh_trace_store)\n",
	       db.be->name, n, base.nkernels, n * (long)base.nkernels, synth, (double)n / synth);
	struct {
		const char *name;
		enum wh_report_kind kind;
		const char *job;
	} reps[] = {
		{"top-kernels", WH_REPORT_TOP_KERNELS, NULL}, {"by-type", WH_REPORT_BY_TYPE, NULL},
		{"jobs", WH_REPORT_JOBS, NULL},		      {"job job007", WH_REPORT_JOBS, "job007"},
		{"regressions", WH_REPORT_REGRESSIONS, NULL},
	};
	printf("%-14s %10s %12s %8s\n", "report", "rows", "best_ms", "x_1s");
	for (size_t r = 0; r < sizeof reps / sizeof reps[0]; r++) {
		struct wh_report_opts o = WH_REPORT_OPTS_INIT;
		o.kind = reps[r].kind;
		o.job = reps[r].job;
		double best = INFINITY;
		size_t rows = 0;
		for (int k = 0; k < 3; k++) {
			struct buf out = BUF_INIT;
			int64_t a = clock_mono_ns();
			struct atable *tb = wh_report(&db, &o, &err);
			if (!tb) {
				fprintf(stderr, "%s: %s\n", reps[r].name, err.data);
				return 1;
			}
			atable_render(tb, AFMT_TABLE, &out);
			double s = (double)(clock_mono_ns() - a) / 1e9;
			best = s < best ? s : best;
			rows = tb->nrows;
			atable_free(tb);
			buf_free(&out);
		}
		printf("%-14s %10zu %12.1f %8.2f\n", reps[r].name, rows, best * 1e3, best / 1.0);
	}
	free(t.kernels);
	wh_db_close(&db);
	wh_trace_free(&base);
	buf_free(&err);
	return 0;
}
