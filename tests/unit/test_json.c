/*
 * test_json.c - the JSON reader, DOM and writer.
 *
 * Every document is read twice: from memory and as a stream in tiny chunks
 * (1, 3 and 7 bytes), and both must give the same tokens and the same error
 * position, which exercises the refill logic on every token boundary.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/json.h"
#include "test.h"

struct chunk_src {
	const char *p;
	size_t left, chunk;
};

static ssize_t chunk_read(void *ctx, char *dst, size_t cap, const char **err)
{
	(void)err;
	struct chunk_src *c = ctx;
	size_t n = c->chunk < cap ? c->chunk : cap;
	if (n > c->left)
		n = c->left;
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	return (ssize_t)n;
}

/* Tokens rendered as text, e.g. "{ k:a n:1 s:x }", plus the error. */
static void render(struct json_reader *r, struct buf *out)
{
	enum json_tok t;
	while ((t = json_next(r)) != JSON_EOF) {
		switch (t) {
		case JSON_ERROR:
			buf_printf(out, "ERR@%llu:%llu:%llu %s", (unsigned long long)r->err.offset,
				   (unsigned long long)r->err.line, (unsigned long long)r->err.column, r->err.msg);
			return;
		case JSON_OBJ_BEGIN: buf_puts(out, "{ "); break;
		case JSON_OBJ_END: buf_puts(out, "} "); break;
		case JSON_ARR_BEGIN: buf_puts(out, "[ "); break;
		case JSON_ARR_END: buf_puts(out, "] "); break;
		case JSON_KEY:
			buf_puts(out, "k:");
			buf_append(out, r->sval, r->slen);
			buf_putc(out, ' ');
			break;
		case JSON_STRING:
			buf_puts(out, "s:");
			buf_append(out, r->sval, r->slen);
			buf_putc(out, ' ');
			break;
		case JSON_NUMBER:
			buf_puts(out, "n:");
			buf_append(out, r->tstart, r->tlen);
			buf_putc(out, ' ');
			break;
		case JSON_TRUE: buf_puts(out, "true "); break;
		case JSON_FALSE: buf_puts(out, "false "); break;
		case JSON_NULL: buf_puts(out, "null "); break;
		case JSON_EOF: break;
		}
	}
	buf_puts(out, "EOF");
}

/* A borrowed window (json_reader_init_borrow) that grows `step` bytes a
 * call up to `limit`, where it stops growing. */
struct grow_src {
	size_t limit, step;
};

static size_t grow_step(void *ctx, size_t have)
{
	const struct grow_src *g = ctx;
	return have + g->step < g->limit ? have + g->step : g->limit;
}

/* Parse doc in memory, streamed, and borrowed in place (growing, then
 * streamed from where the borrowed part ends: at 0, at a third and at the
 * end of the document); check they agree; return the memory result. */
static char *tokens_n(const char *doc, size_t n, unsigned flags)
{
	struct buf mem = BUF_INIT;
	struct json_reader r;
	json_reader_init_mem(&r, doc, n, flags);
	render(&r, &mem);
	json_reader_free(&r);
	static const size_t chunks[] = {1, 3, 7, 4096};
	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		struct buf st = BUF_INIT;
		struct chunk_src src = {doc, n, chunks[i]};
		json_reader_init_stream(&r, chunk_read, &src, chunks[i], flags);
		render(&r, &st);
		json_reader_free(&r);
		if (strcmp(st.data, mem.data) != 0)
			test_fail(__FILE__, __LINE__, "stream (chunk %zu) differs from memory:\n  mem:    %s\n  stream: %s",
				  chunks[i], mem.data, st.data);
		buf_free(&st);
		const size_t limits[] = {0, n / 3, n};
		for (size_t l = 0; l < 3; l++) {
			struct grow_src g = {limits[l], chunks[i]};
			struct chunk_src rest = {doc + limits[l], n - limits[l], chunks[i]};
			json_reader_init_borrow(&r, doc, grow_step, &g, chunk_read, &rest, chunks[i], flags);
			render(&r, &st);
			json_reader_free(&r);
			if (strcmp(st.data, mem.data) != 0)
				test_fail(__FILE__, __LINE__,
					  "borrowed (step %zu, to %zu) differs from memory:\n  mem:      %s\n  borrowed: %s",
					  chunks[i], limits[l], mem.data, st.data);
			buf_free(&st);
		}
	}
	return buf_detach(&mem, NULL);
}

