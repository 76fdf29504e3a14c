/*
 * table.c - result tables and their rendering (see table.h).
 *
 * Number text: CSV prints floats the way Python's repr does (shortest text
 * that reads back the same, always with a '.0' or an exponent), because
 * that is what pandas' to_csv writes into HTA's CSVs and users diff ours
 * against theirs.  The terminal table rounds (two decimals, or three
 * significant digits below 1) because 3475.046167285705 is noise to a
 * reader; whole numbers print the same in both.  JSON uses the core writer
 * (full precision).
 */
#include "analyze/table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

struct atable *atable_new(const char *name, const char *title, const char *const *cols)
{
	struct atable *t = xcalloc(1, sizeof *t);
	t->name = xstrdup(name);
	t->title = xstrdup(title ? title : name);
	buf_init(&t->notes);
	size_t n = 0;
	while (cols[n])
		n++;
	t->ncols = n;
	t->cols = xcalloc(n ? n : 1, sizeof *t->cols);
	for (size_t i = 0; i < n; i++) {
		const char *c = strrchr(cols[i], ':');
		size_t len = c ? (size_t)(c - cols[i]) : strlen(cols[i]);
		t->cols[i].name = xstrndup(cols[i], len);
		t->cols[i].type = !c ? ACOL_STR : c[1] == 'i' ? ACOL_INT : c[1] == 'f' ? ACOL_FLOAT : ACOL_STR;
	}
	return t;
}

void atable_free(struct atable *t)
{
	if (!t)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (t->cols[c].type == ACOL_STR)
				free(t->cells[r * t->ncols + c].s);
	for (size_t c = 0; c < t->ncols; c++)
		free(t->cols[c].name);
	free(t->cols);
	free(t->cells);
	free(t->name);
	free(t->title);
	free(t->partial);
	buf_free(&t->notes);
	free(t);
}

void atable_set_partial(struct atable *t, const char *reason)
{
	free(t->partial);
	t->partial = xstrdup(reason);
}

/* The terminal title line: a partial table says so where it is read. */
static void title_line(const struct atable *t, struct buf *out)
{
	if (t->partial)
		buf_printf(out, "%s [PARTIAL: %s]\n", t->title, t->partial);
	else
		buf_printf(out, "%s\n", t->title);
}

size_t atable_add_row(struct atable *t)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof *t->cells + 1);
	}
	size_t r = t->nrows++;
	for (size_t c = 0; c < t->ncols; c++) {
		union acell *x = atable_cell(t, r, c);
		if (t->cols[c].type == ACOL_FLOAT)
			x->f = NAN;
		else if (t->cols[c].type == ACOL_INT)
			x->i = 0;
		else
			x->s = NULL;
	}
	return r;
}

void atable_set_i(struct atable *t, size_t row, size_t col, int64_t v) { atable_cell(t, row, col)->i = v; }
void atable_set_f(struct atable *t, size_t row, size_t col, double v) { atable_cell(t, row, col)->f = v; }
void atable_set_s(struct atable *t, size_t row, size_t col, const char *s)
{
	union acell *x = atable_cell(t, row, col);
	free(x->s);
	x->s = xstrdup(s ? s : "");
}

void atable_int_text(struct atable *t, size_t col) { t->cols[col].int_text = true; }

void atable_note(struct atable *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&t->notes, fmt, ap);
	va_end(ap);
	buf_putc(&t->notes, '\n');
}

void atable_append(struct atable *dst, struct atable *src)
{
	for (size_t c = 0; c < dst->ncols && c < src->ncols; c++)
		dst->cols[c].int_text &= src->cols[c].int_text;
	for (size_t r = 0; r < src->nrows; r++) {
		size_t row = atable_add_row(dst);
		for (size_t c = 0; c < dst->ncols && c < src->ncols; c++) {
			union acell *x = atable_cell(src, r, c);
			*atable_cell(dst, row, c) = *x;
			if (src->cols[c].type == ACOL_STR)
				x->s = NULL; /* moved */
		}
	}
	buf_append(&dst->notes, src->notes.data, src->notes.len);
	dst->output_failed |= src->output_failed;
	/* appended ranks: unavailable only when it is on every one */
	dst->unavailable = dst->unavailable && src->unavailable;
	atable_free(src);
}

