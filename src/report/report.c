/*
 * report.c - `dyno report TRACE_OR_DIR... -o report.html`: one
 * self-contained HTML file (html.h: inline CSS and SVG, no script, no
 * network) with the insights first, then the tables and charts behind
 * them: GPU time per rank, per-iteration time, idle time, top kernels,
 * kernel duration across ranks, launch queue and memcpy bandwidth over
 * time, the critical path, the CPU side, and what was damaged or skipped.
 * A multi-rank set gets the cross-rank charts with the straggler (or the
 * busiest rank of an imbalance) in red.  It runs `insights` through the
 * runner (which runs the analyses it uses, src/analyze/insights.c) with
 * every table kept, and `critical-path` when asked or when the rank is
 * small; nothing is computed here but the charts' point lists.  A file that
 * cannot be read at all is left out and named; a truncated one is
 * analysed up to its damage and named.  Cost: the analyses, then the page
 * (series downsampled to 1,200 points each, tables cut at 40 rows); the
 * file is written to a temporary name and renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/insights.h"
#include "report/html.h"
#include "report/report.h"
#include "core/clock.h"

#define MAX_POINTS 1200
#define MAX_ROWS 40

struct report {
	const struct trace_set *set;
	const struct analyze_results *res, *cp;
	const char *cp_why; /* why there is no critical path; NULL: there is one */
	const char *partial; /* the damaged ranks; "" when none */
	const char *selection; /* --ranks/--iterations/--time-range as text; "" when none */
	int hl_rank;         /* the rank drawn in red; -1: none */
	const char *hl_why;
	struct buf *b;
};

static const struct atable *table(const struct analyze_results *res, const char *name)
{
	for (size_t i = 0; res && i < res->n; i++)
		if (strcmp(res->v[i].name, name) == 0)
			return res->v[i].t;
	return NULL;
}

static int col(const struct atable *t, const char *name)
{
	return insight_col(t, name);
}

static const char *skipped_why(const struct report *r, const char *analysis)
{
	for (size_t i = 0; i < r->res->nskipped; i++)
		if (strcmp(r->res->skipped[i].analysis->name, analysis) == 0)
			return r->res->skipped[i].why;
	return NULL;
}

/* the table, or a line saying why there is none */
static const struct atable *need(const struct report *r, const char *name, const char *analysis)
{
	const struct atable *t = table(r->res, name);
	if (!t) {
		const char *why = skipped_why(r, analysis);
		html_para(r->b, "muted", "Not available: %s.", why ? why : "the analysis gave no table");
	}
	return t;
}

/* ---- sections ---- */

static void section_header(struct report *r, const char *inputs)
{
	const struct trace_set *s = r->set;
	struct buf *b = r->b;
	buf_puts(b, "<h1>Trace report</h1>\n");
	size_t rows = 0;
	for (size_t k = 0; k < s->nranks; k++)
		rows += s->ranks[k]->n;
	html_para(b, "muted", "%s: %zu rank%s, %zu events analysed; dyno report " DYNO_VERSION ".", inputs, s->nranks,
		  s->nranks == 1 ? "" : "s", rows);
	if (s->warnings && *s->warnings) {
		buf_puts(b, "<div class=\"warn\"><strong>Load warnings</strong> (files left out or damaged, events "
			    "skipped):<br>");
		for (const char *p = s->warnings; *p; p++) {
			if (*p == '\n')
				buf_puts(b, "<br>");
			else
				html_escn(b, p, 1);
		}
		buf_puts(b, "</div>\n");
	}
	if (*r->partial)
		html_para(b, "warn", "PARTIAL results: %s. The events before the damage are analysed.", r->partial);
	if (*r->selection)
		html_para(b, NULL, "Selection: %s. Every section, the insights included, covers only these events.",
			  r->selection);
	buf_puts(b, "<p class=\"muted\">Contents: <a href=\"#insights\">insights</a> · <a href=\"#gpu\">GPU time per "
		    "rank</a> · <a href=\"#iterations\">iterations</a> · <a href=\"#idle\">idle time</a> · <a "
		    "href=\"#kernels\">kernels</a> · <a href=\"#counters\">queue and bandwidth</a> · <a "
		    "href=\"#critical\">critical path</a> · <a href=\"#cpu\">CPU side</a></p>\n");
}

/* The step waterfall: per rank the mean of its typical steps, then its
 * steps, each bar the step's time by what the GPU and the launching host
 * thread did (insight_attrib.c); at most MAX_WATERFALL bars. */