static char *tokens(const char *doc) { return tokens_n(doc, strlen(doc), 0); }

#define CHECK_TOKENS(doc, expect)                                                                    \
	do {                                                                                         \
		char *got_ = tokens(doc);                                                            \
		CHECK_STR(got_, expect);                                                             \
		free(got_);                                                                          \
	} while (0)

/* The error message and position (offset:line:column) must match. */
#define CHECK_ERROR(doc, len, pos, msgpart)                                                          \
	do {                                                                                         \
		char *got_ = tokens_n(doc, len, 0);                                                  \
		char *e_ = strstr(got_, "ERR@");                                                     \
		if (!e_ || strncmp(e_ + 4, pos " ", strlen(pos) + 1) != 0 || !strstr(e_, msgpart))  \
			test_fail(__FILE__, __LINE__, "expected error at %s containing '%s', got: %s", \
				  pos, msgpart, got_);                                               \
		free(got_);                                                                          \
	} while (0)

TEST(json_tokens_basic)
{
	CHECK_TOKENS("{}", "{ } EOF");
	CHECK_TOKENS("[]", "[ ] EOF");
	CHECK_TOKENS(" \t\r\n[ ] \n", "[ ] EOF");
	CHECK_TOKENS("{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
		     "{ k:a n:1 k:b [ true false null ] k:c { k:d s:e } } EOF");
	CHECK_TOKENS("{ \"a\" : -0.5e+3 , \"b\" :\n 12 }", "{ k:a n:-0.5e+3 k:b n:12 } EOF");
	CHECK_TOKENS("42", "n:42 EOF");
	CHECK_TOKENS("\"top\"", "s:top EOF");
	CHECK_TOKENS("[[[[]]],[{}]]", "[ [ [ [ ] ] ] [ { } ] ] EOF");
}

TEST(json_string_escapes_and_unicode)
{
	CHECK_TOKENS("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"]", "[ s:a\"b\\c/d\b\f\n\r\t ] EOF");
	CHECK_TOKENS("[\"\\u00e9\\u20AC\"]", "[ s:\xC3\xA9\xE2\x82\xAC ] EOF");
	/* surrogate pair -> one 4-byte sequence (U+1F600) */
	CHECK_TOKENS("[\"\\uD83D\\uDE00\"]", "[ s:\xF0\x9F\x98\x80 ] EOF");
	/* raw multi-byte UTF-8 passes through */
	CHECK_TOKENS("[\"caf\xC3\xA9 \xF0\x9F\x98\x80\"]", "[ s:caf\xC3\xA9 \xF0\x9F\x98\x80 ] EOF");
	/* long strings (SIMD path) with an escape after 40 bytes */
	CHECK_TOKENS("[\"0123456789012345678901234567890123456789\\n0123456789012345678\"]",
		     "[ s:0123456789012345678901234567890123456789\n0123456789012345678 ] EOF");
	/* \u0000 is a legal escaped NUL: the decoded length counts it */
	struct json_reader r;
	json_reader_init_mem(&r, "\"a\\u0000b\"", 10, 0);
	REQUIRE(json_next(&r) == JSON_STRING);
	CHECK_INT(r.slen, 3);
	CHECK(memcmp(r.sval, "a\0b", 3) == 0);
	json_reader_free(&r);
}

