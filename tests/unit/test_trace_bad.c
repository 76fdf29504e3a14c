/*
 * test_trace_bad.c - the loader on small hand-made traces: HTA's semantics
 * on known inputs (links, iterations, ns rounding, filter, rank rules) and
 * every kind of bad input the issue lists (truncated gzip and JSON, bad
 * events, overlapping kernels, not-a-trace files): skipped and counted, or a
 * clear error naming the file and byte offset; never a crash or a leak.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"
#include "trace/columns.h"
#include "../lib/trace_compare.h"
#include "test.h"
#include "test_trace_util.h"
#include "trace/load_internal.h"
#include "trace/model.h"
#include "trace/source.h"

static const char small_trace[] =
	"{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3},\"traceEvents\":["
	"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"ts\":1000,\"args\":{\"name\":\"python\"}},"
	EV_STEP(1000, 100, 5) "," EV_LAUNCH(1010, 5, 11) "," EV_KERNEL(1020, 10, 11, "gemm") ","
	EV_STEP(1100, 100, 6) "," EV_LAUNCH(1110, 5, 12) "," EV_KERNEL(1120, 10, 12, "ncclDevKernel_AllReduce") ","
	"{\"ph\":\"s\",\"id\":11,\"pid\":1,\"tid\":2,\"ts\":1010,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
	"{\"ph\":\"f\",\"id\":11,\"pid\":0,\"tid\":7,\"ts\":1020,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
	"{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1000,\"args\":{\"bytes\":5,\"other\":7.5}},"
	"{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\",\"tid\":1,\"ts\":1000,\"dur\":300}"
	"]}";

static struct trace_rank *load_str(const char *name, const char *s, struct buf *err)
{
	struct trace_load_opts o = {0};
	return trace_rank_load_mem(name, s, strlen(s), &o, err);
}

TEST(trace_small_semantics)
{
	struct buf err = BUF_INIT;
	struct trace_rank *r = load_str("small.json", small_trace, &err);
	REQUIRE(r);
	CHECK_INT(r->rank, 3);
	CHECK_INT(r->rank_rule, TRACE_RANK_DISTINFO);
	CHECK_INT(r->n, 6); /* Trace span dropped, M/s/f/C are not rows */
	CHECK_INT(r->stats.dropped_trace_cat, 1);
	CHECK_INT(r->nflows, 2);
	CHECK_INT(r->ncounters, 2);
	CHECK(!r->float_ts);
	/* links: launch (row 1) <-> kernel (row 2); event ids are positions */
	CHECK_INT(r->link[1], 2);
	CHECK_INT(r->link[2], 1);
	CHECK_INT(trace_index_correlation(r, 1), 3);
	CHECK_INT(trace_index_correlation(r, 2), 2);
	CHECK_INT(trace_index_correlation(r, 0), -1);
	CHECK_INT(r->iteration[1], 5);
	CHECK_INT(r->iteration[2], 5);
	CHECK_INT(r->iteration[5], 6);
	CHECK_INT(r->niterations, 2);
	CHECK_STR(r->device_type, "NVIDIA GPU");
	CHECK_INT(trace_ktype(r, 2), TRACE_KT_COMPUTATION);
	CHECK_INT(trace_ktype(r, 5), TRACE_KT_COMMUNICATION);
	CHECK(strstr(r->distributed_info, "\"rank\":3") != NULL);
	trace_rank_free(r);
	buf_free(&err);
}

static char *write_tmp(const char *name, const void *data, size_t len)
{
	struct buf p = BUF_INIT;
	buf_printf(&p, "%s/%s", test_tmpdir(), name);
	FILE *f = fopen(p.data, "wb");
	REQUIRE(f);
	REQUIRE(fwrite(data, 1, len, f) == len);
	fclose(f);
	return buf_detach(&p, NULL);
}

static void gzip_mem(const char *s, size_t n, struct buf *out)
{
	z_stream z = {0};
	REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	buf_reserve(out, deflateBound(&z, n) + 64);
	z.next_in = (unsigned char *)s;
	z.avail_in = (uInt)n;
	z.next_out = (unsigned char *)out->data;
	z.avail_out = (uInt)(out->cap - 1);
	REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
	out->len = z.total_out;
	deflateEnd(&z);
}

TEST(trace_set_filter_and_align)
{
	char *path = write_tmp("t.json", small_trace, strlen(small_trace));
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, path, NULL, &err) == 0);
	REQUIRE(set.nranks == 1);
	struct trace_rank *r = set.ranks[0];
	CHECK(set.filtered);
	CHECK_NEAR(set.min_ts, 1000, 0);
	/* last step (#6) dropped with everything from its start; kernel of
	 * step 5 kept first (GPU rows, then CPU rows) */
	CHECK_INT(r->n, 3);
	CHECK_STR(trace_name(r, 0), "gemm");
	CHECK_NEAR(r->ts[0], 20, 0);
	CHECK_STR(trace_name(r, 1), "ProfilerStep#5");
	CHECK_INT(r->link[0], 2);
	CHECK_INT(r->niterations, 1);
	/* and with --keep-last-step */
	trace_set_free(&set);
	struct trace_load_opts o = {.keep_last_step = true};
	REQUIRE(trace_set_load(&set, path, &o, &err) == 0);
	CHECK_INT(set.ranks[0]->n, 6);
	trace_set_free(&set);
	free(path);
	buf_free(&err);
}

TEST(trace_ns_rounding)
{
	const char *s = "{\"traceEvents\":["
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":10.5,\"dur\":0.2,"
			"\"args\":{\"stream\":7}},"
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":20.25,\"dur\":3.5,"
			"\"args\":{\"stream\":7}}]}";
	struct buf err = BUF_INIT;
	struct trace_rank *r = load_str("ns.json", s, &err);
	REQUIRE(r);
	CHECK(r->float_ts);
	CHECK_NEAR(r->ts[0], 11, 0);
	CHECK_NEAR(r->dur[0], -1, 0); /* floor(10.7) - 11, like HTA */
	CHECK_NEAR(r->ts[1], 21, 0);
	CHECK_NEAR(r->dur[1], 2, 0);
	CHECK_INT(r->stats.neg_dur_after_rounding, 1);
	trace_rank_free(r);
	/* integer ts: fractional dur stays */
	const char *u = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
			"\"ts\":10,\"dur\":0.25,\"args\":{\"stream\":7}}]}";
	r = load_str("us.json", u, &err);
	REQUIRE(r);
	CHECK(!r->float_ts);
	CHECK_NEAR(r->dur[0], 0.25, 0);
	trace_rank_free(r);
	/* without rounding */
	struct trace_load_opts o = {.no_ns_rounding = true};
	r = trace_rank_load_mem("ns.json", s, strlen(s), &o, &err);
	REQUIRE(r);
	CHECK_NEAR(r->ts[0], 10.5, 0);
	CHECK_NEAR(r->dur[0], 0.2, 1e-12);
	trace_rank_free(r);
	buf_free(&err);
}

TEST(trace_bad_events_skipped_and_counted)
{
	const char *s =
		"{\"traceEvents\":[" EV_KERNEL(10, 5, 1, "ok") ","
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"neg\",\"ts\":20,\"dur\":-5,\"args\":{\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"huge\",\"ts\":20,\"dur\":1e15,\"args\":{\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nots\",\"dur\":5,\"args\":{\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":30,\"dur\":5,\"args\":{\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"strts\",\"ts\":\"30\",\"dur\":5},"
		"42, [1,2], null,"
		EV_KERNEL(12, 5, 2, "overlaps") ","
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"weird args\",\"ts\":40,\"dur\":1,\"args\":{\"stream\":\"x\","
		"\"correlation\":[1],\"External id\":{\"a\":1}}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\\u00e9\\ud800\",\"pid\":\"stream 7\",\"tid\":1.5,\"ts\":50,"
		"\"dur\":1,\"args\":{\"stream\":\"7\"}}"
		"]}";
	struct buf err = BUF_INIT;
	struct trace_rank *r = load_str("bad.json", s, &err);
	REQUIRE(r);
	CHECK_INT(r->n, 4);
	CHECK_INT(r->stats.bad_negative_dur, 1);
	CHECK_INT(r->stats.bad_huge_dur, 1);
	CHECK_INT(r->stats.bad_missing, 3);
	CHECK_INT(r->stats.bad_not_object, 3);
	CHECK_INT(r->stats.stream_overlaps, 1);
	CHECK(r->float_ts); /* an event without ts makes HTA's ts column float */
	CHECK_INT(r->stream[2], -1); /* non-numeric stream */
	CHECK_INT(r->correlation[2], -1);
	CHECK_INT(r->stream[3], 7); /* numeric string, like pandas to_numeric */
	CHECK(trace_id_is_str(r->pid[3]));
	CHECK_STR(trace_strtab_get(&r->strs, (uint32_t)(r->pid[3] - TRACE_ID_STR_BASE)), "stream 7");
	struct buf d = BUF_INIT;
	trace_load_stats_describe(r, &d);
	CHECK(strstr(d.data, "negative dur") != NULL);
	CHECK(strstr(d.data, "overlapping") != NULL);
	buf_free(&d);
	trace_rank_free(r);
	buf_free(&err);
}

