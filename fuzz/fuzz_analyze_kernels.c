/*
 * fuzz_analyze_kernels.c - libFuzzer target for the kernel analyses: any
 * bytes through the trace loader, then the kernel breakdown (with option
 * values taken from the input, so the "others" folding runs on tiny
 * traces), the kernel duration distribution and the comm/comp overlap, and
 * their tables in every format.  They must not crash, hang or leak, and
 * must keep their invariants (percentages sum to about 100, overlap within
 * 0..100) whatever the loader kept.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyze/distribution.h"
#include "analyze/analysis.h"
#include "analyze/overlap.h"
#include "trace/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf err = BUF_INIT;
	uint8_t last = size ? data[size - 1] : 0;
	struct trace_load_opts o = {.keep_last_step = (size & 2) != 0, .fixed_classification = (last & 32) != 0};
	struct trace_rank *r = trace_rank_load_mem("fuzz_rank-2.json", data, size, &o, &err);
	buf_free(&err);
	if (!r)
		return 0;
	struct trace_set set;
	trace_set_from_rank(&set, r, &o);

	struct kernel_breakdown_opts ko = {
		.duration_ratio = (double)(last % 11) / 10.0,
		.num_kernels = 1 + last % 4,
		.include_memory = (last & 16) == 0,
	};
	struct kernel_breakdown kb;
	kernel_breakdown_run(&set, &ko, &kb);
	double pct = 0;
	for (size_t i = 0; i < kb.ntypes; i++)
		pct += kb.types[i].percentage;
	if (kb.ntypes && (pct < 99 || pct > 101) && isfinite(pct))
		abort();
	struct kernel_dist kd;
	kernel_dist_run(&kb, &kd);
	kernel_dist_free(&kd);
	kernel_breakdown_free(&kb);

	struct overlap_result ov;
	overlap_run(&set, &ov);
	/* no range check: with dur -1 intervals (ns rounding) the merged
	 * communication time can be shorter than its overlap, as in HTA */
	for (size_t i = 0; i < ov.nrows; i++)
		if (isinf(ov.rows[i].overlap_time))
			abort();
	overlap_free(&ov);

	struct buf out = BUF_INIT;
	struct atable *a, *b;
	analyze_kernels(&set, NULL, &ko, &a, &b);
	atable_render(a, AFMT_TABLE, &out);
	atable_render(b, AFMT_CSV, &out);
	atable_free(a);
	atable_free(b);
	analyze_kernel_distribution(&set, NULL, &ko, &a, &b);
	atable_render(a, AFMT_JSON, &out);
	atable_render(b, AFMT_TABLE, &out);
	atable_free(a);
	atable_free(b);
	a = analyze_overlap(&set, NULL);
	atable_render(a, AFMT_CSV, &out);
	atable_free(a);
	buf_free(&out);
	trace_set_free(&set);
	return 0;
}
