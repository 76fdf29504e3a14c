/*
 * wh_html.c - `dyno warehouse report --html FILE` (docs/fleet.md): every
 * warehouse report on one self-contained page, drawn with dyno report's
 * renderer (html.h: inline CSS and SVG, no script, no network).  The
 * sections, each its chart(s) above its table, are the tables of
 * wh_report.c as the terminal, CSV and JSON print them:
 *   regressions   the table, then each flagged kernel's p50 per trace over
 *                 time with its history's median and the flagged traces
 *                 as red dots (first: it is what a reader acts on)
 *   top kernels   a bar per kernel (a regressed one in red), the table
 *   by type       a line per kernel type over the time buckets, the table
 *   jobs          each job's mean iteration time and GPU span per trace
 *                 over time (the most recent jobs), the per-job table; with
 *                 --job J that job's traces
 * --job, --limit, --bucket-hours and the regression options apply as they
 * do to the tables.  A warehouse (or job) without traces gives a page that
 * says so.  The tables' times are the ISO texts wh_report.c wrote; the
 * charts read them back (iso_ns) so that a chart shows exactly its table.
 *
 * Cost: the reports' queries once each, plus one trend query per charted
 * job (at most MAX_JOBS); the page is built in memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/html.h"
#include "fleet/wh_report.h"
#include "core/clock.h"

#define MAX_ROWS 500       /* table rows on the page (--format csv gives them all) */
#define MAX_BARS 25        /* top kernels drawn */
#define MAX_SERIES 9       /* lines in one chart (the palette's colours) */
#define MAX_JOBS MAX_SERIES /* jobs charted */
#define MAX_REG_CHARTS 10  /* regressed kernels charted */
#define MAX_POINTS 1200

struct page {
	struct wh_db *db;
	const struct wh_report_opts *o;
	struct buf *b, *err;
	int64_t t0;      /* the charts' time origin (ns) */
	double unit_s;   /* the charts' time unit: an hour or a day */
	char xlabel[96]; /* "time since ... (hours)" */
};

/* The time (ns) of an ISO text clock_fmt_iso8601 wrote ("2026-11-22T01:25:00.123Z");
 * false for anything else (a point without it is not drawn). */
static bool iso_ns(const char *s, int64_t *ns)
{
	int y, mo, d, h, mi, sec, ms, end = 0;
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &y, &mo, &d, &h, &mi, &sec, &ms, &end) != 7 || s[end])
		return false;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
	*ns = (int64_t)timegm(&tm) * NS_PER_SEC + (int64_t)ms * NS_PER_MS;
	return true;
}

static double x_of(const struct page *p, int64_t ns)
{
	return (double)(ns - p->t0) / 1e9 / p->unit_s;
}

/* ---- series built point by point ---- */

struct lines {
	struct html_series s[MAX_SERIES];
	double *x[MAX_SERIES], *y[MAX_SERIES];
	char *name[MAX_SERIES];
	size_t ns, finite; /* finite: points to draw, all series */
};

/* A new series of at most cap points; its index. */
static size_t lines_add(struct lines *l, const char *name, size_t cap)
{
	size_t k = l->ns++;
	l->name[k] = xstrdup(name);
	l->x[k] = xmalloc((cap ? cap : 1) * sizeof(double));
	l->y[k] = xmalloc((cap ? cap : 1) * sizeof(double));
	l->s[k] = (struct html_series){.name = l->name[k], .x = l->x[k], .y = l->y[k]};
	return k;
}

/* A point; an absent value (NaN) is left out, not drawn as 0. */
static void lines_point(struct lines *l, size_t k, double x, double y)
{
	if (!isfinite(x) || !isfinite(y))
		return;
	l->x[k][l->s[k].n] = x;
	l->y[k][l->s[k].n++] = y;
	l->finite++;
}

static void lines_free(struct lines *l)
{
	for (size_t k = 0; k < l->ns; k++) {
		free(l->name[k]);
		free(l->x[k]);
		free(l->y[k]);
	}
	l->ns = l->finite = 0;
}

