/*
 * bench_json.c - speed of the core JSON reader.
 *
 * Usage: bench_json FILE[.gz] [ROUNDS]
 * Decompresses FILE into memory once, then times, best of ROUNDS:
 *   - memory mode: json_reader over the whole buffer (zero-copy);
 *   - stream mode: the same bytes fed through the read callback in 1 MiB
 *     chunks, as the trace loader feeds it from gzip;
 *   - a memchr pass over the buffer, as a "touch every byte" floor.
 * Prints MB/s of uncompressed input.  bench/run.sh compares with zcat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/json.h"

static bool load(const char *path, struct buf *out)
{
	gzFile g = gzopen(path, "rb");
	if (!g)
		return false;
	char tmp[1 << 16];
	int n;
	while ((n = gzread(g, tmp, sizeof tmp)) > 0)
		buf_append(out, tmp, (size_t)n);
	gzclose(g);
	return n == 0;
}

struct mem_src {
	const char *p;
	size_t left;
};

static ssize_t mem_read(void *ctx, char *dst, size_t cap, const char **err)
{
	(void)err;
	struct mem_src *m = ctx;
	size_t n = cap < m->left ? cap : m->left;
	memcpy(dst, m->p, n);
	m->p += n;
	m->left -= n;
	return (ssize_t)n;
}

static uint64_t drain(struct json_reader *r)
{
	uint64_t toks = 0;
	enum json_tok t;
	while ((t = json_next(r)) != JSON_EOF) {
		if (t == JSON_ERROR) {
			fprintf(stderr, "parse error at %llu: %s\n", (unsigned long long)r->err.offset, r->err.msg);
			exit(1);
		}
		toks++;
	}
	return toks;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_json FILE[.gz] [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	struct buf doc = BUF_INIT;
	if (!load(argv[1], &doc)) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	double mb = (double)doc.len / 1e6;
	double best_mem = 1e99, best_stream = 1e99, best_scan = 1e99;
	uint64_t toks = 0;
	size_t ctrl_bytes = 0; /* keeps the memchr pass from being optimized away */
	for (int i = 0; i < rounds; i++) {
		int64_t t0 = clock_mono_ns();
		size_t c = 0;
		for (const char *p = doc.data, *e = p + doc.len; (p = memchr(p, '\x01', (size_t)(e - p))); p++)
			c++;
		ctrl_bytes += c;
		double s = (double)(clock_mono_ns() - t0) / 1e9;
		if (s < best_scan)
			best_scan = s;

		struct json_reader r;
		t0 = clock_mono_ns();
		json_reader_init_mem(&r, doc.data, doc.len, 0);
		toks = drain(&r);
		json_reader_free(&r);
		s = (double)(clock_mono_ns() - t0) / 1e9;
		if (s < best_mem)
			best_mem = s;

		struct mem_src src = {doc.data, doc.len};
		t0 = clock_mono_ns();
		json_reader_init_stream(&r, mem_read, &src, 0, 0);
		drain(&r);
		json_reader_free(&r);
		s = (double)(clock_mono_ns() - t0) / 1e9;
		if (s < best_stream)
			best_stream = s;
	}
	printf("json reader on %s: %.1f MB uncompressed, %llu tokens, best of %d\n", argv[1], mb,
	       (unsigned long long)toks, rounds);
	printf("  memory mode : %8.1f MB/s  (%.3f s)\n", mb / best_mem, best_mem);
	printf("  stream mode : %8.1f MB/s  (%.3f s)\n", mb / best_stream, best_stream);
	printf("  memchr floor: %8.1f MB/s  (%.3f s, %zu control bytes)\n", mb / best_scan, best_scan,
	       ctrl_bytes / (size_t)rounds);
	buf_free(&doc);
	return 0;
}
