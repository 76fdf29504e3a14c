/*
 * kernels_bench.c - cost of the kernel analyses (kernel breakdown, kernel
 * duration distribution, comm/comp overlap) on a loaded trace, against the
 * load itself and against the temporal breakdown measured in the same run.
 * Not a test: it prints figures and ratios and never fails on speed.
 *
 *   build/bench/kernels_bench TRACE_OR_DIR [REPEAT]
 *
 * bench/kernels_bench.sh runs it on a real trace scaled up by trace_gen.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analysis.h"
#include "analyze/distribution.h"
#include "analyze/kernel_breakdown.h"
#include "analyze/overlap.h"
#include "core/clock.h"
#include "trace/model.h"

static double now(void)
{
	return (double)clock_mono_ns() / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: kernels_bench TRACE_OR_DIR [REPEAT]\n");
		return 2;
	}
	int rep = argc > 2 ? atoi(argv[2]) : 3;
	if (rep < 1)
		rep = 1;
	struct trace_load_opts lo = {.skip_cpu_ops = true};
	struct trace_set set;
	struct buf err = BUF_INIT;
	double t0 = now();
	if (trace_set_load(&set, argv[1], &lo, &err) != 0) {
		fprintf(stderr, "kernels_bench: %s\n", err.data);
		buf_free(&err);
		return 1;
	}
	double load = now() - t0;
	buf_free(&err);
	size_t rows = 0, gpu = 0;
	for (size_t k = 0; k < set.nranks; k++) {
		rows += set.ranks[k]->n;
		for (size_t i = 0; i < set.ranks[k]->n; i++)
			gpu += trace_is_gpu(set.ranks[k], i);
	}
	printf("%zu rank(s), %zu rows, %zu GPU rows; load %.3f s\n", set.nranks, rows, gpu, load);
	printf("%-44s %10s %12s %10s\n", "step (best of repeats)", "s", "GPU rows/s", "x load");

	double best[6];
	for (int j = 0; j < 6; j++)
		best[j] = 1e30;
	for (int it = 0; it < rep; it++) {
		double t;
		t = now();
		struct atable *tt = analyze_temporal(&set, NULL);
		best[0] = fmin(best[0], now() - t);
		atable_free(tt);

		struct kernel_breakdown_opts o = KERNEL_BREAKDOWN_OPTS_DEFAULT;
		struct kernel_breakdown kb;
		t = now();
		kernel_breakdown_run(&set, &o, &kb);
		best[1] = fmin(best[1], now() - t);
		struct kernel_dist kd;
		t = now();
		kernel_dist_run(&kb, &kd);
		best[2] = fmin(best[2], now() - t);
		kernel_dist_free(&kd);
		kernel_breakdown_free(&kb);

		o.num_kernels = 1000000000000ull;
		o.duration_ratio = 1.0;
		t = now();
		kernel_breakdown_run(&set, &o, &kb);
		best[3] = fmin(best[3], now() - t);
		kernel_breakdown_free(&kb);

		struct overlap_result ov;
		t = now();
		overlap_run(&set, &ov);
		best[4] = fmin(best[4], now() - t);
		overlap_free(&ov);

		struct atable *a, *b;
		struct buf out = BUF_INIT;
		o = (struct kernel_breakdown_opts)KERNEL_BREAKDOWN_OPTS_DEFAULT;
		t = now();
		analyze_kernels(&set, NULL, &o, &a, &b);
		atable_render(a, AFMT_CSV, &out);
		atable_render(b, AFMT_CSV, &out);
		best[5] = fmin(best[5], now() - t);
		atable_free(a);
		atable_free(b);
		buf_free(&out);
	}
	static const char *const names[6] = {
		"temporal breakdown (baseline analysis)", "kernel breakdown (HTA defaults)",
		"kernel distribution (from the breakdown)", "kernel breakdown, no folding",
		"comm/comp overlap", "kernels tables + CSV rendering",
	};
	for (int j = 0; j < 6; j++)
		printf("%-44s %10.4f %12.3g %10.3f\n", names[j], best[j], best[j] > 0 ? (double)gpu / best[j] : 0,
		       best[j] / load);
	printf("kernel breakdown / temporal breakdown: %.2f\n", best[1] / best[0]);
	printf("overlap / temporal breakdown:          %.2f\n", best[4] / best[0]);
	trace_set_free(&set);
	return 0;
}