/* The chart, or why there is none (never an empty frame); then freed. */
static void lines_draw(struct lines *l, struct buf *b, const struct html_chart *c, const char *none)
{
	if (l->finite)
		html_line_chart(b, c, l->s, l->ns, MAX_POINTS);
	else
		html_para(b, "muted", "%s", none);
	lines_free(l);
}

static int col_of(const struct atable *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].name, name) == 0)
			return (int)c;
	return -1;
}

/* ---- the sections ---- */

/* The overview line and the charts' time axis; *any false (and the page
 * says so) when there is no trace.  0, or -1 with err. */
static int overview(struct page *p, bool *any)
{
	const struct wh_report_opts *o = p->o;
	const char *par[] = {o->job};
	struct wh_rows r;
	if (wh_db_exec(p->db,
		       o->job ? "SELECT COUNT(*), SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), COUNT(DISTINCT job),"
				" COUNT(DISTINCT host), MIN(start_ns), MAX(start_ns) FROM traces WHERE job = $1"
			      : "SELECT COUNT(*), SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), COUNT(DISTINCT job),"
				" COUNT(DISTINCT host), MIN(start_ns), MAX(start_ns) FROM traces",
		       par, o->job ? 1 : 0, &r, p->err) != 0)
		return -1;
	int64_t n = 0, failed = 0, jobs = 0, hosts = 0, lo = 0, hi = 0;
	bool ok = r.nrows == 1 && wh_cell_i64(&r, 0, 0, "overview", false, &n, p->err) &&
		  wh_cell_i64(&r, 0, 1, "overview", true, &failed, p->err) &&
		  wh_cell_i64(&r, 0, 2, "overview", false, &jobs, p->err) &&
		  wh_cell_i64(&r, 0, 3, "overview", false, &hosts, p->err) &&
		  wh_cell_i64(&r, 0, 4, "overview", true, &lo, p->err) && wh_cell_i64(&r, 0, 5, "overview", true, &hi, p->err);
	bool have_time = ok && wh_cell(&r, 0, 4) != NULL;
	wh_rows_free(&r);
	if (!ok) {
		if (!p->err->len)
			buf_puts(p->err, "overview: no answer");
		return -1;
	}
	*any = n > 0;
	if (!*any) {
		if (o->job)
			html_para(p->b, "warn", "The warehouse %s holds no trace of job %s: nothing to report.", p->db->target,
				  o->job);
		else
			html_para(p->b, "warn", "The warehouse %s holds no traces yet: nothing to report. "
						"dyno warehouse ingest TRACE_OR_DIR adds them.", p->db->target);
		return 0;
	}
	/* the origin: the first trace's bucket, so that the buckets start at >= 0 */
	int64_t bucket_ns = p->o->bucket_s * NS_PER_SEC;
	p->t0 = have_time ? lo - (((lo % bucket_ns) + bucket_ns) % bucket_ns) : 0;
	p->unit_s = have_time && hi - p->t0 > 3 * 86400 * NS_PER_SEC ? 86400 : 3600;
	char t0s[40], los[40] = "", his[40] = "";
	clock_fmt_iso8601(t0s, sizeof t0s, p->t0);
	snprintf(p->xlabel, sizeof p->xlabel, "time since %s (%s)", t0s, p->unit_s > 3600 ? "days" : "hours");
	if (have_time) {
		clock_fmt_iso8601(los, sizeof los, lo);
		clock_fmt_iso8601(his, sizeof his, hi);
	}
	html_para(p->b, "muted", "%s%s%s: %lld traces (%lld recorded as failed), %lld job%s, %lld host%s%s%s%s%s; dyno "
				 "warehouse report " DYNO_VERSION ".",
		  p->db->target, o->job ? ", job " : "", o->job ? o->job : "", (long long)n, (long long)failed,
		  (long long)jobs, jobs == 1 ? "" : "s", (long long)hosts, hosts == 1 ? "" : "s",
		  have_time ? ", from " : "", los, have_time ? " to " : "", his);
	return 0;
}

