/*
 * fuzz_trace_split.c - libFuzzer target for the parse of a plain file in
 * parts (src/trace/load_split.c): any bytes, written to a file, loaded by
 * one thread and again in up to six parts of a few bytes each.  The split
 * guesses then land wherever the bytes allow (inside strings, nested
 * arrays, arrays after traceEvents, broken input), and the two loads must
 * still agree: both fail with the same message, or both give the same
 * model (rows, strings, stats, the truncation's message).  Correctness of
 * the parse in parts never depends on its guesses; this is where that is
 * checked on arbitrary input.  The last byte can also ask for the input
 * gzipped (each part's helper then inflates the file from its start and
 * finds its split point itself), and that gzip cut short.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "../tests/lib/trace_compare.h"
#include "trace/model.h"

/* data as one gzip member (zlib level 1), in *out (malloc'ed); 0: failed */
static size_t gzip_of(const uint8_t *data, size_t size, uint8_t **out)
{
	z_stream z = {0};
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	size_t cap = deflateBound(&z, size) + 64;
	*out = malloc(cap);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)size;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	size_t n = deflate(&z, Z_FINISH) == Z_STREAM_END ? z.total_out : 0;
	deflateEnd(&z);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a file the loader opens by path (the parts reopen it), in memory */
	int fd = memfd_create("fuzz_trace_split", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	const uint8_t *file = data;
	size_t file_size = size;
	uint8_t *gz = NULL;
	if (size && (data[size - 1] & 4)) {
		file_size = gzip_of(data, size, &gz);
		if (!file_size) {
			free(gz);
			close(fd);
			return 0;
		}
		if (data[size - 1] & 8) /* cut: no trailer, its size hint is noise */
			file_size = file_size * data[0] / 256;
		file = gz;
	}
	for (size_t off = 0; off < file_size;) {
		ssize_t n = write(fd, file + off, file_size - off);
		if (n <= 0) {
			free(gz);
			close(fd);
			return 0;
		}
		off += (size_t)n;
	}
	free(gz);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	struct trace_load_opts one = {.threads = 1};
	struct trace_load_opts parts = {.threads = 6, .split_min_bytes = 2, .split_part_bytes = 1};
	/* the input's last byte picks the other options, for both loads */
	if (size && (data[size - 1] & 1))
		one.skip_cpu_ops = parts.skip_cpu_ops = true;
	if (size && (data[size - 1] & 2))
		one.tokenizer_only = parts.tokenizer_only = true;
	/* a .json.gz in two parts sharing the text before the helper's */
	if (size && (data[size - 1] & 16)) {
		parts.threads = 2;
		parts.gz_share_always = true;
	}
	struct buf e1 = BUF_INIT, e2 = BUF_INIT, why = BUF_INIT;
	struct trace_rank *a = trace_rank_load(path, &one, &e1);
	struct trace_rank *b = trace_rank_load(path, &parts, &e2);
	if (!a != !b) {
		fprintf(stderr, "one thread %s, in parts %s: \"%s\" / \"%s\"\n", a ? "loads" : "fails",
			b ? "loads" : "fails", e1.data, e2.data);
		abort();
	}
	if (!a && strcmp(e1.data, e2.data) != 0) {
		fprintf(stderr, "errors differ: \"%s\" vs \"%s\"\n", e1.data, e2.data);
		abort();
	}
	if (a) {
		a->stats.parse_threads = b->stats.parse_threads; /* the one difference meant */
		if (!trace_rank_same(a, b, &why)) {
			fprintf(stderr, "one thread vs in parts: %s\n", why.data);
			abort();
		}
	}
	trace_rank_free(a);
	trace_rank_free(b);
	buf_free(&e1);
	buf_free(&e2);
	buf_free(&why);
	close(fd);
	return 0;
}