TEST(trace_truncated_json_keeps_events)
{
	size_t cut = (size_t)(strstr(small_trace, "ProfilerStep#6") - small_trace);
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load_mem("cut.json", small_trace, cut, NULL, &err);
	REQUIRE(r);
	CHECK(r->stats.truncated);
	CHECK_INT(r->n, 3);
	CHECK(strstr(r->stats.truncated_msg, "cut.json: byte ") != NULL);
	/* the summary line comes after the path: it does not repeat it */
	struct buf d = BUF_INIT;
	trace_load_stats_describe(r, &d);
	CHECK_STR(d.data, "input stopped early, events before it kept: byte 530 (line 1, column 531): unterminated string");
	buf_free(&d);
	trace_rank_free(r);
	/* cut before any event: an error with file and offset */
	r = trace_rank_load_mem("cut2.json", small_trace, 40, NULL, &err);
	CHECK(r == NULL);
	CHECK(strstr(err.data, "cut2.json: byte 38 (line 1, column 39): unterminated string") != NULL);
	buf_free(&err);
}

TEST(trace_not_a_trace)
{
	const char *cases[][2] = {
		{"", "empty document"},
		{"[1,2]", "must be a JSON object"},
		{"{\"a\":1}", "no traceEvents"},
		{"{\"traceEvents\":5}", "not an array"},
		{"{\"traceEvents\":[]} x", "after the end"},
		{"\x01\x02garbage", "byte 0"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct buf err = BUF_INIT;
		struct trace_rank *r = load_str("x.json", cases[i][0], &err);
		if (r || !strstr(err.data, cases[i][1]) || !strstr(err.data, "x.json"))
			test_fail(__FILE__, __LINE__, "case %zu: %s", i, r ? "loaded" : err.data);
		trace_rank_free(r);
		buf_free(&err);
	}
	/* an empty event list is a valid, empty trace */
	struct buf err = BUF_INIT;
	struct trace_rank *r = load_str("e.json", "{\"traceEvents\":[]}", &err);
	REQUIRE(r);
	CHECK_INT(r->n, 0);
	trace_rank_free(r);
	struct trace_set set;
	CHECK(trace_set_load(&set, "/nonexistent/trace.json", NULL, &err) == -1);
	CHECK(strstr(err.data, "/nonexistent/trace.json: No such file") != NULL);
	buf_reset(&err);
	CHECK(trace_set_load(&set, test_tmpdir(), NULL, &err) == -1);
	CHECK(strstr(err.data, "no *.json") != NULL);
	buf_free(&err);
}

/* A trace of n kernels on stream 7 named k0..k(names-1), 3 us apart. */
static void kernels_trace(struct buf *b, int n, int names)
{
	buf_puts(b, "{\"traceEvents\":[");
	for (int i = 0; i < n; i++)
		buf_printf(b, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"ts\":%d,\"dur\":1,"
			      "\"args\":{\"stream\":7,\"correlation\":%d}}",
			   i ? "," : "", i % names, i * 3, i);
	buf_puts(b, "]}");
}

/* A damaged file that still loads: all n events, the load marked
 * truncated, its message naming the file (and byte) and the damage. */
static void load_damaged(const char *path, size_t n, const char *where, const char *what)
{
	struct buf e = BUF_INIT;
	struct trace_rank *r = trace_rank_load(path, NULL, &e);
	REQUIRE(r);
	CHECK_INT(r->n, n);
	CHECK(r->stats.truncated);
	CHECK(strstr(r->stats.truncated_msg, where) != NULL);
	CHECK(strstr(r->stats.truncated_msg, what) != NULL);
	trace_rank_free(r);
	buf_free(&e);
}

/* A gzip file that does not load at all: the error names it and gzip. */
static void load_refused(const char *path, const char *name)
{
	struct buf e = BUF_INIT;
	CHECK(trace_rank_load(path, NULL, &e) == NULL);
	CHECK(strstr(e.data, name) && strstr(e.data, "gzip"));
	buf_free(&e);
}

TEST(trace_gzip_truncated_and_corrupt)
{
	/* a trace big enough that the cut falls inside the event list */
	struct buf big = BUF_INIT;
	kernels_trace(&big, 20000, 97);
	struct buf gz = BUF_INIT;
	gzip_mem(big.data, big.len, &gz);
	char *full = write_tmp("full.json.gz", gz.data, gz.len);
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load(full, NULL, &err);
	REQUIRE(r);
	CHECK_INT(r->n, 20000);
	CHECK(!r->stats.truncated);
	trace_rank_free(r);

	char *cut = write_tmp("cut.json.gz", gz.data, gz.len / 2);
	r = trace_rank_load(cut, NULL, &err);
	REQUIRE(r);
	CHECK(r->stats.truncated);
	CHECK(r->n > 1000 && r->n < 20000);
	CHECK(strstr(r->stats.truncated_msg, "gzip stream truncated") != NULL);
	CHECK(strstr(r->stats.truncated_msg, "cut.json.gz") != NULL);
	trace_rank_free(r);

	/* corrupt the deflate data in the middle */
	for (size_t i = gz.len / 2; i < gz.len / 2 + 64; i++)
		gz.data[i] ^= 0x5a;
	char *bad = write_tmp("bad.json.gz", gz.data, gz.len);
	r = trace_rank_load(bad, NULL, &err);
	if (r) {
		/* zlib may hand out garbage before it notices: then the JSON
		 * reader stops first; either way the file and offset are named */
		CHECK(r->stats.truncated);
		CHECK(strstr(r->stats.truncated_msg, "bad.json.gz: byte ") != NULL);
		trace_rank_free(r);
	} else {
		CHECK(strstr(err.data, "gzip") != NULL);
	}
	/* gzip header only */
	char *hdr = write_tmp("hdr.json.gz", gz.data, 10);
	load_refused(hdr, "hdr.json.gz");
	free(full);
	free(cut);
	free(bad);
	free(hdr);
	buf_free(&big);
	buf_free(&gz);
	buf_free(&err);
}

/* s as one gzip member with every optional header field gzip allows
 * (FEXTRA, FNAME, FCOMMENT and FHCRC, the header's own CRC-16), the deflate
 * data raw from zlib, then the trailer: what other gzip writers than
 * zlib's defaults produce, and what the reader must skip and check. */
static void gzip_member_full(const char *s, size_t n, struct buf *out)
{
	size_t start = out->len;
	const unsigned char h[10] = {0x1f, 0x8b, 8, 0x02 | 0x04 | 0x08 | 0x10, 1, 2, 3, 4, 0, 3};
	buf_append(out, h, sizeof h);
	const unsigned char extra[8] = {6, 0, 'A', 'B', 2, 0, 'x', 'y'}; /* XLEN 6: subfield "AB", 2 bytes */
	buf_append(out, extra, sizeof extra);
	buf_append(out, "trace.json", 11);            /* with its NUL */
	buf_append(out, "written by a test", 18);
	uLong hc = crc32(0, (const unsigned char *)out->data + start, (uInt)(out->len - start));
	const unsigned char hcrc[2] = {(unsigned char)hc, (unsigned char)(hc >> 8)};
	buf_append(out, hcrc, 2);
	z_stream z = {0};
	REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	buf_reserve(out, out->len + deflateBound(&z, n) + 16);
	z.next_in = (unsigned char *)s;
	z.avail_in = (uInt)n;
	z.next_out = (unsigned char *)out->data + out->len;
	z.avail_out = (uInt)(out->cap - out->len - 1);
	REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
	out->len += z.total_out;
	deflateEnd(&z);
	uLong c = crc32(0, (const unsigned char *)s, (uInt)n);
	const unsigned char t[8] = {(unsigned char)c, (unsigned char)(c >> 8), (unsigned char)(c >> 16),
				    (unsigned char)(c >> 24), (unsigned char)n, (unsigned char)(n >> 8),
				    (unsigned char)(n >> 16), (unsigned char)(n >> 24)};
	buf_append(out, t, sizeof t);
	out->data[out->len] = 0;
}

/* The gzip reader (ISA-L's igzip, source.c) against what gzip files hold:
 * every optional header field, several members (one of them empty), bytes
 * after the last member (ignored, as gzip does), a trailer that does not
 * match the data and a file cut inside the trailer.  Every event is loaded
 * in each case; the damaged ones are named as such. */
TEST(trace_gzip_headers_members_trailers)
{
	struct buf big = BUF_INIT;
	kernels_trace(&big, 6000, 31);
	size_t half = big.len / 2;
	struct buf gz = BUF_INIT, e = BUF_INIT;
	gzip_member_full(big.data, half, &gz);
	struct buf empty = BUF_INIT, rest = BUF_INIT;
	gzip_mem("", 0, &empty);
	gzip_mem(big.data + half, big.len - half, &rest);
	buf_append(&gz, empty.data, empty.len);
	buf_append(&gz, rest.data, rest.len);
	size_t whole = gz.len;
	static const char junk[] = "\0\0not gzip";
	buf_append(&gz, junk, sizeof junk - 1);
	char *ok = write_tmp("members.json.gz", gz.data, gz.len);
	struct trace_rank *r = trace_rank_load(ok, NULL, &e);
	REQUIRE(r);
	CHECK_INT(r->n, 6000);
	CHECK(!r->stats.truncated);
	trace_rank_free(r);

	/* the last member's CRC-32 off by one bit */
	gz.data[whole - 8] ^= 1;
	char *crc = write_tmp("crc.json.gz", gz.data, whole);
	load_damaged(crc, 6000, "crc.json.gz: byte ", "CRC-32 or length does not match");
	gz.data[whole - 8] ^= 1;

	/* cut inside the last trailer: the text is whole, the check is not */
	char *cut = write_tmp("cut_trailer.json.gz", gz.data, whole - 3);
	load_damaged(cut, 6000, "cut_trailer.json.gz: byte ", "gzip stream truncated");

	/* the first member's header CRC-16 wrong: its header is refused */
	gz.data[10 + 8 + 11 + 18] ^= 1;
	char *hdr = write_tmp("hcrc.json.gz", gz.data, whole);
	load_refused(hdr, "hcrc.json.gz");
	free(ok);
	free(crc);
	free(cut);
	free(hdr);
	buf_free(&big);
	buf_free(&gz);
	buf_free(&empty);
	buf_free(&rest);
	buf_free(&e);
}

/* The size hint only sizes the columns: it is the uncompressed size of a
 * gzip file from its trailer, and when the trailer tells only the last
 * member's size (a concatenated file) the load still keeps every event. */
TEST(trace_source_text_size_hint)
{
	struct buf big = BUF_INIT;
	kernels_trace(&big, 5000, 13);
	char err[256];
	char *plain = write_tmp("hint.json", big.data, big.len);
	struct trace_source *s = trace_source_open(plain, false, err, sizeof err);
	REQUIRE(s);
	CHECK_INT(trace_source_text_size_hint(s), big.len);
	trace_source_close(s);

	struct buf gz = BUF_INIT;
	gzip_mem(big.data, big.len, &gz);
	char *one = write_tmp("hint.json.gz", gz.data, gz.len);
	s = trace_source_open(one, true, err, sizeof err);
	REQUIRE(s);
	CHECK(gz.len < big.len / 4);
	CHECK_INT(trace_source_text_size_hint(s), big.len);
	trace_source_close(s);

	/* two members: all but the last closing bytes, then "]}" alone */
	struct buf m1 = BUF_INIT, m2 = BUF_INIT;
	gzip_mem(big.data, big.len - 2, &m1);
	gzip_mem("]}", 2, &m2);
	buf_append(&m1, m2.data, m2.len);
	char *two = write_tmp("hint2.json.gz", m1.data, m1.len);
	s = trace_source_open(two, true, err, sizeof err);
	REQUIRE(s);
	CHECK_INT(trace_source_text_size_hint(s), 2);
	trace_source_close(s);
	struct buf e = BUF_INIT;
	struct trace_rank *r = trace_rank_load(two, NULL, &e);
	REQUIRE(r);
	CHECK_INT(r->n, 5000);
	CHECK(!r->stats.truncated);
	trace_rank_free(r);

	/* a trailer that lies is capped at 64x the file: a small file claiming
	 * 4 GiB reserves kilobytes */
	m1.data[m1.len - 1] = (char)0xff;
	m1.data[m1.len - 2] = (char)0xff;
	char *liar = write_tmp("hint3.json.gz", m1.data, m1.len);
	s = trace_source_open(liar, true, err, sizeof err);
	REQUIRE(s);
	CHECK_INT(trace_source_text_size_hint(s), (uint64_t)m1.len * 64);
	trace_source_close(s);
	/* the trailer is checked after the last event: every event kept,
	 * and the damage named */
	load_damaged(liar, 5000, "hint3.json.gz: byte ", "trailer's CRC-32 or length does not match");
	free(liar);

	/* a big file whose trailer wrapped past 4 GiB: 16 bytes recorded for
	 * a 100 MB file means 4 GiB + 16 (a sparse file: no disk used) */
	struct buf wp = BUF_INIT;
	buf_printf(&wp, "%s/wrapped.json.gz", test_tmpdir());
	int fd = open(wp.data, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(pwrite(fd, gz.data, 10, 0) == 10);
	const unsigned char t16[4] = {16, 0, 0, 0};
	REQUIRE(pwrite(fd, t16, 4, (100 << 20) - 4) == 4);
	close(fd);
	s = trace_source_open(wp.data, false, err, sizeof err);
	REQUIRE(s);
	CHECK_INT(trace_source_text_size_hint(s), (UINT64_C(1) << 32) + 16);
	trace_source_close(s);
	unlink(wp.data);
	buf_free(&wp);

	/* memory has no size to tell */
	s = trace_source_mem(gz.data, gz.len);
	CHECK_INT(trace_source_text_size_hint(s), 0);
	trace_source_close(s);
	free(plain);
	free(one);
	free(two);
	buf_free(&big);
	buf_free(&gz);
	buf_free(&m1);
	buf_free(&m2);
	buf_free(&e);
}

static void write_rank_file(const char *name, const char *distinfo)
{
	struct buf b = BUF_INIT;
	buf_printf(&b, "{%s\"traceEvents\":[" EV_LAUNCH(10, 2, 1) "," EV_KERNEL(20, 5, 1, "k") "]}", distinfo);
	free(write_tmp(name, b.data, b.len));
	buf_free(&b);
}

TEST(trace_rank_rules_and_directory)
{
	write_rank_file("a-rank-4.json", "");
	write_rank_file("b_rank_2.json", "\"distributedInfo\":{\"rank\":1},");
	write_rank_file("c.json", "");
	write_rank_file("notes.txt", "");
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, test_tmpdir(), NULL, &err) == 0);
	REQUIRE(set.nranks == 3);
	CHECK_INT(set.ranks[0]->rank, 0);
	CHECK_INT(set.ranks[0]->rank_rule, TRACE_RANK_DEFAULT);
	CHECK_INT(set.ranks[1]->rank, 1);
	CHECK_INT(set.ranks[1]->rank_rule, TRACE_RANK_DISTINFO);
	CHECK_INT(set.ranks[2]->rank, 4);
	CHECK_INT(set.ranks[2]->rank_rule, TRACE_RANK_FILENAME);
	CHECK(strstr(set.warnings, "rank 4 from file name") != NULL);
	trace_set_free(&set);
	/* --rank for a file without any rank */
	struct buf p = BUF_INIT;
	buf_printf(&p, "%s/c.json", test_tmpdir());
	struct trace_load_opts o = {.rank = 9, .rank_given = true};
	REQUIRE(trace_set_load(&set, p.data, &o, &err) == 0);
	CHECK_INT(set.ranks[0]->rank, 9);
	CHECK_INT(set.ranks[0]->rank_rule, TRACE_RANK_OPTION);
	trace_set_free(&set);
	/* two files without a rank: neither is dropped; they get the lowest
	 * ranks no file declares (0 and 2, as 1 and 4 are declared) */
	write_rank_file("d.json", "");
	REQUIRE(trace_set_load(&set, test_tmpdir(), NULL, &err) == 0);
	CHECK_INT(set.nranks, 4);
	CHECK(strstr(set.ranks[0]->path, "c.json") != NULL);
	CHECK_INT(set.ranks[0]->rank, 0);
	CHECK(strstr(set.ranks[2]->path, "d.json") != NULL);
	CHECK_INT(set.ranks[2]->rank, 2);
	CHECK_INT(set.ranks[2]->rank_rule, TRACE_RANK_ASSIGNED);
	CHECK(strstr(set.warnings, "2 file(s) without a rank: given the lowest ranks") != NULL);
	trace_set_free(&set);
	/* two files declaring one rank: the later name is analysed, the
	 * warning names both */
	write_rank_file("e.json", "\"distributedInfo\":{\"rank\":1},");
	REQUIRE(trace_set_load(&set, test_tmpdir(), NULL, &err) == 0);
	CHECK_INT(set.nranks, 4);
	CHECK(strstr(set.warnings, "rank 1 is declared by both") != NULL);
	CHECK(strstr(set.warnings, "b_rank_2.json left out") != NULL);
	CHECK(strstr(set.ranks[1]->path, "e.json") != NULL);
	trace_set_free(&set);
	buf_free(&p);
	buf_free(&err);
}