#define MAX_WATERFALL 40
static void waterfall(struct report *r)
{
	struct buf *b = r->b;
	const struct atable *w = table(r->res, "insight_waterfall");
	if (!w || w->nrows == 0) {
		html_para(b, "muted", "No step waterfall: no selected rank has GPU activity.");
		return;
	}
	static const char *const parts[] = {"GPU busy", "exposed communication", "host gap (outside operators)",
					    "launch overhead (inside operators)", "sync wait", "pageable copy",
					    "unattributed"};
	enum { NP = sizeof parts / sizeof parts[0] };
	struct html_bar *bars = xcalloc(MAX_WATERFALL, sizeof *bars);
	char (*labels)[48] = xcalloc(MAX_WATERFALL, sizeof *labels);
	size_t nb = 0, nranks = 0;
	struct buf text = BUF_INIT;
	for (size_t k = 0; k < r->set->nranks; k++) {
		int rank = r->set->ranks[k]->rank;
		struct insight_wmean m;
		if (insight_waterfall_mean(w, rank, &m) != 0)
			continue;
		nranks++;
		buf_printf(&text, "%sRank %d, the mean of %zu typical step%s of %zu (steps from %s): %.2f ms =", text.len ? " " : "",
			   rank, m.ntypical, m.ntypical == 1 ? "" : "s", m.nsteps, m.from, m.step / 1e3);
		for (int p = 0; p < NP; p++)
			if (m.part[p] > 0)
				buf_printf(&text, "%s %s %.2f ms (%.1f%%)", p ? " +" : "", parts[p], m.part[p] / 1e3,
					   100 * m.part[p] / m.step);
		buf_puts(&text, ".");
		if (nb < MAX_WATERFALL) {
			snprintf(labels[nb], sizeof labels[nb], "rank %d, mean", rank);
			bars[nb].label = labels[nb];
			for (int p = 0; p < NP; p++)
				bars[nb].v[p] = m.part[p] / 1e3;
			nb++;
		}
		for (size_t i = 0; i < w->nrows && nb < MAX_WATERFALL; i++) {
			if (insight_i(w, i, IW_RANK) != rank)
				continue;
			int64_t step = insight_i(w, i, IW_STEP);
			if (step >= 0)
				snprintf(labels[nb], sizeof labels[nb], "rank %d, step %lld", rank, (long long)step);
			else
				snprintf(labels[nb], sizeof labels[nb], "rank %d, whole trace", rank);
			bars[nb].label = labels[nb];
			for (int p = 0; p < NP; p++)
				bars[nb].v[p] = insight_f(w, i, IW_BUSY + (size_t)p) / 1e3;
			nb++;
		}
	}
	struct html_chart ch = {"Step time by cause: the GPU's work, and each idle part by what the launching host thread "
				"did", "time (ms)", "step"};
	html_bar_chart(b, &ch, parts, NP, bars, nb);
	html_para(b, NULL, "%s", text.data ? text.data : "");
	if (nb == MAX_WATERFALL)
		html_para(b, "muted", "The first %d bars of %zu ranks' steps (insight_waterfall in --csv-dir has every step).",
			  MAX_WATERFALL, nranks);
	buf_free(&text);
	free(bars);
	free(labels);
}

static void section_insights(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "insights", "Insights");
	const struct atable *f = table(r->res, "insights"), *rules = table(r->res, "insight_rules");
	if (!f || !rules)
		return;
	waterfall(r);
	html_heading(b, 3, NULL, "Findings, ranked by the time they cost per step");
	if (f->nrows == 0)
		html_para(b, NULL, "No rule fired: nothing in this trace crosses a threshold (each rule's numbers are in "
				   "the table below).");
	for (size_t i = 0; i < f->nrows; i++) {
		const char *sev = insight_s(f, i, 0), *rank = insight_s(f, i, 2), *it = insight_s(f, i, 3),
			   *st = insight_s(f, i, 4), *where = insight_s(f, i, 5);
		buf_printf(b, "<div class=\"finding %s\"><span class=\"sev\">%s</span><strong>", sev, sev);
		html_esc(b, insight_s(f, i, 1));
		buf_puts(b, "</strong> <span class=\"where\">rank ");
		html_esc(b, rank);
		if (*it) {
			buf_puts(b, ", iteration ");
			html_esc(b, it);
		}
		if (*st) {
			buf_puts(b, ", stream ");
			html_esc(b, st);
		}
		if (*where) {
			buf_puts(b, ", ");
			size_t n = strlen(where);
			if (n > 120) {
				buf_puts(b, "<span title=\"");
				html_esc(b, where);
				buf_puts(b, "\">");
				html_esc_cut(b, where, n, 80, 30);
				buf_puts(b, "</span>");
			} else {
				html_esc(b, where);
			}
		}
		double ms = insight_f(f, i, INSIGHT_F_COST_MS);
		if (isfinite(ms))
			buf_printf(b, " <span class=\"cost\">%.2f ms per step (%.1f%%)</span>", ms,
				   insight_f(f, i, INSIGHT_F_COST_PCT));
		buf_puts(b, "</span><div>");
		html_esc(b, insight_s(f, i, 9));
		buf_puts(b, "</div><div class=\"rec\">&rarr; ");
		html_esc(b, insight_s(f, i, 10));
		buf_puts(b, "</div></div>\n");
	}
	/* the notes about --metrics (the others are the findings again) */
	for (const char *p = f->notes.data; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (strncmp(p, "--metrics", 9) == 0) {
			buf_puts(b, "<p class=\"warn\">");
			html_escn(b, p, n);
			buf_puts(b, "</p>\n");
		}
		p = nl ? nl + 1 : NULL;
	}
	html_heading(b, 3, NULL, "Every rule: what it measured, or why it could not be evaluated");
	buf_puts(b, "<div class=\"scroll\"><table><thead><tr><th>rule</th><th>status</th><th>measured</th>"
		    "<th>fires when</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < rules->nrows; i++) {
		buf_puts(b, "<tr><td>");
		html_esc(b, insight_s(rules, i, 0));
		buf_puts(b, "</td><td>");
		html_esc(b, insight_s(rules, i, 1));
		buf_puts(b, "</td><td>");
		html_esc(b, insight_s(rules, i, 3));
		buf_puts(b, "</td><td>");
		html_esc(b, insight_s(rules, i, 4));
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</tbody></table></div>\n");
}