static void regression_chart(struct page *p, const struct wh_reg_points *pt, double threshold)
{
	struct lines l = {0};
	char thr_name[64];
	snprintf(thr_name, sizeof thr_name, "threshold (%.3g x the median)", threshold);
	size_t all = lines_add(&l, "p50 per trace", pt->n), med = lines_add(&l, "history median", 2),
	       thr = lines_add(&l, thr_name, 2), hit = lines_add(&l, "regressed traces", pt->n);
	/* dots: the traces of several jobs interleave in time, and a line
	 * through them would zigzag between the jobs' levels */
	l.s[all].dots = true;
	l.s[hit].highlight = l.s[hit].dots = true;
	for (size_t i = 0; i < pt->n; i++) {
		lines_point(&l, all, x_of(p, pt->start_ns[i]), pt->p50_us[i]);
		if (pt->flagged[i])
			lines_point(&l, hit, x_of(p, pt->start_ns[i]), pt->p50_us[i]);
	}
	if (pt->n) {
		double a = x_of(p, pt->start_ns[0]), z = x_of(p, pt->start_ns[pt->n - 1]);
		lines_point(&l, med, a, pt->history_median_us);
		lines_point(&l, med, z, pt->history_median_us);
		lines_point(&l, thr, a, threshold * pt->history_median_us);
		lines_point(&l, thr, z, threshold * pt->history_median_us);
	}
	struct buf title = BUF_INIT;
	buf_printf(&title, "%s: median duration (p50) per trace", pt->kernel);
	struct html_chart c = {title.data, p->xlabel, "p50 (us)"};
	lines_draw(&l, p->b, &c, "No timed trace of this kernel to chart.");
	buf_free(&title);
}

/* The regressions; *regressed gets the table (for the bars' red). */
static int section_regressions(struct page *p, struct atable **regressed)
{
	html_heading(p->b, 2, "regressions", "Regressions");
	struct wh_reg_points *pts = NULL;
	struct atable *t = wh_regressions(p->db, p->o, &pts, p->err);
	if (!t)
		return -1;
	if (t->nrows == 0) {
		html_para(p->b, NULL, "No kernel regressed against its own history.");
	} else {
		html_para(p->b, "warn", "%zu kernel%s slower than %s history: the jobs and traces that show it are in the "
					"table, each kernel's p50 per trace below (the regressed traces in red).",
			  t->nrows, t->nrows == 1 ? " is" : "s are", t->nrows == 1 ? "its" : "their");
	}
	html_table(p->b, t, MAX_ROWS);
	for (size_t i = 0; i < t->nrows && i < MAX_REG_CHARTS; i++)
		regression_chart(p, &pts[i], p->o->threshold);
	if (t->nrows > MAX_REG_CHARTS)
		html_para(p->b, "muted", "The first %d kernels charted; %zu more in the table.", MAX_REG_CHARTS,
			  t->nrows - MAX_REG_CHARTS);
	wh_reg_points_free(pts, t->nrows);
	*regressed = t;
	return 0;
}

static bool is_regressed(const struct atable *reg, const char *kernel)
{
	for (size_t i = 0; reg && i < reg->nrows; i++)
		if (strcmp(reg->cells[i * reg->ncols].s, kernel) == 0)
			return true;
	return false;
}

/* The page's report of another kind (its filters, job and time range). */
static struct atable *report_of(struct page *p, enum wh_report_kind kind)
{
	struct wh_report_opts o = *p->o;
	o.kind = kind;
	return wh_report(p->db, &o, p->err);
}

static int section_top(struct page *p, const struct atable *reg)
{
	html_heading(p->b, 2, "top-kernels", "Top kernels by fleet GPU time");
	struct atable *t = report_of(p, WH_REPORT_TOP_KERNELS);
	if (!t)
		return -1;
	int ck = col_of(t, "kernel"), cg = col_of(t, "gpu_time_s");
	if (t->nrows == 0 || ck < 0 || cg < 0) {
		html_para(p->b, "muted", "No kernel rows: the traces here have no GPU kernels (or all failed).");
	} else {
		size_t nb = t->nrows < MAX_BARS ? t->nrows : MAX_BARS;
		struct html_bar *bars = xcalloc(nb, sizeof *bars);
		for (size_t i = 0; i < nb; i++) {
			const char *k = t->cells[i * t->ncols + (size_t)ck].s;
			bars[i] = (struct html_bar){.label = k, .v = {t->cells[i * t->ncols + (size_t)cg].f},
						    .highlight = is_regressed(reg, k)};
		}
		static const char *const parts[] = {"GPU time"};
		char title[96];
		snprintf(title, sizeof title, "Kernels by GPU time over all traces (top %zu; regressed in red)", nb);
		struct html_chart c = {title, "GPU time (s)", "kernel"};
		html_bar_chart(p->b, &c, parts, 1, bars, nb);
		free(bars);
	}
	html_table(p->b, t, MAX_ROWS);
	atable_free(t);
	return 0;
}

