/*
 * html.h - one self-contained HTML page (html.c): inline CSS, inline SVG
 * charts, no script, no network, so that it opens offline, as an e-mail
 * attachment and in print.  `dyno report` writes one; anything else that
 * needs a page (the fleet report) uses the same pieces: the page frame,
 * escaped text, an analysis table (struct atable) as an HTML table, and
 * two charts with axes, ticks, units and a legend -- lines (time series,
 * downsampled to a few points per pixel column, peaks kept) and horizontal
 * bars (stacked parts, one bar highlighted).  Every data mark carries the
 * class "mark", so a test can count what a chart drew.
 */
#ifndef DYNO_CLI_HTML_H
#define DYNO_CLI_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/table.h"
#include "core/buf.h"

/* <!doctype html>... <body><main>; html_end closes it. */
void html_begin(struct buf *b, const char *title);
void html_end(struct buf *b);
/* Text with & < > " ' escaped. */
void html_esc(struct buf *b, const char *s);
void html_escn(struct buf *b, const char *s, size_t n);
/* s[0..n) escaped, cut in the middle when longer than head + tail bytes:
 * its first head and last tail bytes around an ellipsis, the cuts moved to
 * UTF-8 character boundaries. */
void html_esc_cut(struct buf *b, const char *s, size_t n, size_t head, size_t tail);
/* <hN id=...>text</hN> (id NULL: none) */
void html_heading(struct buf *b, int level, const char *id, const char *text);
/* <p class=cls>escaped printf text</p> (cls NULL: none) */
void html_para(struct buf *b, const char *cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The table's columns and at most max_rows rows (a note says how many
 * more), numbers as the terminal prints them, long texts cut in the middle
 * with the whole text as a tooltip; its notes under it. */
void html_table(struct buf *b, const struct atable *t, size_t max_rows);

/* A chart's frame. */
struct html_chart {
	const char *title;
	const char *xlabel; /* with the unit: "time since the trace start (ms)" */
	const char *ylabel;
};

/* One line: points (x[i], y[i]) in x order. */
struct html_series {
	const char *name;
	const double *x, *y;
	size_t n;
	bool step;      /* a step function (a counter that holds its value) */
	bool highlight; /* drawn thick and red (the straggler) */
	bool dots;      /* each point a dot, no line (points picked out of another series) */
};
/* Lines over a shared x axis; each series is downsampled to at most
 * max_points points (min and max per pixel column kept).  Nothing drawn
 * (a note instead) when no series has a point. */
void html_line_chart(struct buf *b, const struct html_chart *c, const struct html_series *s, size_t ns,
		     size_t max_points);

/* One horizontal bar: its label and up to HTML_MAX_PARTS stacked values. */
#define HTML_MAX_PARTS 8
struct html_bar {
	const char *label; /* shown cut in the middle to the label room, distinct per chart */
	double v[HTML_MAX_PARTS];
	bool highlight;
	const char *title; /* the tooltip; NULL: the label */
};
/* A kernel's name as a chart label: its function name without "void ",
 * namespaces, template arguments and parameters
 * ("split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1"
 * of "void split_embedding_..._row_1<c10::Half, ...>(at::...)"); the
 * whole name when that leaves nothing.  Appended to out. */
void html_kernel_label(struct buf *out, const char *name);
/* Bars with nparts stacked parts named parts[] (a legend when more than
 * one), the value axis from 0. */
void html_bar_chart(struct buf *b, const struct html_chart *c, const char *const *parts, size_t nparts,
		    const struct html_bar *bars, size_t nbars);

/* Write the page to path ("-": stdout) through a temporary file in the
 * same directory, so that a reader never sees half a page.  0, or 1 with
 * "prog: path: why" on stderr. */
int html_write_file(const char *prog, const char *path, const struct buf *b);

#endif
