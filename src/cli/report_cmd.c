/*
 * report_cmd.c - `dyno report TRACE_OR_DIR... -o report.html`: its
 * options; the page is src/report/report.c (docs/report.md).
 */
#include "cli/commands.h"
#include "core/args.h"
#include "report/report.h"

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {.link_gbps = 25};
	const struct arg_opt opts[] = {
		{"output", 'o', ARG_STRING, &o.out, "FILE", "the HTML file to write (required)", 0, 0, NULL},
		{"metrics", 0, ARG_STRING, &o.metrics, "FILE",
		 "host metrics of the same window (dyno metrics --json output or dynolog's JSON log)", 0, 0, NULL},
		{"link-gbps", 0, ARG_DOUBLE, &o.link_gbps, "GBPS",
		 "host<->device link bandwidth the copies are compared with (25: PCIe 4.0 x16)", 0, 0, NULL},
		{"critical-path", 0, ARG_BOOL, &o.cp, NULL,
		 "compute the critical path even on a big rank (default: up to 1,000,000 events)", 0, 0, NULL},
		{"no-critical-path", 0, ARG_BOOL, &o.no_cp, NULL, "do not compute the critical path", 0, 0, NULL},
		{"keep-last-step", 0, ARG_BOOL, &o.keep_last_step, NULL, "do not drop the last ProfilerStep (HTA drops it)",
		 0, 0, NULL},
		{"ranks", 0, ARG_STRING, &o.ranks, "LIST", "report only these ranks (e.g. 0,3); default all", 0, 0, NULL},
		{"iterations", 0, ARG_STRING, &o.iterations, "N[-M]",
		 "report only the events of ProfilerStep#N..M (e.g. 3-5, or 3)", 0, 0, NULL},
		{"time-range", 0, ARG_STRING, &o.time_range, "START:END",
		 "report only the events starting in [START, END) us from the trace start", 0, 0, NULL},
		{"threads", 'j', ARG_INT, &o.threads, "N", "threads for loading and the analyses (0 = number of cores)", 0,
		 1024, NULL},
		{"quiet", 'q', ARG_BOOL, &o.quiet, NULL, "nothing on stderr but errors", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno report",
		.usage = "dyno report TRACE_OR_DIR... -o report.html [options]",
		.description = "Write one self-contained HTML report of Kineto traces (a file, a directory of per-rank\n"
			       "traces, or several files of one job): the insights first (dyno analyze insights),\n"
			       "then the tables and charts behind them. No script, no network: it opens offline,\n"
			       "as an e-mail attachment and in print.",
		.opts = opts,
		.min_pos = 1,
		.max_pos = ARGS_ANY,
		.missing_error = "expected TRACE_OR_DIR (see --help)",
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = report_run(&o, a.pos, a.npos);
	args_free(&a);
	return rc;
}
