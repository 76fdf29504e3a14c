/*
 * test_trace_filter_mtia.c - HTA's last-step filter for MTIA ranks
 * (src/trace/filter_mtia.c) on a small synthetic MTIA trace: CPU events
 * inside [first step start, last step end] stay, the kernels they launched
 * stay, dma rows inside a step stay with their stream and iteration
 * repaired, everything else goes; --keep-last-step keeps everything.
 */
#include <string.h>

#include "test.h"
#include "trace/model.h"

#define X(cat, name, ts, dur, tid, args)                                                             \
	"{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts \
	",\"dur\":" #dur ",\"args\":{" args "}}"

static const char mtia_trace[] =
	"{\"distributedInfo\":{\"backend\":\"mtia:hccl\",\"rank\":0},\"traceEvents\":["
	X("user_annotation", "ProfilerStep#1", 100, 100, 2, "") ","
	X("user_annotation", "ProfilerStep#2", 200, 100, 2, "") ","
	X("cpu_op", "aten::mm", 110, 10, 2, "") ","
	X("cpu_op", "aten::late", 290, 20, 2, "") ","
	X("mtia_runtime", "runFunction - job_prep_and_submit_for_execution", 120, 5, 2, "\"correlation\":7") ","
	X("mtia_ccp_events", "k1", 130, 20, 5, "\"stream\":1,\"correlation\":7") ","
	X("mtia_runtime", "runFunction - job_prep_and_submit_for_execution", 350, 5, 2, "\"correlation\":8") ","
	X("mtia_ccp_events", "k2", 400, 5, 5, "\"stream\":1,\"correlation\":8") ","
	X("mtia_ccp_events", "dma_copy", 150, 5, 42, "") ","
	X("mtia_ccp_events", "dma_late", 500, 5, 42, "")
	"]}";

static size_t row_named(const struct trace_rank *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(trace_name(r, i), name) == 0)
			return i;
	return (size_t)-1;
}

static void load_set(struct trace_set *set, bool keep_last)
{
	struct trace_load_opts o = {.keep_last_step = keep_last, .threads = 2};
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load_mem("mtia.json", mtia_trace, strlen(mtia_trace), &o, &err);
	REQUIRE(r != NULL);
	buf_free(&err);
	CHECK_STR(r->device_type, "MTIA");
	trace_set_from_rank(set, r, &o);
}

TEST(trace_filter_mtia_rule)
{
	struct trace_set set;
	load_set(&set, false);
	const struct trace_rank *r = set.ranks[0];
	CHECK(set.filtered);
	CHECK_INT(r->n, 6);
	CHECK_INT(r->stats.dropped_last_step, 4);
	static const char *const kept[] = {"ProfilerStep#1", "ProfilerStep#2", "aten::mm", "k1", "dma_copy"};
	for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++)
		CHECK(row_named(r, kept[k]) != (size_t)-1);
	static const char *const gone[] = {"aten::late", "k2", "dma_late"};
	for (size_t k = 0; k < sizeof gone / sizeof gone[0]; k++)
		CHECK(row_named(r, gone[k]) == (size_t)-1);
	/* trace order is kept: the steps first */
	CHECK_STR(trace_name(r, 0), "ProfilerStep#1");
	/* the kept launch and its kernel are linked again */
	size_t k1 = row_named(r, "k1");
	REQUIRE(k1 != (size_t)-1);
	CHECK(r->link[k1] >= 0);
	CHECK_STR(trace_name(r, (size_t)r->link[k1]), "runFunction - job_prep_and_submit_for_execution");
	/* dma inside step 1: stream from tid, iteration of the step */
	size_t d = row_named(r, "dma_copy");
	REQUIRE(d != (size_t)-1);
	CHECK_INT(r->stream[d], 42);
	CHECK_INT(r->iteration[d], 1);
	trace_set_free(&set);
}

TEST(trace_filter_mtia_keep_last_step)
{
	struct trace_set set;
	load_set(&set, true);
	CHECK(!set.filtered);
	CHECK_INT(set.ranks[0]->n, 10);
	size_t d = row_named(set.ranks[0], "dma_copy");
	REQUIRE(d != (size_t)-1);
	CHECK_INT(set.ranks[0]->stream[d], -1);
	trace_set_free(&set);
}