/* A rank read from a trace wins over the default: a file without a rank
 * beside one with distributedInfo.rank 0 gets another rank, and is not
 * dropped (it used to replace the real rank 0). */
TEST(trace_rank_declared_wins_over_default)
{
	write_rank_file("a.json", "\"distributedInfo\":{\"rank\":0},");
	write_rank_file("b.json", "");
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, test_tmpdir(), NULL, &err) == 0);
	REQUIRE(set.nranks == 2);
	CHECK(strstr(set.ranks[0]->path, "/a.json") != NULL);
	CHECK_INT(set.ranks[0]->rank_rule, TRACE_RANK_DISTINFO);
	CHECK(strstr(set.ranks[1]->path, "/b.json") != NULL);
	CHECK_INT(set.ranks[1]->rank, 1);
	CHECK(strstr(set.warnings, "is in both") == NULL && strstr(set.warnings, "declared by both") == NULL);
	trace_set_free(&set);
	buf_free(&err);
}

/* 20 on-demand traces of non-distributed processes (trace_<pid>.json, no
 * rank anywhere): 20 ranks, numbered by the pids, said in one line; with
 * two names of one pid, the file order instead. */
TEST(trace_rank_from_pid_names)
{
	char name[64];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "trace_%d.json", 4000 + 7 * i);
		write_rank_file(name, "");
	}
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, test_tmpdir(), NULL, &err) == 0);
	CHECK_INT(set.nranks, 20);
	for (size_t k = 0; k < set.nranks && k < 20; k++) {
		CHECK_INT(set.ranks[k]->rank, 4000 + 7 * (int)k);
		snprintf(name, sizeof name, "/trace_%d.json", 4000 + 7 * (int)k);
		CHECK(strstr(set.ranks[k]->path, name) != NULL);
	}
	const char *line = "20 file(s) without a rank: each is given the pid in its name (_<pid>) as its rank\n";
	CHECK_STR(set.warnings, line);
	trace_set_free(&set);
	write_rank_file("host_4000.123.pt.trace.json", ""); /* pid 4000 twice */
	REQUIRE(trace_set_load(&set, test_tmpdir(), NULL, &err) == 0);
	CHECK_INT(set.nranks, 21);
	CHECK_INT(set.ranks[20]->rank, 20);
	CHECK(strstr(set.warnings, "21 file(s) without a rank: given the lowest ranks no file declares") != NULL);
	trace_set_free(&set);
	buf_free(&err);
}

