/*
 * test_trace_set.c - trace_set_from_rank (a one-rank set from a rank loaded
 * on its own) makes the same set as trace_set_load of that file: the same
 * model after alignment and the last-step filter, the same warnings; and
 * the model comparison those tests use sees a change in any column.
 */
#include <stdio.h>
#include <string.h>

#include "../lib/trace_compare.h"
#include "test.h"
#include "test_trace_util.h"
#include "trace/columns.h"
#include "trace/load_internal.h"
#include "trace/model.h"

/* The shared trace tests/data/traces/REL loaded alone, one thread (NULL:
 * it could not be; err says why). */
static struct trace_rank *load_shared(const char *rel, struct buf *err)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/traces/%s", test_data_dir(), rel);
	struct trace_load_opts o = {.threads = 1};
	return trace_rank_load(path, &o, err);
}

static void same_set(const char *rel, bool expect_filtered, bool expect_warning)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/traces/%s", test_data_dir(), rel);
	struct trace_load_opts o = {.threads = 2};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_set a, b;
	REQUIRE(trace_set_load(&a, path, &o, &err) == 0);
	struct trace_rank *r = trace_rank_load(path, &o, &err);
	REQUIRE(r != NULL);
	trace_set_from_rank(&b, r, &o);
	REQUIRE(a.nranks == 1 && b.nranks == 1 && b.ranks[0] == r);
	CHECK(a.filtered == expect_filtered);
	CHECK(b.filtered == a.filtered);
	CHECK(b.min_ts == a.min_ts);
	CHECK_STR(b.warnings, a.warnings);
	CHECK((a.warnings[0] != 0) == expect_warning);
	if (!trace_rank_same(a.ranks[0], b.ranks[0], &why))
		test_fail(__FILE__, __LINE__, "%s: %s", rel, why.data);
	trace_set_free(&a);
	trace_set_free(&b);
	buf_free(&err);
	buf_free(&why);
}

TEST(trace_set_from_rank_same_as_load)
{
	/* ProfilerSteps: aligned and filtered; rank from distributedInfo */
	same_set("trace_filter/sampled_rank-0.json.gz", true, false);
	/* no distributedInfo: the rank rule is a warning in both */
	same_set("distributed_info_unavailable/distributed_info_not_found.json.gz", false, true);
}

/* The comparison the fast-path and two-thread tests rely on sees a change
 * in any column (walked through the column table) and names the column. */
TEST(trace_compare_sees_every_column)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/traces/trace_filter/sampled_rank-0.json.gz", test_data_dir());
	/* with the optional columns, so that every column is there */
	struct trace_load_opts o = {.threads = 1, .keep_kernel_occupancy = true};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load(path, &o, &err), *b = trace_rank_load(path, &o, &err);
	REQUIRE(a && b && a->n > 10);
	CHECK(trace_rank_same(a, b, &why));
	for (size_t c = 0; c < TRACE_NCOLS; c++) {
		unsigned char *row7 = (unsigned char *)*trace_col(b, c) + 7 * trace_columns[c].size;
		row7[0] ^= 1;
		buf_reset(&why);
		CHECK(!trace_rank_same(a, b, &why));
		char want[64];
		snprintf(want, sizeof want, "column %s differs at row 7", trace_columns[c].name);
		if (!strstr(why.data ? why.data : "", want))
			test_fail(__FILE__, __LINE__, "want \"%s\", got \"%s\"", want, why.data ? why.data : "");
		row7[0] ^= 1;
	}
	CHECK(trace_rank_same(a, b, &why));
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
	buf_free(&why);
}

/* The last-step filter counts, for each GPU row, the kept CPU rows of its
 * correlation id: from the links when no id has two CPU rows
 * (link_one_cpu, the usual case), else by sorting the rows by id.  Both
 * ways give the same filtered rank: on real traces (Event/Context Sync
 * rows without an id included) with the links' way forced off, and on a
 * trace where one id has two CPU rows, where the flag is off by itself. */
