/*
 * html.c - the pieces of a self-contained HTML page (html.h): the frame
 * with its stylesheet, escaping, tables and two SVG charts.  The SVG is
 * written at a fixed viewBox and scales to the window (width 100%), so one
 * page reads in a narrow window and in print; text stays selectable.
 * Costs: the page is built in one buffer; a line chart is O(points) with
 * at most max_points written per series.
 */
#include "report/html.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the palette: distinguishable, print-safe; red is the highlight */
static const char *const colors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22",
				     "#7f7f7f", "#e377c2", "#ff7f0e"};
#define NCOLORS (sizeof colors / sizeof colors[0])
#define HIGHLIGHT "#d62728"

void html_escn(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\'': buf_puts(b, "&#39;"); break;
		default: buf_putc(b, s[i]);
		}
	}
}

void html_esc(struct buf *b, const char *s)
{
	html_escn(b, s, strlen(s));
}

void html_begin(struct buf *b, const char *title)
{
	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	html_esc(b, title);
	buf_puts(b,
		 "</title>\n<style>\n"
		 "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,Helvetica,Arial,sans-serif;"
		 "color:#222;background:#fff;margin:0}\n"
		 "main{max-width:1100px;margin:0 auto;padding:12px 16px}\n"
		 "h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:24px 0 8px;border-bottom:1px solid #ddd}"
		 "h3{font-size:15px;margin:16px 0 6px}\n"
		 ".muted{color:#666}.warn{background:#fff4e5;border-left:4px solid #ef6c00;padding:6px 10px}\n"
		 ".finding{border-left:5px solid #1565c0;background:#f6f8fb;padding:6px 10px;margin:8px 0;"
		 "break-inside:avoid}\n"
		 ".finding.high{border-color:#c62828;background:#fdf3f3}.finding.medium{border-color:#ef6c00;"
		 "background:#fff8f0}\n"
		 ".sev{font-weight:600;text-transform:uppercase;font-size:12px;margin-right:6px}\n"
		 ".finding .where{color:#444;word-break:break-all}.finding .rec{margin-top:4px}\n"
		 ".scroll{overflow-x:auto}\n"
		 "table{border-collapse:collapse;font-size:12.5px;margin:6px 0}"
		 "th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}"
		 "th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
		 "figure{margin:10px 0 18px;break-inside:avoid}figcaption{font-weight:600;margin-bottom:2px}\n"
		 "svg.chart{width:100%;height:auto;max-width:900px;display:block}\n"
		 "svg.chart text{font:11px system-ui,sans-serif;fill:#333}\n"
		 ".legend span{display:inline-block;margin-right:12px;font-size:12px}"
		 ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}\n"
		 "@media print{main{max-width:none}h2{break-after:avoid}.scroll{overflow:visible}}\n"
		 "</style></head><body><main>\n");
}

void html_end(struct buf *b)
{
	buf_puts(b, "</main></body></html>\n");
}

void html_heading(struct buf *b, int level, const char *id, const char *text)
{
	buf_printf(b, "<h%d", level);
	if (id)
		buf_printf(b, " id=\"%s\"", id);
	buf_putc(b, '>');
	html_esc(b, text);
	buf_printf(b, "</h%d>\n", level);
}

void html_para(struct buf *b, const char *cls, const char *fmt, ...)
{
	struct buf t = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&t, fmt, ap);
	va_end(ap);
	buf_puts(b, "<p");
	if (cls)
		buf_printf(b, " class=\"%s\"", cls);
	buf_putc(b, '>');
	html_escn(b, t.data, t.len);
	buf_puts(b, "</p>\n");
	buf_free(&t);
}

/* s's first head and last tail bytes around an ellipsis, the cuts moved
 * to UTF-8 character boundaries (a cut inside a character is invalid text) */
void html_esc_cut(struct buf *b, const char *s, size_t n, size_t head, size_t tail)
{
	if (n <= head + tail) {
		html_escn(b, s, n);
		return;
	}
	while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
		head--;
	size_t from = n - tail;
	while (from < n && ((unsigned char)s[from] & 0xC0) == 0x80)
		from++;
	html_escn(b, s, head);
	buf_puts(b, "\xe2\x80\xa6");
	html_escn(b, s + from, n - from);
}

/* a text cut in the middle when long, the whole as a tooltip */
static void cut_text(struct buf *b, const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max) {
		html_esc(b, s);
		return;
	}
	buf_puts(b, "<span title=\"");
	html_esc(b, s);
	buf_puts(b, "\">");
	html_esc_cut(b, s, n, max * 2 / 3, max / 3);
	buf_puts(b, "</span>");
}

