/*
 * test_analyze_cupti.c - `dyno analyze cupti` (HTA's CUPTI counter
 * analysis): HTA's cupti_counters CSV on the one shared trace that has
 * CUPTI counters (compared by column name: HTA's counter columns come in
 * Python set order, which changes from run to run), a clear note and an
 * unavailable table on every other shared trace, the loader keeping the
 * profiler args only when asked (and the same on its fast and tokenizer
 * paths), and hand-made traces for HTA's call-stack order, the pairing by
 * order, and the cases where HTA fails or leaves a rank out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "test.h"
#include "test_trace_util.h"
#include "../lib/trace_compare.h"

/* What `dyno analyze cupti` loads. */
static struct trace_load_opts cupti_load_opts(void)
{
	struct trace_load_opts o = {0};
	analysis_load_opts(&analysis_cupti, &o);
	return o;
}

static bool notes_have(const struct atable *t, const char *s)
{
	return t->notes.data && strstr(t->notes.data, s) != NULL;
}

/* got's columns reordered to want's header (same set of names), then
 * compared cell by cell like every conformance table. */
static void compare_by_name(const char *name, const char *file, const struct atable *t)
{
	struct tt_csv want, got, re;
	REQUIRE(tt_csv_load(name, file, &want));
	struct buf b = BUF_INIT;
	atable_render(t, AFMT_CSV, &b);
	tt_csv_parse(&got, b.data, b.len);
	CHECK_INT(got.ncols, want.ncols);
	size_t *map = calloc(want.ncols, sizeof *map);
	for (size_t j = 0; j < want.ncols; j++) {
		map[j] = SIZE_MAX;
		for (size_t k = 0; k < got.ncols; k++)
			if (strcmp(want.cells[0][j], got.cells[0][k]) == 0)
				map[j] = k;
		if (map[j] == SIZE_MAX)
			test_fail(__FILE__, __LINE__, "%s/%s: column %s missing", name, file, want.cells[0][j]);
	}
	/* the reordered copy as CSV text, quoted */
	struct buf txt = BUF_INIT;
	for (size_t i = 0; i < got.nrows; i++) {
		for (size_t j = 0; j < want.ncols; j++) {
			const char *c = map[j] == SIZE_MAX || map[j] >= got.ncols ? "" : got.cells[i][map[j]];
			buf_putc(&txt, '"');
			for (const char *p = c; *p; p++) {
				if (*p == '"')
					buf_putc(&txt, '"');
				buf_putc(&txt, *p);
			}
			buf_putc(&txt, '"');
			buf_putc(&txt, j + 1 < want.ncols ? ',' : '\n');
		}
	}
	tt_csv_parse(&re, txt.data, txt.len);
	struct buf what = BUF_INIT;
	buf_printf(&what, "%s/%s", name, file);
	CHECK(tt_csv_equal(&want, &re, 1e-6, what.data));
	buf_free(&what);
	free(map);
	buf_free(&txt);
	buf_free(&b);
	tt_csv_free(&want);
	tt_csv_free(&got);
	tt_csv_free(&re);
}

/* Every shared trace: where HTA wrote cupti_counters_<i>.csv, the same
 * rows; elsewhere (HTA: no cuda_profiler_range events) no rows, a note, and
 * the table unavailable, and summary's skip says why. */
TEST(analyze_cupti_conformance)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	int compared = 0, noted = 0;
	for (size_t c = 0; c < n; c++) {
		struct trace_set set;
		struct buf err = BUF_INIT;
		struct trace_load_opts o = cupti_load_opts();
		if (trace_set_load(&set, cases[c].input, &o, &err) != 0) {
			test_fail(__FILE__, __LINE__, "%s: %s", cases[c].name, err.data);
			buf_free(&err);
			continue;
		}
		buf_free(&err);
		struct atable **ts;
		size_t nt = analyze_cupti(&set, NULL, &ts);
		CHECK_INT(nt, set.nranks);
		const char *skip = analysis_cupti.skip(NULL, &set);
		char file[64];
		snprintf(file, sizeof file, "cupti_counters_0.csv");
		struct buf p = BUF_INIT;
		buf_printf(&p, "%s/conformance/%s/%s", test_data_dir(), cases[c].name, file);
		FILE *f = fopen(p.data, "r");
		buf_free(&p);
		if (f) {
			fclose(f);
			REQUIRE(nt == 1);
			CHECK(!ts[0]->unavailable);
			CHECK(skip == NULL);
			compare_by_name(cases[c].name, file, ts[0]);
			CHECK(notes_have(ts[0], "77 kernels with 9 CUPTI counters"));
			compared++;
		} else {
			CHECK(skip != NULL && strstr(skip, "no CUPTI counters") != NULL);
			for (size_t k = 0; k < nt; k++) {
				CHECK(ts[k]->unavailable);
				CHECK_INT(ts[k]->nrows, 0);
				CHECK(notes_have(ts[k], "no CUPTI counters"));
			}
			noted++;
		}
		for (size_t k = 0; k < nt; k++)
			atable_free(ts[k]);
		free(ts);
		trace_set_free(&set);
	}
	CHECK_INT(compared, 1);
	CHECK(noted >= 14);
}

