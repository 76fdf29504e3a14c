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