TEST(trace_parallel_equals_sequential)
{
	struct buf dir = BUF_INIT;
	buf_printf(&dir, "%s/traces/trace_filter", test_data_dir());
	struct trace_load_opts o1 = {.threads = 1}, o2 = {.threads = 2};
	struct trace_set a, b;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&a, dir.data, &o1, &err) == 0);
	REQUIRE(trace_set_load(&b, dir.data, &o2, &err) == 0);
	REQUIRE(a.nranks == 2 && b.nranks == 2);
	for (size_t k = 0; k < 2; k++) {
		CHECK_INT(a.ranks[k]->n, b.ranks[k]->n);
		CHECK(memcmp(a.ranks[k]->ts, b.ranks[k]->ts, a.ranks[k]->n * sizeof(double)) == 0);
		CHECK(memcmp(a.ranks[k]->link, b.ranks[k]->link, a.ranks[k]->n * sizeof(int32_t)) == 0);
	}
	trace_set_free(&a);
	trace_set_free(&b);
	buf_free(&dir);
	buf_free(&err);
}

TEST(trace_classify_hta_and_fixed)
{
	static const struct {
		const char *name;
		enum trace_ktype hta, fixed;
	} c[] = {
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", TRACE_KT_COMMUNICATION,
		 TRACE_KT_COMMUNICATION},
		{"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", TRACE_KT_COMMUNICATION,
		 TRACE_KT_COMMUNICATION},
		{"void ncclKernel_foo()", TRACE_KT_COMMUNICATION, TRACE_KT_COMMUNICATION},
		{"void nccldevkernel_lower()", TRACE_KT_COMPUTATION, TRACE_KT_COMMUNICATION},
		{"Memcpy HtoD (Pageable -> Device)", TRACE_KT_MEMORY, TRACE_KT_MEMORY},
		{"Memset (Device)", TRACE_KT_MEMORY, TRACE_KT_MEMORY},
		{"hipMemcpyAsync", TRACE_KT_COMMUNICATION, TRACE_KT_MEMORY}, /* HTA: every hip* */
		{"hipLaunchKernel", TRACE_KT_COMMUNICATION, TRACE_KT_OTHER},
		{"Context Sync", TRACE_KT_OTHER, TRACE_KT_OTHER},
		{"Stream Wait Event", TRACE_KT_OTHER, TRACE_KT_OTHER},
		{"Event Sync", TRACE_KT_OTHER, TRACE_KT_OTHER},
		{"void at::native::batch_norm_SyncBN_kernel<float>()", TRACE_KT_OTHER, TRACE_KT_COMPUTATION},
		{"cudaLaunchKernel", TRACE_KT_OTHER, TRACE_KT_OTHER},
		{"void at::native::vectorized_elementwise_kernel<4>()", TRACE_KT_COMPUTATION, TRACE_KT_COMPUTATION},
		{"dma_copy", TRACE_KT_MEMORY, TRACE_KT_MEMORY},
		{"my_dma_kernel", TRACE_KT_OTHER, TRACE_KT_COMPUTATION},
		{"line1\nncclKernel", TRACE_KT_COMPUTATION, TRACE_KT_COMMUNICATION}, /* Python '.' stops at \n */
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		enum trace_ktype h = trace_classify(c[i].name, strlen(c[i].name));
		enum trace_ktype f = trace_classify_fixed(c[i].name, strlen(c[i].name));
		if (h != c[i].hta || f != c[i].fixed)
			test_fail(__FILE__, __LINE__, "%s: hta %s fixed %s", c[i].name, trace_ktype_name(h),
				  trace_ktype_name(f));
	}
}