static struct trace_rank *load_cupti_trace(const struct trace_load_opts *o)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	for (size_t c = 0; c < n; c++)
		if (strcmp(cases[c].name, "cupti_profiler") == 0) {
			struct buf err = BUF_INIT;
			struct trace_rank *r = trace_rank_load(cases[c].input, o, &err);
			buf_free(&err);
			return r;
		}
	return NULL;
}

/* The profiler args are kept only with keep_profiler_args, and the fast
 * path (which leaves these events to the tokenizer) changes nothing. */
TEST(analyze_cupti_loader_flag)
{
	struct trace_load_opts plain = {0}, keep = {.keep_profiler_args = true},
			       tok = {.keep_profiler_args = true, .tokenizer_only = true};
	struct trace_rank *a = load_cupti_trace(&plain), *b = load_cupti_trace(&keep), *c = load_cupti_trace(&tok);
	REQUIRE(a && b && c);
	CHECK_INT(a->nrange_args, 0);
	CHECK_INT(b->nrange_args, 77 * 9);
	CHECK_INT(a->n, b->n);
	REQUIRE(b->nrange_args == c->nrange_args);
	for (size_t i = 0; i < b->nrange_args; i++) {
		CHECK_INT(b->range_args[i].idx, c->range_args[i].idx);
		CHECK(b->range_args[i].value == c->range_args[i].value);
		CHECK(strcmp(trace_strtab_get(&b->strs, b->range_args[i].key),
			     trace_strtab_get(&c->strs, c->range_args[i].key)) == 0);
		if (i)
			CHECK(b->range_args[i - 1].idx <= b->range_args[i].idx);
	}
	/* without the flag, the analysis sees ranges but no counter column */
	struct trace_set set;
	trace_set_from_rank(&set, a, &plain);
	struct atable *t = analyze_cupti_rank(set.ranks[0]);
	CHECK_INT(t->nrows, 77);
	CHECK_INT(t->ncols, 27 + 15);
	atable_free(t);
	trace_set_free(&set);
	trace_rank_free(b);
	trace_rank_free(c);
}

/* A hand-made trace through the CLI's load options. */
static struct atable *run_text(const char *s)
{
	struct trace_load_opts o = cupti_load_opts();
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load_mem("c.json", s, strlen(s), &o, &err);
	buf_free(&err);
	if (!r)
		return NULL;
	struct trace_set set;
	trace_set_from_rank(&set, r, &o);
	struct atable *t = analyze_cupti_rank(set.ranks[0]);
	trace_set_free(&set);
	return t;
}

static int col_of(const struct atable *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].name, name) == 0)
			return (int)c;
	return -1;
}

static const char *cell_s(struct atable *t, size_t row, const char *col)
{
	int c = col_of(t, col);
	return c < 0 ? "?" : atable_cell(t, row, (size_t)c)->s;
}

#define OP(name, ts, dur) "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur "},"
#define LAUNCH(ts) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":2,\"args\":{\"correlation\":" #ts "}},"
#define RANGE(name, ts, args) "{\"ph\":\"X\",\"cat\":\"cuda_profiler_range\",\"name\":\"" name "\",\"pid\":0,\"tid\":0,\"ts\":" #ts ",\"dur\":5,\"args\":{" args "}},"
#define END "{\"ph\":\"M\",\"name\":\"x\"}]}"

/* HTA's call-stack order: of two operators with the same start, the longer
 * is outside; with the same start and length, the first in the trace; an
 * operator that ends where the launch starts is closed by then.  Kernels
 * and launches are paired by time, not by correlation. */
