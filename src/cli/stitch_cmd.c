/*
 * stitch_cmd.c - `dyno stitch DIR_OR_FILES... -o OUT.json[.gz]`: its
 * options; the merge itself is src/fleet/stitch.c (docs/fleet.md).
 */
#include <stdio.h>

#include "cli/commands.h"
#include "core/args.h"
#include "fleet/stitch.h"

int cmd_stitch(int argc, char **argv)
{
	const char *out = NULL, *offsets = NULL;
	bool quiet = false;
	const struct arg_opt opts[] = {
		{"output", 'o', ARG_STRING, &out, "OUT", "the stitched trace (gzip when it ends in .gz; required)", 0, 0, NULL},
		{"offset", 0, ARG_STRING, &offsets, "FILE=US,...",
		 "move an input's events by US microseconds more (a host clock known to be off)", 0, 0, NULL},
		{"quiet", 'q', ARG_BOOL, &quiet, NULL, "no table of inputs on stdout", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno stitch",
		.usage = "dyno stitch DIR_OR_FILES... -o OUT.json[.gz] [--offset FILE=US,...]",
		.description =
			"Merge the per-rank Kineto traces (and gpusnoop --trace timelines) of one collection into one\n"
			"trace Perfetto opens: each input's processes get their own pids, named and sorted per input\n"
			"(\"rank 3 (file): GPU 0\"), times aligned on each file's baseTimeNanoseconds, flow ids kept\n"
			"apart; every event is kept.  A directory stands for its *.json / *.json.gz files.",
		.opts = opts,
		.min_pos = 1,
		.max_pos = ARGS_ANY,
		.missing_error = "no trace given (see --help)",
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = stitch_run(a.pos, a.npos, out, offsets, quiet);
	args_free(&a);
	return rc;
}