static void section_gpu(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "gpu", "GPU time per rank");
	const struct atable *t = need(r, "temporal_breakdown", "temporal");
	if (!t)
		return;
	static const char *const parts[] = {"compute", "non-compute (communication, memory)", "idle"};
	int c[3] = {col(t, "compute_time(us)"), col(t, "non_compute_time(us)"), col(t, "idle_time(us)")};
	struct html_bar *bars = xcalloc(t->nrows + 1, sizeof *bars);
	char (*labels)[32] = xcalloc(t->nrows + 1, sizeof *labels);
	for (size_t i = 0; i < t->nrows; i++) {
		int rank = (int)insight_i(t, i, 0);
		snprintf(labels[i], sizeof labels[i], "rank %d", rank);
		bars[i].label = labels[i];
		bars[i].highlight = rank == r->hl_rank;
		for (int p = 0; p < 3; p++)
			bars[i].v[p] = insight_f(t, i, c[p]) / 1e3;
	}
	struct html_chart ch = {"GPU time from the first to the last GPU activity, per rank", "time (ms)", "rank"};
	html_bar_chart(b, &ch, parts, 3, bars, t->nrows);
	if (r->hl_rank >= 0)
		html_para(b, "muted", "Rank %d in red: %s.", r->hl_rank, r->hl_why);
	html_table(b, t, MAX_ROWS);
	free(bars);
	free(labels);
	const struct atable *ov = table(r->res, "comm_comp_overlap");
	if (ov) {
		html_heading(b, 3, NULL, "Communication hidden behind computation");
		html_table(b, ov, MAX_ROWS);
	}
}

static void section_iterations(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "iterations", "Per-iteration time");
	const struct atable *t = table(r->res, "insight_iterations");
	if (!t || t->nrows == 0 || insight_i(t, 0, IT_ITER) < 0) {
		html_para(b, "muted", "No ProfilerStep#N in the trace: no iterations to compare (the whole trace is one "
				      "span).");
		if (t)
			html_table(b, t, MAX_ROWS);
		return;
	}
	size_t nr = r->set->nranks;
	struct html_series *s = xcalloc(nr, sizeof *s);
	double *x = xmalloc(t->nrows * sizeof *x), *y = xmalloc(t->nrows * sizeof *y);
	char (*names)[32] = xcalloc(nr, sizeof *names);
	size_t used = 0, ns = 0;
	for (size_t k = 0; k < nr; k++) {
		int rank = r->set->ranks[k]->rank;
		size_t n0 = used;
		for (size_t i = 0; i < t->nrows; i++)
			if (insight_i(t, i, IT_RANK) == rank) {
				x[used] = (double)insight_i(t, i, IT_ITER);
				y[used++] = insight_f(t, i, IT_DUR) / 1e3;
			}
		if (used == n0)
			continue;
		snprintf(names[ns], sizeof names[ns], "rank %d", rank);
		s[ns] = (struct html_series){names[ns], x + n0, y + n0, used - n0, false, rank == r->hl_rank};
		ns++;
	}
	size_t most = 0;
	for (size_t k = 0; k < ns; k++)
		most = s[k].n > most ? s[k].n : most;
	if (most >= 2) {
		struct html_chart ch = {"Iteration (ProfilerStep) duration per rank", "iteration (ProfilerStep number)",
					"duration (ms)"};
		html_line_chart(b, &ch, s, ns, MAX_POINTS);
	} else {
		/* one step per rank: a line would be a dot; bars compare the ranks */
		struct html_bar *bars = xcalloc(ns + 1, sizeof *bars);
		for (size_t k = 0; k < ns; k++)
			bars[k] = (struct html_bar){.label = s[k].name, .v = {s[k].y[0]}, .highlight = s[k].highlight};
		static const char *const parts[] = {"duration"};
		struct html_chart ch = {"Iteration (ProfilerStep) duration per rank (one step each)", "duration (ms)",
					"rank"};
		html_bar_chart(b, &ch, parts, 1, bars, ns);
		free(bars);
	}
	html_table(b, t, MAX_ROWS);
	free(s);
	free(x);
	free(y);
	free(names);
}

