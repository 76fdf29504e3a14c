/*
 * run.h - runs analyses of the table (analysis.h) over a loaded set, each
 * rank of each on a thread of a pool (run.c), and hands back their tables
 * as one list in output order.  The tables are the same, byte for byte, as
 * those of the plain functions over the same selection, for any thread
 * count.
 */
#ifndef DYNO_ANALYZE_RUN_H
#define DYNO_ANALYZE_RUN_H

#include "analyze/analysis.h"

struct analyze_run_opts {
	const struct analysis *only;          /* NULL: every analysis (summary) */
	const struct analysis_config *config; /* every analysis's options */
	enum aformat fmt;                     /* decides which tables are shown */
	bool every_table;                     /* compute every table, shown or not (--csv-dir) */
	int threads;                          /* <= 0: the number of online cores */
	/* the second set of an analysis of two (.pair: diff's TEST; the first
	 * is CONTROL); its ranks are selected like the first's.  NULL: the
	 * first set on both sides */
	const struct trace_set *test;
};

/* One output table. */
struct analyze_result {
	struct atable *t;
	const struct analysis *analysis;
	const struct analysis_table *table;
	char *name; /* the CSV file name without ".csv" (the rank appended for per_rank tables) */
	bool shown; /* on stdout; else for --csv-dir only */
};

/* Wall time of one task: what ran, on which rank (-1: all ranks). */
struct analyze_timing {
	const char *what; /* static text */
	const char *phase; /* NULL for a rank task; "combine", "tables" */
	int rank;
	double s;
};

/* An analysis summary did not run, and why (its .skip). */
struct analyze_skipped {
	const struct analysis *analysis;
	const char *why; /* static text */
};

struct analyze_results {
	struct analyze_result *v; /* in output order */
	size_t n;
	struct analyze_skipped *skipped; /* summary: in table order */
	size_t nskipped;
	struct analyze_timing *timings;
	size_t ntimings;
	double wall_s; /* the whole of analyze_run */
	/* the analysis asked for by name (.only) is undefined on every
	 * selected rank (its .skip): why.  It still ran (its notes say so per
	 * rank); `dyno analyze` exits 4.  NULL: defined, or summary */
	const char *undefined;
};

void analyze_run(const struct trace_set *set, const struct analyze_ranks *sel, const struct analyze_run_opts *o,
		 struct analyze_results *out);
void analyze_results_free(struct analyze_results *r);

#endif
