/*
 * report.h - gpusnoop's leak report at exit: the live allocations of the
 * ledger grouped by stack, largest first, each stack symbolized, with the
 * totals and every count of what was lost (ring-buffer drops, calls the
 * probes could not follow) so a report with losses says so.  As a table
 * (people) or one JSON object (scripts).
 */
#ifndef DYNO_GPUSNOOP_REPORT_H
#define DYNO_GPUSNOOP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "gpusnoop/ledger.h"
#include "gpusnoop/symbolize.h"

/* Fills up to max return addresses of a stack id; returns how many (0: unknown). */
typedef int (*report_stack_fn)(void *ctx, int32_t stack_id, uint64_t *ips, int max);

struct report_in {
	int pid;
	double seconds;
	const char *end_reason; /* "duration", "interrupted", "process exited" */
	const struct ledger *ledger;
	uint64_t counters[CNT_COUNT];
	int probes, files;
	report_stack_fn stack;
	void *stack_ctx;
	struct symbolizer *sym;
};

void report_write(FILE *f, const struct report_in *in, bool json);

#endif
