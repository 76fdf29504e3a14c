/*
 * wh_report.c - the trace warehouse's reports (docs/fleet.md), each a
 * query (or two) whose rows become one table for the one renderer
 * (src/analyze/table.c: terminal table, CSV, JSON):
 *   top-kernels  kernels by fleet GPU time (their share of all of it)
 *   by-type      GPU time by kernel type per time bucket
 *   jobs         per job: traces, hosts, time span, iteration and idle means
 *   job J        that job's traces in time order (its trend)
 *   regressions  kernels whose per-trace median duration (p50) in the
 *                recent traces moved beyond a threshold against their own
 *                history, with the jobs and traces that show it.
 *
 * The regression statistic: the traces are split at a cutoff time (--since,
 * else the newest --recent-fraction of all traces, default 20%).  For each
 * kernel name with at least --min-history traces before the cutoff, its
 * history's p50s give a median m and a robust spread s = 1.4826 * MAD
 * (the median absolute deviation; s is at least 1% of m, so that a
 * perfectly steady kernel still needs a real change).  A recent trace
 * regressed for that kernel when its p50 x >= threshold * m (default 1.5)
 * and (x - m) / s >= min-z (default 5).  Both must hold: the ratio is the
 * size that matters, the z keeps a noisy kernel's ordinary swings out.
 * Faster kernels are not reported.
 *
 * Cost: SQL aggregates for all but regressions, which reads one row per
 * (kernel, trace) and sorts each kernel's history once.  Every number read
 * back is checked (wh_cell_*): a bad row is an error naming it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/table.h"
#include "fleet/wh_report.h"
#include "core/clock.h"

static void iso(char *out, size_t cap, int64_t ns)
{
	clock_fmt_iso8601(out, cap, ns);
}

static struct atable *top_kernels(struct wh_db *db, const struct wh_report_opts *o, struct buf *err)
{
	struct wh_rows tot, r;
	char lim[24];
	snprintf(lim, sizeof lim, "%lld", (long long)o->limit);
	const char *pj[] = {o->job, lim};
	/* a failed trace has no kernel rows: no status to filter on */
	const char *from = o->job ? "kernels k JOIN traces t ON t.id = k.trace WHERE t.job = $1" : "kernels k";
	struct buf sql = BUF_INIT;
	buf_printf(&sql, "SELECT SUM(k.total_us) FROM %s", from);
	if (wh_db_exec(db, sql.data, o->job ? pj : NULL, o->job ? 1 : 0, &tot, err) != 0) {
		buf_free(&sql);
		return NULL;
	}
	double all = NAN;
	bool ok = tot.nrows == 1 && wh_cell_f64(&tot, 0, 0, "fleet GPU time", true, &all, err);
	wh_rows_free(&tot);
	if (!ok) {
		buf_free(&sql);
		return NULL;
	}
	buf_reset(&sql);
	buf_printf(&sql,
		   "SELECT n.name, n.type, s.total, s.calls, s.traces FROM"
		   " (SELECT k.kname AS kname, SUM(k.total_us) AS total, SUM(k.calls) AS calls, COUNT(*) AS traces"
		   " FROM %s GROUP BY k.kname ORDER BY SUM(k.total_us) DESC, k.kname LIMIT CAST($%d AS BIGINT)) s"
		   " JOIN kernel_names n ON n.id = s.kname ORDER BY s.total DESC, n.name",
		   from, o->job ? 2 : 1);
	int rc = wh_db_exec(db, sql.data, o->job ? pj : pj + 1, o->job ? 2 : 1, &r, err);
	buf_free(&sql);
	if (rc != 0)
		return NULL;
	const char *cols[] = {"kernel:s", "type:s", "gpu_time_s:f", "share_pct:f", "calls:i", "traces:i", "mean_us:f", NULL};
	struct atable *t = atable_new("top_kernels", "Kernels by fleet GPU time", cols);
	for (size_t i = 0; i < r.nrows; i++) {
		double sum;
		int64_t calls, traces;
		const char *name = wh_cell(&r, i, 0), *type = wh_cell(&r, i, 1);
		if (!name || !type || !wh_cell_f64(&r, i, 2, "top kernels", false, &sum, err) ||
		    !wh_cell_i64(&r, i, 3, "top kernels", false, &calls, err) ||
		    !wh_cell_i64(&r, i, 4, "top kernels", false, &traces, err)) {
			if (!err->len)
				buf_printf(err, "top kernels: row %zu: NULL name or type", i + 1);
			atable_free(t);
			wh_rows_free(&r);
			return NULL;
		}
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, name);
		atable_set_s(t, row, 1, type);
		atable_set_f(t, row, 2, sum / 1e6);
		atable_set_f(t, row, 3, all > 0 ? atable_round(100 * sum / all, 2) : NAN);
		atable_set_i(t, row, 4, calls);
		atable_set_i(t, row, 5, traces);
		atable_set_f(t, row, 6, calls > 0 ? sum / (double)calls : NAN);
	}
	if (r.nrows == 0)
		atable_note(t, "no kernels in the warehouse%s%s", o->job ? " for job " : "", o->job ? o->job : "");
	wh_rows_free(&r);
	return t;
}