TEST(json_error_truncated)
{
	CHECK_ERROR("{\"a\": [1, 2", 11, "11:1:12", "unexpected end of input inside an array");
	CHECK_ERROR("{\"a\"", 4, "4:1:5", "end of input");
	CHECK_ERROR("[\"abc", 5, "1:1:2", "unterminated string");
	CHECK_ERROR("[\"ab\\", 5, "1:1:2", "unterminated string");
	CHECK_ERROR("[\"ab\\u12", 8, "4:1:5", "invalid \\u escape");
	CHECK_ERROR("[\"\\uD83D\\u", 10, "2:1:3", "lone UTF-16 high surrogate");
	CHECK_ERROR("[\"ab\xE2", 5, "4:1:5", "invalid UTF-8");
	CHECK_ERROR("[tru", 4, "4:1:5", "end of input in literal");
	CHECK_ERROR("[1.", 3, "3:1:4", "number cut short");
	CHECK_ERROR("", 0, "0:1:1", "empty document");
	CHECK_ERROR("   \n ", 5, "5:2:2", "empty document");
}

TEST(json_error_bad_escapes)
{
	CHECK_ERROR("[\"a\\qb\"]", 8, "3:1:4", "invalid escape '\\q'");
	CHECK_ERROR("[\"\\u12G4\"]", 10, "2:1:3", "invalid \\u escape");
	CHECK_ERROR("[\"\\uD83D\"]", 10, "2:1:3", "lone UTF-16 high surrogate");
	CHECK_ERROR("[\"\\uDE00x\"]", 11, "2:1:3", "lone UTF-16 low surrogate");
	CHECK_ERROR("[\"\\uD83D\\u0041\"]", 16, "2:1:3", "lone UTF-16 high surrogate");
	CHECK_ERROR("[\"a\tb\"]", 7, "3:1:4", "control character 0x09");
}

TEST(json_error_unbalanced)
{
	CHECK_ERROR("]", 1, "0:1:1", "unexpected ']'");
	CHECK_ERROR("{\"a\":1]", 7, "6:1:7", "',' or '}'");
	CHECK_ERROR("[1}", 3, "2:1:3", "',' or ']'");
	CHECK_ERROR("{\"a\":1}}", 8, "7:1:8", "after the end of the document");
	CHECK_ERROR("[1,]", 4, "3:1:4", "unexpected ']' where a value");
	CHECK_ERROR("{\"a\":1,}", 8, "7:1:8", "a string key");
	CHECK_ERROR("{1:2}", 5, "1:1:2", "a string key");
	CHECK_ERROR("{\"a\" 1}", 7, "5:1:6", "':'");
	CHECK_ERROR("[1 2]", 5, "3:1:4", "',' or ']'");
}

TEST(json_error_line_and_column)
{
	const char *doc = "{\n  \"a\": 1,\n  \"b\": @\n}";
	CHECK_ERROR(doc, strlen(doc), "19:3:8", "unexpected '@'");
}

TEST(json_error_deep_nesting)
{
	size_t n = 10000;
	char *doc = malloc(2 * n);
	memset(doc, '[', n);
	memset(doc + n, ']', n);
	CHECK_ERROR(doc, 2 * n, "512:1:513", "nesting deeper than 512");
	/* exactly at the limit is fine */
	struct json_reader r;
	json_reader_init_mem(&r, doc + n - 512, 1024, 0);
	enum json_tok t;
	while ((t = json_next(&r)) != JSON_EOF && t != JSON_ERROR)
		;
	CHECK(t == JSON_EOF);
	json_reader_free(&r);
	/* and the limit can be set */
	json_reader_init_mem(&r, doc + n - 10, 20, 0);
	json_reader_set_max_depth(&r, 5);
	while ((t = json_next(&r)) != JSON_EOF && t != JSON_ERROR)
		;
	CHECK(t == JSON_ERROR);
	CHECK(strstr(r.err.msg, "deeper than 5") != NULL);
	json_reader_free(&r);
	free(doc);
}