double atable_round(double x, int ndigits)
{
	double p = pow(10.0, ndigits);
	return nearbyint(x * p) / p;
}

void atable_fmt_float(struct buf *out, double v)
{
	if (isnan(v))
		return; /* pandas writes NaN as an empty field */
	if (isinf(v)) {
		buf_puts(out, v > 0 ? "inf" : "-inf");
		return;
	}
	if (v == 0) {
		buf_puts(out, signbit(v) ? "-0.0" : "0.0");
		return;
	}
	/* integral values (most times in µs): no digit search */
	if (v == floor(v) && fabs(v) < 1e15) {
		buf_put_i64(out, (int64_t)v); /* exact: |v| < 2^53 */
		buf_append(out, ".0", 2);
		return;
	}
	/* shortest round-trip digits: if 15 significant digits read back,
	 * they are the shortest form with trailing zeros (a shorter
	 * round-tripping decimal is a point of the 15-digit grid nearer than
	 * half its spacing); else 16, else 17 */
	char tmp[40];
	int prec;
	for (prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* tmp = [-]d.ddde[+-]XX; take digits and exponent */
	char digits[24] = "0";
	int nd = 0, exp10;
	const char *p = tmp;
	bool neg = *p == '-';
	if (neg)
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	exp10 = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = 0;
	if (neg)
		buf_putc(out, '-');
	if (exp10 >= -5 + 1 && exp10 < 16) { /* Python repr: fixed for 1e-4 <= |v| < 1e16 */
		if (exp10 >= 0) {
			for (int i = 0; i <= exp10; i++)
				buf_putc(out, i < nd ? digits[i] : '0');
			buf_putc(out, '.');
			if (nd > exp10 + 1)
				buf_append(out, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
			else
				buf_putc(out, '0');
		} else {
			buf_puts(out, "0.");
			for (int i = 0; i < -exp10 - 1; i++)
				buf_putc(out, '0');
			buf_append(out, digits, (size_t)nd);
		}
	} else {
		buf_putc(out, digits[0]);
		if (nd > 1) {
			buf_putc(out, '.');
			buf_append(out, digits + 1, (size_t)(nd - 1));
		}
		buf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	}
}

void atable_fmt_display(struct buf *out, double v)
{
	double a = fabs(v);
	if (!isfinite(v) || v == floor(v) || a >= 1e15 || a < 1e-4) {
		atable_fmt_float(out, v);
		return;
	}
	/* two decimals from 1 up; below 1, three significant digits */
	int decimals = a >= 1 ? 2 : 2 - (int)floor(log10(a));
	char tmp[48];
	int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
	while (n > 2 && tmp[n - 1] == '0' && tmp[n - 2] != '.')
		n--;
	buf_append(out, tmp, (size_t)n);
}

/* display: the terminal table's rounded text; else the exact repr text
 * the CSV and diffs against HTA need */
static void cell_text(const struct atable *t, size_t r, size_t c, bool display, struct buf *out)
{
	const union acell *x = &t->cells[r * t->ncols + c];
	switch (t->cols[c].type) {
	case ACOL_INT: buf_put_i64(out, x->i); break;
	case ACOL_FLOAT:
		if (t->cols[c].int_text && x->f == floor(x->f) && fabs(x->f) < 9e15)
			buf_put_i64(out, (int64_t)x->f);
		else if (display)
			atable_fmt_display(out, x->f);
		else
			atable_fmt_float(out, x->f);
		break;
	case ACOL_STR: buf_puts(out, x->s ? x->s : ""); break;
	}
}

static void csv_field(struct buf *out, const char *s, size_t n)
{
	bool quote = false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			quote = true;
	if (!quote) {
		buf_append(out, s, n);
		return;
	}
	buf_putc(out, '"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			buf_putc(out, '"');
		buf_putc(out, s[i]);
	}
	buf_putc(out, '"');
}

void atable_render_csv_rows(const struct atable *t, size_t from, size_t to, struct buf *out)
{
	if (from == 0) {
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				buf_putc(out, ',');
			csv_field(out, t->cols[c].name, strlen(t->cols[c].name));
		}
		buf_putc(out, '\n');
	}
	if (to > t->nrows)
		to = t->nrows;
	/* numbers straight into out: their text never needs quotes (most
	 * cells of the long tables are numbers) */
	for (size_t r = from; r < to; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				buf_putc(out, ',');
			if (t->cols[c].type == ACOL_STR) {
				const char *s = t->cells[r * t->ncols + c].s;
				csv_field(out, s ? s : "", s ? strlen(s) : 0);
			} else {
				cell_text(t, r, c, false, out);
			}
		}
		buf_putc(out, '\n');
	}
}