static void same_filter_both_ways(const char *path, const char *text, bool expect_one_cpu)
{
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a, *b;
	if (text) {
		a = trace_rank_load_mem(path, text, strlen(text), &o, &err);
		b = trace_rank_load_mem(path, text, strlen(text), &o, &err);
	} else {
		a = trace_rank_load(path, &o, &err);
		b = trace_rank_load(path, &o, &err);
	}
	REQUIRE(a && b);
	CHECK(a->link_one_cpu == expect_one_cpu);
	b->link_one_cpu = false; /* the sort's way */
	struct trace_set sa, sb;
	trace_set_from_rank(&sa, a, &o);
	trace_set_from_rank(&sb, b, &o);
	CHECK(sa.filtered && sb.filtered);
	if (!trace_rank_same(a, b, &why))
		test_fail(__FILE__, __LINE__, "%s: %s", path, why.data);
	trace_set_free(&sa);
	trace_set_free(&sb);
	buf_free(&err);
	buf_free(&why);
}

/* The made traces' rows besides the launches of ids 7 and 8 and their
 * kernels: two steps (the last starts at 60), an operator, a kernel
 * without a launch (id 9), a sync call and a Context Sync row without an
 * id. */
#define HEAD_ROWS EV_STEP(0, 50, 1) "," EV_STEP(60, 50, 2) "," \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":2,\"ts\":5,\"dur\":5}"
#define TAIL_ROWS EV_KERNEL(45, 3, 9, "k9") ","                                                   \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":1,\"tid\":2,"     \
	"\"ts\":48,\"dur\":1},"                                                                     \
	"{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"Context Sync\",\"pid\":0,\"tid\":7,"     \
	"\"ts\":49,\"dur\":1,\"args\":{\"stream\":7}}"

TEST(trace_last_step_filter_links_or_sort)
{
	static const char *const rel[] = {
		/* the shared traces with two steps or more (the filter applies) */
		"trace_filter/sampled_rank-0.json.gz",
		"nccl_parser_config/nccl_data.json.gz", /* Event and Context Sync rows */
		"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
		"trace_compare/base/base.json.gz",
		"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
	};
	for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/traces/%s", test_data_dir(), rel[i]);
		same_filter_both_ways(path, NULL, true);
	}
	/* two steps; id 7 has two launches (CPU rows) and a kernel, id 8 one
	 * launch before the last step and one after, id 9 a kernel and no
	 * launch; a Context Sync row without an id and CPU rows without one */
	const char *s = "{\"traceEvents\":[" HEAD_ROWS "," EV_LAUNCH(6, 1, 7) "," EV_LAUNCH(8, 1, 7) ","
			EV_KERNEL(20, 3, 7, "k7") "," EV_LAUNCH(30, 1, 8) "," EV_LAUNCH(70, 1, 8) ","
			EV_KERNEL(40, 3, 8, "k8") "," TAIL_ROWS "]}";
	same_filter_both_ways("two_launches_one_id.json", s, false);
	/* the same without the second launch of ids 7 and 8: one CPU row per
	 * id, so the links' way, with the Context Sync row (no id) kept once
	 * for the kept CPU rows without one */
	const char *t = "{\"traceEvents\":[" HEAD_ROWS "," EV_LAUNCH(6, 1, 7) "," EV_KERNEL(20, 3, 7, "k7") ","
			EV_LAUNCH(70, 1, 8) "," EV_KERNEL(75, 3, 8, "k8") "," TAIL_ROWS "]}";
	same_filter_both_ways("one_launch_per_id.json", t, true);
	/* and what it keeps: the kernel of the launch before the last step
	 * (k7, once), not k8 (launched after) nor k9 (no launch); the Context
	 * Sync row once; the CPU rows before the last step */
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load_mem("one_launch_per_id.json", t, strlen(t), &o, &err);
	REQUIRE(r);
	struct trace_set set;
	trace_set_from_rank(&set, r, &o);
	size_t k7 = 0, k8 = 0, k9 = 0, sync = 0;
	for (size_t i = 0; i < r->n; i++) {
		const char *nm = trace_strtab_get(&r->strs, r->name[i]);
		k7 += strcmp(nm, "k7") == 0;
		k8 += strcmp(nm, "k8") == 0;
		k9 += strcmp(nm, "k9") == 0;
		sync += strcmp(nm, "Context Sync") == 0;
	}
	CHECK_INT(k7, 1);
	CHECK_INT(k8, 0);
	CHECK_INT(k9, 0);
	CHECK_INT(sync, 1);
	CHECK_INT(r->n, 6); /* ProfilerStep#1, aten::mm, the launch of 7, the sync call; k7; Context Sync */
	trace_set_free(&set);
	buf_free(&err);
}

