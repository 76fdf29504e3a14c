/* test_jsonlog.c - frames and the upstream-compatible JSON metric line. */
#include <string.h>

#include "core/json.h"
#include "daemon/frame.h"
#include "daemon/publish/jsonlog.h"
#include "test.h"

TEST(jsonlog_upstream_line)
{
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 1700000000123000000ll);
	frame_int(&f, "uptime", 86400);
	frame_float(&f, "cpu_util", 12.3456);
	frame_uint(&f, "rx_bytes.eth0", 1234);
	frame_float(&f, "cpu_i", 0.0 / 0.0);
	frame_str(&f, "gpu_name", "NVIDIA \"H100\"");
	struct buf out = BUF_INIT;
	jsonlog_render(&f, JSONLOG_UPSTREAM, &out);
	CHECK_STR(out.data, "time = 2023-11-14T22:13:20.123Z data = {\"cpu_i\":\"nan\",\"cpu_util\":\"12.346\","
			    "\"gpu_name\":\"NVIDIA \\\"H100\\\"\",\"rx_bytes.eth0\":1234,\"uptime\":86400}\n");
	buf_reset(&out);
	jsonlog_render(&f, JSONLOG_JSONL, &out);
	struct json_doc d;
	struct json_error e;
	REQUIRE(json_parse(out.data, out.len, &d, &e));
	int64_t up;
	CHECK(json_get_i64(json_get(d.root, "data"), "uptime", &up) && up == 86400);
	CHECK(json_get(json_get(d.root, "data"), "cpu_i")->type == JV_NULL); /* NaN is not a number */
	CHECK(json_value_f64(json_get(json_get(d.root, "data"), "cpu_util")) == 12.3456);
	json_doc_free(&d);
	/* reset keeps memory, drops values */
	frame_reset(&f, 0);
	CHECK_INT(f.n, 0);
	frame_free(&f);
	buf_free(&out);
}
