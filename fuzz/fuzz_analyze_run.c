/*
 * fuzz_analyze_run.c - libFuzzer target for the parallel after-parse path:
 * any bytes through trace_rank_load_mem (two threads allowed), the set steps
 * (including the MTIA filter rule when the trace says MTIA) and analyze_run
 * with every analysis of the table on two threads (summary, then each
 * analysis summary skipped run alone, then each that runs only by name;
 * an analysis of two sets, `diff`, on the trace against itself, so that
 * every analysis sees every input); nothing may crash, hang or leak, and
 * the tables must render.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyze/run.h"
#include "trace/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf err = BUF_INIT;
	struct trace_load_opts o = {.skip_cpu_ops = (size & 1) != 0, .keep_user_annotations = (size & 2) != 0,
				    .keep_event_waits = (size & 4) != 0,
				    .keep_profiler_args = (size & 8) != 0, .keep_kernel_occupancy = (size & 16) != 0,
				    .threads = 2};
	struct trace_rank *r = trace_rank_load_mem("fuzz_rank-0.json", data, size, &o, &err);
	buf_free(&err);
	if (!r)
		return 0;
	struct trace_set set;
	trace_set_from_rank(&set, r, &o);
	/* every analysis of the table, every table, with the kernel folding on
	 * (two kernels per type) so that it runs on tiny traces */
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	struct kernel_step_options *ko = analysis_config_opts(&cfg, &analysis_step_kernel_breakdown.opts);
	ko->num_kernels = 2;
	/* patterns needs an operator name: a short one that many names
	 * contain, and patterns of one kernel, so that it runs on tiny traces */
	struct patterns_options *pa = analysis_config_opts(&cfg, &analysis_patterns.opts);
	pa->op = (size & 4) ? "a" : "aten::";
	pa->min_len = 1;
	struct analyze_run_opts ro = {.config = &cfg, .fmt = AFMT_CSV, .every_table = true, .threads = 2};
	struct analyze_results res;
	analyze_run(&set, NULL, &ro, &res);
	struct buf out = BUF_INIT;
	for (size_t i = 0; i < res.n; i++)
		atable_render(res.v[i].t, res.v[i].table->per_rank ? AFMT_JSON : AFMT_CSV, &out);
	/* what summary skipped, alone; then what runs only by name */
	for (size_t k = 0; k < res.nskipped + ANALYSIS_COUNT; k++) {
		struct analyze_run_opts po = ro;
		if (k < res.nskipped) {
			po.only = res.skipped[k].analysis;
		} else {
			po.only = analysis_list[k - res.nskipped];
			if (!po.only->own_command)
				continue;
			if (po.only->pair)
				po.test = &set;
		}
		struct analyze_results r1;
		analyze_run(&set, NULL, &po, &r1);
		for (size_t i = 0; i < r1.n; i++)
			atable_render(r1.v[i].t, r1.v[i].table->per_rank || po.test ? AFMT_JSON : AFMT_CSV, &out);
		analyze_results_free(&r1);
	}
	buf_free(&out);
	analyze_results_free(&res);
	analysis_config_free(&cfg);
	trace_set_free(&set);
	return 0;
}