TEST(json_error_nul_bytes)
{
	CHECK_ERROR("[\"a\0b\"]", 7, "3:1:4", "NUL byte inside string");
	CHECK_ERROR("[1,\0]", 5, "3:1:4", "NUL byte where a value");
	CHECK_ERROR("{\"a\":1}\0", 8, "7:1:8", "after the end");
	CHECK_ERROR("\0", 1, "0:1:1", "NUL byte");
}

TEST(json_error_invalid_utf8)
{
	CHECK_ERROR("[\"\xC0\x80\"]", 6, "2:1:3", "invalid UTF-8 byte 0xC0");      /* overlong NUL */
	CHECK_ERROR("[\"\xED\xA0\x80\"]", 7, "2:1:3", "invalid UTF-8 byte 0xED");  /* encoded surrogate */
	CHECK_ERROR("[\"ab\xE2\x82\"]", 8, "4:1:5", "invalid UTF-8 byte 0xE2");   /* cut sequence */
	CHECK_ERROR("[\"\xFF\"]", 5, "2:1:3", "invalid UTF-8 byte 0xFF");
	CHECK_ERROR("[\"\xF4\x90\x80\x80\"]", 8, "2:1:3", "invalid UTF-8");       /* > U+10FFFF */
	/* lenient mode: replaced and counted, document accepted */
	const char *doc = "[\"a\xFF" "b\",\"\\uD800\"]";
	char *got = tokens_n(doc, strlen(doc), JSON_LENIENT_UTF8);
	CHECK_STR(got, "[ s:a\xEF\xBF\xBD" "b s:\xEF\xBF\xBD ] EOF");
	free(got);
	struct json_reader r;
	json_reader_init_mem(&r, doc, strlen(doc), JSON_LENIENT_UTF8);
	while (json_next(&r) != JSON_EOF)
		;
	CHECK_INT(r.replaced, 2);
	json_reader_free(&r);
}

TEST(json_error_bad_numbers)
{
	CHECK_ERROR("[01]", 4, "2:1:3", "leading zeros");
	CHECK_ERROR("[-]", 3, "2:1:3", "invalid number");
	CHECK_ERROR("[1.e5]", 6, "3:1:4", "digit after the decimal point");
	CHECK_ERROR("[1e]", 4, "3:1:4", "digit in the exponent");
	CHECK_ERROR("[+1]", 4, "1:1:2", "unexpected '+'");
	CHECK_ERROR("[1x]", 4, "2:1:3", "invalid character after number");
	CHECK_ERROR("[.5]", 4, "1:1:2", "unexpected '.'");
}

static struct json_num num_of(const char *s)
{
	struct json_num n;
	if (!json_parse_number(s, strlen(s), &n))
		test_fail(__FILE__, __LINE__, "'%s' did not parse", s);
	return n;
}

TEST(json_numbers_integers)
{
	int64_t i;
	uint64_t u;
	struct json_num n = num_of("9223372036854775807");
	CHECK(json_num_i64(&n, &i) && i == INT64_MAX);
	n = num_of("-9223372036854775808");
	CHECK(json_num_i64(&n, &i) && i == INT64_MIN);
	n = num_of("9223372036854775808");
	CHECK(!json_num_i64(&n, &i));
	CHECK(json_num_u64(&n, &u) && u == 9223372036854775808ull);
	n = num_of("18446744073709551615");
	CHECK(json_num_u64(&n, &u) && u == UINT64_MAX);
	n = num_of("18446744073709551616");
	CHECK(n.big && !json_num_u64(&n, &u));
	n = num_of("1.0");
	CHECK(json_num_i64(&n, &i) && i == 1);
	n = num_of("1e2");
	CHECK(json_num_i64(&n, &i) && i == 100);
	n = num_of("1.5");
	CHECK(!json_num_i64(&n, &i));
	n = num_of("-0");
	CHECK(json_num_i64(&n, &i) && i == 0);
	n = num_of("-1");
	CHECK(!json_num_u64(&n, &u));
	/* found by the fuzzer: a zero with a huge exponent must not loop over it */
	n = num_of("0e9974376821145");
	CHECK(json_num_i64(&n, &i) && i == 0);
	n = num_of("0.0e-99999999999");
	CHECK(json_num_u64(&n, &u) && u == 0);
	n = num_of("1e99999999999");
	CHECK(!json_num_u64(&n, &u));
	n = num_of("1000000000000000000000e-3");
	CHECK(!json_num_u64(&n, &u)); /* 22 digits: beyond the mantissa, flagged big */
	n = num_of("12300e-2");
	CHECK(json_num_i64(&n, &i) && i == 123);
}

