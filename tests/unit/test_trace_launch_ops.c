/*
 * test_trace_launch_ops.c - the loader's launch_ops_only step
 * (src/trace/launch_ops.c): of the operator rows it keeps exactly those a
 * launch is attributed to (plus the two latest), every other row as the
 * full load has it; and `summary` over it gives every table byte for byte
 * as over the full load, on every trace of the conformance set.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/run.h"
#include "test.h"
#include "test_trace_util.h"

static bool droppable(const struct trace_rank *r, size_t i)
{
	return r->kind[i] == TRACE_CAT_CPU_OP && r->stream[i] == -1 && r->correlation[i] == -1 && r->idx[i] != 0 &&
	       strcmp(trace_name(r, i), "cudaLaunchKernel") != 0 && strcmp(trace_name(r, i), "hipLaunchKernel") != 0;
}

/* One file loaded whole and with launch_ops_only (no set steps): the kept
 * rows are a subsequence of the full load's, every row but the droppable
 * operators is kept with the same values, and the operators kept are the
 * chosen ones (by event id) and at most two more. */
TEST(launch_ops_keeps_the_chosen_operators_and_every_other_row)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
		 test_data_dir());
	struct trace_load_opts full_o = {.threads = 1}, small_o = {.threads = 1, .launch_ops_only = true};
	struct buf err = BUF_INIT;
	struct trace_rank *full = trace_rank_load(path, &full_o, &err);
	struct trace_rank *small = trace_rank_load(path, &small_o, &err);
	REQUIRE(full && small);
	buf_free(&err);

	/* the operators launches are attributed to, on the full load */
	uint32_t *ls;
	int32_t *op;
	size_t nl = trace_launch_ops(full, false, &ls, &op);
	CHECK(nl > 1000);
	uint8_t *chosen = calloc(full->n, 1);
	size_t nchosen = 0;
	for (size_t j = 0; j < nl; j++)
		if (op[j] >= 0 && !chosen[op[j]]) {
			chosen[op[j]] = 1;
			nchosen++;
		}
	free(ls);
	free(op);
	CHECK(nchosen > 100);

	size_t ndrop = 0;
	for (size_t i = 0; i < full->n; i++)
		ndrop += droppable(full, i);
	/* most operators go: they are most of this trace */
	CHECK(ndrop > full->n / 3);
	CHECK(small->n < full->n - ndrop / 2);
	CHECK_INT(small->stats.skipped_cpu_ops, full->n - small->n);
	CHECK_INT(small->cap, small->n);

	size_t j = 0, extra = 0;
	bool same = true;
	for (size_t i = 0; i < full->n; i++) {
		bool kept = j < small->n && small->idx[j] == full->idx[i];
		if (!kept) {
			/* only a droppable operator no launch is attributed to goes */
			same &= droppable(full, i) && !chosen[i];
			continue;
		}
		same &= small->ts[j] == full->ts[i] && small->dur[j] == full->dur[i] &&
			small->name[j] == full->name[i] && small->cat[j] == full->cat[i] &&
			small->kind[j] == full->kind[i] && small->pid[j] == full->pid[i] && small->tid[j] == full->tid[i] &&
			small->stream[j] == full->stream[i] && small->correlation[j] == full->correlation[i] &&
			small->iteration[j] == full->iteration[i] &&
			(small->link[j] < 0) == (full->link[i] < 0) &&
			(small->link[j] < 0 || small->idx[small->link[j]] == full->idx[full->link[i]]);
		extra += droppable(full, i) && !chosen[i];
		j++;
	}
	CHECK(same);
	CHECK_INT(j, small->n); /* a subsequence: every kept row was matched */
	CHECK(extra <= 2);      /* the latest operators, for the time span */
	/* the dropped rows still count for the alignment */
	double lo_full = INFINITY, lo_small = small->skipped_min_ts;
	for (size_t i = 0; i < full->n; i++)
		lo_full = fmin(lo_full, full->ts[i]);
	for (size_t i = 0; i < small->n; i++)
		lo_small = fmin(lo_small, small->ts[i]);
	CHECK(lo_full == lo_small);
	free(chosen);
	trace_rank_free(full);
	trace_rank_free(small);
}

static void summary_json(const struct trace_set *set, struct buf *b)
{
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	struct analyze_run_opts o = {.config = &cfg, .fmt = AFMT_JSON, .every_table = true, .threads = 1};
	struct analyze_results r;
	analyze_run(set, NULL, &o, &r);
	for (size_t i = 0; i < r.n; i++) {
		buf_puts(b, r.v[i].name);
		buf_putc(b, '\n');
		atable_render(r.v[i].t, AFMT_JSON, b);
	}
	for (size_t i = 0; i < r.nskipped; i++) {
		buf_puts(b, r.skipped[i].why);
		buf_putc(b, '\n');
	}
	analyze_results_free(&r);
	analysis_config_free(&cfg);
}