static int section_by_type(struct page *p)
{
	html_heading(p->b, 2, "by-type", "GPU time by kernel type over time");
	struct atable *t = report_of(p, WH_REPORT_BY_TYPE);
	if (!t)
		return -1;
	int cb = col_of(t, "bucket_start"), ct = col_of(t, "kernel_type"), cg = col_of(t, "gpu_time_s");
	if (cb >= 0 && ct >= 0 && cg >= 0) {
		/* the types by their total, largest first */
		struct {
			const char *type;
			double total;
		} ty[64];
		size_t nt = 0, nbuckets = 0;
		const char *prev = NULL;
		for (size_t i = 0; i < t->nrows; i++) {
			const char *type = t->cells[i * t->ncols + (size_t)ct].s, *b = t->cells[i * t->ncols + (size_t)cb].s;
			nbuckets += !prev || strcmp(prev, b) != 0;
			prev = b;
			size_t k = 0;
			while (k < nt && strcmp(ty[k].type, type) != 0)
				k++;
			if (k == nt && nt < sizeof ty / sizeof ty[0]) {
				ty[k].type = type;
				ty[k].total = 0;
				nt++;
			}
			if (k < nt)
				ty[k].total += t->cells[i * t->ncols + (size_t)cg].f;
		}
		for (size_t i = 1; i < nt; i++) /* insertion sort: a handful of types */
			for (size_t j = i; j > 0 && ty[j].total > ty[j - 1].total; j--) {
				__typeof__(ty[0]) s = ty[j];
				ty[j] = ty[j - 1];
				ty[j - 1] = s;
			}
		size_t drawn = nt < MAX_SERIES ? nt : MAX_SERIES;
		struct lines l = {0};
		for (size_t k = 0; k < drawn; k++)
			lines_add(&l, ty[k].type, nbuckets);
		/* per bucket, every drawn type: its time, 0 when the bucket's traces had none of it */
		for (size_t i = 0; i < t->nrows;) {
			const char *b = t->cells[i * t->ncols + (size_t)cb].s;
			size_t j = i;
			while (j < t->nrows && strcmp(t->cells[j * t->ncols + (size_t)cb].s, b) == 0)
				j++;
			int64_t ns;
			if (iso_ns(b, &ns))
				for (size_t k = 0; k < drawn; k++) {
					double v = 0;
					for (size_t r = i; r < j; r++)
						if (strcmp(t->cells[r * t->ncols + (size_t)ct].s, ty[k].type) == 0)
							v = t->cells[r * t->ncols + (size_t)cg].f;
					lines_point(&l, k, x_of(p, ns), v);
				}
			i = j;
		}
		char title[128];
		snprintf(title, sizeof title, "GPU time per kernel type in %lld-hour buckets%s",
			 (long long)(p->o->bucket_s / 3600), nt > drawn ? " (the largest types)" : "");
		struct html_chart c = {title, p->xlabel, "GPU time (s)"};
		lines_draw(&l, p->b, &c, "No timed trace with kernels: nothing to chart.");
		if (nt > drawn)
			html_para(p->b, "muted", "%zu types drawn of %zu; all are in the table.", drawn, nt);
	}
	html_table(p->b, t, MAX_ROWS);
	atable_free(t);
	return 0;
}

