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

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "daemon/publish/sink.h"
#include "test.h"

static const struct sink *sink_named(const char *name)
{
	for (size_t i = 0; i < nsinks; i++)
		if (strcmp(sinks[i]->name, name) == 0)
			return sinks[i];
	return NULL;
}

/* A disk that fills up mid-line (here a file size limit: the write that
 * crosses it is cut short, the next one fails with EFBIG, as on a full
 * filesystem): the cut line is taken back, so the file never holds a
 * partial line and the next line does not start inside it. */
TEST(jsonlog_full_disk_leaves_whole_lines)
{
	const struct sink *js = sink_named("jsonlog");
	REQUIRE(js);
	char path[512], arg[600];
	snprintf(path, sizeof path, "%s/m.json", test_tmpdir());
	snprintf(arg, sizeof arg, "--json_log_file=%s", path);
	void *cfg = mod_config_new(&js->config);
	size_t n = mod_rows_count(&js->config);
	struct arg_opt *rows = calloc(n + 1, sizeof *rows);
	REQUIRE(rows);
	mod_rows_bind(&js->config, cfg, rows, NULL);
	char *argv[] = {arg};
	struct args a;
	REQUIRE(args_parse(rows, 1, argv, &a) == ARGS_OK);
	void *run = mod_config_clone(&js->config, cfg);
	struct buf err = BUF_INIT;
	void *state = NULL;
	struct sink_env env = {0};
	REQUIRE(js->apply(&state, NULL, run, &env, &err));

	struct frame f;
	frame_init(&f);
	frame_reset(&f, 1700000000000000000ll);
	for (int k = 0; k < 20; k++) {
		char key[32];
		snprintf(key, sizeof key, "rx_bytes.eth%d", k);
		frame_uint(&f, key, 1000000 + (uint64_t)k);
	}
	struct buf line = BUF_INIT; /* every line written is this one */
	jsonlog_render(&f, JSONLOG_UPSTREAM, &line);
	size_t len = line.len;
	/* room for 2.5 lines */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, rl;
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	rl = old;
	rl.rlim_cur = len * 5 / 2;
	REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	struct self_metrics none = {0};
	for (int i = 0; i < 4; i++)
		js->publish(state, 0, &f, &none);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0); /* the disk has room again */
	js->publish(state, 0, &f, &none);

	FILE *in = fopen(path, "r");
	REQUIRE(in);
	char buf[8192];
	int lines = 0;
	while (fgets(buf, sizeof buf, in)) {
		if (strcmp(buf, line.data) != 0)
			test_fail(__FILE__, __LINE__, "line %d is not a whole JSON line: %.60s...", lines + 1, buf);
		lines++;
	}
	fclose(in);
	buf_free(&line);
	CHECK_INT(lines, 3); /* two before the disk filled, one after */
	struct self_metrics st = {0};
	js->stats(state, &st);
	REQUIRE(st.n == 1);
	CHECK(st.v[0].value == 2); /* the two lines that did not fit: dropped and counted */
	self_metrics_free(&st);
	js->close(state);
	mod_config_free(&js->config, run);
	free(cfg);
	free(rows);
	args_free(&a);
	frame_free(&f);
	buf_free(&err);
}