void html_table(struct buf *b, const struct atable *t, size_t max_rows)
{
	buf_puts(b, "<div class=\"scroll\"><table><thead><tr>");
	for (size_t c = 0; c < t->ncols; c++) {
		buf_puts(b, "<th>");
		html_esc(b, t->cols[c].name);
		buf_puts(b, "</th>");
	}
	buf_puts(b, "</tr></thead><tbody>\n");
	size_t n = t->nrows < max_rows ? t->nrows : max_rows;
	for (size_t r = 0; r < n; r++) {
		buf_puts(b, "<tr>");
		for (size_t c = 0; c < t->ncols; c++) {
			const union acell *v = &t->cells[r * t->ncols + c];
			if (t->cols[c].type == ACOL_STR) {
				buf_puts(b, "<td>");
				cut_text(b, v->s ? v->s : "", 80);
			} else if (t->cols[c].type == ACOL_INT) {
				buf_printf(b, "<td class=\"n\">%lld", (long long)v->i);
			} else {
				buf_puts(b, "<td class=\"n\">");
				if (isnan(v->f))
					buf_puts(b, "-");
				else
					atable_fmt_display(b, v->f);
			}
			buf_puts(b, "</td>");
		}
		buf_puts(b, "</tr>\n");
	}
	buf_puts(b, "</tbody></table></div>\n");
	if (t->nrows > n)
		html_para(b, "muted", "%zu more rows (dyno analyze gives them all).", t->nrows - n);
	if (t->notes.len) {
		buf_puts(b, "<p class=\"muted\">");
		for (size_t i = 0; i < t->notes.len; i++) {
			if (t->notes.data[i] == '\n')
				buf_puts(b, "<br>");
			else
				html_escn(b, &t->notes.data[i], 1);
		}
		buf_puts(b, "</p>\n");
	}
}

/* ---- axes ---- */

/* a "nice" step for about n ticks over [lo, hi] */
static double nice_step(double lo, double hi, int n)
{
	double span = hi - lo;
	if (!(span > 0))
		return 1;
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void fmt_tick(struct buf *b, double v)
{
	double a = fabs(v);
	if (a >= 1e9)
		buf_printf(b, "%gG", v / 1e9);
	else if (a >= 1e6)
		buf_printf(b, "%gM", v / 1e6);
	else if (a >= 1e4)
		buf_printf(b, "%gk", v / 1e3);
	else
		buf_printf(b, "%g", fabs(v) < 1e-12 ? 0 : v);
}

enum { W = 720, ML = 66, MR = 14, MT = 10, MB = 44 };

static void legend(struct buf *b, const char *const *names, const bool *hl, size_t n)
{
	buf_puts(b, "<div class=\"legend\">");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "<span><i style=\"background:%s\"></i>", hl && hl[i] ? HIGHLIGHT : colors[i % NCOLORS]);
		html_esc(b, names[i]);
		buf_puts(b, "</span>");
	}
	buf_puts(b, "</div>\n");
}

static void svg_begin(struct buf *b, const struct html_chart *c, int h)
{
	buf_printf(b, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", W, h);
	html_esc(b, c->title);
	buf_puts(b, "\" xmlns=\"http://www.w3.org/2000/svg\">");
}

/* the x axis (ticks over [lo, hi]) at y0, and the axis labels */
static void x_axis(struct buf *b, const struct html_chart *c, double lo, double hi, int y0, int x1)
{
	buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", ML, y0, x1, y0);
	double st = nice_step(lo, hi, 6);
	for (double v = ceil(lo / st) * st; v <= hi + st * 1e-9; v += st) {
		double x = ML + (hi > lo ? (v - lo) / (hi - lo) : 0) * (x1 - ML);
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>", x, y0, x, y0 + 4);
		buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x, y0 + 16);
		fmt_tick(b, v);
		buf_puts(b, "</text>");
	}
	buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + x1) / 2, y0 + 34);
	html_esc(b, c->xlabel);
	buf_puts(b, "</text>");
}

/* ---- line chart ---- */

/* Downsample (x, y)[0..n) to at most max points into ox/oy: per column of
 * x, the first, the lowest, the highest and the last point in x order. */