static struct atable *by_type(struct wh_db *db, const struct wh_report_opts *o, struct buf *err)
{
	char bucket[32];
	snprintf(bucket, sizeof bucket, "%lld", (long long)(o->bucket_s * 1000000000LL));
	const char *p[] = {bucket, o->job};
	struct buf sql = BUF_INIT;
	buf_printf(&sql,
		   "SELECT t.start_ns / CAST($1 AS BIGINT), kt.type, SUM(kt.total_us), COUNT(*) FROM kernel_types kt"
		   " JOIN traces t ON t.id = kt.trace WHERE t.start_ns IS NOT NULL%s"
		   " GROUP BY t.start_ns / CAST($1 AS BIGINT), kt.type ORDER BY 1, 3 DESC, 2",
		   o->job ? " AND t.job = $2" : "");
	struct wh_rows r;
	int rc = wh_db_exec(db, sql.data, p, o->job ? 2 : 1, &r, err);
	buf_free(&sql);
	if (rc != 0)
		return NULL;
	const char *cols[] = {"bucket_start:s", "kernel_type:s", "gpu_time_s:f", "traces:i", NULL};
	struct atable *t = atable_new("gpu_time_by_type", "GPU time by kernel type over time", cols);
	for (size_t i = 0; i < r.nrows; i++) {
		int64_t b, n;
		double sum;
		const char *type = wh_cell(&r, i, 1);
		if (!type || !wh_cell_i64(&r, i, 0, "by type", false, &b, err) ||
		    !wh_cell_f64(&r, i, 2, "by type", false, &sum, err) || !wh_cell_i64(&r, i, 3, "by type", false, &n, err)) {
			if (!err->len)
				buf_printf(err, "by type: row %zu: NULL kernel type", i + 1);
			atable_free(t);
			wh_rows_free(&r);
			return NULL;
		}
		char when[40];
		iso(when, sizeof when, b * o->bucket_s * 1000000000LL);
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, when);
		atable_set_s(t, row, 1, type);
		atable_set_f(t, row, 2, sum / 1e6);
		atable_set_i(t, row, 3, n);
	}
	atable_note(t, "buckets of %lld s (UTC); a trace counts in the bucket of its first event", (long long)o->bucket_s);
	wh_rows_free(&r);
	return t;
}

/* Cells to a table row by the column types: a NULL is an empty text or
 * an empty float (NaN); integer columns must not be NULL. */
static bool put_row(struct atable *t, const struct wh_rows *r, size_t i, const char *what, struct buf *err)
{
	size_t row = atable_add_row(t);
	for (size_t c = 0; c < t->ncols && c < r->ncols; c++) {
		const char *v = wh_cell(r, i, c);
		if (t->cols[c].type == ACOL_STR) {
			atable_set_s(t, row, c, v ? v : "");
		} else if (t->cols[c].type == ACOL_INT) {
			int64_t x;
			if (!wh_cell_i64(r, i, c, what, false, &x, err))
				return false;
			atable_set_i(t, row, c, x);
		} else {
			double x;
			if (!wh_cell_f64(r, i, c, what, true, &x, err))
				return false;
			atable_set_f(t, row, c, x);
		}
	}
	return true;
}

/* The row's start_ns cell of column col as ISO time in text column col. */
static bool iso_col(struct atable *t, const struct wh_rows *r, size_t i, size_t col, const char *what,
		    struct buf *err)
{
	int64_t ns;
	bool null = wh_cell(r, i, col) == NULL;
	if (!wh_cell_i64(r, i, col, what, true, &ns, err))
		return false;
	char when[40] = "";
	if (!null)
		iso(when, sizeof when, ns);
	atable_set_s(t, t->nrows - 1, col, when);
	return true;
}