/* trace_rank_keep_rows renumbers the old links where that is what linking
 * again gives, else links again: both ways equal on rows kept in the
 * last-step filter's shape (GPU rows first), in order, with link targets
 * dropped, with a row twice and out of order. */
enum keep_shape { KEEP_GPU_FIRST, KEEP_EVEN_IDS, KEEP_EVERY_OTHER, KEEP_A_ROW_TWICE, KEEP_REVERSED };

static size_t keep_shape_rows(const struct trace_rank *r, enum keep_shape k, uint32_t *src)
{
	uint32_t ev = trace_strtab_find(&r->strs, "Event Sync", 10), ctx = trace_strtab_find(&r->strs, "Context Sync", 12);
	size_t n = 0;
	switch (k) {
	case KEEP_GPU_FIRST:
		for (int pass = 1; pass >= 0; pass--)
			for (size_t i = 0; i < r->n; i++)
				if (trace_row_corr_gpu(r, i, ev, ctx) == (pass == 1))
					src[n++] = (uint32_t)i;
		break;
	case KEEP_EVEN_IDS: /* both sides of an id go or stay together */
		for (size_t i = 0; i < r->n; i++)
			if (r->correlation[i] == -1 || r->correlation[i] % 2 == 0)
				src[n++] = (uint32_t)i;
		break;
	case KEEP_EVERY_OTHER:
		for (size_t i = 0; i < r->n; i += 2)
			src[n++] = (uint32_t)i;
		break;
	case KEEP_A_ROW_TWICE:
		for (size_t i = 0; i < r->n; i++)
			src[n++] = (uint32_t)i;
		for (size_t i = 0; i < r->n; i++)
			if (r->link[i] >= 0) {
				src[n++] = (uint32_t)i;
				break;
			}
		break;
	case KEEP_REVERSED:
		for (size_t i = r->n; i-- > 0;)
			src[n++] = (uint32_t)i;
		break;
	}
	return n;
}

