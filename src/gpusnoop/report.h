/*
 * report.h - gpusnoop's report at exit: what was watched, every count of
 * what was lost (ring-buffer drops, calls the probes could not follow) so
 * a report with losses says so; for memory the live allocations of the
 * ledger grouped by stack, largest first; for launches the counts and
 * rates per entry point; for synchronisations the counts, the time waited
 * and the stacks that synchronised most.  Each stack symbolized.  As a
 * table (people) or one JSON object (scripts).  A part not watched is
 * absent, not zero.
 */
#ifndef DYNO_GPUSNOOP_REPORT_H
#define DYNO_GPUSNOOP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/buf.h"
#include "gpusnoop/calls.h"
#include "gpusnoop/ledger.h"
#include "gpusnoop/symbolize.h"

/* Fills up to max return addresses of a stack id; returns how many (0: unknown). */
typedef int (*report_stack_fn)(void *ctx, int32_t stack_id, uint64_t *ips, int max);

struct report_in {
	int pid;
	double seconds;
	const char *end_reason; /* "duration", "interrupted", "process exited" */
	unsigned groups;        /* GROUP_* watched (probes.h) */
	const struct ledger *ledger;
	const struct calls *calls;
	uint64_t counters[CNT_COUNT];
	int probes, files;
	int probes_stepped;     /* entry probes on an instruction the kernel single-steps (probes.h) */
	/* --launch-sample (sampler.h): the share asked, the seconds the launch
	 * probes counted, and whether time was left out (the launch counts are
	 * then scaled by seconds / launch_on_s) */
	int launch_pct;
	double launch_on_s;
	bool launch_sampled;
	size_t top;             /* sync stacks shown (all leaks are) */
	report_stack_fn stack;
	void *stack_ctx;
	struct symbolizer *sym;
	/* records the timeline's ledger or sync table refused (--trace) */
	uint64_t timeline_invalid;
	/* the live table's groups (from the kernel's per-stack totals, largest
	 * first, no fn_mask); NULL: the ledger's own */
	const struct ledger_leak *live_groups;
	size_t nlive_groups;
};

void report_write(FILE *f, const struct report_in *in, bool json);

/* One frame as the table shows it: "fn (file:line)", "fn+0x..", "module+0x..", "0x..". */
void report_frame_text(struct buf *b, const struct sym_frame *fr, uint64_t ip);

#endif
