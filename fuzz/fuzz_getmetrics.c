/*
 * fuzz_getmetrics.c - libFuzzer target for the getMetrics request handler:
 * any bytes are parsed as a JSON request (as the RPC server would) and
 * answered from a history holding a few series, with a bound small enough
 * that a whole answer comes in pages (so "next" cursors, good and bad, are
 * read and written); the answer must always be valid JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "daemon/publish/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static struct history *h;
	if (!h) {
		h = history_new(60, 10, 0, 100);
		struct frame f;
		frame_init(&f);
		for (int t = 0; t < 8; t++) {
			frame_reset(&f, (int64_t)t * 10000000000ll);
			frame_float(&f, "cpu_util", t * 1.5);
			frame_uint(&f, "rx_bytes.eth0", (uint64_t)t * 100);
			if (t % 2)
				frame_int(&f, "cpu_u_ms.cpu1", t);
			history_add(h, &f);
		}
		frame_free(&f);
		history_set_max_answer(h, 300);
	}
	struct json_doc doc;
	struct json_error err;
	if (!json_parse((const char *)d, n, &doc, &err))
		return 0;
	struct buf out = BUF_INIT;
	history_rpc(h, doc.root, 75000, &out);
	struct json_doc check;
	if (!json_parse(out.data, out.len, &check, &err))
		abort(); /* the handler produced invalid JSON */
	json_doc_free(&check);
	json_doc_free(&doc);
	buf_free(&out);
	return 0;
}