/* One job's trend table into the two charts' series k. */
static void trend_points(struct page *p, const struct atable *t, struct lines *iter, struct lines *span, size_t k)
{
	int cs = col_of(t, "start"), ci = col_of(t, "iter_mean_us"), cg = col_of(t, "gpu_span_us");
	for (size_t i = 0; cs >= 0 && ci >= 0 && cg >= 0 && i < t->nrows; i++) {
		int64_t ns;
		if (!iso_ns(t->cells[i * t->ncols + (size_t)cs].s, &ns))
			continue; /* a trace without a start (failed): not on a time axis */
		lines_point(iter, k, x_of(p, ns), t->cells[i * t->ncols + (size_t)ci].f / 1e3);
		lines_point(span, k, x_of(p, ns), t->cells[i * t->ncols + (size_t)cg].f / 1e6);
	}
}

static void trend_charts(struct page *p, struct lines *iter, struct lines *span)
{
	struct html_chart ci = {"Mean iteration (ProfilerStep) time per trace", p->xlabel, "mean iteration (ms)"};
	lines_draw(iter, p->b, &ci, "No trace here has ProfilerSteps: no iteration times to chart.");
	struct html_chart cg = {"GPU span per trace (first to last GPU activity)", p->xlabel, "GPU span (s)"};
	lines_draw(span, p->b, &cg, "No trace here has GPU rows: no GPU span to chart.");
}

static int section_jobs(struct page *p)
{
	struct wh_report_opts o = *p->o;
	o.kind = WH_REPORT_JOBS;
	struct lines iter = {0}, span = {0};
	if (o.job) { /* that job's traces */
		html_heading(p->b, 2, "jobs", "Job trend");
		struct atable *t = wh_report(p->db, &o, p->err);
		if (!t)
			return -1;
		lines_add(&iter, o.job, t->nrows);
		lines_add(&span, o.job, t->nrows);
		trend_points(p, t, &iter, &span, 0);
		trend_charts(p, &iter, &span);
		html_table(p->b, t, MAX_ROWS);
		atable_free(t);
		return 0;
	}
	html_heading(p->b, 2, "jobs", "Per-job trends");
	struct atable *jobs = wh_report(p->db, &o, p->err);
	if (!jobs)
		return -1;
	int cj = col_of(jobs, "job");
	size_t nj = cj < 0 ? 0 : jobs->nrows < MAX_JOBS ? jobs->nrows : MAX_JOBS;
	for (size_t j = 0; j < nj; j++) { /* the table is newest first */
		o.job = jobs->cells[j * jobs->ncols + (size_t)cj].s;
		struct atable *t = wh_report(p->db, &o, p->err);
		if (!t) {
			lines_free(&iter);
			lines_free(&span);
			atable_free(jobs);
			return -1;
		}
		lines_add(&iter, o.job, t->nrows);
		lines_add(&span, o.job, t->nrows);
		trend_points(p, t, &iter, &span, j);
		atable_free(t);
	}
	trend_charts(p, &iter, &span);
	if (jobs->nrows > nj)
		html_para(p->b, "muted", "The %zu most recent jobs charted of %zu; dyno warehouse report --html --job J "
					 "gives one job's page.", nj, jobs->nrows);
	html_table(p->b, jobs, MAX_ROWS);
	atable_free(jobs);
	return 0;
}

int wh_html_report(struct wh_db *db, const struct wh_report_opts *o, struct buf *page, struct buf *err)
{
	struct page p = {.db = db, .o = o, .b = page, .err = err};
	struct buf title = BUF_INIT;
	buf_printf(&title, "Trace warehouse%s%s", o->job ? ": job " : "", o->job ? o->job : "");
	html_begin(page, title.data);
	html_heading(page, 1, NULL, title.data);
	buf_free(&title);
	bool any = false;
	struct atable *reg = NULL;
	int rc = overview(&p, &any);
	if (rc == 0 && any) {
		buf_puts(page, "<p><a href=\"#regressions\">Regressions</a> | <a href=\"#top-kernels\">Top kernels</a> | "
			       "<a href=\"#by-type\">By kernel type</a> | <a href=\"#jobs\">Jobs</a></p>\n");
		rc = section_regressions(&p, &reg);
		if (rc == 0)
			rc = section_top(&p, reg);
		if (rc == 0)
			rc = section_by_type(&p);
		if (rc == 0)
			rc = section_jobs(&p);
	}
	if (reg)
		atable_free(reg);
	html_end(page);
	return rc;
}