/* Every row of r into t (put_row), the columns times[0..ntimes) as ISO
 * times; on a bad cell t and r are freed and NULL returned. */
static struct atable *fill(struct atable *t, struct wh_rows *r, const size_t *times, size_t ntimes, const char *what,
			   struct buf *err)
{
	for (size_t i = 0; i < r->nrows; i++) {
		bool ok = put_row(t, r, i, what, err);
		for (size_t k = 0; k < ntimes && ok; k++)
			ok = iso_col(t, r, i, times[k], what, err);
		if (!ok) {
			atable_free(t);
			wh_rows_free(r);
			return NULL;
		}
	}
	return t;
}

static struct atable *jobs(struct wh_db *db, struct buf *err)
{
	struct wh_rows r;
	if (wh_db_exec(db,
		       "SELECT job, COUNT(*), COUNT(DISTINCT host), MIN(start_ns), MAX(start_ns), AVG(iter_mean_us),"
		       " AVG(idle_share), AVG(host_wait_share), SUM(kernel_us) / 1e6,"
		       " SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END)"
		       " FROM traces GROUP BY job ORDER BY MAX(start_ns) DESC, job",
		       NULL, 0, &r, err) != 0)
		return NULL;
	const char *cols[] = {"job:s",		  "traces:i",	 "hosts:i",	 "first:s",	 "last:s",
			      "iter_mean_us:f",	  "idle_share:f", "host_wait_share:f", "gpu_span_s:f", "failed:i",
			      NULL};
	static const size_t times[] = {3, 4};
	struct atable *t = fill(atable_new("jobs", "Jobs in the warehouse", cols), &r, times, 2, "jobs", err);
	if (!t)
		return NULL;
	atable_note(t, "means over each job's readable traces; a trace without GPU rows or steps adds nothing to them");
	wh_rows_free(&r);
	return t;
}

static struct atable *job_trend(struct wh_db *db, const char *job, struct buf *err)
{
	struct wh_rows r;
	const char *p[] = {job};
	if (wh_db_exec(db,
		       "SELECT start_ns, host, rank, iterations, iter_mean_us, iter_p50_us, kernel_us, idle_share,"
		       " host_wait_share, status, COALESCE(error, ''), path FROM traces WHERE job = $1"
		       " ORDER BY start_ns, path",
		       p, 1, &r, err) != 0)
		return NULL;
	const char *cols[] = {"start:s",	 "host:s",	     "rank:f",	    "iterations:f", "iter_mean_us:f",
			      "iter_p50_us:f",	 "gpu_span_us:f",   "idle_share:f", "host_wait_share:f", "status:s",
			      "error:s",	 "trace:s",	     NULL};
	struct buf title = BUF_INIT;
	buf_printf(&title, "Job %s over time", job);
	struct atable *t = atable_new("job_trend", title.data, cols);
	buf_free(&title);
	atable_int_text(t, 2); /* absent for a failed trace: float columns, integer text */
	atable_int_text(t, 3);
	static const size_t times[] = {0};
	if (!fill(t, &r, times, 1, "job trend", err))
		return NULL;
	if (r.nrows == 0)
		atable_note(t, "no trace of job %s in the warehouse", job);
	wh_rows_free(&r);
	return t;
}

/* ---- regressions ---- */

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The cutoff time: --since, else the start of the newest recent_fraction
 * of the traces.  false: no traces (or an error in err). */
static bool cutoff(struct wh_db *db, const struct wh_report_opts *o, int64_t *out, struct buf *err)
{
	if (o->since_s > 0) {
		*out = o->since_s * 1000000000LL;
		return true;
	}
	struct wh_rows r;
	if (wh_db_exec(db, "SELECT start_ns FROM traces WHERE status = 'ok' AND start_ns IS NOT NULL ORDER BY start_ns",
		       NULL, 0, &r, err) != 0)
		return false;
	bool ok = r.nrows > 0;
	if (ok) {
		size_t k = (size_t)floor((double)r.nrows * (1 - o->recent_fraction));
		if (k >= r.nrows)
			k = r.nrows - 1;
		ok = wh_cell_i64(&r, k, 0, "trace times", false, out, err);
	}
	wh_rows_free(&r);
	return ok;
}

