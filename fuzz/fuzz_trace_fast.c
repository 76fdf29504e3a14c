/*
 * fuzz_trace_fast.c - libFuzzer target: the loader's fast path
 * (src/trace/load_fast.c) against the tokenizer path.
 *
 * The bytes are loaded twice as a whole document and twice wrapped as the
 * elements of a traceEvents array (where the fast path runs), each time
 * with and without the fast path: the models, or the error messages, must
 * be identical.  Then trace_fast_event() itself is run on every prefix of
 * the input: it must never read past the end it is given (ASan) and it may
 * only accept text that the tokenizer accepts as one JSON value.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/lib/trace_compare.h"
#include "core/json.h"
#include "trace/load_internal.h"
#include "trace/model.h"

static void compare(const char *data, size_t size, bool skip)
{
	/* the CUPTI profiler args (which the fast path leaves to the
	 * tokenizer) with the CPU rows, as `dyno analyze cupti` loads, and
	 * the optional occupancy column (both paths decode it) */
	struct trace_load_opts fo = {.skip_cpu_ops = skip, .keep_profiler_args = !skip, .keep_kernel_occupancy = !skip},
			       so = fo;
	so.tokenizer_only = true;
	struct buf fe = BUF_INIT, se = BUF_INIT, why = BUF_INIT;
	struct trace_rank *f = trace_rank_load_mem("fuzz.json", data, size, &fo, &fe);
	struct trace_rank *s = trace_rank_load_mem("fuzz.json", data, size, &so, &se);
	if (!f != !s || (!f && strcmp(fe.data, se.data) != 0)) {
		fprintf(stderr, "fast: %s\ntokenizer: %s\n", f ? "loaded" : fe.data, s ? "loaded" : se.data);
		abort();
	}
	if (f && !trace_rank_same(f, s, &why)) {
		fprintf(stderr, "models differ: %s\n", why.data);
		abort();
	}
	trace_rank_free(f);
	trace_rank_free(s);
	buf_free(&fe);
	buf_free(&se);
	buf_free(&why);
}

/* Accepted text must be exactly one valid JSON value for the tokenizer. */
static void check_accepts(const char *data, size_t len)
{
	char *copy = xmalloc(len ? len : 1); /* exact size: ASan sees any over-read */
	memcpy(copy, data, len);
	struct fast_event ev;
	const char *q = trace_fast_event(copy, copy + len, &ev);
	if (q) {
		if (q <= copy || q > copy + len)
			abort();
		struct json_reader jr;
		json_reader_init_mem(&jr, copy, (size_t)(q - copy), 0);
		if (json_next(&jr) != JSON_OBJ_BEGIN || !json_skip(&jr) || json_next(&jr) != JSON_EOF)
			abort();
		json_reader_free(&jr);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data;
	compare(d, size, false);
	struct buf doc = BUF_INIT;
	buf_puts(&doc, "{\"traceEvents\":[");
	buf_append(&doc, d, size);
	buf_puts(&doc, "]}");
	compare(doc.data, doc.len, false);
	compare(doc.data, doc.len, true);
	buf_free(&doc);
	/* every prefix when small, else a spread of them */
	size_t step = size <= 512 ? 1 : size / 256;
	for (size_t n = 1; n <= size; n += step)
		check_accepts(d, n);
	return 0;
}
