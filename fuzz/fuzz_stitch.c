/*
 * fuzz_stitch.c - libFuzzer target for `dyno stitch` (src/fleet/stitch.c):
 * the bytes are one input trace beside a fixed valid one.  Stitch either
 * refuses them (and then leaves no OUT behind) or writes an OUT that our
 * reader accepts as JSON holding every element of both inputs plus the
 * metadata it added.  Files go to a private temporary directory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/buf.h"
#include "core/json.h"

static char dir[64];

/* the private directory goes when the fuzzer exits */
static void cleanup(void)
{
	static const char *const names[] = {"a.json", "rank-1.json", "out.json"};
	char p[128];
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void put(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

/* elements of traceEvents in OUT, -1 when it is not valid JSON */
static long count_events(const char *path)
{
	struct buf b = BUF_INIT;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_append(&b, tmp, n);
	fclose(f);
	struct json_doc doc;
	struct json_error je;
	long r = -1;
	if (json_parse(b.data, b.len, &doc, &je)) {
		const struct json_value *ev = json_get(doc.root, "traceEvents");
		if (ev && ev->type == JV_ARRAY)
			r = (long)ev->len;
		json_doc_free(&doc);
	}
	buf_free(&b);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz_stitch.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	char a[128], b[128], out[128];
	snprintf(a, sizeof a, "%s/a.json", dir);
	snprintf(b, sizeof b, "%s/rank-1.json", dir);
	snprintf(out, sizeof out, "%s/out.json", dir);
	static const char good[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5.5,\"dur\":1},"
				   "{\"ph\":\"s\",\"id\":3,\"pid\":1,\"tid\":1,\"ts\":1}],\"baseTimeNanoseconds\":1000}";
	put(a, good, sizeof good - 1);
	put(b, data, size);
	unlink(out);
	char *argv[] = {(char *)"stitch", a, b, (char *)"-q", (char *)"-o", out, NULL};
	int rc = cmd_stitch(6, argv);
	if (rc != 0) {
		if (access(out, F_OK) == 0)
			abort(); /* refused, yet an OUT was written */
		return 0;
	}
	if (count_events(out) < 2)
		abort(); /* written, yet not JSON or events lost */
	return 0;
}