static size_t downsample(const double *x, const double *y, size_t n, size_t max, double lo, double hi, double *ox,
			 double *oy)
{
	if (n <= max) {
		memcpy(ox, x, n * sizeof *x);
		memcpy(oy, y, n * sizeof *y);
		return n;
	}
	size_t cols = max / 4 ? max / 4 : 1, out = 0, i = 0;
	while (i < n) {
		size_t col = hi > lo ? (size_t)((x[i] - lo) / (hi - lo) * (double)(cols - 1)) : 0, j = i, mn = i, mx = i;
		while (j < n && (hi > lo ? (size_t)((x[j] - lo) / (hi - lo) * (double)(cols - 1)) : 0) == col) {
			if (y[j] < y[mn])
				mn = j;
			if (y[j] > y[mx])
				mx = j;
			j++;
		}
		size_t pick[4] = {i, mn < mx ? mn : mx, mn < mx ? mx : mn, j - 1}, last = (size_t)-1;
		for (int k = 0; k < 4; k++)
			if (pick[k] != last) {
				ox[out] = x[pick[k]];
				oy[out++] = y[pick[k]];
				last = pick[k];
			}
		i = j;
	}
	return out;
}

void html_line_chart(struct buf *b, const struct html_chart *c, const struct html_series *s, size_t ns,
		     size_t max_points)
{
	double xlo = INFINITY, xhi = -INFINITY, ylo = 0, yhi = -INFINITY;
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++) {
			if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i]))
				continue;
			xlo = fmin(xlo, s[k].x[i]);
			xhi = fmax(xhi, s[k].x[i]);
			ylo = fmin(ylo, s[k].y[i]);
			yhi = fmax(yhi, s[k].y[i]);
		}
	buf_puts(b, "<figure><figcaption>");
	html_esc(b, c->title);
	buf_puts(b, "</figcaption>\n");
	if (!(xhi >= xlo)) {
		html_para(b, "muted", "No data for this chart.");
		buf_puts(b, "</figure>\n");
		return;
	}
	if (!(yhi > ylo))
		yhi = ylo + 1;
	yhi += (yhi - ylo) * 0.05;
	/* every point at one x (the ranks of one trace share a start): the
	 * axis is centred on it, not begun at it, so the points stand in the
	 * frame rather than on its left edge */
	if (xhi == xlo) {
		xlo -= 0.5;
		xhi += 0.5;
	}
	const char **names = xcalloc(ns ? ns : 1, sizeof *names);
	bool *hl = xcalloc(ns ? ns : 1, sizeof *hl);
	for (size_t k = 0; k < ns; k++) {
		names[k] = s[k].name;
		hl[k] = s[k].highlight;
	}
	if (ns > 1)
		legend(b, names, hl, ns);
	int h = 250, y0 = h - MB, x1 = W - MR;
	svg_begin(b, c, h);
	/* y grid, ticks and label */
	double st = nice_step(ylo, yhi, 5);
	for (double v = ceil(ylo / st) * st; v <= yhi; v += st) {
		double y = y0 - (v - ylo) / (yhi - ylo) * (y0 - MT);
		buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>", ML, y, x1, y);
		buf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", ML - 5, y + 4);
		fmt_tick(b, v);
		buf_puts(b, "</text>");
	}
	buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", ML, MT, ML, y0);
	buf_printf(b, "<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">", (MT + y0) / 2);
	html_esc(b, c->ylabel);
	buf_puts(b, "</text>");
	x_axis(b, c, xlo, xhi, y0, x1);
	double *ox = xmalloc((max_points + 4) * sizeof *ox), *oy = xmalloc((max_points + 4) * sizeof *oy);
	/* highlighted last, on top */
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < ns; k++) {
			if ((pass == 1) != s[k].highlight || s[k].n == 0)
				continue;
			size_t n = downsample(s[k].x, s[k].y, s[k].n, max_points, xlo, xhi, ox, oy);
			const char *col = s[k].highlight ? HIGHLIGHT : colors[k % NCOLORS];
			if (s[k].dots) {
				for (size_t i = 0; i < n; i++) {
					buf_printf(b, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>",
						   ML + (ox[i] - xlo) / (xhi - xlo) * (x1 - ML),
						   y0 - (oy[i] - ylo) / (yhi - ylo) * (y0 - MT), col);
					html_esc(b, s[k].name);
					buf_puts(b, "</title></circle>");
				}
				continue;
			}
			buf_printf(b, "<polyline class=\"mark\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"",
				   s[k].highlight ? HIGHLIGHT : colors[k % NCOLORS], s[k].highlight ? "2.5" : "1.3");
			double prev = NAN;
			for (size_t i = 0; i < n; i++) {
				double px = ML + (ox[i] - xlo) / (xhi - xlo) * (x1 - ML);
				double py = y0 - (oy[i] - ylo) / (yhi - ylo) * (y0 - MT);
				if (s[k].step && isfinite(prev))
					buf_printf(b, "%.1f,%.1f ", px, prev);
				buf_printf(b, "%.1f,%.1f ", px, py);
				prev = py;
			}
			buf_puts(b, "\"><title>");
			html_esc(b, s[k].name);
			buf_puts(b, "</title></polyline>");
			/* one point, or all at one x (a line of no length that
			 * would not show): a dot for each, so they show */
			bool one_x = true;
			for (size_t i = 1; i < n && one_x; i++)
				one_x = ox[i] == ox[0];
			for (size_t i = 0; one_x && i < n; i++)
				buf_printf(b, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>",
					   ML + (ox[i] - xlo) / (xhi - xlo) * (x1 - ML),
					   y0 - (oy[i] - ylo) / (yhi - ylo) * (y0 - MT),
					   s[k].highlight ? HIGHLIGHT : colors[k % NCOLORS]);
		}
	buf_puts(b, "</svg></figure>\n");
	free(ox);
	free(oy);
	free(names);
	free(hl);
}