TEST(json_numbers_huge)
{
	/* Kineto "Comms Id" style: beyond 64 bits, kept exactly as text */
	const char *doc = "{\"Comms Id\": 340282366920938463463374607431768211456, \"e\": 1e999999999, "
			  "\"t\": 1e-999999999}";
	struct json_reader r;
	json_reader_init_mem(&r, doc, strlen(doc), 0);
	REQUIRE(json_next(&r) == JSON_OBJ_BEGIN);
	REQUIRE(json_next(&r) == JSON_KEY);
	REQUIRE(json_next(&r) == JSON_NUMBER);
	CHECK(r.num.big);
	int64_t i;
	CHECK(!json_num_i64(&r.num, &i));
	CHECK(r.tlen == 39 && memcmp(r.tstart, "340282366920938463463374607431768211456", 39) == 0);
	CHECK_NEAR(json_f64(&r), 3.4028236692093846e38, 1e-15);
	REQUIRE(json_next(&r) == JSON_KEY);
	REQUIRE(json_next(&r) == JSON_NUMBER);
	CHECK(isinf(json_f64(&r)));
	REQUIRE(json_next(&r) == JSON_KEY);
	REQUIRE(json_next(&r) == JSON_NUMBER);
	CHECK(json_f64(&r) == 0.0);
	/* a caller that rejects the value reports its position */
	CHECK(!json_fail_at(&r, json_tok_offset(&r), "value out of range"));
	CHECK_INT(r.err.offset, strlen(doc) - 13);
	CHECK(strstr(r.err.msg, "out of range") != NULL);
	CHECK(json_next(&r) == JSON_ERROR);
	json_reader_free(&r);
	/* a 5000-digit number does not crash and is flagged big */
	char *big = malloc(5002);
	big[0] = '[';
	memset(big + 1, '7', 5000);
	big[5001] = ']';
	char *got = tokens_n(big, 5002, 0);
	CHECK(strncmp(got, "[ n:7777", 8) == 0 && strstr(got, "] EOF"));
	free(got);
	free(big);
	/* a 2 MB number streamed a byte at a time stays linear (this would
	 * take minutes if each read rescanned the number from its start) */
	size_t len = 2u << 20;
	big = malloc(len);
	memset(big, '9', len);
	struct chunk_src src = {big, len, 1};
	json_reader_init_stream(&r, chunk_read, &src, 1, 0);
	CHECK(json_next(&r) == JSON_NUMBER && r.tlen == len && r.num.big);
	CHECK(json_next(&r) == JSON_EOF);
	json_reader_free(&r);
	free(big);
}