/* What `summary` loads (launch_ops_only) against the same load keeping
 * every operator: the same tables, byte for byte, on every trace. */
TEST(launch_ops_summary_same_tables_as_full_load)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	size_t dropped = 0;
	for (size_t c = 0; c < n; c++) {
		struct trace_load_opts lo = {0};
		analysis_load_opts(NULL, &lo);
		REQUIRE(lo.launch_ops_only && lo.keep_range_ops && !lo.skip_cpu_ops);
		struct trace_load_opts full_o = lo;
		full_o.launch_ops_only = false;
		struct trace_set small, full;
		struct buf err = BUF_INIT;
		REQUIRE(trace_set_load(&small, cases[c].input, &lo, &err) == 0);
		REQUIRE(trace_set_load(&full, cases[c].input, &full_o, &err) == 0);
		buf_free(&err);
		CHECK_INT(small.nranks, full.nranks);
		CHECK(small.min_ts == full.min_ts);
		for (size_t k = 0; k < small.nranks && k < full.nranks; k++) {
			CHECK(small.ranks[k]->n <= full.ranks[k]->n);
			dropped += full.ranks[k]->n - small.ranks[k]->n;
		}
		struct buf a = BUF_INIT, b = BUF_INIT;
		summary_json(&small, &a);
		summary_json(&full, &b);
		CHECK(a.len > 100);
		if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
			test_fail(__FILE__, __LINE__, "%s: summary differs with launch_ops_only", cases[c].name);
		buf_free(&a);
		buf_free(&b);
		trace_set_free(&small);
		trace_set_free(&full);
	}
	CHECK(dropped > 10000); /* the step did drop operators */
}

/* A small trace: event 0, an operator around a launch (kept), three
 * operators no launch is inside (the latest kept for the time span, the
 * others dropped), and one more runtime row named `api`. */
static struct trace_rank *small_trace(const char *api, bool launch_ops_only)
{
	struct buf j = BUF_INIT;
	buf_printf(&j, "{\"traceEvents\": ["
		       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::first\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
		       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":20},"
		       "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
		       "\"ts\":12,\"dur\":2,\"args\":{\"correlation\":7}},"
		       "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":5,"
		       "\"args\":{\"stream\":7,\"correlation\":7}},"
		       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::idle\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":5},"
		       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::later\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":5},"
		       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::latest\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":5},"
		       "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":1,\"tid\":2,\"ts\":80,\"dur\":1}"
		       "]}",
		   api);
	struct trace_load_opts o = {.threads = 1, .launch_ops_only = launch_ops_only};
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load_mem("t.json", j.data, j.len, &o, &err);
	buf_free(&j);
	buf_free(&err);
	REQUIRE(r != NULL);
	return r;
}

static bool has_row(const struct trace_rank *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(trace_name(r, i), name) == 0)
			return true;
	return false;
}

/* the operator no launch is in goes; the one around the launch, event 0
 * and the latest stay; an MTIA rank (its launch API named) keeps all */
TEST(launch_ops_small_trace_and_mtia_keeps_all)
{
	struct trace_rank *full = small_trace("cudaDeviceSynchronize", false);
	struct trace_rank *cut = small_trace("cudaDeviceSynchronize", true);
	CHECK_INT(full->n, 8);
	CHECK_INT(cut->n, 6);
	CHECK(!has_row(cut, "aten::idle") && !has_row(cut, "aten::later") && has_row(cut, "aten::mm") &&
	      has_row(cut, "aten::first") && has_row(cut, "aten::latest") && has_row(cut, "k"));
	CHECK_INT(cut->stats.skipped_cpu_ops, 2);
	CHECK(cut->skipped_min_ts == 50);
	trace_rank_free(full);
	trace_rank_free(cut);
	struct trace_rank *mtia = small_trace("runFunction - job_prep_and_submit_for_execution", true);
	CHECK_INT(mtia->n, 8);
	CHECK(has_row(mtia, "aten::idle"));
	trace_rank_free(mtia);
}

/* The attribution by its definition, one launch at a time: of the aten::
 * cpu_ops on the launch's (pid, tid) that enclose it, the latest start;
 * at equal starts the first in the trace. */
static int32_t brute_op(const struct trace_rank *r, const uint32_t *aten, size_t naten, size_t l)
{
	int32_t best = -1;
	for (size_t a = 0; a < naten; a++) {
		size_t o = aten[a];
		if (r->pid[o] != r->pid[l] || r->tid[o] != r->tid[l])
			continue;
		if (r->ts[o] > r->ts[l] || r->ts[o] + r->dur[o] < r->ts[l] + r->dur[l])
			continue;
		if (best < 0 || r->ts[o] > r->ts[best])
			best = (int32_t)o;
	}
	return best;
}