TEST(trace_keep_rows_links_renumbered_or_linked_again)
{
	static const char *const rel[] = {
		"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
		"nccl_parser_config/nccl_data.json.gz", /* Event and Context Sync rows */
	};
	for (size_t t = 0; t < sizeof rel / sizeof *rel; t++)
		for (int k = KEEP_GPU_FIRST; k <= KEEP_REVERSED; k++) {
			struct buf err = BUF_INIT, why = BUF_INIT;
			struct trace_rank *a = load_shared(rel[t], &err), *b = load_shared(rel[t], &err);
			REQUIRE(a && b);
			CHECK(a->link_one_cpu);
			uint32_t *src = malloc((2 * a->n + 1) * sizeof *src);
			size_t n = keep_shape_rows(a, (enum keep_shape)k, src);
			CHECK(n > 100);
			size_t linked = 0;
			b->link_one_cpu = false; /* linked again */
			trace_rank_keep_rows(a, src, n, 1);
			trace_rank_keep_rows(b, src, n, 1);
			for (size_t i = 0; i < a->n; i++)
				linked += a->link[i] >= 0;
			if (linked <= 10 && k != KEEP_EVERY_OTHER) /* that one keeps few pairs */
				test_fail(__FILE__, __LINE__, "%s, shape %d: %zu linked", rel[t], k, linked);
			if (!trace_rank_same(a, b, &why))
				test_fail(__FILE__, __LINE__, "%s, shape %d: %s", rel[t], k, why.data);
			free(src);
			trace_rank_free(a);
			trace_rank_free(b);
			buf_free(&err);
			buf_free(&why);
		}
	/* made: id 7 has one launch and two kernels; without the later kernel
	 * (the launch's link) the launch links to the earlier one; id 8's
	 * launch and kernel stay as they were */
	const char *t = "{\"traceEvents\":[" EV_LAUNCH(6, 1, 7) "," EV_LAUNCH(9, 1, 8) "," EV_KERNEL(20, 3, 7, "k7a") ","
			EV_KERNEL(30, 3, 7, "k7b") "," EV_KERNEL(40, 3, 8, "k8") "]}";
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load_mem("two_kernels.json", t, strlen(t), &o, &err);
	struct trace_rank *b = trace_rank_load_mem("two_kernels.json", t, strlen(t), &o, &err);
	REQUIRE(a && b && a->n == 5);
	uint32_t src[4];
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(trace_name(a, i), "k7b") != 0)
			src[n++] = (uint32_t)i;
	REQUIRE(n == 4);
	b->link_one_cpu = false;
	trace_rank_keep_rows(a, src, n, 1);
	trace_rank_keep_rows(b, src, n, 1);
	if (!trace_rank_same(a, b, &why))
		test_fail(__FILE__, __LINE__, "two kernels of one id: %s", why.data);
	for (size_t i = 0; i < a->n; i++)
		if (a->correlation[i] == 7 && a->kind[i] == TRACE_CAT_CUDA_RUNTIME) {
			REQUIRE(a->link[i] >= 0);
			CHECK_STR(trace_name(a, (size_t)a->link[i]), "k7a");
		}
	trace_rank_free(a);
	trace_rank_free(b);
	/* every row, in reverse: the last kernel of id 7 is now k7a */
	a = trace_rank_load_mem("two_kernels.json", t, strlen(t), &o, &err);
	b = trace_rank_load_mem("two_kernels.json", t, strlen(t), &o, &err);
	REQUIRE(a && b);
	uint32_t rev[5] = {4, 3, 2, 1, 0};
	b->link_one_cpu = false;
	trace_rank_keep_rows(a, rev, 5, 1);
	trace_rank_keep_rows(b, rev, 5, 1);
	if (!trace_rank_same(a, b, &why))
		test_fail(__FILE__, __LINE__, "reversed: %s", why.data);
	for (size_t i = 0; i < a->n; i++)
		if (a->correlation[i] == 7 && a->kind[i] == TRACE_CAT_CUDA_RUNTIME) {
			REQUIRE(a->link[i] >= 0);
			CHECK_STR(trace_name(a, (size_t)a->link[i]), "k7a");
		}
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
	buf_free(&why);
}

/* N of "ProfilerStep#N" (spaces allowed around '#'), -1 if none. */
static long step_of(const char *s)
{
	const char *p = strstr(s, "ProfilerStep");
	if (!p)
		return -1;
	p += 12;
	while (*p == ' ')
		p++;
	if (*p++ != '#')
		return -1;
	while (*p == ' ')
		p++;
	return *p >= '0' && *p <= '9' ? strtol(p, NULL, 10) : -1;
}

/* Every CPU row's iteration by its definition: of the steps whose [ts, ts
 * + dur) holds the row's ts, the last in trace order. */