/* json_num_f64 must equal strtod (correctly rounded) for every input. */
TEST(json_numbers_f64_exact)
{
	static const char *fixed[] = {"0.1", "1696263813573127.5", "123456789012345678", "9007199254740993",
				      "2.2250738585072014e-308", "1.7976931348623157e308", "5e-324",
				      "0.30000000000000004", "1234567.891", "-33.000001", "1e23", "8.5e-7",
				      "9007199254740992.5", "4503599627370497.5", "79228162514264337593543950335"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		struct json_num n = num_of(fixed[i]);
		double got = json_num_f64(&n, fixed[i], strlen(fixed[i])), want = strtod(fixed[i], NULL);
		if (memcmp(&got, &want, sizeof got) != 0)
			test_fail(__FILE__, __LINE__, "%s: %.17g != %.17g", fixed[i], got, want);
	}
	srand(12345);
	char t[64];
	for (int k = 0; k < 200000; k++) {
		/* random mantissa of 1-19 digits, random decimal point, small exponent */
		int nd = 1 + rand() % 19, dot = rand() % (nd + 1), len = 0;
		if (rand() & 1)
			t[len++] = '-';
		for (int d = 0; d < nd; d++) {
			if (d == dot && d > 0)
				t[len++] = '.';
			t[len++] = (char)('0' + (d == 0 ? 1 + rand() % 9 : rand() % 10));
		}
		if (rand() % 4 == 0)
			len += snprintf(t + len, sizeof t - (size_t)len, "e%d", rand() % 60 - 30);
		t[len] = 0;
		struct json_num n = num_of(t);
		double got = json_num_f64(&n, t, (size_t)len), want = strtod(t, NULL);
		if (memcmp(&got, &want, sizeof got) != 0) {
			test_fail(__FILE__, __LINE__, "%s: %.17g != %.17g", t, got, want);
			break;
		}
	}
}

TEST(json_skip_values)
{
	const char *doc = "{\"skip\": {\"a\": [1, {\"b\": [[]]}], \"c\": \"d\"}, \"keep\": 7}";
	struct json_reader r;
	json_reader_init_mem(&r, doc, strlen(doc), 0);
	REQUIRE(json_next(&r) == JSON_OBJ_BEGIN);
	REQUIRE(json_next(&r) == JSON_KEY);
	REQUIRE(json_next(&r) == JSON_OBJ_BEGIN);
	REQUIRE(json_skip(&r));
	REQUIRE(json_next(&r) == JSON_KEY);
	size_t kl;
	const char *k = json_str(&r, &kl);
	CHECK(kl == 4 && memcmp(k, "keep", 4) == 0);
	REQUIRE(json_next(&r) == JSON_NUMBER);
	REQUIRE(json_skip(&r)); /* skipping a scalar is a no-op */
	CHECK(json_next(&r) == JSON_OBJ_END);
	CHECK(json_next(&r) == JSON_EOF);
	CHECK(json_next(&r) == JSON_EOF);
	json_reader_free(&r);
}

struct fail_src {
	int calls;
};

static ssize_t failing_read(void *ctx, char *dst, size_t cap, const char **err)
{
	struct fail_src *f = ctx;
	if (f->calls++ == 0) {
		const char *s = "{\"a\": [1, 2, ";
		size_t n = strlen(s) < cap ? strlen(s) : cap;
		memcpy(dst, s, n);
		return (ssize_t)n;
	}
	*err = "gzip stream is corrupt";
	return -1;
}

TEST(json_stream_read_error)
{
	struct fail_src f = {0};
	struct json_reader r;
	json_reader_init_stream(&r, failing_read, &f, 64, 0);
	enum json_tok t;
	while ((t = json_next(&r)) != JSON_EOF && t != JSON_ERROR)
		;
	CHECK(t == JSON_ERROR);
	CHECK(strstr(r.err.msg, "read error: gzip stream is corrupt") != NULL);
	CHECK_INT(r.err.offset, 13);
	json_reader_free(&r);
}

/* Lines and columns stay exact after the streaming window discarded input. */
TEST(json_stream_positions_after_refill)
{
	struct buf doc = BUF_INIT;
	buf_puts(&doc, "[\n");
	for (int i = 0; i < 5000; i++)
		buf_printf(&doc, "  {\"i\": %d, \"name\": \"event number %d\"},\n", i, i);
	buf_puts(&doc, "  {\"bad\": tru}\n]");
	char *got = tokens_n(doc.data, doc.len, 0);
	char want[64];
	snprintf(want, sizeof want, "ERR@%zu:5002:11 ", doc.len - 6);
	CHECK(strstr(got, want) != NULL);
	free(got);
	buf_free(&doc);
}

/* A reader restarted over a second source reads it as a fresh one would:
 * offsets and lines from 0, no state (depth, a half-read token, an error)
 * carried over, the depth limit kept; and the window of a full chunk is
 * used to all but its last 64 bytes, never past them. */
