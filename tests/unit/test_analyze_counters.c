/*
 * test_analyze_counters.c - `dyno analyze counters` beyond HTA's CSVs
 * (those are in test_analyze_conformance.c): the trace it writes with
 * --write-trace follows Perfetto's rules (tests/lib/trace_check) on every
 * shared trace, holds the original events plus one counter event per
 * series point, loads back; and the checker itself rejects what it must.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/counters.h"
#include "test.h"
#include "test_trace_util.h"
#include "../lib/trace_check.h"

static bool check_text(const char *s, struct buf *why)
{
	buf_reset(why);
	return trace_check_mem(s, strlen(s), NULL, why);
}

TEST(trace_check_rules)
{
	struct buf why = BUF_INIT;
	CHECK(check_text("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
			 "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":3},"
			 "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":1},"
			 "{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":5,\"dur\":10},"
			 "{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"ts\":3,\"args\":{\"a\":1,\"b\":2.5}}]}",
			 &why));
	/* a partial overlap on one thread; the same on two threads is fine */
	CHECK(!check_text("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
			  "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":10}]}",
			  &why));
	CHECK(strstr(why.data, "event 1 overlaps event 0") != NULL);
	CHECK(check_text("{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
			 "{\"ph\":\"X\",\"pid\":1,\"tid\":\"1\",\"ts\":5,\"dur\":10}]}",
			 &why));
	CHECK(!check_text("{\"traceEvents\":[{\"ph\":\"C\",\"name\":\"q\",\"ts\":1,\"args\":{\"a\":\"7\"}}]}", &why));
	CHECK(strstr(why.data, "not a number") != NULL);
	CHECK(!check_text("{\"traceEvents\":[{\"ph\":\"C\",\"name\":\"q\",\"ts\":1}]}", &why));
	CHECK(!check_text("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":-1}]}", &why));
	CHECK(!check_text("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1},]}", &why));
	CHECK(strstr(why.data, "not valid JSON") != NULL);
	CHECK(!check_text("{\"events\":[]}", &why));
	buf_free(&why);
}

/* Every shared trace, each rank: the written trace passes the checker
 * whenever its original does, has the original's events and one counter
 * event per point of the two series, and loads back. */
TEST(analyze_counters_write_trace)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	int written = 0, clean = 0;
	for (size_t c = 0; c < n; c++) {
		struct trace_set set;
		struct buf err = BUF_INIT;
		struct trace_load_opts lo = {0};
		if (trace_set_load(&set, cases[c].input, &lo, &err) != 0) {
			test_fail(__FILE__, __LINE__, "%s: %s", cases[c].name, err.data);
			buf_free(&err);
			continue;
		}
		for (size_t k = 0; k < set.nranks; k++) {
			const struct trace_rank *r = set.ranks[k];
			/* gzip for every other one */
			struct buf outb = BUF_INIT;
			buf_printf(&outb, "%s/%s_%zu_with_counters.json%s", test_tmpdir(), cases[c].name, k,
				   written % 2 ? ".gz" : "");
			const char *out = outb.data;
			buf_reset(&err);
			if (counters_write_trace(r, out, &err) != 0) {
				test_fail(__FILE__, __LINE__, "%s: %s", cases[c].name, err.data);
				buf_free(&outb);
				continue;
			}
			written++;
			struct buf why = BUF_INIT, why0 = BUF_INIT;
			struct trace_check_stats st, st0;
			bool ok0 = trace_check_file(r->path, &st0, &why0);
			bool ok = trace_check_file(out, &st, &why);
			if (ok0 && !ok)
				test_fail(__FILE__, __LINE__, "%s: %s", out, why.data);
			clean += ok;
			struct queue_point *q;
			struct bw_point *b;
			char **types;
			size_t nt;
			bool mm;
			size_t nq = counters_queue_series(r, &q, &mm), nb = counters_bw_series(r, &b, &types, &nt);
			CHECK_INT(st.events, st0.events + nq + nb);
			CHECK_INT(st.complete, st0.complete);
			CHECK_INT(st.counters, st0.counters + nq + nb);
			free(q);
			free(b);
			for (size_t t = 0; t < nt; t++)
				free(types[t]);
			free(types);
			/* loads back: the same rows, the new counters */
			struct trace_rank *back = trace_rank_load(out, &lo, &err);
			struct trace_rank *orig = trace_rank_load(r->path, &lo, &err);
			REQUIRE(back && orig);
			CHECK_INT(back->n, orig->n);
			CHECK_INT(back->ncounters, orig->ncounters + nq + nb);
			trace_rank_free(back);
			trace_rank_free(orig);
			buf_free(&why);
			buf_free(&why0);
			buf_free(&outb);
		}
		buf_free(&err);
		trace_set_free(&set);
	}
	CHECK(written >= 20);
	CHECK(clean >= 15);
}

/* A file that is not a trace: a clear message, nothing left behind. */
TEST(analyze_counters_write_trace_bad)
{
	struct trace_set set;
	struct buf err = BUF_INIT;
	char in[1024], out[1024];
	snprintf(in, sizeof in, "%s/ok.json", test_tmpdir());
	FILE *f = fopen(in, "w");
	REQUIRE(f);
	fputs("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":2,"
	      "\"args\":{\"stream\":7,\"correlation\":1}}]}",
	      f);
	fclose(f);
	struct trace_load_opts lo = {0};
	REQUIRE(trace_set_load(&set, in, &lo, &err) == 0);
	/* the file changes under us: no longer JSON */
	f = fopen(in, "w");
	REQUIRE(f);
	fputs("{\"traceEvents\":[{\"ph\":\"X\"", f);
	fclose(f);
	snprintf(out, sizeof out, "%s/out.json", test_tmpdir());
	CHECK(counters_write_trace(set.ranks[0], out, &err) != 0);
	CHECK(strstr(err.data, "ok.json: byte") != NULL);
	CHECK(fopen(out, "r") == NULL);
	/* an output that cannot be created */
	buf_reset(&err);
	f = fopen(in, "w");
	fputs("{\"traceEvents\":[]}", f);
	fclose(f);
	snprintf(out, sizeof out, "%s/no/such/dir/out.json", test_tmpdir());
	CHECK(counters_write_trace(set.ranks[0], out, &err) != 0);
	CHECK(strstr(err.data, "No such file") != NULL);
	buf_free(&err);
	trace_set_free(&set);
}