TEST(analyze_cupti_stack_order)
{
	struct atable *t = run_text("{\"traceEvents\":[" OP("inner", 10, 20) OP("outer", 10, 50) OP("same_a", 40, 10)
					    OP("same_b", 40, 10) OP("ended", 0, 10) LAUNCH(10) LAUNCH(40)
						    RANGE("k2", 200, "\"m\":2") RANGE("k1", 100, "\"m\":1") END);
	REQUIRE(t);
	REQUIRE(t->nrows == 2);
	/* rows by time: k1 goes with the first launch */
	CHECK_STR(cell_s(t, 0, "name"), "k1");
	CHECK_STR(cell_s(t, 0, "op_stack"), "outer|inner");
	CHECK_STR(cell_s(t, 0, "top_level_op"), "outer");
	CHECK_STR(cell_s(t, 0, "bottom_level_op"), "inner");
	CHECK_STR(cell_s(t, 1, "op_stack"), "outer|same_a|same_b");
	int ir = col_of(t, "index_runtime"), m = col_of(t, "m");
	REQUIRE(ir >= 0 && m >= 0);
	CHECK_INT(atable_cell(t, 0, (size_t)ir)->i, 5);
	CHECK_INT(atable_cell(t, 1, (size_t)ir)->i, 6);
	CHECK_INT(atable_cell(t, 0, (size_t)m)->i, 1);
	CHECK(!t->unavailable);
	atable_free(t);
}

/* Counter columns: first-seen order, -1 where a range lacks one (HTA's
 * default), a float column when a value has a fraction; args before the cat
 * are kept too (the tokenizer path). */
TEST(analyze_cupti_counter_columns)
{
	struct atable *t = run_text(
		"{\"traceEvents\":[" OP("op", 0, 100) LAUNCH(10) LAUNCH(20) RANGE("k1", 100, "\"b\":7,\"a\":1.5")
			"{\"ph\":\"X\",\"args\":{\"c\":3,\"b\":8},\"cat\":\"cuda_profiler_range\",\"name\":\"k2\",\"pid\":0,"
			"\"tid\":0,\"ts\":200,\"dur\":5}," END);
	REQUIRE(t);
	REQUIRE(t->nrows == 2);
	int b = col_of(t, "b"), a = col_of(t, "a"), c = col_of(t, "c");
	REQUIRE(b >= 0 && a >= 0 && c >= 0);
	CHECK(b < a && a < c);
	CHECK(t->cols[b].type == ACOL_INT && t->cols[a].type == ACOL_FLOAT && t->cols[c].type == ACOL_INT);
	CHECK_INT(atable_cell(t, 0, (size_t)b)->i, 7);
	CHECK(atable_cell(t, 0, (size_t)a)->f == 1.5);
	CHECK_INT(atable_cell(t, 0, (size_t)c)->i, -1);
	CHECK_INT(atable_cell(t, 1, (size_t)b)->i, 8);
	CHECK(atable_cell(t, 1, (size_t)a)->f == -1);
	CHECK_INT(atable_cell(t, 1, (size_t)c)->i, 3);
	atable_free(t);
}

/* Where HTA gives nothing or fails: no ranges (empty list), kernel and
 * launch counts that differ (the rank left out), a launch outside every
 * operator (IndexError: we give empty names and say so). */
TEST(analyze_cupti_bad)
{
	struct atable *t = run_text("{\"traceEvents\":[" OP("op", 0, 100) LAUNCH(10) END);
	REQUIRE(t);
	CHECK(t->unavailable && t->nrows == 0 && notes_have(t, "no CUPTI counters"));
	atable_free(t);
	t = run_text("{\"traceEvents\":[" OP("op", 0, 100) LAUNCH(10) RANGE("k1", 100, "\"m\":1")
			     RANGE("k2", 200, "\"m\":1") END);
	REQUIRE(t);
	CHECK(t->unavailable && t->nrows == 0);
	CHECK(notes_have(t, "2 kernels with CUPTI counters but 1 kernel launches"));
	atable_free(t);
	t = run_text("{\"traceEvents\":[" OP("op", 0, 5) LAUNCH(10) RANGE("k1", 100, "\"m\":1") END);
	REQUIRE(t);
	REQUIRE(t->nrows == 1);
	CHECK(!t->unavailable);
	CHECK(strcmp(cell_s(t, 0, "op_stack"), "") == 0 && strcmp(cell_s(t, 0, "top_level_op"), "") == 0);
	CHECK(notes_have(t, "1 launches have no cpu_op around them"));
	atable_free(t);
	/* a range on a CPU thread: its call-graph columns are not computed */
	t = run_text("{\"traceEvents\":[" OP("op", 0, 100) LAUNCH(10)
			     "{\"ph\":\"X\",\"cat\":\"cuda_profiler_range\",\"name\":\"k\",\"pid\":3,\"tid\":3,\"ts\":100,"
			     "\"dur\":5,\"args\":{\"m\":1}}," END);
	REQUIRE(t);
	REQUIRE(t->nrows == 1);
	int d = col_of(t, "depth");
	REQUIRE(d >= 0);
	CHECK(isnan(atable_cell(t, 0, (size_t)d)->f));
	CHECK(notes_have(t, "lie on a CPU thread"));
	atable_free(t);
	/* no rank selected */
	struct atable *out[1] = {NULL};
	struct trace_set empty = {0};
	struct analysis_ctx ctx = {0};
	analysis_cupti.rank(&ctx, &empty, out);
	REQUIRE(out[0]);
	CHECK(out[0]->unavailable);
	atable_free(out[0]);
}