/* A big plain trace (over the 8 MiB two-thread threshold; kind 0 is 25 MB,
 * 4.9 MB when cut to 20 %).  kind 0: plain events; 1: every event has a
 * nested array of objects across lines (the split guess lands inside an
 * event); 2: a huge non-event array after traceEvents (the guess lands
 * outside traceEvents). */
static char *write_big(const char *name, int kind, size_t cut_pct)
{
	struct buf b = BUF_INIT;
	buf_puts(&b, "{\"distributedInfo\": {\"rank\": 2},\n\"traceEvents\": [\n");
	int nev = kind == 2 ? 1000 : 40000;
	for (int i = 0; i < nev; i++) {
		buf_printf(&b,
			   "%s  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
			   "\"tid\": 2,\n    \"ts\": %d.%03d, \"dur\": 4.5,\n    \"args\": {\"correlation\": %d",
			   i ? ",\n" : "", 1000 + i * 20, i % 1000, i);
		if (kind == 1) { /* nested objects dominate, so the guess lands inside an event */
			buf_puts(&b, ", \"list\": [{\"a\": 1}");
			for (int k = 0; k < 40; k++)
				buf_puts(&b, ",\n {\"b\": [{\"c\": 2},\n {\"d\": 3}]}");
			buf_puts(&b, "]");
		}
		buf_printf(&b, "}\n  },\n  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
			       "\"pid\": 1, \"tid\": 2,\n    \"ts\": %d.25, \"dur\": 2,\n    \"args\": {\"External id\": %d}",
			   1000 + i * 20 + 1, i);
		buf_printf(&b, "\n  },\n  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, "
			       "\"tid\": 7,\n    \"ts\": %d.5, \"dur\": 10.25,\n    \"args\": {\"stream\": 7, "
			       "\"correlation\": %d, \"est. achieved occupancy %%\": %d, \"padding\": \"%0100d\"}\n  }",
			   i % 50, 1000 + i * 20 + 6, i, i % 101, i);
	}
	buf_puts(&b, "\n],\n\"deviceProperties\": [");
	if (kind == 2 || kind == 3) /* 3: 40000 events, then this */
		for (int i = 0; i < 300000; i++)
			buf_printf(&b, "%s\n  {\"id\": %d, \"name\": \"gpu%0100d\"}", i ? "," : "", i, i);
	/* 4: a broken value after traceEvents (an error the main parser
	 * meets after the join, in a fresh reader) */
	buf_puts(&b, kind == 4 ? "],\n\"traceName\": x}\n" : "],\n\"traceName\": \"x\"}\n");
	size_t len = cut_pct ? b.len * cut_pct / 100 : b.len;
	char *path = write_tmp(name, b.data, len);
	buf_free(&b);
	return path;
}

static void same_load_opts(const char *path, bool expect_truncated, unsigned threads, bool skip)
{
	struct trace_load_opts o1 = {.threads = 1, .skip_cpu_ops = skip}, o2 = {.threads = 2, .skip_cpu_ops = skip};
	struct buf err = BUF_INIT;
	struct trace_rank *a = trace_rank_load(path, &o1, &err);
	struct trace_rank *b = trace_rank_load(path, &o2, &err);
	REQUIRE(a && b);
	CHECK_INT(a->n, b->n);
	CHECK_INT(a->rank, 2);
	CHECK_INT(b->rank, 2);
	CHECK(a->stats.truncated == expect_truncated);
	CHECK(b->stats.truncated == expect_truncated);
	CHECK_INT(a->stats.events, b->stats.events);
	CHECK_INT(a->stats.parse_threads, 1);
	CHECK_INT(b->stats.parse_threads, threads);
	CHECK(a->n > 1000);
	size_t bad = 0;
	for (size_t i = 0; i < a->n && i < b->n; i++)
		bad += a->ts[i] != b->ts[i] || a->dur[i] != b->dur[i] || a->idx[i] != b->idx[i] ||
		       a->link[i] != b->link[i] || strcmp(trace_name(a, i), trace_name(b, i)) != 0 ||
		       a->stream[i] != b->stream[i] || a->iteration[i] != b->iteration[i];
	CHECK_INT(bad, 0);
	if (expect_truncated) {
		CHECK(strstr(a->stats.truncated_msg, path) != NULL);
		CHECK(strstr(b->stats.truncated_msg, path) != NULL);
	}
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
}

/* Loads path with one thread and with `threads`: the same rows; the second
 * parsed in want_parts parts (0: any number up to threads). */
static void same_load_parts(const char *path, bool expect_truncated, unsigned threads, unsigned want_parts)
{
	struct trace_load_opts o1 = {.threads = 1}, on = {.threads = (int)threads};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load(path, &o1, &err);
	struct trace_rank *b = trace_rank_load(path, &on, &err);
	REQUIRE(a && b);
	CHECK(a->n > 1000);
	if (want_parts)
		CHECK_INT(b->stats.parse_threads, want_parts);
	CHECK(b->stats.parse_threads >= 1 && b->stats.parse_threads <= threads);
	CHECK(b->stats.truncated == expect_truncated);
	if (expect_truncated)
		CHECK(strstr(b->stats.truncated_msg, path) != NULL);
	a->stats.parse_threads = b->stats.parse_threads; /* the one difference meant */
	bool same = trace_rank_same(a, b, &why);
	if (!same)
		fprintf(stderr, "  %u threads: %s\n", threads, why.data);
	CHECK(same);
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
	buf_free(&why);
}

static void same_load(const char *path, bool expect_truncated, unsigned threads)
{
	same_load_opts(path, expect_truncated, threads, false);
	same_load_opts(path, expect_truncated, threads, true);
}

/* The split guess reads 64 KiB at a time from the middle: a boundary whose
 * whitespace runs past the end of a read is found from its "}" in the
 * next read, a run longer than a read is skipped, and "}" "{" without the
 * comma, or without a newline, is not a boundary. */
TEST(trace_split_guess_across_reads)
{
	struct buf b = BUF_INIT;
	/* [0, 1000): filler; the middle is at 1000 (size 2000 -> 1000) */
	for (int i = 0; i < 1000; i++)
		buf_putc(&b, 'x');
	size_t size_half = b.len;
	buf_puts(&b, "}{} ,{");                 /* no newline, no comma: neither counts */
	for (int i = 0; i < 60000; i++)         /* cut by the first read's end (64 KiB from 1000) */
		buf_putc(&b, i % 2 ? ' ' : 'y');
	size_t cut_close = b.len;
	buf_puts(&b, "}");
	for (int i = 0; i < 6000; i++)
		buf_putc(&b, ' ');
	buf_puts(&b, "\n,  {");
	size_t want = b.len - 1;
	char *p = write_tmp("split_guess.json", b.data, b.len);
	CHECK(cut_close + 1 + 6000 > size_half + (64u << 10)); /* the pattern does cross the read's end */
	CHECK_INT(trace_split_find(p, size_half), want);
	free(p);

	/* whitespace longer than one read after the only "}": no guess, no hang */
	buf_reset(&b);
	for (int i = 0; i < 1000; i++)
		buf_putc(&b, 'x');
	buf_puts(&b, "}");
	for (int i = 0; i < 200000; i++)
		buf_putc(&b, i % 100 ? ' ' : '\n');
	buf_puts(&b, ",{");
	p = write_tmp("split_guess_ws.json", b.data, b.len);
	CHECK_INT(trace_split_find(p, 1000), 0);
	free(p);
	/* the same pattern within one read */
	buf_reset(&b);
	for (int i = 0; i < 1000; i++)
		buf_putc(&b, 'x');
	buf_puts(&b, "}\r\n\t,\n{");
	p = write_tmp("split_guess_one.json", b.data, b.len);
	CHECK_INT(trace_split_find(p, 1000), b.len - 1);
	free(p);
	buf_free(&b);
}

TEST(trace_two_thread_parse_equals_one)
{
	char *p = write_big("big.json", 0, 0);
	same_load(p, false, 2);
	free(p);
}

