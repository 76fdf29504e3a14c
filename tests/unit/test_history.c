/*
 * test_history.c - the history ring and the getMetrics RPC body: window,
 * since_s, name globs, absent keys, bounded series, bad requests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/json.h"
#include "daemon/publish/history.h"
#include "test.h"

static void add(struct history *h, int64_t t_ms, const char *k1, double v1, const char *k2, double v2)
{
	struct frame f;
	frame_init(&f);
	frame_reset(&f, t_ms * 1000000);
	if (k1)
		frame_float(&f, k1, v1);
	if (k2)
		frame_uint(&f, k2, (uint64_t)v2);
	frame_str(&f, "proc_job_id.1", "77"); /* strings are not series */
	history_add(h, &f);
	frame_free(&f);
}

static char *rpc(struct history *h, const char *req, int64_t now_ms)
{
	struct json_doc d;
	struct json_error e;
	if (!json_parse(req, strlen(req), &d, &e)) {
		test_fail(__FILE__, __LINE__, "bad test request");
		test_abort();
	}
	struct buf out = BUF_INIT;
	history_rpc(h, d.root, now_ms, &out);
	json_doc_free(&d);
	return buf_detach(&out, NULL);
}

TEST(history_window_and_query)
{
	/* window 30 s at 10 s: 4 slots */
	struct history *h = history_new(30, 10, 0, 100);
	for (int i = 0; i < 6; i++)
		add(h, 1000000 + i * 10000, "cpu_util", i * 1.5, i % 2 ? "rx_bytes.eth0" : NULL, i * 100);
	char *r = rpc(h, "{\"fn\":\"getMetrics\"}", 1050000);
	/* ticks 2..5 are kept (4 slots) */
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_util\":[[1020000,3],[1030000,4.5],[1040000,6],[1050000,7.5]],"
		     "\"rx_bytes.eth0\":[[1030000,300],[1050000,500]]},\"window_s\":30}");
	free(r);
	r = rpc(h, "{\"fn\":\"getMetrics\",\"since_s\":15,\"names\":[\"cpu_*\",\"nope\"]}", 1050000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_util\":[[1040000,6],[1050000,7.5]]},\"window_s\":30}");
	free(r);
	r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"rx_bytes.eth0\"]}", 1050000);
	CHECK(strstr(r, "\"rx_bytes.eth0\":[[1030000,300]") != NULL);
	CHECK(strstr(r, "cpu_util") == NULL);
	CHECK(strstr(r, "proc_job_id") == NULL);
	free(r);
	CHECK_INT(history_series(h), 2);
	history_free(h);
}

TEST(history_vanished_series_expire)
{
	struct history *h = history_new(20, 10, 0, 100);
	add(h, 0, "gone.eth9", 1, NULL, 0);
	for (int i = 1; i < 5; i++)
		add(h, i * 10000, "cpu_util", 1, NULL, 0);
	CHECK_INT(history_series(h), 1); /* gone.eth9 aged out of all 3 slots and was freed */
	history_free(h);
}

TEST(history_series_bound)
{
	struct history *h = history_new(60, 10, 0, 3);
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 0);
	char k[32];
	for (int i = 0; i < 10; i++) {
		snprintf(k, sizeof k, "m%d", i);
		frame_int(&f, k, i);
	}
	history_add(h, &f);
	CHECK_INT(history_series(h), 3);
	CHECK_INT(history_dropped_series(h), 7);
	frame_free(&f);
	history_free(h);
}

TEST(history_many_series_rehash)
{
	struct history *h = history_new(60, 10, 0, 100000);
	struct frame f;
	frame_init(&f);
	for (int t = 0; t < 3; t++) {
		frame_reset(&f, (int64_t)t * 10 * 1000000000ll);
		char k[32];
		for (int i = 0; i < 5000; i++) {
			snprintf(k, sizeof k, "cpu_u_ms.cpu%d", i);
			frame_int(&f, k, i + t);
		}
		history_add(h, &f);
	}
	CHECK_INT(history_series(h), 5000);
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"cpu_u_ms.cpu4999\"]}", 20000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_u_ms.cpu4999\":[[0,4999],[10000,5000],[20000,5001]]},"
		     "\"window_s\":60}");
	free(r);
	frame_free(&f);
	history_free(h);
}

TEST(history_rpc_errors)
{
	struct history *h = history_new(60, 10, 0, 10);
	const char *bad[] = {"{\"fn\":\"getMetrics\",\"since_s\":\"x\"}", "{\"fn\":\"getMetrics\",\"since_s\":-1}",
			     "{\"fn\":\"getMetrics\",\"since_s\":1.5}", "{\"fn\":\"getMetrics\",\"names\":\"cpu\"}",
			     "{\"fn\":\"getMetrics\",\"names\":[1]}", "[1]"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *r = rpc(h, bad[i], 0);
		CHECK(strncmp(r, "{\"error\":\"getMetrics: ", 21) == 0);
		free(r);
	}
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"since_s\":99999999999999}", 0);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{},\"window_s\":60}");
	free(r);
	history_free(h);
}