static void section_idle(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "idle", "Why the GPU was idle");
	const struct atable *t = need(r, "idle_time_breakdown", "idle");
	if (!t)
		return;
	int cs = col(t, "stream"), cc = col(t, "idle_category"), cv = col(t, "idle_time");
	static const char *const parts[] = {"host_wait (the CPU was late)", "kernel_wait (short gaps)", "other"};
	static const char *const cats[] = {"host_wait", "kernel_wait", "other"};
	struct html_bar *bars = xcalloc(t->nrows + 1, sizeof *bars);
	char (*labels)[48] = xcalloc(t->nrows + 1, sizeof *labels);
	size_t nb = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		int rank = (int)insight_i(t, i, 0);
		int64_t stream = insight_i(t, i, cs);
		size_t k = 0;
		while (k < nb && !(strcmp(labels[k], "") != 0 && bars[k].v[5] == rank && bars[k].v[4] == (double)stream))
			k++;
		if (k == nb) {
			snprintf(labels[nb], sizeof labels[nb], "rank %d stream %lld", rank, (long long)stream);
			bars[nb].label = labels[nb];
			bars[nb].highlight = rank == r->hl_rank;
			bars[nb].v[4] = (double)stream; /* the key, not drawn (3 parts) */
			bars[nb].v[5] = rank;
			nb++;
		}
		for (int p = 0; p < 3; p++)
			if (strcmp(insight_s(t, i, cc), cats[p]) == 0)
				bars[k].v[p] = insight_f(t, i, cv) / 1e3;
	}
	struct html_chart ch = {"GPU idle time per stream, by cause", "idle time (ms)", "stream"};
	html_bar_chart(b, &ch, parts, 3, bars, nb);
	free(bars);
	free(labels);
	html_table(b, t, MAX_ROWS);
}