struct reg_row {
	size_t kernel_first, n; /* rows of the query for this kernel */
	double m, s, recent, ratio, z;
	size_t flagged, recent_n;
	int64_t first_ns;
};

static int reg_cmp(const void *a, const void *b)
{
	const struct reg_row *x = a, *y = b;
	return x->ratio > y->ratio ? -1 : x->ratio < y->ratio;
}

/* Comma list of the distinct cells of column col over the flagged rows of
 * kernel k (at most max, then "+N"). */
static void list_of(const struct wh_rows *r, const bool *flag, const struct reg_row *k, size_t col, size_t max,
		    struct buf *out)
{
	size_t shown = 0, more = 0;
	for (size_t i = k->kernel_first; i < k->kernel_first + k->n; i++) {
		if (!flag[i])
			continue;
		const char *v = wh_cell(r, i, col);
		v = v ? v : "(unknown)";
		bool seen = false;
		for (size_t j = k->kernel_first; j < i && !seen; j++) {
			const char *w = wh_cell(r, j, col);
			seen = flag[j] && strcmp(w ? w : "(unknown)", v) == 0;
		}
		if (seen)
			continue;
		if (shown < max)
			buf_printf(out, "%s%s", shown++ ? "," : "", v);
		else
			more++;
	}
	if (more)
		buf_printf(out, ",+%zu", more);
}

/* Step 1: the kernels that can have regressed.  A recent p50 can only be
 * >= threshold x the history's median if the largest recent p50 is >=
 * threshold x the smallest in the history (the median is at least that):
 * one aggregate over the kernels index picks those, and only their rows
 * are read and judged (a steady fleet's few, a noisy one's more). */
static bool candidates(struct wh_db *db, const struct wh_report_opts *o, int64_t cut, struct wh_rows *ids,
		       size_t *kernels, size_t *short_history, struct buf *err)
{
	char c[24];
	snprintf(c, sizeof c, "%lld", (long long)cut);
	const char *p[] = {c, o->job};
	struct buf sql = BUF_INIT;
	struct wh_rows r;
	buf_printf(&sql,
		   "SELECT k.kname, SUM(CASE WHEN k.start_ns < CAST($1 AS BIGINT) THEN 1 ELSE 0 END),"
		   " MIN(CASE WHEN k.start_ns < CAST($1 AS BIGINT) THEN k.p50_us END),"
		   " MAX(CASE WHEN k.start_ns >= CAST($1 AS BIGINT) THEN k.p50_us END)"
		   " FROM kernels k%s WHERE k.start_ns IS NOT NULL%s GROUP BY k.kname",
		   o->job ? " JOIN traces t ON t.id = k.trace" : "", o->job ? " AND t.job = $2" : "");
	int rc = wh_db_exec(db, sql.data, p, o->job ? 2 : 1, &r, err);
	buf_free(&sql);
	if (rc != 0)
		return false;
	wh_rows_init(ids, 1);
	*kernels = r.nrows;
	for (size_t i = 0; i < r.nrows; i++) {
		int64_t hn;
		double hmin, rmax;
		if (!wh_cell_i64(&r, i, 0, "regression candidates", false, &hn, err) ||
		    !wh_cell_i64(&r, i, 1, "regression candidates", false, &hn, err) ||
		    !wh_cell_f64(&r, i, 2, "regression candidates", true, &hmin, err) ||
		    !wh_cell_f64(&r, i, 3, "regression candidates", true, &rmax, err)) {
			wh_rows_free(&r);
			wh_rows_free(ids);
			return false;
		}
		if (isnan(rmax))
			continue; /* nothing recent */
		if (hn < o->min_history) {
			(*short_history)++;
			continue;
		}
		if (rmax >= o->threshold * hmin) {
			const char *id = wh_cell(&r, i, 0);
			wh_rows_put(ids, id, strlen(id), false);
		}
	}
	wh_rows_free(&r);
	return true;
}

