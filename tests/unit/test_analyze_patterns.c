/*
 * test_analyze_patterns.c - `dyno analyze patterns` beyond HTA's CSVs
 * (those are in test_analyze_conformance.c), on hand-made traces: which
 * operator instances are roots (the smallest depth of all candidates, then
 * at least --min-len kernels), how equal patterns group, the backward
 * thread moved under the main thread's annotation, ties of kernel starts,
 * and the notes and exit status where there is nothing to analyse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "test.h"
#include "test_trace_util.h"
#include "trace/source.h"
#include "../lib/trace_check.h"

/* A trace builder: CPU rows on pid 1, kernels on pid 0 stream 7, each
 * launch paired with its kernel by a fresh correlation. */
struct tb {
	struct buf b;
	int corr;
	bool first;
};

static void tb_init(struct tb *t)
{
	t->b = (struct buf)BUF_INIT;
	t->corr = 0;
	t->first = true;
	buf_puts(&t->b, "{\"traceEvents\": [\n");
}

static void tb_sep(struct tb *t)
{
	if (!t->first)
		buf_puts(&t->b, ",\n");
	t->first = false;
}

static void tb_op(struct tb *t, int tid, const char *name, double ts, double dur)
{
	tb_sep(t);
	buf_printf(&t->b,
		   "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d, \"ts\": %g, "
		   "\"dur\": %g}",
		   name, tid, ts, dur);
}

/* a launch at ts on tid and its kernel at kts */
static void tb_kernel(struct tb *t, int tid, double ts, const char *kernel, double kts, double kdur)
{
	int c = ++t->corr;
	tb_sep(t);
	buf_printf(&t->b,
		   "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": %d, "
		   "\"ts\": %g, \"dur\": 1, \"args\": {\"correlation\": %d}}",
		   tid, ts, c);
	tb_sep(t);
	buf_printf(&t->b,
		   "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": %g, "
		   "\"dur\": %g, \"args\": {\"stream\": 7, \"correlation\": %d}}",
		   kernel, kts, kdur, c);
}

static struct trace_rank *tb_load(struct tb *t, struct trace_set *set)
{
	buf_puts(&t->b, "\n]}\n");
	struct buf err = BUF_INIT;
	struct trace_load_opts o = {.keep_last_step = true};
	struct trace_rank *r = trace_rank_load_mem("p.json", t->b.data, t->b.len, &o, &err);
	if (!r)
		test_fail(__FILE__, __LINE__, "%s", err.data);
	buf_free(&err);
	buf_free(&t->b);
	REQUIRE(r != NULL);
	trace_set_from_rank(set, r, &o);
	return set->ranks[0];
}

/* three kernels a, b, c launched from [ts, ts + 30) of tid */
static void three(struct tb *t, int tid, double ts, double kts)
{
	tb_kernel(t, tid, ts + 2, "ka", kts, 4);
	tb_kernel(t, tid, ts + 10, "kb", kts + 5, 6);
	tb_kernel(t, tid, ts + 20, "kc", kts + 12, 8);
}

/* Roots are the candidates at the smallest depth of all candidates; an
 * instance with fewer kernels than --min-len is left out; equal patterns
 * are one row with the sums of kernel and operator durations. */