static void section_kernels(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "kernels", "Kernels");
	const struct atable *t = need(r, "kernel_metrics", "kernels");
	if (!t)
		return;
	int cn = col(t, "name"), cs = col(t, "sum (us)"), cr = col(t, "rank"), ct = col(t, "kernel_type");
	/* the 15 biggest (name, rank) rows, not "others" */
	size_t *idx = xmalloc((t->nrows + 1) * sizeof *idx), n = 0;
	for (size_t i = 0; i < t->nrows; i++)
		if (strcmp(insight_s(t, i, cn), "others") != 0)
			idx[n++] = i;
	for (size_t i = 1; i < n; i++) /* insertion sort by sum, descending: a few dozen rows */
		for (size_t k = i; k > 0 && insight_f(t, idx[k], cs) > insight_f(t, idx[k - 1], cs); k--) {
			size_t tmp = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = tmp;
		}
	size_t nb = n < 15 ? n : 15;
	struct html_bar *bars = xcalloc(nb + 1, sizeof *bars);
	struct buf *labels = xcalloc(nb + 1, sizeof *labels), *titles = xcalloc(nb + 1, sizeof *titles);
	for (size_t i = 0; i < nb; i++) {
		/* shown: the rank and the kernel's function name (the chart cuts
		 * its middle, keeping the distinctive end); the whole name and
		 * type in the tooltip */
		buf_init(&labels[i]);
		buf_init(&titles[i]);
		if (r->set->nranks > 1) {
			buf_printf(&labels[i], "[rank %lld] ", (long long)insight_i(t, idx[i], cr));
			buf_printf(&titles[i], "[rank %lld] ", (long long)insight_i(t, idx[i], cr));
		}
		html_kernel_label(&labels[i], insight_s(t, idx[i], cn));
		buf_printf(&titles[i], "%s (%s)", insight_s(t, idx[i], cn), insight_s(t, idx[i], ct));
		bars[i].label = labels[i].data;
		bars[i].title = titles[i].data;
		bars[i].v[0] = insight_f(t, idx[i], cs) / 1e3;
		bars[i].highlight = insight_i(t, idx[i], cr) == r->hl_rank;
	}
	static const char *const parts[] = {"GPU time"};
	struct html_chart ch = {"Top kernels by total GPU time", "total time (ms)", "kernel"};
	html_bar_chart(b, &ch, parts, 1, bars, nb);
	for (size_t i = 0; i < nb; i++) {
		buf_free(&labels[i]);
		buf_free(&titles[i]);
	}
	free(labels);
	free(titles);
	free(bars);
	free(idx);
	const struct atable *types = table(r->res, "kernel_type_breakdown");
	if (types) {
		html_heading(b, 3, NULL, "GPU time by kernel type (all ranks)");
		html_table(b, types, MAX_ROWS);
	}
	const struct atable *d = table(r->res, "kernel_duration_distribution");
	if (!d || r->set->nranks < 2)
		return;
	/* the same kernels across ranks: mean per rank of the 6 biggest names */
	html_heading(b, 3, NULL, "Kernel duration across ranks");
	int dn = col(d, "name"), dr = col(d, "rank"), dm = col(d, "mean (us)"), dsum = col(d, "sum (us)");
	const char *top[6] = {NULL};
	size_t ntop = 0;
	for (size_t pass = 0; pass < 6; pass++) {
		long best = -1;
		for (size_t i = 0; i < d->nrows; i++) {
			bool taken = false;
			for (size_t k = 0; k < ntop; k++)
				taken |= strcmp(top[k], insight_s(d, i, dn)) == 0;
			if (!taken && (best < 0 || insight_f(d, i, dsum) > insight_f(d, (size_t)best, dsum)))
				best = (long)i;
		}
		if (best < 0)
			break;
		top[ntop++] = insight_s(d, (size_t)best, dn);
	}
	struct html_bar *kb = xcalloc(d->nrows + 1, sizeof *kb);
	struct buf *kl = xcalloc(d->nrows + 1, sizeof *kl), *kt = xcalloc(d->nrows + 1, sizeof *kt);
	size_t nk = 0;
	for (size_t k = 0; k < ntop; k++)
		for (size_t i = 0; i < d->nrows; i++)
			if (strcmp(insight_s(d, i, dn), top[k]) == 0) {
				/* the rank and the kernel's function name shown (the
				 * chart cuts its middle), the whole name as the tooltip */
				buf_init(&kl[nk]);
				buf_init(&kt[nk]);
				buf_printf(&kl[nk], "rank %lld: ", (long long)insight_i(d, i, dr));
				html_kernel_label(&kl[nk], top[k]);
				buf_printf(&kt[nk], "rank %lld: %s", (long long)insight_i(d, i, dr), top[k]);
				kb[nk].label = kl[nk].data;
				kb[nk].title = kt[nk].data;
				kb[nk].v[0] = insight_f(d, i, dm);
				kb[nk].highlight = insight_i(d, i, dr) == r->hl_rank;
				nk++;
			}
	static const char *const mparts[] = {"mean duration"};
	struct html_chart kc = {"Mean duration of the biggest kernels on each rank", "mean duration (us)", "kernel"};
	html_bar_chart(b, &kc, mparts, 1, kb, nk);
	for (size_t i = 0; i < nk; i++) {
		buf_free(&kl[i]);
		buf_free(&kt[i]);
	}
	free(kl);
	free(kt);
	free(kb);
	const struct atable *sp = table(r->res, "kernel_rank_spread");
	if (sp)
		html_table(b, sp, 15);
}

/* one rank's counter series: per value of group column, a line */
static void series_chart(struct report *r, const struct atable *t, const char *group, bool group_str,
			 const char *ycol, const struct html_chart *ch, bool step)
{
	int cg = col(t, group), cy = col(t, ycol), cts = col(t, "ts");
	if (cg < 0 || cy < 0 || cts < 0) {
		html_para(r->b, "muted", "No data for this chart.");
		return;
	}
	/* the groups with the most points (at most 6) */
	enum { MAXG = 6 };
	struct {
		char name[64];
		size_t n;
		double *x, *y;
	} g[MAXG] = {{{0}, 0, NULL, NULL}};
	size_t ng = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		char key[64];
		if (group_str)
			snprintf(key, sizeof key, "%s", insight_s(t, i, cg));
		else
			snprintf(key, sizeof key, "stream %lld", (long long)insight_i(t, i, cg));
		size_t k = 0;
		while (k < ng && strcmp(g[k].name, key) != 0)
			k++;
		if (k == ng) {
			if (ng == MAXG)
				continue;
			snprintf(g[ng].name, sizeof g[ng].name, "%s", key);
			g[ng].x = xmalloc(t->nrows * sizeof(double));
			g[ng].y = xmalloc(t->nrows * sizeof(double));
			ng++;
		}
		g[k].x[g[k].n] = insight_f(t, i, cts) / 1e3;
		g[k].y[g[k].n++] = insight_f(t, i, cy);
	}
	struct html_series s[MAXG];
	for (size_t k = 0; k < ng; k++)
		s[k] = (struct html_series){g[k].name, g[k].x, g[k].y, g[k].n, step, false};
	html_line_chart(r->b, ch, s, ng, MAX_POINTS);
	for (size_t k = 0; k < ng; k++) {
		free(g[k].x);
		free(g[k].y);
	}
}