static void check_cpu_iterations(const struct trace_rank *r, const char *what)
{
	size_t *step = malloc((r->n ? r->n : 1) * sizeof *step), ns = 0;
	for (size_t s = 0; s < r->n; s++)
		if (step_of(trace_name(r, s)) >= 0)
			step[ns++] = s; /* in trace order */
	size_t bad = 0, in_step = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!(r->stream[i] < 0 || (r->stream[i] == 0 && r->kind[i] == TRACE_CAT_CPU_OP)))
			continue;
		long want = -1;
		for (size_t k = 0; k < ns; k++) {
			size_t s = step[k];
			if (r->ts[s] <= r->ts[i] && r->ts[i] < r->ts[s] + r->dur[s])
				want = step_of(trace_name(r, s)); /* the last in trace order wins */
		}
		in_step += want >= 0;
		bad += r->iteration[i] != (want >= 0 ? (int32_t)want : TRACE_ITER_NONE);
	}
	free(step);
	if (bad)
		test_fail(__FILE__, __LINE__, "%s: %zu CPU rows with another iteration", what, bad);
	CHECK(in_step > 0);
}

#define STEP_AT(ts, dur, n)                                                                                  \
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"pid\":1,\"tid\":2,\"ts\":" #ts \
	",\"dur\":" #dur "},"
#define CPU_AT(ts)                                                                                           \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":2,\"ts\":" #ts ",\"dur\":1},"
#define ROWS CPU_AT(-5) CPU_AT(0) CPU_AT(5) CPU_AT(15) CPU_AT(50) CPU_AT(55) CPU_AT(60) CPU_AT(65) CPU_AT(109) CPU_AT(110)

/* The CPU rows' iterations (trace_rank_finish): steps apart (found by a
 * binary search), overlapping, nested, starting together, of no length
 * (the sweep), on made traces and the shared ones with steps. */
TEST(trace_cpu_iterations_by_their_definition)
{
	static const char *const made[] = {
		"{\"traceEvents\":[" STEP_AT(0, 50, 1) STEP_AT(60, 50, 2) ROWS "{}]}",   /* apart */
		"{\"traceEvents\":[" STEP_AT(60, 50, 2) STEP_AT(0, 50, 1) ROWS "{}]}",   /* apart, out of order */
		"{\"traceEvents\":[" STEP_AT(0, 70, 1) STEP_AT(60, 50, 2) ROWS "{}]}",   /* overlapping */
		"{\"traceEvents\":[" STEP_AT(60, 50, 2) STEP_AT(0, 70, 1) ROWS "{}]}",   /* the same, #1 last */
		"{\"traceEvents\":[" STEP_AT(0, 100, 1) STEP_AT(10, 10, 2) ROWS "{}]}",  /* nested */
		"{\"traceEvents\":[" STEP_AT(0, 50, 3) STEP_AT(0, 0, 4) STEP_AT(50, 0, 5) ROWS "{}]}", /* no length */
		"{\"traceEvents\":[" STEP_AT(0, 0, 4) STEP_AT(0, 50, 3) ROWS "{}]}",    /* together */
	};
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT;
	for (size_t k = 0; k < sizeof made / sizeof *made; k++) {
		char what[32];
		snprintf(what, sizeof what, "made trace %zu", k);
		struct trace_rank *r = trace_rank_load_mem(what, made[k], strlen(made[k]), &o, &err);
		if (!r)
			test_fail(__FILE__, __LINE__, "%s: %s", what, err.data);
		REQUIRE(r);
		check_cpu_iterations(r, what);
		trace_rank_free(r);
	}
	static const char *const shared[] = {
		"trace_filter/sampled_rank-0.json.gz",
		"nccl_parser_config/nccl_data.json.gz",
		"trace_diff/control/control.json.gz",
	};
	for (size_t k = 0; k < sizeof shared / sizeof *shared; k++) {
		struct trace_rank *r = load_shared(shared[k], &err);
		REQUIRE(r);
		check_cpu_iterations(r, shared[k]);
		trace_rank_free(r);
	}
	buf_free(&err);
}
#undef ROWS
#undef CPU_AT
#undef STEP_AT