TEST(analyze_patterns_roots)
{
	struct tb t;
	tb_init(&t);
	tb_op(&t, 1, "aten::linear", 0, 30);
	three(&t, 1, 0, 1000);
	tb_op(&t, 1, "aten::linear", 40, 31);
	three(&t, 1, 40, 1100);
	/* nested one level deeper: not a root */
	tb_op(&t, 1, "module", 100, 100);
	tb_op(&t, 1, "aten::linear", 110, 30);
	tb_kernel(&t, 1, 112, "kx", 1200, 1);
	tb_kernel(&t, 1, 113, "ky", 1202, 1);
	tb_kernel(&t, 1, 114, "kz", 1204, 1);
	/* two kernels only */
	tb_op(&t, 1, "aten::linear", 210, 30);
	tb_kernel(&t, 1, 212, "ka", 1300, 4);
	tb_kernel(&t, 1, 214, "kb", 1305, 6);
	struct trace_set set;
	const struct trace_rank *r = tb_load(&t, &set);

	struct atable *p = analyze_patterns_rank(r, "linear", 3, 5);
	REQUIRE(p->nrows == 1);
	CHECK(!p->unavailable);
	CHECK_STR(atable_cell(p, 0, 0)->s, "aten::linear|ka|kb|kc");
	CHECK_INT(atable_cell(p, 0, 1)->i, 2);
	CHECK(atable_cell(p, 0, 2)->f == 36); /* (4 + 6 + 8) x 2 */
	CHECK(atable_cell(p, 0, 3)->f == 61);
	atable_free(p);

	/* --min-len 2: the two-kernel instance too, after the more frequent */
	p = analyze_patterns_rank(r, "aten::linear", 2, 5);
	REQUIRE(p->nrows == 2);
	CHECK_STR(atable_cell(p, 0, 0)->s, "aten::linear|ka|kb|kc");
	CHECK_STR(atable_cell(p, 1, 0)->s, "aten::linear|ka|kb");
	CHECK_INT(atable_cell(p, 1, 1)->i, 1);
	atable_free(p);

	/* "module" is the only candidate of its name: depth 0, its subtree's
	 * kernels */
	p = analyze_patterns_rank(r, "module", 3, 5);
	REQUIRE(p->nrows == 1);
	CHECK_STR(atable_cell(p, 0, 0)->s, "module|kx|ky|kz");
	atable_free(p);

	/* nothing to analyse: notes, no rows, unavailable (exit status 4) */
	p = analyze_patterns_rank(r, "aten::conv2d", 3, 5);
	CHECK_INT(p->nrows, 0);
	CHECK(p->unavailable);
	CHECK(strstr(p->notes.data, "no event name contains 'aten::conv2d'") != NULL);
	atable_free(p);
	p = analyze_patterns_rank(r, "aten::linear", 4, 5);
	CHECK_INT(p->nrows, 0);
	CHECK(p->unavailable);
	CHECK(strstr(p->notes.data, "launched 4 or more GPU kernels") != NULL);
	atable_free(p);
	trace_set_free(&set);
}

/* A rank without GPU rows has no patterns. */
TEST(analyze_patterns_no_gpu)
{
	struct tb t;
	tb_init(&t);
	tb_op(&t, 1, "aten::linear", 0, 30);
	struct trace_set set;
	const struct trace_rank *r = tb_load(&t, &set);
	struct atable *p = analyze_patterns_rank(r, "aten::linear", 3, 5);
	CHECK_INT(p->nrows, 0);
	CHECK(p->unavailable);
	CHECK(strstr(p->notes.data, "no GPU events") != NULL);
	atable_free(p);
	trace_set_free(&set);
}

/* The backward thread's top-level operators go under the main thread's
 * "## backward ##" annotation: its aten::mm is then deeper than the
 * forward one and not a root.  Without a main thread it stays at depth 1,
 * like the forward one, and both are roots. */
TEST(analyze_patterns_backward_thread)
{
	for (int linked = 0; linked < 2; linked++) {
		struct tb t;
		tb_init(&t);
		tb_op(&t, 1, linked ? "ProfilerStep#1" : "step", 0, 1000);
		tb_op(&t, 1, "aten::mm", 100, 50);
		three(&t, 1, 100, 2000);
		tb_op(&t, 1, "## backward ##", 500, 400);
		tb_op(&t, 2, "autograd::engine::evaluate_function: MmBackward0", 600, 100);
		tb_op(&t, 2, "aten::mm", 610, 80);
		tb_kernel(&t, 2, 612, "kb1", 2100, 1);
		tb_kernel(&t, 2, 620, "kb2", 2102, 1);
		tb_kernel(&t, 2, 630, "kb3", 2104, 1);
		struct trace_set set;
		const struct trace_rank *r = tb_load(&t, &set);
		struct atable *p = analyze_patterns_rank(r, "aten::mm", 3, 5);
		CHECK_INT(p->nrows, linked ? 1 : 2);
		CHECK_STR(atable_cell(p, 0, 0)->s, linked ? "aten::mm|ka|kb|kc" : "aten::mm|ka|kb|kc");
		if (!linked && p->nrows == 2)
			CHECK_STR(atable_cell(p, 1, 0)->s, "aten::mm|kb1|kb2|kb3");
		atable_free(p);
		trace_set_free(&set);
	}
}

/* Kernels in start order, not launch order; equal starts by event id. */
TEST(analyze_patterns_kernel_order)
{
	struct tb t;
	tb_init(&t);
	tb_op(&t, 1, "aten::add", 0, 30);
	tb_kernel(&t, 1, 2, "late", 900, 1);
	tb_kernel(&t, 1, 4, "early", 100, 1);
	tb_kernel(&t, 1, 6, "tie1", 500, 1);
	tb_kernel(&t, 1, 8, "tie2", 500, 1);
	struct trace_set set;
	const struct trace_rank *r = tb_load(&t, &set);
	struct atable *p = analyze_patterns_rank(r, "aten::add", 3, 5);
	REQUIRE(p->nrows == 1);
	CHECK_STR(atable_cell(p, 0, 0)->s, "aten::add|early|tie1|tie2|late");
	atable_free(p);
	trace_set_free(&set);
}