static void section_counters(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "counters", "Launch queue and memory bandwidth over time");
	size_t shown = 0;
	for (size_t k = 0; k < r->set->nranks && shown < 4; k++) {
		int rank = r->set->ranks[k]->rank;
		char name[80], title[120];
		snprintf(name, sizeof name, "queue_length_time_series_rank%d", rank);
		const struct atable *q = table(r->res, name);
		snprintf(name, sizeof name, "memory_bw_time_series_rank%d", rank);
		const struct atable *m = table(r->res, name);
		if (!q && !m)
			continue;
		shown++;
		if (q) {
			snprintf(title, sizeof title, "Rank %d: kernels waiting in each stream's launch queue", rank);
			struct html_chart ch = {title, "time since the trace start (ms)", "queue length (kernels)"};
			series_chart(r, q, "stream", false, "queue_length", &ch, true);
		}
		if (m) {
			snprintf(title, sizeof title, "Rank %d: memcpy/memset bandwidth", rank);
			struct html_chart ch = {title, "time since the trace start (ms)", "bandwidth (GB/s)"};
			series_chart(r, m, "name", true, "memory_bw_gbps", &ch, true);
		}
	}
	if (r->set->nranks > 4)
		html_para(b, "muted", "The first 4 ranks are drawn; the tables below have every rank.");
	if (!shown)
		html_para(b, "muted", "No launch or memcpy/memset on any rank: no counters.");
	const struct atable *qs = table(r->res, "queue_length_summary"), *ms = table(r->res, "memory_bw_summary"),
			    *mc = table(r->res, "insight_memcpy");
	if (qs)
		html_table(b, qs, MAX_ROWS);
	if (ms)
		html_table(b, ms, MAX_ROWS);
	if (mc && mc->nrows)
		html_table(b, mc, MAX_ROWS);
}

static void section_critical(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "critical", "Critical path of one iteration");
	const struct atable *t = table(r->cp, "critical_path_summary");
	if (r->cp_why || !t) {
		html_para(b, "muted", "Not computed: %s.", r->cp_why ? r->cp_why : "no table");
		return;
	}
	int cb = col(t, "bound_by"), cp = col(t, "pct");
	struct html_bar *bars = xcalloc(t->nrows + 1, sizeof *bars);
	size_t nb = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		if (!*insight_s(t, i, cb))
			continue;
		bars[nb].label = insight_s(t, i, cb);
		bars[nb++].v[0] = insight_f(t, i, cp);
	}
	static const char *const parts[] = {"share of the path"};
	struct html_chart ch = {"What bounds the critical path", "share of the critical path (%)", "bound by"};
	html_bar_chart(b, &ch, parts, 1, bars, nb);
	free(bars);
	html_table(b, t, MAX_ROWS);
}