/* Step 2: the candidates' rows, by kernel and time, in chunks of ids. */
static bool candidate_rows(struct wh_db *db, const struct wh_report_opts *o, const struct wh_rows *ids,
			   struct wh_rows *out, struct buf *err)
{
	wh_rows_init(out, 5);
	for (size_t at = 0; at < ids->nrows; at += 500) {
		size_t n = ids->nrows - at < 500 ? ids->nrows - at : 500;
		struct buf sql = BUF_INIT;
		const char **p = xmalloc((n + 1) * sizeof *p);
		buf_puts(&sql, "SELECT n.name, k.start_ns, k.p50_us, t.job, t.path FROM kernels k"
			       " JOIN traces t ON t.id = k.trace JOIN kernel_names n ON n.id = k.kname"
			       " WHERE k.start_ns IS NOT NULL AND k.kname IN (");
		for (size_t i = 0; i < n; i++) {
			buf_printf(&sql, "%sCAST($%zu AS BIGINT)", i ? "," : "", i + 1);
			p[i] = wh_cell(ids, at + i, 0);
		}
		buf_putc(&sql, ')');
		if (o->job) {
			buf_printf(&sql, " AND t.job = $%zu", n + 1);
			p[n] = o->job;
		}
		buf_puts(&sql, " ORDER BY n.name, k.start_ns, t.path");
		struct wh_rows r;
		int rc = wh_db_exec(db, sql.data, p, n + (o->job != NULL), &r, err);
		free(p);
		buf_free(&sql);
		if (rc != 0) {
			wh_rows_free(out);
			return false;
		}
		for (size_t i = 0; i < r.nrows; i++)
			for (size_t c = 0; c < 5; c++) {
				const char *v = wh_cell(&r, i, c);
				wh_rows_put(out, v, v ? strlen(v) : 0, v == NULL);
			}
		wh_rows_free(&r);
	}
	return true;
}

