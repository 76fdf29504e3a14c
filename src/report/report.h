/*
 * report.h - the engine of `dyno report` (report.c; the command's options
 * are src/cli/report_cmd.c): Kineto traces in, one self-contained HTML page
 * out (docs/report.md).
 */
#ifndef DYNO_REPORT_REPORT_H
#define DYNO_REPORT_REPORT_H

#include <stdbool.h>
#include <stdint.h>

/* dyno report's options, as its command line gives them */
struct report_opts {
	const char *out, *metrics;
	const char *ranks, *iterations, *time_range; /* the row filters of dyno analyze */
	double link_gbps;
	int64_t threads;
	bool quiet, cp, no_cp, keep_last_step;
};

/* Load the traces pos[0..npos) (files or directories), run the analyses
 * and write the page to o->out.  Errors and, unless o->quiet, progress go
 * to stderr prefixed "dyno report: ".  Returns the command's exit status:
 * 0 written, 1 nothing loadable, 2 a usage error (no -o, a bad filter, a
 * rank not in the inputs), 3 written from damaged or unreadable traces,
 * 4 the filters selected nothing. */
int report_run(const struct report_opts *o, char *const *pos, int npos);

#endif