/* ---- bar chart ---- */

void html_kernel_label(struct buf *out, const char *name)
{
	const char *s = name;
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	/* the name ends at its template arguments or parameters (depth 0) */
	size_t end = strcspn(s, "<(");
	/* the last component of a qualified name: after the last "::" */
	size_t from = 0;
	for (size_t i = 0; i + 1 < end; i++)
		if (s[i] == ':' && s[i + 1] == ':')
			from = i + 2;
	while (from < end && s[from] == ' ')
		from++;
	while (end > from && s[end - 1] == ' ')
		end--;
	if (end <= from) {
		buf_puts(out, name);
		return;
	}
	buf_printf(out, "%.*s", (int)(end - from), s + from);
	/* a generic name ("cutlass::Kernel<cutlass_80_tensorop_s1688gemm_...>"):
	 * its first template argument says which */
	if (end - from < 8 && s[end] == '<') {
		size_t a = end + 1, e = a;
		while (s[e] && s[e] != ',' && s[e] != '>' && s[e] != '<')
			e++;
		while (a < e && s[a] == ' ')
			a++;
		if (e > a)
			buf_printf(out, "<%.*s>", (int)(e - a), s + a);
	}
}

/* The bar labels' room: x0 - 6 = 274 px of 11 px text (about 6 px a
 * character, 7 in bold: 36 and " #2" fit); a longer label is cut in the
 * middle, keeping its end (a kernel's distinctive part:
 * "..._cta_per_row_1"). */
#define BAR_LABEL_CHARS 36

/* labels[i]: bars[i].label fitted to max characters (UTF-8 aware, an
 * ellipsis in the middle) and made distinct within the chart: a label
 * another bar already shows gets " #2", " #3", ... */
static void bar_labels(const struct html_bar *bars, size_t nbars, struct buf *labels)
{
	for (size_t i = 0; i < nbars; i++) {
		const char *l = bars[i].label ? bars[i].label : "";
		size_t n = strlen(l);
		buf_init(&labels[i]);
		if (n > BAR_LABEL_CHARS) {
			/* a short prefix that says where ("[rank 3] ", "rank 3: ")
			 * is kept whole; of the rest, two fifths before the
			 * ellipsis and the end after it */
			size_t pre = 0;
			for (size_t k = 1; k < 14 && k + 1 < n && !pre; k++)
				if ((l[k] == ']' || l[k] == ':') && l[k + 1] == ' ')
					pre = k + 2;
			size_t room = BAR_LABEL_CHARS - 1 - pre;
			size_t head = pre + room * 2 / 5, tail = room - room * 2 / 5;
			while (head > pre && ((unsigned char)l[head] & 0xC0) == 0x80)
				head--;
			size_t from = n - tail;
			while (from < n && ((unsigned char)l[from] & 0xC0) == 0x80)
				from++;
			buf_printf(&labels[i], "%.*s\xe2\x80\xa6%s", (int)head, l, l + from);
		} else {
			buf_puts(&labels[i], l);
		}
		size_t same = 1;
		for (size_t k = 0; k < i; k++)
			same += strcmp(labels[k].data, labels[i].data) == 0 ||
				(strncmp(labels[k].data, labels[i].data, labels[i].len) == 0 &&
				 strncmp(labels[k].data + labels[i].len, " #", 2) == 0);
		if (same > 1)
			buf_printf(&labels[i], " #%zu", same);
	}
}