/* `dyno analyze` puts big blocks on huge pages (xalloc_huge_pages): the
 * reserved, collapsed and mremap-grown columns must hold exactly what the
 * default allocation holds, with one parse thread and with two (the merge
 * grows the first part's columns). */
TEST(trace_huge_pages_same_model)
{
	char *p = write_big("big_huge.json", 0, 0);
	struct trace_load_opts o1 = {.threads = 1}, o2 = {.threads = 2};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load(p, &o1, &err), *d = trace_rank_load(p, &o2, &err);
	xalloc_huge_pages(2u << 20);
	struct trace_rank *b = trace_rank_load(p, &o1, &err);
	struct trace_rank *c = trace_rank_load(p, &o2, &err);
	xalloc_huge_pages(0);
	REQUIRE(a && b && c && d);
	CHECK(a->n > 1000);
	CHECK_INT(c->stats.parse_threads, 2);
	bool same_b = trace_rank_same(a, b, &why), same_c = trace_rank_same(d, c, &why);
	if (!same_b || !same_c)
		fprintf(stderr, "  %s\n", why.data);
	CHECK(same_b);
	CHECK(same_c);
	trace_rank_free(a);
	trace_rank_free(b);
	trace_rank_free(c);
	trace_rank_free(d);
	buf_free(&err);
	buf_free(&why);
	free(p);
}

/* The optional occupancy column through the two-thread parse: the
 * helper's column is merged like the others, and the values are the
 * file's (kernel i has i % 101). */
TEST(trace_two_thread_parse_occupancy)
{
	char *p = write_big("big_occ.json", 0, 0);
	struct trace_load_opts o1 = {.threads = 1, .keep_kernel_occupancy = true}, o2 = o1;
	o2.threads = 2;
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load(p, &o1, &err), *b = trace_rank_load(p, &o2, &err);
	REQUIRE(a && b);
	CHECK_INT(b->stats.parse_threads, 2);
	CHECK(a->occupancy_kept && b->occupancy_kept && b->occupancy);
	a->stats.parse_threads = b->stats.parse_threads; /* the one difference meant */
	bool same = trace_rank_same(a, b, &why);
	if (!same)
		fprintf(stderr, "  %s\n", why.data);
	CHECK(same);
	size_t kernels = 0, bad = 0;
	for (size_t i = 0; i < b->n; i++) {
		bool kernel = strcmp(trace_strtab_get(&b->strs, b->cat[i]), "kernel") == 0;
		if (kernel)
			bad += b->occupancy[i] != (float)(kernels++ % 101);
		else
			bad += !isnan(b->occupancy[i]);
	}
	CHECK_INT(kernels, 40000);
	CHECK_INT(bad, 0);
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
	buf_free(&why);
	free(p);
}

TEST(trace_two_thread_parse_truncated)
{
	char *p = write_big("big_cut.json", 0, 80);
	same_load(p, true, 2);
	free(p);
	p = write_big("big_cut2.json", 0, 20); /* under 8 MiB: one thread */
	same_load(p, true, 1);
	free(p);
}

/* More threads, more parts: a 25 MB file is cut in at most 5 (4 MiB each
 * at the least); the parts chain up whatever the guesses hit: real
 * boundaries (plain events), nested arrays inside events (parts passed
 * inside an element are dropped and the part before goes on to the next
 * boundary it lands on), an array after traceEvents (no part joined), and
 * a file that breaks off in its last part. */
TEST(trace_parse_in_n_parts_equals_one)
{
	char *p = write_big("nparts.json", 0, 0);
	same_load_parts(p, false, 3, 3);
	same_load_parts(p, false, 4, 4);
	same_load_parts(p, false, 8, 5);
	free(p);
	p = write_big("nparts_cut.json", 0, 80); /* 19.7 MB: 4 parts */
	same_load_parts(p, true, 8, 4);
	free(p);
	p = write_big("nparts_nested.json", 1, 0);
	for (unsigned t = 3; t <= 16; t += 5)
		same_load_parts(p, false, t, 0);
	free(p);
	p = write_big("nparts_outside.json", 2, 0);
	same_load_parts(p, false, 6, 1);
	free(p);
	/* the message of an error after traceEvents names the same byte (it
	 * was one byte off, found by fuzz_trace_split) */
	p = write_big("nparts_after.json", 4, 0);
	same_load_parts(p, true, 4, 4);
	free(p);
}

/* write_big's file gzipped, then cut at cut_pct of the compressed bytes
 * (the trailer is gone: its size hint is noise), or with 64 bytes damaged
 * at bad_pct (the trailer intact: the damage falls in a helper's part). */
static char *write_big_gz(const char *plain_path, const char *name, size_t cut_pct, size_t bad_pct)
{
	FILE *f = fopen(plain_path, "rb");
	REQUIRE(f);
	struct buf b = BUF_INIT, gz = BUF_INIT;
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_append(&b, tmp, n);
	fclose(f);
	gzip_mem(b.data, b.len, &gz);
	for (size_t i = gz.len * bad_pct / 100; bad_pct && i < gz.len * bad_pct / 100 + 64; i++)
		gz.data[i] ^= 0x5a;
	char *path = write_tmp(name, gz.data, cut_pct ? gz.len * cut_pct / 100 : gz.len);
	buf_free(&b);
	buf_free(&gz);
	return path;
}

/* A .json.gz in parts: each helper inflates the file from its start to
 * its part (load_split.c).  The same model as one thread on every kind of
 * file above, a stream cut inside a later part included (the same
 * message), and the text after traceEvents both kept by the helper and
 * too big to keep (kind 2: 30 MB of deviceProperties). */
/* Two parts sharing the text before the helper's part (load_split.c: the
 * helper inflates it once, the main parser reads it in place and, past it,
 * inflates the file again itself): the same model and message as one
 * thread's, and the share was there. */
static void same_load_shared(const char *path, bool expect_truncated)
{
	struct trace_load_opts o1 = {.threads = 1}, o2 = {.threads = 2, .gz_share_always = true};
	struct buf err = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load(path, &o1, &err);
	struct trace_rank *b = trace_rank_load(path, &o2, &err);
	REQUIRE(a && b);
	CHECK(b->stats.shared_text > 0);
	CHECK(b->stats.truncated == expect_truncated);
	a->stats.parse_threads = b->stats.parse_threads; /* the one difference meant */
	bool same = trace_rank_same(a, b, &why);
	if (!same)
		fprintf(stderr, "  shared: %s\n", why.data);
	CHECK(same);
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
	buf_free(&why);
}

/* One gzip case: write_big's file of that kind gzipped (cut / damaged as
 * write_big_gz says), loaded in up to `threads` parts: at least min_parts
 * of them joined (0: not checked) and the same model and message as one
 * thread's. */
static void gz_parts_case(const char *name, int kind, size_t cut_pct, size_t bad_pct, unsigned threads,
			  bool truncated, unsigned min_parts)
{
	struct buf plain = BUF_INIT, gzname = BUF_INIT, err = BUF_INIT;
	buf_printf(&plain, "%s.json", name);
	buf_printf(&gzname, "%s.json.gz", name);
	char *p = write_big(plain.data, kind, 0);
	char *g = write_big_gz(p, gzname.data, cut_pct, bad_pct);
	if (min_parts) {
		struct trace_load_opts o = {.threads = (int)threads};
		struct trace_rank *r = trace_rank_load(g, &o, &err);
		REQUIRE(r);
		CHECK(r->stats.parse_threads >= min_parts);
		CHECK(r->stats.truncated == truncated);
		trace_rank_free(r);
	}
	same_load_parts(g, truncated, threads, 0);
	if (threads == 2)
		same_load_shared(g, truncated);
	free(g);
	free(p);
	buf_free(&plain);
	buf_free(&gzname);
	buf_free(&err);
}

/* A .json.gz in parts: each helper inflates the file from its start to
 * its part (load_split.c).  The same model as one thread on every kind of
 * file above: a stream cut short (its trailer gone, the size hint noise),
 * damaged inside a later part, events with nested arrays of objects, an
 * array after traceEvents, 30 MB after traceEvents (more than a helper
 * keeps: the main parser inflates the file again up to there) and a broken
 * value there. */