/* --min-len and --top-k below 1 and an empty --operator are refused. */
TEST(analyze_patterns_options)
{
	const struct analysis *a = analysis_find("patterns");
	REQUIRE(a && a->opts.check);
	struct buf err = BUF_INIT;
	char blk[256];
	REQUIRE(a->opts.size <= sizeof blk);
	memcpy(blk, a->opts.defaults, a->opts.size);
	CHECK(a->opts.check(blk, &err) == 0);
	/* the rows name the fields: set them through the table */
	for (const struct analysis_opt *o = a->opts.rows; o->arg.name; o++) {
		memcpy(blk, a->opts.defaults, a->opts.size);
		buf_reset(&err);
		if (strcmp(o->arg.name, "min-len") == 0 || strcmp(o->arg.name, "top-k") == 0) {
			*(int64_t *)(blk + o->offset) = 0;
			CHECK(a->opts.check(blk, &err) != 0);
			CHECK(strstr(err.data, o->arg.name) != NULL);
		} else if (strcmp(o->arg.name, "operator") == 0) {
			*(const char **)(blk + o->offset) = "";
			CHECK(a->opts.check(blk, &err) != 0);
			CHECK(strstr(err.data, "--operator") != NULL);
		}
	}
	/* summary has no operator name to give it: asked for by name only */
	CHECK(a->own_command);
	buf_free(&err);
}

