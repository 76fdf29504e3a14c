/*
 * fuzz_rpc_request.c - libFuzzer target for the RPC server's input path:
 * the int32 frame reader (fed in two pieces at a fuzzer-chosen split), the
 * JSON request parser, and the tracing handlers (setKinetOnDemandRequest
 * with the trace-path policy, getProcesses) against a registry holding a
 * few processes; and the input as a keep-alive stream of consecutive
 * frames (net_frame_reset between them).  Any crash, leak or sanitizer
 * report is a bug; the answers must always be valid JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/log.h"
#include "core/net.h"
#include "daemon/ipc/registry.h"
#include "daemon/rpc/rpc_tracing.h"
#include "daemon/rpc/security.h"

static int64_t now(void) { return 5000000000ll; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_set_level(LOG_LEVEL_ERROR);
	if (size < 1)
		return 0;
	size_t split = data[0] % (size);
	data++, size--;
	if (split > size)
		split = size;
	struct net_frame f;
	net_frame_init(&f, 1 << 16);
	size_t used = 0, used2 = 0;
	enum net_frame_status st = net_frame_feed(&f, data, split, &used);
	if (st == NET_FRAME_MORE)
		st = net_frame_feed(&f, data + used, size - used, &used2);
	/* Also treat the whole input as a bare body, to reach the handlers
	 * without the fuzzer having to guess a length prefix. */
	const char *body = st == NET_FRAME_DONE ? f.body.data : (const char *)data;
	size_t blen = st == NET_FRAME_DONE ? f.body.len : size;

	struct registry reg;
	registry_init(&reg, 64);
	struct reg_delivery d;
	int32_t a[] = {100, 10, 1}, b[] = {200, 10}, c[] = {0};
	registry_poll(&reg, 0, a, 3, 2, now(), &d);
	registry_poll(&reg, 0, b, 2, 0, now(), &d);
	registry_poll(&reg, -1, c, 1, 3, now(), &d);
	struct path_policy pol;
	struct buf err = BUF_INIT;
	path_policy_parse(&pol, "/tmp/,/data/t", &err);
	struct rpc_tracing t = {.reg = &reg, .policy = &pol, .now_ns = now};

	struct json_doc doc;
	struct json_error jerr;
	if (json_parse(body, blen, &doc, &jerr)) {
		if (doc.root && doc.root->type == JV_OBJECT) {
			struct buf resp = BUF_INIT;
			rpc_set_on_demand(doc.root, &resp, &t);
			struct json_doc check;
			if (!json_parse(resp.data, resp.len, &check, &jerr))
				abort(); /* our answer must be JSON */
			json_doc_free(&check);
			buf_reset(&resp);
			rpc_get_processes(doc.root, &resp, &t);
			buf_free(&resp);
			/* what a triggered process receives */
			registry_poll(&reg, 0, a, 3, 3, now(), &d);
			struct buf text = BUF_INIT;
			registry_delivery_text(&d, &text);
			registry_delivery_free(&d);
			buf_free(&text);
		}
		json_doc_free(&doc);
	}
	/* A keep-alive stream: consecutive frames, each read after
	 * net_frame_reset, as the server reads pipelined requests. */
	struct net_frame ka;
	net_frame_init(&ka, 1 << 10);
	size_t off = 0;
	while (off < size) {
		size_t u;
		enum net_frame_status ks = net_frame_feed(&ka, data + off, size - off, &u);
		if (u > size - off)
			abort();
		off += u;
		if (ks != NET_FRAME_DONE)
			break;
		if (ka.body.len != (size_t)ka.len || u == 0)
			abort();
		net_frame_reset(&ka, 64);
	}
	net_frame_free(&ka);
	struct buf why = BUF_INIT;
	path_policy_check(&pol, body, blen, &why);
	buf_free(&why);
	path_policy_free(&pol);
	buf_free(&err);
	registry_free(&reg);
	net_frame_free(&f);
	return 0;
}
