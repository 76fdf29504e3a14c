/*
 * fuzz_trace_load.c - libFuzzer target for the trace loader: any bytes
 * (plain JSON or gzip, detected by magic) through trace_rank_load_mem, then
 * the cross-rank steps and every analysis, which must not crash, hang or
 * leak whatever the loader kept.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyze/analysis.h"
#include "trace/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf err = BUF_INIT;
	struct trace_load_opts o = {.keep_python = (size & 1) != 0};
	struct trace_rank *r = trace_rank_load_mem("fuzz_rank-1.json", data, size, &o, &err);
	buf_free(&err);
	if (!r)
		return 0;
	struct buf d = BUF_INIT;
	trace_load_stats_describe(r, &d);
	buf_free(&d);
	struct trace_set set;
	trace_set_from_rank(&set, r, &o);
	struct atable *t = analyze_temporal(&set, NULL);
	atable_free(t);
	struct atable *st = NULL;
	t = analyze_idle(&set, NULL, 30, &st);
	struct buf out = BUF_INIT;
	atable_render(t, AFMT_JSON, &out);
	atable_render(st, AFMT_TABLE, &out);
	atable_free(t);
	atable_free(st);
	struct kernel_breakdown_opts ko = KERNEL_BREAKDOWN_OPTS_DEFAULT;
	ko.num_kernels = 3;
	struct atable *m, *kd, *ks;
	analyze_kernels(&set, NULL, &ko, &t, &m);
	analyze_kernel_distribution(&set, NULL, &ko, &kd, &ks);
	atable_render(t, AFMT_CSV, &out);
	atable_render(m, AFMT_CSV, &out);
	atable_render(kd, AFMT_TABLE, &out);
	atable_render(ks, AFMT_JSON, &out);
	atable_free(t);
	atable_free(m);
	atable_free(kd);
	atable_free(ks);
	t = analyze_overlap(&set, NULL);
	atable_render(t, AFMT_JSON, &out);
	atable_free(t);
	struct launch_opts lo = {50, 100, true};
	struct atable **ts;
	size_t n = analyze_launch(&set, NULL, &lo, &ts);
	for (size_t i = 0; i < n; i++) {
		atable_render(ts[i], AFMT_CSV, &out);
		atable_free(ts[i]);
	}
	free(ts);
	buf_free(&out);
	trace_set_free(&set);
	return 0;
}