TEST(trace_gzip_parse_in_parts_equals_one)
{
	gz_parts_case("gzparts", 0, 0, 0, 4, false, 3);
	gz_parts_case("gzparts2", 0, 0, 0, 2, false, 2);
	gz_parts_case("gzparts_cut", 0, 85, 0, 4, true, 0);
	gz_parts_case("gzparts_bad", 0, 0, 85, 4, true, 2);
	gz_parts_case("gzparts_nested", 1, 0, 0, 6, false, 0);
	gz_parts_case("gzparts_outside", 2, 0, 0, 3, false, 0);
	gz_parts_case("gzparts_rest", 3, 0, 0, 4, false, 2);
	gz_parts_case("gzparts_after", 4, 0, 0, 3, true, 2);
	/* two parts, the case of a 2-core machine: every kind again, and the
	 * stream cut or damaged in the main parser's part */
	gz_parts_case("gz2_cut", 0, 85, 0, 2, true, 0);
	gz_parts_case("gz2_cut_early", 0, 30, 0, 2, true, 0);
	gz_parts_case("gz2_bad", 0, 0, 85, 2, true, 2);
	gz_parts_case("gz2_bad_early", 0, 0, 30, 2, true, 0);
	gz_parts_case("gz2_nested", 1, 0, 0, 2, false, 0);
	gz_parts_case("gz2_outside", 2, 0, 0, 2, false, 0);
	gz_parts_case("gz2_rest", 3, 0, 0, 2, false, 0);
	gz_parts_case("gz2_after", 4, 0, 0, 2, true, 2);
}

/* A parse in parts whose rank has no rows (only instant events) and whose
 * document has a stray "}" after its end: the load fails with the same
 * message, at the same byte, as one thread's (it was put twice as far:
 * the offset of the reader after traceEvents was moved to the file's
 * twice; found by fuzz_trace_split). */
TEST(trace_split_error_after_document_without_rows)
{
	struct buf b = BUF_INIT;
	buf_puts(&b, "{\"traceEvents\": [\n");
	for (int i = 0; i < 3000; i++)
		buf_printf(&b, "%s  {\"ph\": \"i\", \"name\": \"mark\", \"pid\": 1, \"tid\": 1, \"ts\": %d}",
			   i ? ",\n" : "", i);
	buf_puts(&b, "\n]}\n}\n");
	const size_t stray = b.len - 2;
	struct buf gz = BUF_INIT;
	gzip_mem(b.data, b.len, &gz);
	char *paths[2] = {write_tmp("rowless.json", b.data, b.len), write_tmp("rowless.json.gz", gz.data, gz.len)};
	for (int k = 0; k < 2; k++) {
		struct trace_load_opts one = {.threads = 1},
				       parts = {.threads = 4, .split_min_bytes = 2, .split_part_bytes = 1};
		struct buf e1 = BUF_INIT, e2 = BUF_INIT, want = BUF_INIT;
		CHECK(trace_rank_load(paths[k], &one, &e1) == NULL);
		CHECK(trace_rank_load(paths[k], &parts, &e2) == NULL);
		buf_printf(&want, "%s: byte %zu (line 3003, column 1): unexpected data after the end of the document",
			   paths[k], stray);
		CHECK_STR(e1.data, want.data);
		CHECK_STR(e2.data, want.data);
		buf_free(&e1);
		buf_free(&e2);
		buf_free(&want);
		free(paths[k]);
	}
	buf_free(&b);
	buf_free(&gz);
}

TEST(trace_two_thread_parse_bad_guess)
{
	char *p = write_big("nested.json", 1, 0);
	same_load(p, false, 1);
	free(p);
	p = write_big("outside.json", 2, 0);
	same_load(p, false, 1);
	free(p);
}

TEST(trace_fixed_classification_option)
{
	const char *s = "{\"traceEvents\":["
			"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"hipMemcpyAsync\",\"pid\":0,\"tid\":1,\"ts\":10,"
			"\"dur\":5,\"args\":{\"stream\":1}},"
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"SyncBatchNormKernel\",\"pid\":0,\"tid\":1,\"ts\":20,"
			"\"dur\":5,\"args\":{\"stream\":1}}]}";
	struct buf err = BUF_INIT;
	struct trace_load_opts hta = {0}, fixed = {.fixed_classification = true};
	struct trace_rank *a = trace_rank_load_mem("c.json", s, strlen(s), &hta, &err);
	struct trace_rank *b = trace_rank_load_mem("c.json", s, strlen(s), &fixed, &err);
	REQUIRE(a && b);
	CHECK_INT(trace_ktype(a, 0), TRACE_KT_COMMUNICATION);
	CHECK_INT(trace_ktype(a, 1), TRACE_KT_OTHER);
	CHECK_INT(trace_ktype(b, 0), TRACE_KT_MEMORY);
	CHECK_INT(trace_ktype(b, 1), TRACE_KT_COMPUTATION);
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&err);
}

TEST(trace_iteration_overlapping_steps)
{
	/* HTA: the containing ProfilerStep that comes last in the trace wins */
	const char *s = "{\"traceEvents\":[" EV_STEP(0, 100, 1) "," EV_STEP(10, 40, 2) ","
			EV_LAUNCH(20, 1, 5) "," EV_LAUNCH(60, 1, 6) "," EV_STEP(150, 10, 4) ","
			EV_LAUNCH(155, 1, 7) "," EV_LAUNCH(300, 1, 8) ","
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k0\",\"ts\":20,\"dur\":1,\"args\":{\"stream\":0}},"
			EV_KERNEL(21, 1, 5, "k") "]}";
	struct buf err = BUF_INIT;
	struct trace_rank *r = load_str("it.json", s, &err);
	REQUIRE(r);
	REQUIRE(r->n == 9);
	CHECK_INT(r->iteration[2], 2);
	CHECK_INT(r->iteration[3], 1);
	CHECK_INT(r->iteration[5], 4);
	CHECK_INT(r->iteration[6], TRACE_ITER_NONE);
	CHECK_INT(r->iteration[7], TRACE_ITER_NAN);
	CHECK_INT(r->iteration[8], 2); /* the kernel takes its launcher's */
	trace_rank_free(r);
	buf_free(&err);
}

#include "analyze/analysis.h"

TEST(trace_shared_correlation_is_not_quadratic)
{
	/* 3000 launches and 3000 kernels all with correlation 0, two steps:
	 * HTA's joins would make 9 million rows; we cap and say so */
	struct buf b = BUF_INIT;
	buf_puts(&b, "{\"traceEvents\":[" EV_STEP(0, 100000, 1) "," EV_STEP(100000, 100000, 2));
	/* the macros stringify "%d", which buf_printf then fills in */
	for (int i = 0; i < 3000; i++)
		buf_printf(&b, "," EV_LAUNCH(%d, 1, 0) "," EV_KERNEL(%d, 1, 0, "k"), 10 + i * 20, 15 + i * 20);
	buf_puts(&b, "]}");
	char *path = write_tmp("dup.json", b.data, b.len);
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, path, NULL, &err) == 0);
	struct trace_rank *r = set.ranks[0];
	CHECK(r->n < 3000 + 3000 * 16 + 10);
	CHECK(r->stats.dup_correlation_capped > 0);
	struct launch_opts lo = {50, 100, true};
	struct atable **ts;
	size_t n = analyze_launch(&set, NULL, &lo, &ts);
	REQUIRE(n == 1);
	CHECK(ts[0]->nrows <= 256);
	CHECK(strstr(ts[0]->notes.data, "16 x 16") != NULL);
	atable_free(ts[0]);
	free(ts);
	trace_set_free(&set);
	free(path);
	buf_free(&b);
	buf_free(&err);
}

/* A file, plain or gzip, is parsed without counting lines (JSON_NO_LINES);
 * an error deep inside it still names the right line and column (found by
 * reading the file again, inflating a gzip one again), in the warning of a
 * truncated load and in the error of a failed one. */