void html_bar_chart(struct buf *b, const struct html_chart *c, const char *const *parts, size_t nparts,
		    const struct html_bar *bars, size_t nbars)
{
	if (nparts > HTML_MAX_PARTS)
		nparts = HTML_MAX_PARTS;
	buf_puts(b, "<figure><figcaption>");
	html_esc(b, c->title);
	buf_puts(b, "</figcaption>\n");
	double hi = 0;
	for (size_t i = 0; i < nbars; i++) {
		double sum = 0;
		for (size_t p = 0; p < nparts; p++)
			sum += isfinite(bars[i].v[p]) && bars[i].v[p] > 0 ? bars[i].v[p] : 0;
		hi = fmax(hi, sum);
	}
	if (nbars == 0) {
		html_para(b, "muted", "No data for this chart.");
		buf_puts(b, "</figure>\n");
		return;
	}
	if (!(hi > 0))
		hi = 1;
	if (nparts > 1)
		legend(b, (const char **)parts, NULL, nparts);
	/* the labels take the left 280 px (BAR_LABEL_CHARS) */
	int lw = 280, bh = 18, gap = 6, h = MT + (int)nbars * (bh + gap) + MB, y0 = h - MB, x1 = W - MR, x0 = lw;
	svg_begin(b, c, h);
	double st = nice_step(0, hi, 6);
	for (double v = 0; v <= hi * 1.0001; v += st) {
		double x = x0 + v / hi * (x1 - x0);
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e5e5e5\"/>", x, MT, x, y0);
	}
	struct buf *shown = xcalloc(nbars, sizeof *shown);
	bar_labels(bars, nbars, shown);
	for (size_t i = 0; i < nbars; i++) {
		int y = MT + (int)i * (bh + gap);
		const char *l = bars[i].label ? bars[i].label : "";
		buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s><title>", x0 - 6, y + bh - 5,
			   bars[i].highlight ? " font-weight=\"bold\" fill=\"" HIGHLIGHT "\"" : "");
		html_esc(b, bars[i].title ? bars[i].title : l);
		buf_puts(b, "</title>");
		html_esc(b, shown[i].data);
		buf_puts(b, "</text>");
		double x = x0;
		for (size_t p = 0; p < nparts; p++) {
			double v = isfinite(bars[i].v[p]) && bars[i].v[p] > 0 ? bars[i].v[p] : 0;
			double w = v / hi * (x1 - x0);
			const char *col = nparts == 1 && bars[i].highlight ? HIGHLIGHT : colors[p % NCOLORS];
			buf_printf(b,
				   "<rect class=\"mark\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s><title>",
				   x, y, w, bh, col,
				   bars[i].highlight && nparts > 1 ? " stroke=\"" HIGHLIGHT "\" stroke-width=\"2\"" : "");
			html_esc(b, bars[i].title ? bars[i].title : l);
			if (nparts > 1) {
				buf_puts(b, ": ");
				html_esc(b, parts[p]);
			}
			buf_puts(b, " = ");
			atable_fmt_display(b, v);
			buf_puts(b, "</title></rect>");
			x += w;
		}
	}
	for (size_t i = 0; i < nbars; i++)
		buf_free(&shown[i]);
	free(shown);
	/* the value axis: x_axis draws from ML, so shift by the label room */
	buf_printf(b, "<g transform=\"translate(%d 0)\">", x0 - ML);
	x_axis(b, c, 0, hi, y0, x1 - (x0 - ML));
	buf_puts(b, "</g>");
	buf_puts(b, "</svg></figure>\n");
}

int html_write_file(const char *prog, const char *path, const struct buf *b)
{
	if (strcmp(path, "-") == 0) {
		if (fwrite(b->data, 1, b->len, stdout) == b->len && fflush(stdout) == 0)
			return 0;
		fprintf(stderr, "%s: stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	/* a path that exists and is no regular file (a FIFO, a device) is
	 * written in place: a temporary file renamed onto it would replace
	 * the device (/dev/full) with a file */
	struct stat st;
	bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	struct buf tmp = BUF_INIT;
	if (in_place)
		buf_puts(&tmp, path);
	else
		buf_printf(&tmp, "%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp.data, "w");
	bool ok = f != NULL;
	if (f) {
		ok = fwrite(b->data, 1, b->len, f) == b->len;
		ok = fflush(f) == 0 && ok;
		ok = fclose(f) == 0 && ok; /* closed even when the write failed */
	}
	ok = ok && (in_place || rename(tmp.data, path) == 0);
	if (!ok) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		if (!in_place)
			unlink(tmp.data);
	}
	buf_free(&tmp);
	return ok ? 0 : 1;
}