static const struct trace_rank *cmp_rank;
static int by_thread_ts_row(const void *a, const void *b)
{
	const struct trace_rank *r = cmp_rank;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (r->pid[x] != r->pid[y])
		return r->pid[x] < r->pid[y] ? -1 : 1;
	if (r->tid[x] != r->tid[y])
		return r->tid[x] < r->tid[y] ? -1 : 1;
	if (r->ts[x] != r->ts[y])
		return r->ts[x] < r->ts[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The launches come out in (pid, tid, ts, row) order and every stride-th
 * gets the operator the definition gives. */
static void check_attribution(const struct trace_rank *r, size_t min_launches, size_t stride)
{
	uint32_t *ls;
	int32_t *op;
	size_t nl = trace_launch_ops(r, false, &ls, &op);
	CHECK(nl >= min_launches);
	uint32_t *want = malloc((nl ? nl : 1) * sizeof *want);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(trace_name(r, i), "cudaLaunchKernel") == 0 || strcmp(trace_name(r, i), "cudaLaunchKernelExC") == 0)
			want[k++] = (uint32_t)i;
	CHECK_INT(k, nl);
	cmp_rank = r;
	qsort(want, k, sizeof *want, by_thread_ts_row);
	uint32_t *aten = malloc((r->n ? r->n : 1) * sizeof *aten);
	size_t naten = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->kind[i] == TRACE_CAT_CPU_OP && strncmp(trace_name(r, i), "aten::", 6) == 0)
			aten[naten++] = (uint32_t)i;
	size_t bad = 0, attributed = 0;
	for (size_t j = 0; j < nl && j < k; j++) {
		bad += ls[j] != want[j];
		if (j % stride == 0) {
			bad += op[j] != brute_op(r, aten, naten, ls[j]);
			attributed += op[j] >= 0;
		}
	}
	CHECK_INT(bad, 0);
	CHECK(attributed > 0);
	free(aten);
	free(want);
	free(ls);
	free(op);
}

/* Made: four threads of two processes (negative ids, a tid that sorts
 * before another process's), rows of the threads interleaved and out of
 * time order, operators starting together, nested, and a launch between
 * two operators; then the shared traces with launches. */
TEST(launch_ops_attribution_by_its_definition)
{
#define OP(pid, tid, ts, dur, name)                                                                          \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":" #pid ",\"tid\":" #tid ",\"ts\":" #ts \
	",\"dur\":" #dur "},"
#define LA(pid, tid, ts, dur, corr)                                                                          \
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":" #pid ",\"tid\":" #tid \
	",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}},"
	static const char t[] = "{\"traceEvents\":["
		OP(5, 9, 100, 50, "aten::mm") OP(-3, 12, 100, 50, "aten::add") OP(5, 2, 200, 10, "aten::linear")
		LA(5, 9, 120, 5, 1) LA(-3, 12, 110, 5, 2) OP(5, 9, 100, 40, "aten::addmm") LA(5, 9, 105, 3, 3)
		OP(5, 9, 100, 50, "aten::mm_again") LA(5, 2, 205, 2, 4) LA(5, 2, 215, 2, 5) LA(-3, 12, 90, 5, 6)
		OP(-3, 12, 101, 20, "aten::inner") LA(-3, 12, 102, 5, 7) OP(-3, 4, 0, 1000, "aten::outer")
		LA(-3, 4, 500, 1, 8) LA(5, 9, 160, 1, 9) LA(-3, 12, 110, 5, 10)
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":1,"
		"\"args\":{\"stream\":7,\"correlation\":1}}]}";
#undef OP
#undef LA
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load_mem("made.json", t, sizeof t - 1, &o, &err);
	REQUIRE(r);
	check_attribution(r, 10, 1);
	/* spelled out: the first launch on (5, 9) at 120 gets aten::mm, the
	 * first of the two starting at 100 with the latest end enclosing it */
	uint32_t *ls;
	int32_t *op;
	size_t nl = trace_launch_ops(r, false, &ls, &op);
	size_t hits = 0;
	for (size_t j = 0; j < nl; j++)
		if (r->pid[ls[j]] == 5 && r->tid[ls[j]] == 9 && r->ts[ls[j]] == 120) {
			CHECK(op[j] >= 0);
			CHECK_STR(trace_name(r, (size_t)op[j]), "aten::mm");
			hits++;
		}
	CHECK_INT(hits, 1);
	free(ls);
	free(op);
	trace_rank_free(r);

	static const char *const shared[] = {
		"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
		"trace_diff/control/control.json.gz",
	};
	for (size_t i = 0; i < sizeof shared / sizeof *shared; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/traces/%s", test_data_dir(), shared[i]);
		r = trace_rank_load(path, &o, &err);
		REQUIRE(r);
		check_attribution(r, 1000, 13);
		trace_rank_free(r);
	}
	buf_free(&err);
}