TEST(trace_error_line_deep_in_file)
{
	struct buf doc = BUF_INIT;
	buf_puts(&doc, "{\n  \"traceEvents\": [\n");
	for (int i = 0; i < 30000; i++) /* ~4 MiB: several reader windows */
		buf_printf(&doc,
			   "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7,\n"
			   "    \"ts\": %d.500, \"dur\": 2.250,\n    \"args\": {\"stream\": 7, \"correlation\": %d}\n  },\n",
			   i % 7, 1000 + i * 10, i + 1);
	size_t bad = doc.len + 14; /* the '@' below */
	buf_puts(&doc, "  {\"ph\": \"X\", @}\n]}\n");
	uint64_t line = 1, col = 1;
	for (size_t i = 0; i < bad; i++) {
		col++;
		if (doc.data[i] == '\n')
			line++, col = 1;
	}
	char want[96];
	snprintf(want, sizeof want, "byte %zu (line %llu, column %llu):", bad, (unsigned long long)line,
		 (unsigned long long)col);
	struct buf path = BUF_INIT;
	buf_printf(&path, "%s/deep.json", test_tmpdir());
	FILE *f = fopen(path.data, "wb");
	REQUIRE(f);
	REQUIRE(fwrite(doc.data, 1, doc.len, f) == doc.len);
	fclose(f);
	struct trace_load_opts o = {.threads = 1};
	struct buf err = BUF_INIT;
	struct trace_rank *r = trace_rank_load(path.data, &o, &err);
	REQUIRE(r);
	CHECK(r->stats.truncated);
	CHECK_INT(r->n, 30000);
	if (!strstr(r->stats.truncated_msg, want))
		test_fail(__FILE__, __LINE__, "warning \"%s\", want \"%s\"", r->stats.truncated_msg, want);
	trace_rank_free(r);
	struct buf gz = BUF_INIT;
	gzip_mem(doc.data, doc.len, &gz);
	char *gzpath = write_tmp("deep.json.gz", gz.data, gz.len);
	r = trace_rank_load(gzpath, &o, &err);
	REQUIRE(r);
	CHECK(r->stats.truncated);
	CHECK_INT(r->n, 30000);
	if (!strstr(r->stats.truncated_msg, want))
		test_fail(__FILE__, __LINE__, "gzip warning \"%s\", want \"%s\"", r->stats.truncated_msg, want);
	trace_rank_free(r);
	/* the same bad byte before any event: the error itself */
	struct buf doc2 = BUF_INIT;
	buf_append(&doc2, doc.data, 20); /* "{\n  \"traceEvents\": [" */
	for (int i = 0; i < 200000; i++)
		buf_puts(&doc2, "          \n");
	size_t bad2 = doc2.len + 1;
	buf_puts(&doc2, " @]}\n");
	f = fopen(path.data, "wb");
	REQUIRE(f);
	REQUIRE(fwrite(doc2.data, 1, doc2.len, f) == doc2.len);
	fclose(f);
	r = trace_rank_load(path.data, &o, &err);
	CHECK(r == NULL);
	snprintf(want, sizeof want, "byte %zu (line %d, column 2):", bad2, 2 + 200000);
	if (!strstr(err.data, want))
		test_fail(__FILE__, __LINE__, "error \"%s\", want \"%s\"", err.data, want);
	buf_reset(&gz);
	gzip_mem(doc2.data, doc2.len, &gz);
	free(gzpath);
	gzpath = write_tmp("deep2.json.gz", gz.data, gz.len);
	buf_reset(&err);
	CHECK(trace_rank_load(gzpath, &o, &err) == NULL);
	if (!strstr(err.data, want) || !strstr(err.data, "deep2.json.gz"))
		test_fail(__FILE__, __LINE__, "gzip error \"%s\", want \"%s\"", err.data, want);
	free(gzpath);
	buf_free(&gz);
	buf_free(&err);
	buf_free(&path);
	buf_free(&doc);
	buf_free(&doc2);
}

/* The column arena (columns.c): a mid-size reservation puts every column
 * in one block; shrinking keeps its room; growing past it moves a column
 * (or, through trace_columns_grow, all of them) into blocks of their own
 * with their rows; the last column out or freed unmaps the block. */
TEST(trace_column_arena_moves_and_frees)
{
	xalloc_huge_pages(2u << 20);
	bool possible = trace_columns_arena_possible();
	struct trace_rank *r = trace_rank_new("arena");
	trace_columns_reserve(r, 40u << 20); /* ~82k rows and half again: 12 MB */
	CHECK_INT(r->cap, possible ? 122880 : 131072);
	CHECK((r->col_arena != NULL) == possible);
	r->n = 100000;
	for (size_t i = 0; i < r->n; i++) {
		r->ts[i] = (double)i;
		r->dur[i] = 0.5 * (double)i;
		r->name[i] = (uint32_t)(i * 3);
		r->kind[i] = (uint8_t)i;
	}
	trace_col_resize(r, TRACE_COL_LINK, 10); /* smaller: the room stays */
	trace_col_resize(r, TRACE_COL_DUR, 300000); /* this one leaves */
	CHECK((r->col_in_arena >> TRACE_COL_LINK & 1) == possible);
	CHECK_INT(r->col_in_arena >> TRACE_COL_DUR & 1, 0);
	CHECK((r->col_arena != NULL) == possible);
	r->dur[299999] = 1; /* its new room */
	trace_columns_grow(r, 200000); /* all leave, the block goes */
	CHECK(r->col_arena == NULL);
	CHECK_INT(r->col_in_arena, 0);
	size_t bad = 0;
	for (size_t i = 0; i < r->n; i++)
		bad += r->ts[i] != (double)i || r->dur[i] != 0.5 * (double)i || r->name[i] != (uint32_t)(i * 3) ||
		       r->kind[i] != (uint8_t)i;
	CHECK_INT(bad, 0);
	trace_rank_free(r);

	r = trace_rank_new("arena2");
	trace_columns_reserve(r, 40u << 20);
	r->n = 1000;
	for (size_t c = 0; c < TRACE_NCOLS; c++)
		if (trace_col_kept(r, c))
			trace_col_release(r, c); /* the last one unmaps it */
	CHECK(r->col_arena == NULL);
	CHECK(r->ts == NULL && r->iteration == NULL);
	trace_rank_free(r);

	/* too small for an arena (under 4 MiB), or columns big enough for huge
	 * pages of their own (2 MiB each): none */
	r = trace_rank_new("small");
	trace_columns_reserve(r, 4u << 20);
	CHECK(r->col_arena == NULL);
	trace_rank_free(r);
	r = trace_rank_new("big");
	trace_columns_reserve(r, 200u << 20);
	CHECK(r->col_arena == NULL);
	trace_rank_free(r);
	xalloc_huge_pages(0);
}

/* Loads with the columns in an arena give the model of loads without:
 * one thread and parts, the arena kept to the end (55 MB of text, 120k
 * rows) or left mid-parse (25 MB, more rows than the reservation), the
 * launch-op step's compaction included. */
TEST(trace_column_arena_same_model)
{
	char *paths[2] = {write_big("arena_kept.json", 3, 0), write_big("arena_left.json", 0, 0)};
	for (int k = 0; k < 2; k++)
		for (int t = 1; t <= 4; t += 3)
			for (int lo = 0; lo < 2; lo++) {
				struct trace_load_opts o = {.threads = t, .launch_ops_only = lo};
				struct buf err = BUF_INIT, why = BUF_INIT;
				struct trace_rank *a = trace_rank_load(paths[k], &o, &err);
				xalloc_huge_pages(2u << 20);
				struct trace_rank *b = trace_rank_load(paths[k], &o, &err);
				if (k == 0 && t == 1 && !lo && trace_columns_arena_possible())
					CHECK(b->col_arena != NULL); /* kept to the end */
				xalloc_huge_pages(0);
				REQUIRE(a && b);
				bool same = trace_rank_same(a, b, &why);
				if (!same)
					fprintf(stderr, "  %s, %d threads, launch_ops_only %d: %s\n", paths[k], t, lo,
						why.data);
				CHECK(same);
				trace_rank_free(a);
				trace_rank_free(b);
				buf_free(&err);
				buf_free(&why);
			}
	free(paths[0]);
	free(paths[1]);
}
