/*
 * wh_report.h - the trace warehouse's reports (wh_report.c): one query
 * each over the database, one table for the one renderer
 * (analyze/table.h).  Declarations only.
 */
#ifndef DYNO_CLI_WH_REPORT_H
#define DYNO_CLI_WH_REPORT_H

#include <stdint.h>

#include "analyze/table.h"
#include "cli/wh_db.h"

enum wh_report_kind { WH_REPORT_TOP_KERNELS, WH_REPORT_BY_TYPE, WH_REPORT_JOBS, WH_REPORT_REGRESSIONS };

struct wh_report_opts {
	enum wh_report_kind kind;
	const char *job;        /* NULL: every job (JOBS: the per-job table; else that job's trend) */
	int64_t limit;          /* top kernels: rows */
	int64_t bucket_s;       /* by type: bucket width */
	double threshold;       /* regressions: p50 ratio to the history's median */
	double min_z;           /* regressions: robust deviations above it */
	int64_t min_history;    /* regressions: traces of history a kernel needs */
	double recent_fraction; /* regressions: the newest share of traces judged */
	int64_t since_s;        /* regressions: > 0: traces from this Unix time are judged */
};
#define WH_REPORT_OPTS_INIT                                                                          \
	{.kind = WH_REPORT_TOP_KERNELS, .limit = 20, .bucket_s = 86400, .threshold = 1.5, .min_z = 5, \
	 .min_history = 5, .recent_fraction = 0.2}

/* The report's table, or NULL with the message in err. */
struct atable *wh_report(struct wh_db *db, const struct wh_report_opts *o, struct buf *err);

#endif