/* pts (may be NULL): each found kernel's points, in the table's row order */
static struct atable *regressions(struct wh_db *db, const struct wh_report_opts *o, struct wh_reg_points **pts,
				  struct buf *err)
{
	int64_t cut = 0;
	if (!cutoff(db, o, &cut, err) && err->len)
		return NULL;
	struct wh_rows ids, r;
	size_t kernels = 0, short_history = 0;
	if (!candidates(db, o, cut, &ids, &kernels, &short_history, err))
		return NULL;
	bool got = candidate_rows(db, o, &ids, &r, err);
	size_t ncand = ids.nrows;
	wh_rows_free(&ids);
	if (!got)
		return NULL;
	const char *cols[] = {"kernel:s",	     "history_p50_us:f", "recent_p50_us:f", "ratio:f",
			      "robust_z:f",	     "regressed_traces:i", "recent_traces:i", "first_regressed:s",
			      "jobs:s",		     "traces:s",	   NULL};
	struct atable *t = atable_new("kernel_regressions", "Kernel duration regressions against their history", cols);
	double *x = xmalloc((r.nrows ? r.nrows : 1) * sizeof *x), *tmp = xmalloc((r.nrows ? r.nrows : 1) * sizeof *tmp);
	int64_t *when = xmalloc((r.nrows ? r.nrows : 1) * sizeof *when);
	bool *flag = xcalloc(r.nrows ? r.nrows : 1, sizeof *flag);
	struct reg_row *found = NULL;
	size_t nfound = 0;
	bool ok = true;
	for (size_t i = 0; i < r.nrows && ok; i++) {
		ok = wh_cell(&r, i, 0) && wh_cell_i64(&r, i, 1, "regressions", false, &when[i], err) &&
		     wh_cell_f64(&r, i, 2, "regressions", false, &x[i], err);
		if (!ok && !err->len)
			buf_printf(err, "regressions: row %zu: NULL kernel name", i + 1);
	}
	for (size_t i = 0; i < r.nrows && ok;) {
		size_t j = i;
		while (j < r.nrows && strcmp(wh_cell(&r, j, 0), wh_cell(&r, i, 0)) == 0)
			j++;
		/* rows are in time order: history first */
		size_t h = 0;
		while (i + h < j && when[i + h] < cut)
			h++;
		if (h < (size_t)o->min_history) {
			i = j;
			continue;
		}
		memcpy(tmp, x + i, h * sizeof *tmp);
		double m = median(tmp, h);
		for (size_t k = 0; k < h; k++)
			tmp[k] = fabs(x[i + k] - m);
		double s = 1.4826 * median(tmp, h);
		if (s < 0.01 * m)
			s = 0.01 * m;
		struct reg_row rr = {.kernel_first = i, .n = j - i, .m = m, .s = s, .recent_n = j - i - h};
		size_t nf = 0;
		for (size_t k = i + h; k < j; k++) {
			double z = s > 0 ? (x[k] - m) / s : INFINITY;
			if (m > 0 && x[k] >= o->threshold * m && z >= o->min_z) {
				flag[k] = true;
				tmp[nf++] = x[k];
				if (!rr.flagged++)
					rr.first_ns = when[k];
			}
		}
		if (rr.flagged) {
			rr.recent = median(tmp, nf);
			rr.ratio = rr.recent / m;
			rr.z = s > 0 ? (rr.recent - m) / s : INFINITY;
			found = xrealloc(found, (nfound + 1) * sizeof *found);
			found[nfound++] = rr;
		}
		i = j;
	}
	if (ok) {
		if (nfound) /* found is NULL then, and qsort's pointer must not be */
			qsort(found, nfound, sizeof *found, reg_cmp);
		if (pts)
			*pts = xcalloc(nfound ? nfound : 1, sizeof **pts);
		for (size_t f = 0; pts && f < nfound; f++) {
			const struct reg_row *k = &found[f];
			struct wh_reg_points *p = &(*pts)[f];
			p->kernel = xstrdup(wh_cell(&r, k->kernel_first, 0));
			p->history_median_us = k->m;
			p->n = k->n;
			p->start_ns = xmalloc(k->n * sizeof *p->start_ns);
			p->p50_us = xmalloc(k->n * sizeof *p->p50_us);
			p->flagged = xmalloc(k->n * sizeof *p->flagged);
			memcpy(p->start_ns, when + k->kernel_first, k->n * sizeof *p->start_ns);
			memcpy(p->p50_us, x + k->kernel_first, k->n * sizeof *p->p50_us);
			memcpy(p->flagged, flag + k->kernel_first, k->n * sizeof *p->flagged);
		}
		for (size_t f = 0; f < nfound; f++) {
			const struct reg_row *k = &found[f];
			size_t row = atable_add_row(t);
			char first[40];
			iso(first, sizeof first, k->first_ns);
			struct buf jobs_l = BUF_INIT, traces_l = BUF_INIT;
			list_of(&r, flag, k, 3, 5, &jobs_l);
			list_of(&r, flag, k, 4, 3, &traces_l);
			atable_set_s(t, row, 0, wh_cell(&r, k->kernel_first, 0));
			atable_set_f(t, row, 1, k->m);
			atable_set_f(t, row, 2, k->recent);
			atable_set_f(t, row, 3, atable_round(k->ratio, 2));
			atable_set_f(t, row, 4, atable_round(k->z, 1));
			atable_set_i(t, row, 5, (int64_t)k->flagged);
			atable_set_i(t, row, 6, (int64_t)k->recent_n);
			atable_set_s(t, row, 7, first);
			atable_set_s(t, row, 8, jobs_l.data);
			atable_set_s(t, row, 9, traces_l.data);
			buf_free(&jobs_l);
			buf_free(&traces_l);
		}
		char c[40];
		iso(c, sizeof c, cut);
		atable_note(t,
			    "%zu kernels, %zu judged in full; history: traces before %s; regressed: p50 >= %.3g x the "
			    "history's median and >= %.3g robust deviations (1.4826 MAD) above it; %zu kernels with "
			    "recent traces had fewer than %lld traces of history and were not judged",
			    kernels, ncand, c, o->threshold, o->min_z, short_history, (long long)o->min_history);
	}
	free(x);
	free(tmp);
	free(when);
	free(flag);
	free(found);
	wh_rows_free(&r);
	if (!ok) {
		atable_free(t);
		return NULL;
	}
	return t;
}

struct atable *wh_report(struct wh_db *db, const struct wh_report_opts *o, struct buf *err)
{
	switch (o->kind) {
	case WH_REPORT_TOP_KERNELS: return top_kernels(db, o, err);
	case WH_REPORT_BY_TYPE: return by_type(db, o, err);
	case WH_REPORT_JOBS: return o->job ? job_trend(db, o->job, err) : jobs(db, err);
	case WH_REPORT_REGRESSIONS: return regressions(db, o, NULL, err);
	}
	return NULL;
}

struct atable *wh_regressions(struct wh_db *db, const struct wh_report_opts *o, struct wh_reg_points **pts,
			      struct buf *err)
{
	*pts = NULL;
	return regressions(db, o, pts, err);
}

void wh_reg_points_free(struct wh_reg_points *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++) {
		free(p[i].kernel);
		free(p[i].start_ns);
		free(p[i].p50_us);
		free(p[i].flagged);
	}
	free(p);
}