TEST(json_stream_restart)
{
	struct buf a = BUF_INIT;
	buf_puts(&a, "{\"k\": [");
	for (int i = 0; i < 20000; i++)
		buf_printf(&a, "%s\"value %d\"", i ? ", " : "", i);
	buf_puts(&a, "], \"tail\": tr"); /* cut inside a token */
	struct json_reader r;
	struct chunk_src sa = {a.data, a.len, 4096};
	json_reader_init_stream(&r, chunk_read, &sa, 4096, 0);
	json_reader_set_max_depth(&r, 3);
	enum json_tok t;
	while ((t = json_next(&r)) != JSON_ERROR && t != JSON_EOF)
		;
	CHECK(t == JSON_ERROR);
	CHECK(r.cap == 2 * 4096 - 64);
	const char *b = "\n[1, {\"x\": \"y\"}]";
	struct chunk_src sb = {b, strlen(b), 3};
	json_reader_restart_stream(&r, chunk_read, &sb, 0);
	struct buf got = BUF_INIT;
	render(&r, &got);
	CHECK_STR(got.data, "[ n:1 { k:x s:y } ] EOF");
	buf_free(&got);
	/* the depth limit (3) is still there: a fourth level fails, on line 1 */
	const char *c = "[[[[1]]]]";
	struct chunk_src sc = {c, strlen(c), 2};
	json_reader_restart_stream(&r, chunk_read, &sc, 0);
	render(&r, &got);
	CHECK(strncmp(got.data, "[ [ [ ERR@3:1:4 ", 16) == 0);
	buf_free(&got);
	json_reader_free(&r);
	buf_free(&a);
}

static bool gunzip(const char *path, struct buf *out)
{
	gzFile g = gzopen(path, "rb");
	if (!g)
		return false;
	char tmp[65536];
	int n;
	while ((n = gzread(g, tmp, sizeof tmp)) > 0)
		buf_append(out, tmp, (size_t)n);
	gzclose(g);
	return n == 0;
}

/* Every real trace parses, from memory and streamed in odd-sized chunks. */
TEST(json_parses_every_shared_trace)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "find '%s/traces' -name '*.json*' | sort", test_data_dir());
	FILE *p = popen(cmd, "r");
	REQUIRE(p);
	char path[1024];
	int files = 0;
	while (fgets(path, sizeof path, p)) {
		path[strcspn(path, "\n")] = 0;
		struct buf doc = BUF_INIT;
		if (!gunzip(path, &doc)) {
			test_fail(__FILE__, __LINE__, "cannot read %s", path);
			continue;
		}
		uint64_t ntok[2] = {0, 0};
		for (int mode = 0; mode < 2; mode++) {
			struct json_reader r;
			struct chunk_src src = {doc.data, doc.len, 65521};
			if (mode == 0)
				json_reader_init_mem(&r, doc.data, doc.len, 0);
			else
				json_reader_init_stream(&r, chunk_read, &src, 65521, 0);
			enum json_tok t;
			while ((t = json_next(&r)) != JSON_EOF && t != JSON_ERROR)
				ntok[mode]++;
			if (t == JSON_ERROR)
				test_fail(__FILE__, __LINE__, "%s: %s at %llu", path, r.err.msg,
					  (unsigned long long)r.err.offset);
			json_reader_free(&r);
		}
		CHECK(ntok[0] > 10 && ntok[0] == ntok[1]);
		buf_free(&doc);
		files++;
	}
	pclose(p);
	CHECK(files >= 15);
}