/* trace_rank_link from the table indexed by id (ids close together, as
 * Kineto numbers them) and by sorting the rows (ids spread out) give the
 * same links: each trace linked as loaded, then with every id multiplied
 * (same order, spread out) and linked again. */
static void same_links_both_ways(struct trace_rank *r, const char *what)
{
	int32_t *was = malloc((r->n ? r->n : 1) * sizeof *was);
	memcpy(was, r->link, r->n * sizeof *was);
	bool one_cpu = r->link_one_cpu;
	size_t linked = 0;
	for (size_t i = 0; i < r->n; i++) {
		linked += r->link[i] >= 0;
		if (r->correlation[i] != -1)
			r->correlation[i] *= 1000003;
	}
	trace_rank_link(r);
	size_t bad = 0;
	for (size_t i = 0; i < r->n; i++)
		bad += r->link[i] != was[i];
	if (bad || r->link_one_cpu != one_cpu)
		test_fail(__FILE__, __LINE__, "%s: %zu links differ, one CPU row per id %d -> %d", what, bad, one_cpu,
			  r->link_one_cpu);
	CHECK(linked > 0);
	free(was);
}

TEST(trace_link_by_id_table_or_sort)
{
	static const char *const rel[] = {
		"trace_diff/control/control.json.gz",
		"nccl_parser_config/nccl_data.json.gz", /* Event and Context Sync rows */
		"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
		"trace_filter/sampled_rank-0.json.gz",
	};
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT;
	for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
		struct trace_rank *r = load_shared(rel[i], &err);
		REQUIRE(r);
		same_links_both_ways(r, rel[i]);
		trace_rank_free(r);
	}
	/* id 7 has two launches and a kernel, id 8 a launch only, id 9 a
	 * kernel only, id -5 a launch and a kernel (the smallest id: the
	 * table's offset) */
	const char *t = "{\"traceEvents\":[" EV_LAUNCH(6, 1, 7) "," EV_LAUNCH(8, 1, 7) "," EV_KERNEL(20, 3, 7, "k7") ","
			EV_LAUNCH(30, 1, 8) "," EV_KERNEL(45, 3, 9, "k9") "," EV_LAUNCH(50, 1, -5) ","
			EV_KERNEL(55, 3, -5, "k-5") "]}";
	struct trace_rank *r = trace_rank_load_mem("ids.json", t, strlen(t), &o, &err);
	REQUIRE(r);
	CHECK(!r->link_one_cpu);
	for (size_t i = 0; i < r->n; i++) {
		const char *nm = trace_name(r, i);
		if (r->correlation[i] == 7 && r->kind[i] == TRACE_CAT_CUDA_RUNTIME)
			CHECK(r->link[i] >= 0 && strcmp(trace_name(r, (size_t)r->link[i]), "k7") == 0);
		if (strcmp(nm, "k7") == 0) /* the last launch of its id */
			CHECK(r->link[i] >= 0 && r->ts[r->link[i]] == 8);
		if (r->correlation[i] == 8 || r->correlation[i] == 9)
			CHECK_INT(r->link[i], -1);
		/* a negative id is never the GPU side (HTA's rule): id -5's
		 * two rows are both CPU rows, and link nothing */
		if (r->correlation[i] == -5)
			CHECK_INT(r->link[i], -1);
	}
	same_links_both_ways(r, "ids.json");
	trace_rank_free(r);
	buf_free(&err);
}

/* The count of kernels starting before the previous one of their stream
 * ended, by its definition: each stream's kernels by (ts, end, row),
 * consecutive ones compared. */
