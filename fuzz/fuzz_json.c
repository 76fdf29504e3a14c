/*
 * fuzz_json.c - libFuzzer target for the JSON reader, DOM and writer.
 *
 * For each input: tokenize it from memory, as a stream with a chunk size
 * taken from the first byte, and through a borrowed window that grows in
 * place to a length the second byte picks and is streamed past it, and
 * require the same tokens and the same error offset (a differential check
 * of the refill logic); then build the DOM,
 * and when that succeeds, write it back with the writer and require that
 * the output parses.  Any crash, hang, leak or sanitizer report is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

struct src {
	const uint8_t *p;
	size_t left, chunk;
};

static ssize_t rd(void *ctx, char *dst, size_t cap, const char **err)
{
	(void)err;
	struct src *s = ctx;
	size_t n = s->chunk < cap ? s->chunk : cap;
	if (n > s->left)
		n = s->left;
	memcpy(dst, s->p, n);
	s->p += n;
	s->left -= n;
	return (ssize_t)n;
}

struct grow {
	size_t limit, step;
};

static size_t grow_by(void *ctx, size_t have)
{
	const struct grow *g = ctx;
	return have + g->step < g->limit ? have + g->step : g->limit;
}

static uint64_t digest(struct json_reader *r, uint64_t *err_off)
{
	uint64_t h = 1469598103934665603ull;
	enum json_tok t;
	while ((t = json_next(r)) != JSON_EOF && t != JSON_ERROR) {
		h = (h ^ (uint64_t)t) * 1099511628211ull;
		if (t == JSON_KEY || t == JSON_STRING)
			for (size_t i = 0; i < r->slen; i++)
				h = (h ^ (uint8_t)r->sval[i]) * 1099511628211ull;
		if (t == JSON_NUMBER) {
			double d = json_f64(r);
			uint64_t bits;
			memcpy(&bits, &d, sizeof bits);
			if (d == d)
				h = (h ^ bits) * 1099511628211ull;
			int64_t i64;
			if (json_num_i64(&r->num, &i64))
				h = (h ^ (uint64_t)i64) * 1099511628211ull;
		}
	}
	*err_off = t == JSON_ERROR ? r->err.offset : UINT64_MAX;
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags = size && (data[0] & 0x80) ? JSON_LENIENT_UTF8 : 0;
	size_t chunk = size ? (size_t)(data[0] & 0x3f) + 1 : 1;

	struct json_reader r;
	uint64_t e1, e2;
	json_reader_init_mem(&r, (const char *)data, size, flags);
	uint64_t h1 = digest(&r, &e1);
	json_reader_free(&r);

	struct src s = {data, size, chunk};
	json_reader_init_stream(&r, rd, &s, chunk, flags);
	uint64_t h2 = digest(&r, &e2);
	json_reader_free(&r);
	if (h1 != h2 || e1 != e2)
		abort(); /* memory and stream modes disagree */

	/* a borrowed window (json_reader_init_borrow) growing `chunk` bytes at
	 * a time to a limit the second byte picks, then the stream from there */
	struct grow g = {size > 1 ? size * data[1] / 255 : 0, chunk};
	struct src rest = {data + g.limit, size - g.limit, chunk};
	json_reader_init_borrow(&r, (const char *)data, grow_by, &g, rd, &rest, chunk, flags);
	uint64_t h3 = digest(&r, &e2);
	json_reader_free(&r);
	if (h1 != h3 || e1 != e2)
		abort(); /* memory and borrowed modes disagree */

	struct json_doc doc;
	struct json_error err;
	if (json_parse((const char *)data, size, &doc, &err)) {
		if (e1 != UINT64_MAX)
			abort(); /* DOM accepted what the tokenizer rejected */
		struct buf out = BUF_INIT;
		struct jw w;
		jw_init(&w, &out);
		jw_value(&w, doc.root);
		struct json_doc again;
		if (!json_parse(out.data, out.len, &again, &err))
			abort(); /* the writer produced invalid JSON */
		json_doc_free(&again);
		buf_free(&out);
		json_doc_free(&doc);
	}
	return 0;
}
