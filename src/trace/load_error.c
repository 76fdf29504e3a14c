/*
 * load_error.c - where the loader's errors are and how they read: "FILE:
 * byte N (line L, column C): what".
 *
 * The parse of a file opened by path (plain or gzip) skips line counting
 * (the core reader's JSON_NO_LINES saves a pass over every byte of text,
 * on the parser's thread, which is the one a load waits for); when an
 * error is reported, its line and column are found here by reading the
 * file again up to the error, through a source of its own (a gzip file is
 * inflated again), with the reader's SSE2 newline count.  Costs one read of
 * the text up to the error, only when there is one.
 */
#include <stdlib.h>

#include "trace/load_internal.h"
#include "trace/source.h"

/* Leaves je as it is if the file cannot be read up to the error (it
 * changed, or the error is a read error before that point). */
void trace_error_locate(const char *path, struct json_error *je)
{
	char msg[256];
	struct trace_source *src = trace_source_open(path, false, msg, sizeof msg);
	if (!src)
		return;
	char *b = xmalloc(1u << 20);
	uint64_t pos = 0, lines = 0, after_nl = 0;
	bool ok = true;
	while (pos < je->offset) {
		size_t want = je->offset - pos < (1u << 20) ? (size_t)(je->offset - pos) : (1u << 20);
		const char *why;
		ssize_t n = trace_source_read(src, b, want, &why);
		if (n <= 0) {
			ok = false;
			break;
		}
		const char *last;
		lines += json_count_newlines(b, b + n, &last);
		if (last)
			after_nl = pos + (uint64_t)(last - b) + 1;
		pos += (uint64_t)n;
	}
	free(b);
	trace_source_close(src);
	if (ok) {
		je->line = lines + 1;
		je->column = je->offset - after_nl + 1;
	}
}

void trace_error_format(struct buf *err, const char *name, const struct json_error *je)
{
	if (je->line == 0) /* a reader started mid-file: only the byte offset is known */
		buf_printf(err, "%s: byte %llu: %s", name, (unsigned long long)je->offset, je->msg);
	else
		buf_printf(err, "%s: byte %llu (line %llu, column %llu): %s", name,
			   (unsigned long long)je->offset, (unsigned long long)je->line,
			   (unsigned long long)je->column, je->msg);
}