/* Display width of UTF-8 text (code points; good enough for names). */
static size_t text_width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			w++;
	return w;
}

#define MAX_CELL_WIDTH 60

/* Bytes of the first n code points of s[0..len). */
static size_t cp_prefix(const char *s, size_t len, size_t n)
{
	size_t b = 0;
	for (size_t k = 0; b < len && k < n; k++) {
		b++;
		while (b < len && ((unsigned char)s[b] & 0xC0) == 0x80)
			b++;
	}
	return b;
}

/* Byte offset where the last n code points of s[0..len) start. */
static size_t cp_suffix(const char *s, size_t len, size_t n)
{
	size_t b = len;
	for (size_t k = 0; b > 0 && k < n; k++) {
		b--;
		while (b > 0 && ((unsigned char)s[b] & 0xC0) == 0x80)
			b--;
	}
	return b;
}

#define CUT_TAIL ((MAX_CELL_WIDTH - 1) / 3)

/* s as its first head code points, '…', its last CUT_TAIL (kernel names
 * differ in their template arguments and signature as often as in their
 * name, so both ends are kept); s itself if that is no shorter. */
static char *cut_middle(const char *s, size_t head)
{
	size_t len = strlen(s);
	if (text_width(s, len) <= head + 1 + CUT_TAIL)
		return xstrdup(s);
	struct buf b = BUF_INIT;
	buf_append(&b, s, cp_prefix(s, len, head));
	buf_puts(&b, "\u2026");
	size_t t0 = cp_suffix(s, len, CUT_TAIL);
	buf_append(&b, s + t0, len - t0);
	return buf_detach(&b, NULL);
}

/* Code points a and b have in common at their start. */
static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0, i = 0;
	while (a[i] && a[i] == b[i]) {
		i++;
		n += ((unsigned char)a[i] & 0xC0) != 0x80;
	}
	return n;
}

struct cut_ref {
	const char *cut, *full;
	size_t row;
};

static int cut_ref_cmp(const void *a, const void *b)
{
	const struct cut_ref *x = a, *y = b;
	int c = strcmp(x->cut, y->cut);
	return c ? c : strcmp(x->full, y->full);
}

/* The terminal text of string column c, row by row, or NULL where every
 * cell fits (or t->wide): cells over MAX_CELL_WIDTH are cut in the middle;
 * rows whose different texts would look the same get a head reaching 8
 * characters past where their texts first differ (a row at its full width
 * is its text, so this ends).  Free with free_cuts. */
