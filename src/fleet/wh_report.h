/*
 * wh_report.h - the trace warehouse's reports (wh_report.c): one query
 * each over the database, one table for the one renderer
 * (analyze/table.h).  Declarations only.
 */
#ifndef DYNO_CLI_WH_REPORT_H
#define DYNO_CLI_WH_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/table.h"
#include "fleet/wh_db.h"

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

/* A regressed kernel's per-trace p50s in time order (every trace of it
 * the report read, history and recent) and which of them it flagged. */
struct wh_reg_points {
	char *kernel;
	double history_median_us;
	size_t n;
	int64_t *start_ns;
	double *p50_us;
	bool *flagged;
};
/* The regressions table (as wh_report) and in *pts its rows' points, one
 * per table row in its order (free with wh_reg_points_free(*pts, nrows)). */
struct atable *wh_regressions(struct wh_db *db, const struct wh_report_opts *o, struct wh_reg_points **pts,
			      struct buf *err);
void wh_reg_points_free(struct wh_reg_points *p, size_t n);

/* The page of every report (wh_html.c): top kernels, GPU time by type over
 * time, per-job trends, regressions, each a chart and its table, o's
 * filters applied.  0, or -1 with the message in err. */
int wh_html_report(struct wh_db *db, const struct wh_report_opts *o, struct buf *page, struct buf *err);

#endif
