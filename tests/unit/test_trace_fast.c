/*
 * test_trace_fast.c - the loader's fast path (src/trace/load_fast.c) gives
 * exactly the model of the tokenizer path, on every shared trace and on
 * hand-written events that hit each of its accept/decline rules, and it is
 * really taken on real traces.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../lib/trace_compare.h"
#include "test.h"
#include "trace/model.h"

/* Load the same bytes with and without the fast path; they must agree,
 * errors included.  Returns the fast-path rank (or NULL) for more checks. */
static struct trace_rank *both_ways(const char *what, const char *data, size_t len,
				    const struct trace_load_opts *base)
{
	struct trace_load_opts fo = *base, so = *base;
	fo.tokenizer_only = false;
	so.tokenizer_only = true;
	struct buf fe = BUF_INIT, se = BUF_INIT;
	struct trace_rank *f = trace_rank_load_mem("t.json", data, len, &fo, &fe);
	struct trace_rank *s = trace_rank_load_mem("t.json", data, len, &so, &se);
	if (!f != !s)
		test_fail(__FILE__, __LINE__, "%s: fast %s, tokenizer %s", what, f ? "loads" : fe.data,
			  s ? "loads" : se.data);
	else if (!f && strcmp(fe.data, se.data) != 0)
		test_fail(__FILE__, __LINE__, "%s: errors differ: \"%s\" vs \"%s\"", what, fe.data, se.data);
	if (f && s) {
		struct buf why = BUF_INIT;
		if (!trace_rank_same(f, s, &why))
			test_fail(__FILE__, __LINE__, "%s: %s", what, why.data);
		buf_free(&why);
		if (s->stats.fast_path_events != 0)
			test_fail(__FILE__, __LINE__, "%s: tokenizer_only still took the fast path", what);
	}
	trace_rank_free(s);
	buf_free(&fe);
	buf_free(&se);
	return f;
}

static void walk(const char *dir, void (*fn)(const char *path, void *ctx), void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		struct buf p = BUF_INIT;
		buf_printf(&p, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(p.data, &st) == 0 && S_ISDIR(st.st_mode))
			walk(p.data, fn, ctx);
		else if (strstr(de->d_name, ".json"))
			fn(p.data, ctx);
		buf_free(&p);
	}
	closedir(d);
}

struct shared_stats {
	size_t files;
	uint64_t events, fast;
};

static void check_file(const char *path, void *ctx)
{
	struct shared_stats *st = ctx;
	/* compare through the file API (gzip, the real read sizes), one thread */
	static const struct trace_load_opts variants[3] = {
		{.threads = 1},
		{.threads = 1, .skip_cpu_ops = true, .no_flows = true, .no_counters = true},
		{.threads = 1, .keep_python = true, .no_ns_rounding = true, .keep_event_waits = true,
		 .keep_kernel_occupancy = true},
	};
	for (int v = 0; v < 3; v++) {
		struct trace_load_opts fo = variants[v], so = variants[v];
		so.tokenizer_only = true;
		struct buf fe = BUF_INIT, se = BUF_INIT, why = BUF_INIT;
		struct trace_rank *f = trace_rank_load(path, &fo, &fe);
		struct trace_rank *s = trace_rank_load(path, &so, &se);
		if (!f || !s)
			test_fail(__FILE__, __LINE__, "%s: %s%s", path, fe.data, se.data);
		else if (!trace_rank_same(f, s, &why))
			test_fail(__FILE__, __LINE__, "%s (variant %d): %s", path, v, why.data);
		if (f && v == 0) {
			st->files++;
			st->events += f->stats.events;
			st->fast += f->stats.fast_path_events;
		}
		trace_rank_free(f);
		trace_rank_free(s);
		buf_free(&fe);
		buf_free(&se);
		buf_free(&why);
	}
}

TEST(trace_fast_path_equals_tokenizer_on_shared_traces)
{
	struct shared_stats st = {0};
	struct buf dir = BUF_INIT;
	buf_printf(&dir, "%s/traces", test_data_dir());
	walk(dir.data, check_file, &st);
	buf_free(&dir);
	REQUIRE(st.files >= 15);
	/* the fast path must carry real traces, not decline them */
	if (st.fast < st.events * 99 / 100)
		test_fail(__FILE__, __LINE__, "fast path took %llu of %llu events", (unsigned long long)st.fast,
			  (unsigned long long)st.events);
}

/* Each element alone in a trace: fast and tokenizer models agree; `fast`
 * says whether the fast path is expected to take it. */