static char **column_cuts(const struct atable *t, size_t c)
{
	if (t->wide || t->cols[c].type != ACOL_STR)
		return NULL;
	bool any = false;
	for (size_t r = 0; r < t->nrows && !any; r++) {
		const char *x = t->cells[r * t->ncols + c].s ? t->cells[r * t->ncols + c].s : "";
		any = text_width(x, strlen(x)) > MAX_CELL_WIDTH;
	}
	if (!any)
		return NULL;
	char **cut = xcalloc(t->nrows, sizeof *cut);
	size_t *head = xmalloc(t->nrows * sizeof *head);
	bool *grow = xmalloc(t->nrows * sizeof *grow);
	struct cut_ref *ref = xmalloc(t->nrows * sizeof *ref);
	for (size_t r = 0; r < t->nrows; r++) {
		head[r] = MAX_CELL_WIDTH - 1 - CUT_TAIL;
		grow[r] = true;
	}
	for (bool clash = true; clash;) {
		for (size_t r = 0; r < t->nrows; r++) {
			const char *x = t->cells[r * t->ncols + c].s ? t->cells[r * t->ncols + c].s : "";
			if (grow[r]) {
				free(cut[r]);
				cut[r] = cut_middle(x, head[r]);
				grow[r] = false;
			}
			ref[r] = (struct cut_ref){cut[r], x, r};
		}
		qsort(ref, t->nrows, sizeof *ref, cut_ref_cmp);
		clash = false;
		for (size_t a = 0; a < t->nrows;) {
			size_t b = a + 1, lcp = 0;
			while (b < t->nrows && strcmp(ref[b].cut, ref[a].cut) == 0) {
				/* the same text on several rows (one kernel, two
				 * ranks) is no clash */
				if (strcmp(ref[b - 1].full, ref[b].full) != 0) {
					size_t p = common_prefix(ref[b - 1].full, ref[b].full);
					lcp = p > lcp ? p : lcp;
				}
				b++;
			}
			/* one cut, texts sorted: different iff the ends differ */
			if (strcmp(ref[a].full, ref[b - 1].full) != 0)
				for (size_t k = a; k < b; k++) {
					size_t *h = &head[ref[k].row];
					*h = lcp + 8 > *h + 8 ? lcp + 8 : *h + 8;
					grow[ref[k].row] = clash = true;
				}
			a = b;
		}
	}
	free(ref);
	free(grow);
	free(head);
	return cut;
}

static void free_cuts(char **cut, size_t n)
{
	if (!cut)
		return;
	for (size_t r = 0; r < n; r++)
		free(cut[r]);
	free(cut);
}

static void render_table(const struct atable *t, struct buf *out)
{
	title_line(t, out);
	size_t *w = xcalloc(t->ncols ? t->ncols : 1, sizeof *w);
	char ***cuts = xcalloc(t->ncols ? t->ncols : 1, sizeof *cuts);
	struct buf cell = BUF_INIT;
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = text_width(t->cols[c].name, strlen(t->cols[c].name));
		cuts[c] = column_cuts(t, c);
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			buf_reset(&cell);
			if (cuts[c])
				buf_puts(&cell, cuts[c][r]);
			else
				cell_text(t, r, c, true, &cell);
			size_t cw = text_width(cell.data, cell.len);
			if (cw > w[c])
				w[c] = cw;
		}
	for (size_t c = 0; c < t->ncols; c++) {
		const char *n = t->cols[c].name;
		size_t cw = text_width(n, strlen(n));
		bool right = t->cols[c].type != ACOL_STR;
		buf_puts(out, c ? "  " : "");
		if (right)
			for (size_t i = cw; i < w[c]; i++)
				buf_putc(out, ' ');
		buf_puts(out, n);
		if (!right && c + 1 < t->ncols)
			for (size_t i = cw; i < w[c]; i++)
				buf_putc(out, ' ');
	}
	buf_putc(out, '\n');
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			buf_reset(&cell);
			if (cuts[c])
				buf_puts(&cell, cuts[c][r]);
			else
				cell_text(t, r, c, true, &cell);
			if (t->cols[c].type == ACOL_FLOAT && isnan(t->cells[r * t->ncols + c].f))
				buf_puts(&cell, "-");
			size_t len = cell.len, cw = text_width(cell.data, len);
			bool right = t->cols[c].type != ACOL_STR;
			buf_puts(out, c ? "  " : "");
			if (right)
				for (size_t i = cw; i < w[c]; i++)
					buf_putc(out, ' ');
			buf_append(out, cell.data, len);
			if (!right && c + 1 < t->ncols)
				for (size_t i = cw; i < w[c]; i++)
					buf_putc(out, ' ');
		}
		buf_putc(out, '\n');
	}
	if (t->nrows == 0)
		buf_puts(out, "(no rows)\n");
	buf_append(out, t->notes.data, t->notes.len);
	buf_free(&cell);
	for (size_t c = 0; c < t->ncols; c++)
		free_cuts(cuts[c], t->nrows);
	free(cuts);
	free(w);
}