static const struct trace_rank *ov_rank;
static int ov_cmp(const void *a, const void *b)
{
	const struct trace_rank *r = ov_rank;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	double ex = r->ts[x] + r->dur[x], ey = r->ts[y] + r->dur[y];
	if (r->stream[x] != r->stream[y])
		return r->stream[x] < r->stream[y] ? -1 : 1;
	if (r->ts[x] != r->ts[y])
		return r->ts[x] < r->ts[y] ? -1 : 1;
	if (ex != ey)
		return ex < ey ? -1 : 1;
	return x < y ? -1 : x > y;
}

static size_t overlaps_by_definition(const struct trace_rank *r)
{
	size_t *k = malloc((r->n ? r->n : 1) * sizeof *k), n = 0, c = 0;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_idle_kernel(r, i))
			k[n++] = i;
	ov_rank = r;
	qsort(k, n, sizeof *k, ov_cmp);
	for (size_t j = 1; j < n; j++)
		c += r->stream[k[j]] == r->stream[k[j - 1]] && r->ts[k[j]] < r->ts[k[j - 1]] + r->dur[k[j - 1]];
	free(k);
	return c;
}

#define KERN(stream, ts, dur)                                                                                \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":" #stream ",\"ts\":" #ts           \
	",\"dur\":" #dur ",\"args\":{\"stream\":" #stream ",\"correlation\":1}},"

/* In one pass when each stream's kernels are in (ts, end) order in the
 * trace, else by sorting: the same count, on made traces (in order, out
 * of order, equal starts, 300 streams) and the shared traces. */
TEST(trace_stream_overlaps_by_their_definition)
{
	struct buf many = BUF_INIT;
	buf_puts(&many, "{\"traceEvents\":[");
	for (int s = 1; s <= 300; s++) /* more streams than the one pass's table has slots */
		buf_printf(&many, KERN(%d, 10, 5) KERN(%d, 12, 5), s, s, s, s); /* one overlap each */
	buf_puts(&many, "{}]}");
	const char *made[] = {
		"{\"traceEvents\":[" KERN(7, 0, 10) KERN(7, 5, 10) KERN(8, 0, 3) KERN(7, 20, 1) KERN(8, 3, 1) "{}]}",
		"{\"traceEvents\":[" KERN(7, 5, 10) KERN(7, 0, 10) KERN(8, 0, 3) KERN(7, 20, 1) "{}]}", /* out of order */
		"{\"traceEvents\":[" KERN(7, 0, 10) KERN(7, 0, 4) KERN(7, 2, 1) "{}]}",  /* a start twice, ends down */
		"{\"traceEvents\":[" KERN(7, 0, 4) KERN(7, 0, 10) KERN(7, 2, 1) "{}]}",  /* ends up */
		many.data,
	};
	static const size_t want[] = {1, 1, 2, 2, 300};
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT;
	for (size_t k = 0; k < sizeof made / sizeof *made; k++) {
		struct trace_rank *r = trace_rank_load_mem("overlaps.json", made[k], strlen(made[k]), &o, &err);
		REQUIRE(r);
		if (r->stats.stream_overlaps != want[k] || overlaps_by_definition(r) != want[k])
			test_fail(__FILE__, __LINE__, "made trace %zu: %zu overlaps counted, %zu by the definition, %zu wanted",
				  k, (size_t)r->stats.stream_overlaps, overlaps_by_definition(r), want[k]);
		trace_rank_free(r);
	}
	static const char *const shared[] = {
		"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
		"nccl_parser_config/nccl_data.json.gz",
		"trace_diff/control/control.json.gz",
	};
	for (size_t k = 0; k < sizeof shared / sizeof *shared; k++) {
		struct trace_rank *r = load_shared(shared[k], &err);
		REQUIRE(r);
		CHECK_INT(r->stats.stream_overlaps, overlaps_by_definition(r));
		trace_rank_free(r);
	}
	buf_free(&many);
	buf_free(&err);
}
#undef KERN
