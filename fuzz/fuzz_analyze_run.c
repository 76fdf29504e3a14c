/*
 * fuzz_analyze_run.c - libFuzzer target for the parallel after-parse path:
 * any bytes through trace_rank_load_mem (two threads allowed), the set steps
 * (including the MTIA filter rule when the trace says MTIA) and analyze_run
 * with every analysis on two threads; nothing may crash, hang or leak, and
 * the tables must render.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "trace/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf err = BUF_INIT;
	struct trace_load_opts o = {.skip_cpu_ops = (size & 1) != 0, .threads = 2};
	struct trace_rank *r = trace_rank_load_mem("fuzz_rank-0.json", data, size, &o, &err);
	buf_free(&err);
	if (!r)
		return 0;
	struct trace_set set;
	trace_set_from_rank(&set, r, &o);
	struct analyze_run_opts ro = {.which = AN_ALL, .delay = 30, .idle_stats = true,
				      .kernels = KERNEL_BREAKDOWN_OPTS_DEFAULT, .launch = {50, 100, true},
				      .threads = 2};
	ro.kernels.num_kernels = 2;
	struct analyze_results res;
	analyze_run(&set, NULL, &ro, &res);
	struct buf out = BUF_INIT;
	struct atable *ts[] = {res.temporal, res.idle, res.idle_stats, res.ktypes,
			       res.kmetrics, res.kdist, res.kspread, res.overlap};
	for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
		if (ts[i])
			atable_render(ts[i], AFMT_CSV, &out);
	for (size_t i = 0; i < res.nlaunch; i++)
		atable_render(res.launch[i], AFMT_JSON, &out);
	buf_free(&out);
	analyze_results_free(&res);
	trace_set_free(&set);
	return 0;
}