/* a file (plain or gzip) whole */
static void read_all(const char *path, struct buf *out)
{
	char eb[256];
	struct trace_source *src = trace_source_open(path, false, eb, sizeof eb);
	REQUIRE(src != NULL);
	char chunk[65536];
	const char *err = NULL;
	ssize_t n;
	while ((n = trace_source_read(src, chunk, sizeof chunk, &err)) > 0)
		buf_append(out, chunk, (size_t)n);
	trace_source_close(src);
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* --patterns-trace: the trace written with the top-k patterns' events
 * marked; checked with trace_check, loaded back, the marks counted.  Writes
 * the overlay of hand-made trace (exact marks) and of every conformance
 * trace where HTA found patterns. */
static void overlay_one(const struct trace_rank *r, const char *op, int64_t top_k, const char *out,
			size_t want_marks)
{
	int32_t *marks = xmalloc((r->n ? r->n : 1) * sizeof *marks);
	struct atable *t = analyze_patterns_marks(r, op, 3, top_k, marks);
	REQUIRE(t->nrows > 0);
	size_t nm = 0;
	for (size_t i = 0; i < r->n; i++)
		nm += marks[i] >= 0;
	if (want_marks)
		CHECK_INT(nm, want_marks);
	struct buf err = BUF_INIT, why = BUF_INIT, why0 = BUF_INIT;
	if (patterns_write_trace(r, t, marks, out, &err) != 0)
		test_fail(__FILE__, __LINE__, "%s: %s", out, err.data);
	struct trace_check_stats st, st0;
	bool ok0 = trace_check_file(r->path, &st0, &why0);
	bool ok = trace_check_file(out, &st, &why);
	if (ok0 && !ok)
		test_fail(__FILE__, __LINE__, "%s: %s", out, why.data);
	CHECK_INT(st.events, st0.events);
	CHECK_INT(st.complete, st0.complete);
	struct buf text = BUF_INIT;
	read_all(out, &text);
	CHECK_INT(count_of(text.data, "\"Patterns\":{"), nm);
	/* the first pattern's text, JSON-escaped as the key, is in the file */
	struct trace_load_opts lo = {0};
	struct trace_rank *back = trace_rank_load(out, &lo, &err);
	struct trace_rank *orig = trace_rank_load(r->path, &lo, &err);
	REQUIRE(back && orig);
	CHECK_INT(back->n, orig->n);
	trace_rank_free(back);
	trace_rank_free(orig);
	buf_free(&text);
	buf_free(&err);
	buf_free(&why);
	buf_free(&why0);
	atable_free(t);
	free(marks);
}

/* An event whose "args" is not an object is left alone (a second "args"
 * key would make the JSON ambiguous); the others are marked. */
TEST(analyze_patterns_write_trace_args_not_object)
{
	struct tb t;
	tb_init(&t);
	static const char odd[] = "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 1, "
				  "\"tid\": 1, \"ts\": 0, \"dur\": 30, \"args\": \"x\"}";
	tb_sep(&t);
	buf_puts(&t.b, odd);
	three(&t, 1, 0, 1000);
	tb_op(&t, 1, "aten::linear", 40, 31);
	three(&t, 1, 40, 1100);
	buf_puts(&t.b, "\n]}\n");
	struct buf path = BUF_INIT, out = BUF_INIT, err = BUF_INIT, text = BUF_INIT;
	buf_printf(&path, "%s/odd_in.json", test_tmpdir());
	buf_printf(&out, "%s/odd_out.json", test_tmpdir());
	FILE *f = fopen(path.data, "w");
	REQUIRE(f && fwrite(t.b.data, 1, t.b.len, f) == t.b.len);
	fclose(f);
	buf_free(&t.b);
	struct trace_set set;
	struct trace_load_opts o = {0};
	REQUIRE(trace_set_load(&set, path.data, &o, &err) == 0);
	const struct trace_rank *r = set.ranks[0];
	int32_t *marks = xmalloc((r->n ? r->n : 1) * sizeof *marks);
	struct atable *tab = analyze_patterns_marks(r, "aten::linear", 3, 1, marks);
	REQUIRE(tab->nrows == 1);
	size_t nm = 0;
	for (size_t i = 0; i < r->n; i++)
		nm += marks[i] >= 0;
	CHECK_INT(nm, 14); /* both operators, their 6 launches and 6 kernels */
	if (patterns_write_trace(r, tab, marks, out.data, &err) != 0)
		test_fail(__FILE__, __LINE__, "%s", err.data);
	read_all(out.data, &text);
	CHECK(strstr(text.data, odd) != NULL);
	size_t n = 0;
	for (const char *p = text.data; (p = strstr(p, "\"Patterns\"")); p++)
		n++;
	CHECK_INT(n, 13);
	struct trace_check_stats st;
	struct buf why = BUF_INIT;
	CHECK(trace_check_file(out.data, &st, &why));
	buf_free(&why);
	atable_free(tab);
	free(marks);
	trace_set_free(&set);
	buf_free(&text);
	buf_free(&err);
	buf_free(&out);
	buf_free(&path);
}

TEST(analyze_patterns_write_trace)
{
	/* hand-made: top 1 = the two aten::linear|ka|kb|kc instances, each
	 * the operator, 3 launches and 3 kernels */
	struct tb t;
	tb_init(&t);
	tb_op(&t, 1, "aten::linear", 0, 30);
	three(&t, 1, 0, 1000);
	tb_op(&t, 1, "aten::linear", 40, 31);
	three(&t, 1, 40, 1100);
	tb_op(&t, 1, "aten::linear", 80, 15);
	tb_kernel(&t, 1, 81, "ka", 1200, 1);
	tb_kernel(&t, 1, 82, "kz", 1202, 1);
	tb_kernel(&t, 1, 83, "kz", 1204, 1);
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/patterns_in.json", test_tmpdir());
	buf_puts(&t.b, "\n]}\n");
	FILE *f = fopen(path.data, "w");
	REQUIRE(f && fwrite(t.b.data, 1, t.b.len, f) == t.b.len);
	fclose(f);
	buf_free(&t.b);
	struct trace_set set;
	struct buf err = BUF_INIT;
	struct trace_load_opts o = {0};
	REQUIRE(trace_set_load(&set, path.data, &o, &err) == 0);
	struct buf out = BUF_INIT;
	buf_printf(&out, "%s/patterns_out.json", test_tmpdir());
	overlay_one(set.ranks[0], "aten::linear", 1, out.data, 14);
	buf_reset(&out);
	buf_printf(&out, "%s/patterns_out.json.gz", test_tmpdir());
	overlay_one(set.ranks[0], "aten::linear", 2, out.data, 21);
	trace_set_free(&set);

	/* the shared traces where HTA found patterns */
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	int written = 0;
	for (size_t c = 0; c < n; c++) {
		const char *ops[] = {"aten::linear", "aten::conv2d", "aten::addmm"};
		struct buf ref = BUF_INIT;
		bool any = false;
		for (size_t k = 0; k < 3; k++) {
			buf_reset(&ref);
			buf_printf(&ref, "%s/conformance/%s/frequent_patterns_aten_%s.csv", test_data_dir(), cases[c].name,
				   ops[k] + 6);
			FILE *rf = fopen(ref.data, "r");
			if (!rf)
				continue;
			fclose(rf);
			if (!any) {
				buf_reset(&err);
				REQUIRE(trace_set_load(&set, cases[c].input, &o, &err) == 0);
				any = true;
			}
			buf_reset(&out);
			buf_printf(&out, "%s/%s_%zu_overlaid.json%s", test_tmpdir(), cases[c].name, k,
				   written % 2 ? ".gz" : "");
			/* HTA's rank: the first */
			overlay_one(set.ranks[0], ops[k], 5, out.data, 0);
			written++;
		}
		if (any)
			trace_set_free(&set);
		buf_free(&ref);
	}
	CHECK_INT(written, 9);
	buf_free(&out);
	buf_free(&err);
	buf_free(&path);
}