static void section_cpu(struct report *r)
{
	struct buf *b = r->b;
	html_heading(b, 2, "cpu", "CPU side");
	const struct atable *c = table(r->res, "cpu_user_annotation_breakdown");
	if (c && c->nrows) {
		html_heading(b, 3, NULL, "Time per user annotation on the CPU");
		html_table(b, c, MAX_ROWS);
	} else {
		html_para(b, "muted", "No user annotation on the CPU (record_function / ProfilerStep) in the trace.");
	}
	/* the analyses that had nothing to work on, and why */
	if (r->res->nskipped) {
		html_heading(b, 3, NULL, "Analyses without data");
		buf_puts(b, "<ul>");
		for (size_t i = 0; i < r->res->nskipped; i++) {
			buf_puts(b, "<li>");
			html_esc(b, r->res->skipped[i].analysis->name);
			buf_puts(b, ": ");
			html_esc(b, r->res->skipped[i].why);
			buf_puts(b, "</li>");
		}
		buf_puts(b, "</ul>\n");
	}
	html_heading(b, 3, NULL, "Ranks");
	buf_puts(b, "<div class=\"scroll\"><table><thead><tr><th>rank</th><th>file</th><th>events</th><th>GPU "
		    "events</th><th>state</th></tr></thead><tbody>\n");
	for (size_t k = 0; k < r->set->nranks; k++) {
		const struct trace_rank *t = r->set->ranks[k];
		size_t gpu = 0;
		for (size_t i = 0; i < t->n; i++)
			gpu += trace_is_gpu(t, i);
		buf_printf(b, "<tr><td class=\"n\">%d</td><td>", t->rank);
		html_esc(b, t->path);
		buf_printf(b, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td>", t->n, gpu);
		if (t->stats.truncated)
			html_esc(b, t->stats.truncated_msg);
		else if (!gpu)
			buf_puts(b, "no GPU events: only the CPU side is analysed (the GPU charts are empty)");
		else
			buf_puts(b, "complete");
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</tbody></table></div>\n");
}

/* the rank the cross-rank charts draw in red, from the findings */
static void pick_highlight(struct report *r)
{
	r->hl_rank = -1;
	const struct atable *f = table(r->res, "insights");
	if (!f || r->set->nranks < 2)
		return;
	static const char *const rules[] = {"straggler", "load-imbalance"};
	static const char *const why[] = {"the straggler (its collectives start late, the others wait)",
					  "the busiest rank of a load imbalance"};
	for (size_t k = 0; k < 2 && r->hl_rank < 0; k++)
		for (size_t i = 0; i < f->nrows; i++)
			if (strcmp(insight_s(f, i, 1), rules[k]) == 0) {
				r->hl_rank = atoi(insight_s(f, i, 2));
				r->hl_why = why[k];
				break;
			}
}

static void render(struct report *r, const char *inputs)
{
	struct buf title = BUF_INIT;
	buf_printf(&title, "Trace report: %s", inputs);
	html_begin(r->b, title.data);
	buf_free(&title);
	pick_highlight(r);
	section_header(r, inputs);
	section_insights(r);
	section_gpu(r);
	section_iterations(r);
	section_idle(r);
	section_kernels(r);
	section_counters(r);
	section_critical(r);
	section_cpu(r);
	html_end(r->b);
}

/* The row filters of dyno analyze (src/trace/select.c, src/analyze/view.c):
 * 0, or 2 with the message printed. */
static int parse_filters(const char *ranks, const char *iterations, const char *time_range,
			 struct trace_select *rows, int **sel, size_t *nsel, struct buf *text)
{
	const char *bad = NULL, *val = NULL, *form = NULL;
	if (iterations && trace_select_parse_iterations(iterations, rows) != 0)
		bad = "--iterations", val = iterations, form = "N or N-M with N <= M";
	else if (time_range && trace_select_parse_time_range(time_range, rows) != 0)
		bad = "--time-range", val = time_range, form = "START:END in us, 0 <= START < END";
	else if (analyze_ranks_parse(ranks, sel, nsel) != 0)
		bad = "--ranks", val = ranks, form = "a list like 0,1,7";
	if (bad) {
		fprintf(stderr, "dyno report: bad %s '%s' (%s)\n", bad, val, form);
		return 2;
	}
	if (ranks && *nsel)
		buf_printf(text, "ranks %s", ranks);
	if (iterations)
		buf_printf(text, "%siterations %s", text->len ? "; " : "", iterations);
	if (time_range)
		buf_printf(text, "%sevents starting in [%s) us", text->len ? "; " : "", time_range);
	return 0;
}

int report_run(const struct report_opts *opts, char *const *pos, int npos)
{
	const struct report_opts o = *opts;
	int rc;
	if (!o.out) {
		fprintf(stderr, "dyno report: -o FILE is required (the HTML file to write)\n");
		return 2;
	}
	{
		char *d = xstrdup(o.out);
		int ok = access(dirname(d), W_OK);
		free(d);
		if (ok != 0) {
			fprintf(stderr, "dyno report: -o %s: its directory cannot be written (%s)\n", o.out, strerror(errno));
			return 2;
		}
	}
	struct trace_select rows = {0};
	int *sel_ranks = NULL;
	size_t nsel = 0;
	struct buf seltext = BUF_INIT;
	if (parse_filters(o.ranks, o.iterations, o.time_range, &rows, &sel_ranks, &nsel, &seltext) != 0) {
		return 2;
	}
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	struct insight_options *io = analysis_config_opts(&cfg, &analysis_insights.opts);
	io->metrics = o.metrics;
	io->link_gbps = o.link_gbps;
	struct buf err = BUF_INIT;
	if (analysis_config_check(&cfg, &err) != 0) {
		fprintf(stderr, "dyno report: %s\n", err.data);
		rc = 2;
		goto out_cfg;
	}
	xalloc_huge_pages(2u << 20);
	struct trace_load_opts lo = {.threads = (int)o.threads, .keep_last_step = o.keep_last_step,
				     .skip_unreadable = true};
	analysis_load_opts(&analysis_insights, &lo);
	if (!o.no_cp) {
		lo.skip_cpu_ops = false;
		lo.keep_event_waits = true;
	}
	struct trace_set set;
	if (trace_set_load_paths(&set, (const char *const *)pos, (size_t)npos, &lo, &err) != 0) {
		fprintf(stderr, "dyno report: %s\n", err.data);
		rc = 1;
		goto out_cfg;
	}
	if (!o.quiet && set.warnings[0])
		fprintf(stderr, "%s", set.warnings);
	/* the rows and ranks every section sees, as in dyno analyze: nothing
	 * selected is exit 4, a rank not in the inputs 2 */
	struct analyze_ranks sel = {sel_ranks, nsel};
	rc = trace_set_select(&set, &rows, &err) != 0 ? 4
	     : analyze_ranks_check(&set, &sel, "the inputs", &err) != 0 ? 2
									 : 0;
	if (rc) {
		fprintf(stderr, "dyno report: %s%s\n", rc == 2 ? "--ranks: " : "", err.data);
		trace_set_free(&set);
		goto out_cfg;
	}
	struct trace_set view = analyze_view(&set, &sel);
	struct buf partial = BUF_INIT;
	for (size_t k = 0; k < set.nranks; k++)
		if (set.ranks[k]->stats.truncated)
			buf_printf(&partial, "%sdamaged trace, rank %d: %s", partial.len ? "; " : "", set.ranks[k]->rank,
				   set.ranks[k]->stats.truncated_msg);
	struct analyze_run_opts ro = {.only = &analysis_insights, .config = &cfg, .fmt = AFMT_JSON,
				      .every_table = true, .threads = (int)o.threads};
	struct analyze_results res, cp = {0};
	analyze_run(&view, NULL, &ro, &res);
	const char *cp_why = NULL;
	char cp_buf[160];
	const struct trace_rank *cpr = view.nranks ? view.ranks[0] : NULL;
	if (o.no_cp) {
		cp_why = "--no-critical-path";
	} else if (!o.cp && cpr && cpr->n > INSIGHT_CP_MAX_ROWS) {
		snprintf(cp_buf, sizeof cp_buf,
			 "rank %d has %zu events (over %d, where it costs seconds); --critical-path computes it", cpr->rank,
			 cpr->n, INSIGHT_CP_MAX_ROWS);
		cp_why = cp_buf;
	} else {
		struct analyze_run_opts co = {.only = &analysis_critical_path, .config = &cfg, .fmt = AFMT_JSON,
					      .threads = (int)o.threads};
		analyze_run(&view, NULL, &co, &cp);
		for (size_t i = 0; i < cp.n && !cp_why; i++)
			if (cp.v[i].t->unavailable) {
				/* its note says why (first line) */
				const char *n = cp.v[i].t->notes.data, *nl = strchr(n, '\n');
				snprintf(cp_buf, sizeof cp_buf, "%.*s", nl ? (int)(nl - n) : (int)strlen(n), n);
				cp_why = cp_buf;
			}
	}
	struct buf html = BUF_INIT;
	struct report r = {&view, &res, &cp, cp_why, partial.data, seltext.data ? seltext.data : "", -1, NULL, &html};
	struct buf inputs = BUF_INIT;
	for (int i = 0; i < npos; i++)
		buf_printf(&inputs, "%s%s", i ? " " : "", pos[i]);
	render(&r, inputs.data);
	rc = html_write_file("dyno report", o.out, &html);
	if (rc == 0 && !o.quiet) {
		const struct atable *f = table(&res, "insights");
		fprintf(stderr, "dyno report: wrote %s (%zu bytes): %zu finding%s, %zu rank%s%s\n", o.out, html.len,
			f ? f->nrows : 0, f && f->nrows == 1 ? "" : "s", view.nranks, view.nranks == 1 ? "" : "s",
			partial.len || set.left_out ? " (PARTIAL: damaged or unreadable traces, named above)" : "");
	}
	if (rc == 0 && (partial.len || set.left_out))
		rc = 3;
	buf_free(&inputs);
	buf_free(&html);
	buf_free(&partial);
	analyze_results_free(&res);
	if (cp.v || cp.timings || cp.skipped)
		analyze_results_free(&cp);
	free(view.ranks);
	trace_set_free(&set);
out_cfg:
	buf_free(&err);
	buf_free(&seltext);
	free(sel_ranks);
	analysis_config_free(&cfg);
	return rc;
}