static const struct {
	const char *ev;
	bool fast;
} cases[] = {
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":7,\"ts\":10.5,\"dur\":2.25,"
	 "\"args\":{\"stream\":7,\"correlation\":12,\"External id\":3,\"grid\":[1,2,[3,{\"a\":null}]],"
	 "\"x\":{\"y\":[true,false,-0.5e-3,\"s\\n\\u00e9\"]}}}", true},
	{"{ \"name\" : \"n\" , \"cat\" : \"cpu_op\" , \"ph\" : \"X\" , \"ts\" : 1 , \"dur\" : 0 }", true},
	{"{\n  \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\",\n  \"pid\": 0, \"tid\": 7,\n"
	 "  \"ts\": 1712195495505582.988, \"dur\": 4.928,\n  \"args\": {\"stream\": 7, \"correlation\": 9,"
	 " \"bytes\": 4096, \"memory bandwidth (GB/s)\": 12.5}\n}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\"ts\":1,\"dur\":1}", true},
	{"{}", true},
	{"{\"ph\":\"s\",\"id\":135071,\"pid\":1,\"tid\":1,\"ts\":5,\"cat\":\"ac2g\",\"name\":\"ac2g\"}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":-0,\"dur\":0.000,\"pid\":-5,\"tid\":0}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":null,\"dur\":null,\"cat\":null}", true},
	/* the occupancy arg (the optional column): a number, anything else is
	 * none, the last of two wins, in both paths */
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{\"stream\":7,"
	 "\"est. achieved occupancy %\":63}}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{"
	 "\"est. achieved occupancy %\":\"63\",\"stream\":7}}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{"
	 "\"est. achieved occupancy %\":12.5,\"est. achieved occupancy %\":null}}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{"
	 "\"est. achieved occupancy %\":[1],\"est. achieved occupancy %\":-3}}", true},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{"
	 "\"est. achieved occupancy %\":6.3e1}}", false},
	/* declined: the tokenizer path decides */
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\\\"b\",\"ts\":1,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"n\\u0061me\":\"k\",\"ts\":1,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1e3,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":12345678901234567890,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1.23456789012345678901,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler\",\"pid\":\"Spans\",\"tid\":1,\"ts\":1,\"dur\":9}", false},
	{"{\"ph\":\"X\",\"cat\":\"a\",\"cat\":\"b\",\"name\":\"k\",\"ts\":1,\"dur\":1}", false},
	{"{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1,\"args\":{\"a\":1,\"b\":2.5}}", false},
	{"{\"name\":\"mem\",\"args\":{\"a\":1},\"ph\":\"C\",\"ts\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{\"stream\":\"7\"}}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"id\":null}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"pid\":-9223372036854775807}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"tid\":9223372036854775808}", false},
	{"{\"ph\":\"XY\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"bad \xff utf8\",\"ts\":1,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"x\":\"\\ud83d\\ude00\"}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", false},
	/* an event wait (rare) goes to the tokenizer path, which keeps its args when asked */
	{"{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"ts\":1,\"dur\":0,\"args\":"
	 "{\"stream\":7,\"correlation\":5,\"wait_on_stream\":13,\"wait_on_cuda_event_record_corr_id\":4}}", false},
	{"{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Event Sync\",\"ts\":1,\"dur\":0,\"args\":"
	 "{\"wait_on_cuda_event_record_corr_id\":4}}", false},
	/* invalid JSON: declined, and both paths report the same error */
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":01,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1.,\"dur\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"x\":tru}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"x\":[1,]}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"x\":\"a\\qb\"}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"x\":-}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\" \"ts\":1}", false},
	{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"tab\there\",\"ts\":1,\"dur\":1}", false},
};

TEST(trace_fast_path_cases)
{
	static const struct trace_load_opts variants[3] = {
		{0},
		{.skip_cpu_ops = true, .no_flows = true, .no_counters = true},
		{.keep_event_waits = true, .keep_kernel_occupancy = true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int v = 0; v < 3; v++) {
			/* twice in a row, so the fast path also runs mid-array */
			struct buf doc = BUF_INIT;
			buf_printf(&doc, "{\"traceEvents\":[%s,\n%s]}", cases[i].ev, cases[i].ev);
			char what[64];
			snprintf(what, sizeof what, "case %zu variant %d", i, v);
			struct trace_rank *f = both_ways(what, doc.data, doc.len, &variants[v]);
			uint64_t want = cases[i].fast ? 2 : 0;
			if (f && f->stats.fast_path_events != want)
				test_fail(__FILE__, __LINE__, "%s: fast path took %llu events, expected %llu", what,
					  (unsigned long long)f->stats.fast_path_events, (unsigned long long)want);
			if (!f && cases[i].fast)
				test_fail(__FILE__, __LINE__, "%s: a valid case failed to load", what);
			trace_rank_free(f);
			buf_free(&doc);
		}
	}
}

/* A real trace cut at many points: the same partial model and the same
 * message from both paths (the fast path must decline a cut element). */
TEST(trace_fast_path_truncated_everywhere)
{
	struct buf path = BUF_INIT, data = BUF_INIT;
	buf_printf(&path, "%s/traces/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
		   test_data_dir());
	gzFile gz = gzopen(path.data, "rb");
	REQUIRE(gz != NULL);
	char tmp[65536];
	int n;
	while ((n = gzread(gz, tmp, sizeof tmp)) > 0)
		buf_append(&data, tmp, (size_t)n);
	gzclose(gz);
	REQUIRE(data.len > 100000);
	size_t step = data.len / 997 + 1;
	for (size_t cut = 1; cut < data.len; cut += step) {
		char what[64];
		snprintf(what, sizeof what, "cut at %zu", cut);
		struct trace_load_opts o = {0};
		trace_rank_free(both_ways(what, data.data, cut, &o));
	}
	buf_free(&path);
	buf_free(&data);
}