/* One JSON number type per column: an int_text float column whose values
 * are all whole prints integers (HTA's int64 frame column); any other
 * float column prints every value as a float, whole ones with ".0" (not a
 * mix of 1 and 0.93). */
static bool json_int_column(const struct atable *t, size_t c)
{
	if (!t->cols[c].int_text)
		return false;
	for (size_t r = 0; r < t->nrows; r++) {
		double v = t->cells[r * t->ncols + c].f;
		if (!isnan(v) && (v != floor(v) || fabs(v) >= 9e15))
			return false;
	}
	return true;
}

static void json_float(struct jw *w, double v, bool as_int)
{
	if (!isfinite(v)) {
		jw_f64(w, v); /* null */
		return;
	}
	if (as_int) {
		jw_i64(w, (int64_t)v);
		return;
	}
	char tmp[48];
	int n = json_fmt_f64(tmp, v);
	if (!strpbrk(tmp, ".eE"))
		n += snprintf(tmp + n, sizeof tmp - (size_t)n, ".0");
	jw_raw(w, tmp, (size_t)n);
}

static void render_json(const struct atable *t, struct buf *out)
{
	struct jw w;
	jw_init(&w, out);
	bool *as_int = xcalloc(t->ncols ? t->ncols : 1, sizeof *as_int);
	for (size_t c = 0; c < t->ncols; c++)
		as_int[c] = t->cols[c].type == ACOL_FLOAT && json_int_column(t, c);
	jw_obj_begin(&w);
	jw_key(&w, "name");
	jw_str(&w, t->name);
	if (t->partial) {
		jw_key(&w, "partial");
		jw_bool(&w, true);
		jw_key(&w, "partial_reason");
		jw_str(&w, t->partial);
	}
	jw_key(&w, "columns");
	jw_arr_begin(&w);
	for (size_t c = 0; c < t->ncols; c++)
		jw_str(&w, t->cols[c].name);
	jw_arr_end(&w);
	jw_key(&w, "rows");
	jw_arr_begin(&w);
	for (size_t r = 0; r < t->nrows; r++) {
		jw_obj_begin(&w);
		for (size_t c = 0; c < t->ncols; c++) {
			const union acell *x = &t->cells[r * t->ncols + c];
			jw_key(&w, t->cols[c].name);
			if (t->cols[c].type == ACOL_INT)
				jw_i64(&w, x->i);
			else if (t->cols[c].type == ACOL_FLOAT)
				json_float(&w, x->f, as_int[c]); /* NaN -> null */
			else
				jw_str(&w, x->s ? x->s : "");
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "notes");
	jw_arr_begin(&w);
	const char *s = t->notes.data, *e = s + t->notes.len;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(e - s);
		jw_strn(&w, s, n);
		s += n + 1;
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	free(as_int);
}

void atable_render(const struct atable *t, enum aformat fmt, struct buf *out)
{
	switch (fmt) {
	case AFMT_CSV: atable_render_csv_rows(t, 0, t->nrows, out); break;
	case AFMT_JSON: render_json(t, out); break;
	default: render_table(t, out); break;
	}
}

void atable_render_notes(const struct atable *t, struct buf *out)
{
	title_line(t, out);
	buf_append(out, t->notes.data, t->notes.len);
}