TEST(json_dom)
{
	const char *doc = "{\"fn\": \"setKinetOnDemandRequest\", \"pids\": [1, 22, 333], \"job_id\": 42,"
			  " \"flag\": true, \"nested\": {\"x\": null}, \"f\": 2.5}";
	struct json_doc d;
	struct json_error err;
	REQUIRE(json_parse(doc, strlen(doc), &d, &err));
	const char *s;
	size_t n;
	CHECK(json_get_str(d.root, "fn", &s, &n) && strcmp(s, "setKinetOnDemandRequest") == 0 && n == 23);
	const struct json_value *pids = json_get(d.root, "pids");
	REQUIRE(pids && pids->type == JV_ARRAY && pids->len == 3);
	int64_t v;
	CHECK(json_value_i64(&pids->u.items[2], &v) && v == 333);
	CHECK(json_get_i64(d.root, "job_id", &v) && v == 42);
	bool b = false;
	CHECK(json_get_bool(d.root, "flag", &b) && b);
	CHECK(json_get(json_get(d.root, "nested"), "x")->type == JV_NULL);
	CHECK(json_value_f64(json_get(d.root, "f")) == 2.5);
	CHECK(json_get(d.root, "missing") == NULL);
	CHECK(!json_get_str(d.root, "job_id", &s, &n)); /* wrong type */
	json_doc_free(&d);

	CHECK(!json_parse("{\"a\": [1, 2}", 12, &d, &err));
	CHECK_INT(err.offset, 11);
	CHECK(strstr(err.msg, "',' or ']'") != NULL);
	CHECK(!json_parse("{} {}", 5, &d, &err));
	CHECK(strstr(err.msg, "after the end") != NULL);
}

TEST(json_writer_roundtrip)
{
	struct buf b = BUF_INIT;
	struct jw w;
	jw_init(&w, &b);
	jw_obj_begin(&w);
	jw_key(&w, "b");
	jw_arr_begin(&w);
	jw_i64(&w, -5);
	jw_u64(&w, UINT64_MAX);
	jw_f64(&w, 0.1);
	jw_f64(&w, NAN);
	jw_bool(&w, true);
	jw_null(&w);
	jw_arr_begin(&w);
	jw_arr_end(&w);
	jw_obj_begin(&w);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_key(&w, "s");
	jw_strn(&w, "q\"\\\n\x01\x7f\xC3\xA9\xFF", 9);
	jw_obj_end(&w);
	CHECK_STR(b.data, "{\"b\":[-5,18446744073709551615,0.1,null,true,null,[],{}],"
			  "\"s\":\"q\\\"\\\\\\n\\u0001\x7f\xC3\xA9\\ufffd\"}");
	struct json_doc d;
	struct json_error err;
	REQUIRE(json_parse(b.data, b.len, &d, &err));
	const char *s;
	size_t n;
	CHECK(json_get_str(d.root, "s", &s, &n) && n == 11 && memcmp(s, "q\"\\\n\x01\x7f\xC3\xA9\xEF\xBF\xBD", 11) == 0);
	json_doc_free(&d);
	buf_free(&b);
}

TEST(json_writer_every_byte_escaped_validly)
{
	char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	struct buf b = BUF_INIT;
	json_escape(&b, all, sizeof all);
	struct json_reader r;
	json_reader_init_mem(&r, b.data, b.len, 0);
	REQUIRE(json_next(&r) == JSON_STRING);
	CHECK(memcmp(r.sval, all, 128) == 0); /* ASCII survives exactly */
	CHECK(json_next(&r) == JSON_EOF);
	json_reader_free(&r);
	buf_free(&b);
}

TEST(json_f64_format_shortest_roundtrip)
{
	srand(7);
	for (int i = 0; i < 100000; i++) {
		uint64_t bits = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand();
		double v;
		memcpy(&v, &bits, sizeof v);
		if (!isfinite(v))
			continue;
		char t[32];
		json_fmt_f64(t, v);
		if (strtod(t, NULL) != v) {
			test_fail(__FILE__, __LINE__, "%.17g printed as %s", v, t);
			break;
		}
	}
	char t[32];
	json_fmt_f64(t, 0.1);
	CHECK_STR(t, "0.1");
	json_fmt_f64(t, 1.5e300);
	CHECK_STR(t, "1.5e+300");
}
