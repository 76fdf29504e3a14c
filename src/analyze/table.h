/*
 * table.h - the one result-table type of `dyno analyze` and its one
 * renderer.  Every analysis fills a struct atable (named columns of ints,
 * floats or strings; NaN floats are "no value"); atable_render() prints it
 * as an aligned terminal table, as CSV (column names and number text as
 * pandas' to_csv writes HTA's frames, so `diff` against HTA works), or as
 * JSON.  Nothing else in the analyze code formats output.
 */
#ifndef DYNO_ANALYZE_TABLE_H
#define DYNO_ANALYZE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"

enum acol_type { ACOL_INT, ACOL_FLOAT, ACOL_STR };

union acell {
	int64_t i;
	double f; /* NaN = empty */
	char *s;
};

struct acol {
	char *name;
	enum acol_type type;
	bool int_text; /* ACOL_FLOAT printed like pandas' int64 ("4", not "4.0") */
};

struct atable {
	char *name;  /* e.g. "temporal_breakdown" (the CSV file name without .csv) */
	char *title; /* one line for the terminal table */
	size_t ncols;
	struct acol *cols;
	size_t nrows, cap;
	union acell *cells; /* row-major */
	struct buf notes;   /* lines printed after the table (warnings, derived counts) */
	char *partial;      /* results from a damaged trace: why (NULL: complete) */
	bool wide;          /* terminal table: long texts in full (--wide) */
	bool unavailable;   /* the analysis is undefined on this trace (HTA fails): the notes
			     * say why, `dyno analyze <analysis>` exits 4 */
	bool output_failed; /* a file asked for beside the table (--write-trace,
			     * --patterns-trace) was not written: the notes say why,
			     * `dyno analyze` exits 1 */
};

enum aformat { AFMT_TABLE, AFMT_CSV, AFMT_JSON };

/* cols: "name:i", "name:f" or "name:s", NULL-terminated. */
struct atable *atable_new(const char *name, const char *title, const char *const *cols);
void atable_free(struct atable *t);
size_t atable_add_row(struct atable *t);
void atable_set_i(struct atable *t, size_t row, size_t col, int64_t v);
void atable_set_f(struct atable *t, size_t row, size_t col, double v);
void atable_set_s(struct atable *t, size_t row, size_t col, const char *s);
static inline union acell *atable_cell(struct atable *t, size_t row, size_t col)
{
	return &t->cells[row * t->ncols + col];
}
/* Print integral values of float column col without ".0" (an int64 column
 * in HTA's frame). */
void atable_int_text(struct atable *t, size_t col);
/* Mark the table as results from a damaged trace (the reason is copied):
 * the terminal title and the JSON object say so; CSV, HTA's format, does
 * not change (the caller says it on stderr). */
void atable_set_partial(struct atable *t, const char *reason);
void atable_note(struct atable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Move the rows and notes of src (same columns) to the end of dst and free
 * src: the table of several ranks from per-rank tables computed in
 * parallel.  A column prints as integers only if it did in both. */
void atable_append(struct atable *dst, struct atable *src);

/* Render one table.  For JSON, the table is an object
 * {"name":..., "columns":[...], "rows":[{...}], "notes":[...]}, with
 * "partial":true,"partial_reason":"..." after the name when partial. */
void atable_render(const struct atable *t, enum aformat fmt, struct buf *out);
/* The CSV text of rows [from, to) (to past the end: to the end), the
 * header line first when from is 0: what atable_render gives for CSV, in
 * pieces that can be made on several threads. */
void atable_render_csv_rows(const struct atable *t, size_t from, size_t to, struct buf *out);
/* The title and the notes only (no rows): the terminal view of a table
 * too long to read, such as one row per kernel launch. */
void atable_render_notes(const struct atable *t, struct buf *out);
/* Python repr() text of a double (what pandas writes): 3.0, 0.17, 1e-05. */
void atable_fmt_float(struct buf *out, double v);
/* The terminal table's text of a double: two decimals from 1 up, three
 * significant digits below 1, trailing zeros dropped (1.55078125 -> 1.55,
 * 0.012345 -> 0.0123); whole numbers, tiny and huge values as
 * atable_fmt_float. */
void atable_fmt_display(struct buf *out, double v);
/* numpy's round(x, n) (x * 10^n rounded half-to-even, divided back). */
double atable_round(double x, int ndigits);

#endif
