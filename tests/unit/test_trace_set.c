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
#include "trace/model.h"

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