/* A plain trace big enough for the two-thread parse (8 MiB): the helper's
 * profiler args are merged like its counters (keys re-interned, event ids
 * shifted), so the result is the one-thread load's. */
TEST(analyze_cupti_two_thread_parse)
{
	struct buf b = BUF_INIT;
	buf_puts(&b, "{\"traceEvents\": [\n");
	int nev = 40000;
	for (int i = 0; i < nev; i++)
		buf_printf(&b,
			   "%s  {\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"k%d\", \"pid\": 0, "
			   "\"tid\": 0, \"ts\": %d, \"dur\": 5,\n   \"args\": {\"smsp__a.sum\": %d, \"smsp__b.sum\": %d.5, "
			   "\"padding_counter_with_a_long_name_%d\": %d, \"text\": \"not a counter, not kept, %0100d\"}}",
			   i ? ",\n" : "", i % 7, 1000 + i * 10, i, i, i % 3, i, 0);
	buf_puts(&b, "\n]}\n");
	REQUIRE(b.len > (8u << 20));
	char path[] = "/tmp/dyno-cupti-XXXXXX.json";
	int fd = mkstemps(path, 5);
	REQUIRE(fd >= 0);
	FILE *f = fdopen(fd, "w");
	REQUIRE(f && fwrite(b.data, 1, b.len, f) == b.len);
	fclose(f);
	buf_free(&b);
	struct trace_load_opts o1 = {.threads = 1, .keep_profiler_args = true}, o2 = o1;
	o2.threads = 2;
	struct buf err = BUF_INIT;
	struct trace_rank *x = trace_rank_load(path, &o1, &err), *y = trace_rank_load(path, &o2, &err);
	unlink(path);
	buf_free(&err);
	REQUIRE(x && y);
	CHECK_INT(y->stats.parse_threads, 2);
	CHECK_INT(x->nrange_args, (size_t)nev * 3);
	REQUIRE(x->nrange_args == y->nrange_args);
	size_t bad = 0;
	for (size_t i = 0; i < x->nrange_args; i++) {
		const struct trace_range_arg *p = &x->range_args[i], *q = &y->range_args[i];
		bad += p->idx != q->idx || p->value != q->value || p->is_int != q->is_int ||
		       strcmp(trace_strtab_get(&x->strs, p->key), trace_strtab_get(&y->strs, q->key)) != 0;
	}
	CHECK_INT(bad, 0);
	trace_rank_free(x);
	trace_rank_free(y);
}

/* Both parse paths give the same model with keep_profiler_args, also for
 * events whose args come before their cat or that have none (the tokenizer
 * interns such args' keys: the fast path must leave them to it; found by
 * fuzz_trace_fast). */
TEST(analyze_cupti_fast_path_same_model)
{
	static const char *const texts[] = {
		/* the first element always takes the tokenizer path: a filler */
		"{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"x\"},{\"ph\":\"X\",\"caid\":7,\"ts\":10.5,\"dur\":2.25,\"args\":{\"stream\":7,"
		"\"correlation\":12,\"External id\":3,\"grid\":[1,2,3]}}]}",
		"{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"x\"},{\"ph\":\"X\",\"name\":\"k\",\"args\":{\"a\":1},\"cat\":\"kernel\",\"ts\":1,\"dur\":2},"
		"{\"ph\":\"X\",\"name\":\"k\",\"args\":{\"a\":1},\"cat\":\"cuda_profiler_range\",\"ts\":1,\"dur\":2},"
		"{\"ph\":\"X\",\"cat\":\"cuda_profiler_range\",\"name\":\"k\",\"ts\":1,\"dur\":2,\"args\":{\"b\":2}}]}",
	};
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		struct trace_load_opts fo = {.keep_profiler_args = true}, so = fo;
		so.tokenizer_only = true;
		struct buf err = BUF_INIT, why = BUF_INIT;
		struct trace_rank *f = trace_rank_load_mem("f.json", texts[k], strlen(texts[k]), &fo, &err);
		struct trace_rank *s = trace_rank_load_mem("f.json", texts[k], strlen(texts[k]), &so, &err);
		REQUIRE(f && s);
		bool same = trace_rank_same(f, s, &why);
		if (!same)
			fprintf(stderr, "  text %zu: %s\n", k, why.data);
		CHECK(same);
		CHECK_INT(f->nrange_args, k == 0 ? 0 : 2);
		CHECK(f->stats.fast_path_events > 0);
		trace_rank_free(f);
		trace_rank_free(s);
		buf_free(&err);
		buf_free(&why);
	}
}
