/*
 * test_trace_util.h - helpers for the trace/analyze tests: walking the
 * conformance MANIFEST (tests/data/conformance/MANIFEST.tsv), reading HTA's
 * results.json and CSVs.  Static functions: each test file includes it.
 */
#ifndef DYNO_TEST_TRACE_UTIL_H
#define DYNO_TEST_TRACE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "test.h"

/* Kineto events as JSON text, for made traces: a launch (CPU thread 1/2)
 * and its kernel (stream 7), a ProfilerStep. */
#define EV_LAUNCH(ts, dur, corr)                                                                     \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,"    \
	"\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}}"
#define EV_KERNEL(ts, dur, corr, name)                                                               \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,"                  \
	"\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"stream\":7,\"correlation\":" #corr "}}"
#define EV_STEP(ts, dur, n)                                                                          \
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"pid\":1,"        \
	"\"tid\":2,\"ts\":" #ts ",\"dur\":" #dur "}"

static inline bool tt_read_file(const char *path, struct buf *out)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_append(out, tmp, n);
	fclose(f);
	return true;
}

struct tt_case {
	char name[128];
	char kind[16];
	char input[512]; /* absolute path */
};

/* The file/dir cases of the manifest (diff cases are skipped). */
static inline size_t tt_manifest(struct tt_case *out, size_t max)
{
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/conformance/MANIFEST.tsv", test_data_dir());
	struct buf b = BUF_INIT;
	bool rd = tt_read_file(path.data, &b);
	buf_free(&path);
	if (!rd) {
		buf_free(&b);
		return 0;
	}
	size_t n = 0;
	char *save = NULL;
	bool first = true;
	for (char *line = strtok_r(b.data, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		if (first) {
			first = false;
			continue;
		}
		char name[128], kind[16], in[400];
		if (sscanf(line, "%127[^\t]\t%15[^\t]\t%399[^\t\n]", name, kind, in) != 3)
			continue;
		if (strcmp(kind, "file") != 0 && strcmp(kind, "dir") != 0)
			continue;
		snprintf(out[n].name, sizeof out[n].name, "%s", name);
		snprintf(out[n].kind, sizeof out[n].kind, "%s", kind);
		struct buf ip = BUF_INIT;
		buf_printf(&ip, "%s/traces/%s", test_data_dir(), in);
		snprintf(out[n].input, sizeof out[n].input, "%.511s", ip.data);
		buf_free(&ip);
		n++;
	}
	buf_free(&b);
	return n;
}

/* The diff cases of the manifest: two inputs, CONTROL and TEST (absolute). */
struct tt_diff_case {
	char name[128];
	char control[512], test[512];
};

static inline size_t tt_manifest_diff(struct tt_diff_case *out, size_t max)
{
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/conformance/MANIFEST.tsv", test_data_dir());
	struct buf b = BUF_INIT;
	bool rd = tt_read_file(path.data, &b);
	buf_free(&path);
	size_t n = 0;
	char *save = NULL;
	for (char *line = rd ? strtok_r(b.data, "\n", &save) : NULL; line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[128], c[400], t[400];
		if (sscanf(line, "%127[^\t]\tdiff\t%399[^ \t] %399[^\t\n]", name, c, t) != 3)
			continue;
		snprintf(out[n].name, sizeof out[n].name, "%s", name);
		snprintf(out[n].control, sizeof out[n].control, "%s/traces/%.400s", test_data_dir(), c);
		snprintf(out[n].test, sizeof out[n].test, "%s/traces/%.400s", test_data_dir(), t);
		n++;
	}
	buf_free(&b);
	return n;
}

/* Parse conformance/<name>/results.json into doc. */
static inline bool tt_results(const char *name, struct json_doc *doc)
{
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/conformance/%s/results.json", test_data_dir(), name);
	struct buf b = BUF_INIT;
	bool rd = tt_read_file(path.data, &b);
	buf_free(&path);
	if (!rd) {
		buf_free(&b);
		return false;
	}
	struct json_error e;
	bool ok = json_parse(b.data, b.len, doc, &e);
	buf_free(&b);
	return ok;
}

/* A CSV as rows of fields (simple: HTA's CSVs quote only names with commas). */
struct tt_csv {
	size_t nrows, ncols;
	char ***cells; /* cells[row][col]; row 0 = header */
	struct buf text;
};

static inline void tt_csv_free(struct tt_csv *c)
{
	for (size_t i = 0; i < c->nrows; i++)
		free(c->cells[i]);
	free(c->cells);
	buf_free(&c->text);
	memset(c, 0, sizeof *c);
}

/* Parse CSV text (RFC 4180 quoting).  The text is kept in c->text. */
static inline void tt_csv_parse(struct tt_csv *c, const char *s, size_t len)
{
	memset(c, 0, sizeof *c);
	buf_init(&c->text);
	buf_append(&c->text, s, len);
	char *p = c->text.data, *end = p + c->text.len;
	size_t cap = 0;
	while (p < end) {
		char **row = NULL;
		size_t nf = 0, fcap = 0;
		for (;;) {
			char *field = p, *w = p;
			if (p < end && *p == '"') {
				p++;
				for (;;) {
					if (p >= end)
						break;
					if (*p == '"') {
						if (p + 1 < end && p[1] == '"') {
							*w++ = '"';
							p += 2;
							continue;
						}
						p++;
						break;
					}
					*w++ = *p++;
				}
			} else {
				while (p < end && *p != ',' && *p != '\n' && *p != '\r')
					*w++ = *p++;
			}
			char sep = p < end ? *p : '\n';
			*w = 0;
			if (nf == fcap) {
				fcap = fcap ? fcap * 2 : 16;
				row = realloc(row, fcap * sizeof *row);
			}
			row[nf++] = field;
			if (p < end && *p == '\r')
				p++;
			if (p < end)
				p++;
			if (sep != ',')
				break;
		}
		if (c->nrows == cap) {
			cap = cap ? cap * 2 : 16;
			c->cells = realloc(c->cells, cap * sizeof *c->cells);
		}
		c->cells[c->nrows++] = row;
		if (nf > c->ncols)
			c->ncols = nf;
	}
}

static inline bool tt_csv_load(const char *name, const char *file, struct tt_csv *c)
{
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/conformance/%s/%s", test_data_dir(), name, file);
	struct buf b = BUF_INIT;
	bool rd = tt_read_file(path.data, &b);
	buf_free(&path);
	if (!rd) {
		buf_free(&b);
		return false;
	}
	tt_csv_parse(c, b.data, b.len);
	buf_free(&b);
	return true;
}

/* Compare two CSV texts: same rows and columns; numeric cells within rel
 * tolerance; empty == empty (NaN).  Reports the first differences. */
static inline bool tt_csv_equal(const struct tt_csv *want, const struct tt_csv *got, double rel, const char *what)
{
	bool ok = true;
	if (want->nrows != got->nrows) {
		test_fail(__FILE__, __LINE__, "%s: %zu rows expected, got %zu", what, want->nrows, got->nrows);
		ok = false;
	}
	size_t nr = want->nrows < got->nrows ? want->nrows : got->nrows;
	int reported = 0;
	for (size_t i = 0; i < nr && reported < 5; i++) {
		for (size_t j = 0; j < want->ncols; j++) {
			const char *a = want->cells[i][j], *b = j < got->ncols ? got->cells[i][j] : NULL;
			if (!b) {
				test_fail(__FILE__, __LINE__, "%s: row %zu missing column %zu", what, i, j);
				ok = false;
				reported++;
				break;
			}
			if (strcmp(a, b) == 0)
				continue;
			char *ea, *eb;
			double x = strtod(a, &ea), y = strtod(b, &eb);
			bool num = *a && *b && *ea == 0 && *eb == 0;
			double d = x - y, m = x < 0 ? -x : x;
			if (d < 0)
				d = -d;
			if (num && (d <= rel * m || d < 1e-9))
				continue;
			test_fail(__FILE__, __LINE__, "%s: row %zu col %zu (%s): want '%s' got '%s'", what, i, j,
				  want->cells[0][j], a, b);
			ok = false;
			reported++;
		}
	}
	return ok;
}

#endif
