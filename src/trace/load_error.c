/*
 * load_error.c - where the loader's errors are and how they read: "FILE:
 * byte N (line L, column C): what".
 *
 * The parse of a plain file skips line counting (the core reader's
 * JSON_NO_LINES saves a pass over every byte); when an error is reported,
 * its line and column are found here by reading the file again up to the
 * error, with the reader's SSE2 newline count.  Costs one read of the file
 * up to the error, only when there is one.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace/load_internal.h"

/* The parse of a plain file does not count lines (JSON_NO_LINES): errors
 * are rare and a re-read from the page cache is fast.  Leaves je as it is
 * if the file cannot be read. */
void trace_error_locate(const char *path, struct json_error *je)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char *b = xmalloc(1u << 20);
	uint64_t pos = 0, lines = 0, after_nl = 0;
	bool ok = true;
	while (pos < je->offset) {
		size_t want = je->offset - pos < (1u << 20) ? (size_t)(je->offset - pos) : (1u << 20);
		ssize_t n = read(fd, b, want);
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
	close(fd);
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
