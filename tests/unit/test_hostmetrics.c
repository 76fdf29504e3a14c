/*
 * test_hostmetrics.c - the --metrics file of `dyno analyze insights`
 * (src/analyze/hostmetrics.c): the three shapes it reads (upstream's
 * `time = T data = {...}` log, JSONL records, `dyno metrics --json`
 * answers with and without a host label) give the same series; numeric
 * strings count, labels and "nan" do not; a bad line is skipped, counted
 * and named by line and byte; nothing usable is an error naming the file.
 */
#include <math.h>
#include <string.h>

#include "analyze/hostmetrics.h"
#include "test.h"

static const struct host_series *series(const struct host_metrics *m, const char *host, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(host_metrics_name(m, m->s[i].host), host) == 0 &&
		    strcmp(host_metrics_name(m, m->s[i].key), key) == 0)
			return &m->s[i];
	return NULL;
}

TEST(hostmetrics_three_shapes_same_series)
{
	static const char upstream[] =
		"time = 2026-11-22T01:31:49.776Z data = {\"cpu_util\":\"12.500\",\"gpu_job_kind.7\":\"slurm\",\"rx_bytes.eth0\":100}\n"
		"time = 2026-11-22T01:31:50.776Z data = {\"cpu_util\":\"nan\",\"rx_bytes.eth0\":300}\n";
	static const char jsonl[] = "{\"time\":\"2026-11-22T01:31:49.776Z\",\"data\":{\"cpu_util\":12.5,\"rx_bytes.eth0\":100}}\n"
				    "{\"time\":\"2026-11-22T01:31:50.776Z\",\"data\":{\"rx_bytes.eth0\":300}}\n";
	static const char answer[] =
		"{\"interval_s\":1,\"metrics\":{\"cpu_util\":[[1795311109776,12.5]],\"rx_bytes.eth0\":[[1795311109776,100],"
		"[1795311110776,300]]},\"window_s\":3600}\n";
	const char *const texts[] = {upstream, jsonl, answer};
	for (int k = 0; k < 3; k++) {
		struct host_metrics m;
		struct buf err = BUF_INIT;
		REQUIRE(host_metrics_parse("m", texts[k], strlen(texts[k]), &m, &err) == 0);
		CHECK_INT(m.bad_lines, 0);
		CHECK_INT(m.points, 3);
		const struct host_series *c = series(&m, "", "cpu_util"), *rx = series(&m, "", "rx_bytes.eth0");
		REQUIRE(c && rx);
		CHECK_INT(c->n, 1);
		CHECK(c->v[0] == 12.5);
		CHECK(c->ms[0] == 1795311109776LL);
		CHECK_INT(rx->n, 2);
		CHECK(rx->v[1] == 300 && rx->ms[1] == 1795311110776LL);
		CHECK(series(&m, "", "gpu_job_kind.7") == NULL); /* a label, not a number */
		host_metrics_free(&m);
		buf_free(&err);
	}
}

TEST(hostmetrics_hosts_of_dyno_metrics_json)
{
	static const char t[] = "n1 {\"metrics\":{\"cpu_util\":[[1000,10]]}}\n"
				"n2 {\"metrics\":{\"cpu_util\":[[1000,90],[2000,95]]}}\n";
	struct host_metrics m;
	struct buf err = BUF_INIT;
	REQUIRE(host_metrics_parse("m", t, sizeof t - 1, &m, &err) == 0);
	const struct host_series *a = series(&m, "n1", "cpu_util"), *b = series(&m, "n2", "cpu_util");
	REQUIRE(a && b);
	CHECK_INT(a->n, 1);
	CHECK_INT(b->n, 2);
	CHECK(b->v[1] == 95);
	CHECK(m.min_ms == 1000 && m.max_ms == 2000);
	host_metrics_free(&m);
	buf_free(&err);
}

TEST(hostmetrics_bad_lines_named_and_skipped)
{
	static const char t[] = "{\"time\":\"2026-11-22T01:31:49Z\",\"data\":{\"cpu_util\":1}}\n"
				"\n"
				"{\"time\":\"2026-13-22T01:31:49Z\",\"data\":{\"cpu_util\":1}}\n"
				"{\"metrics\":{\"cpu_util\":[[1,\"x\"]]}}\n"
				"{\"time\":\"2026-11-22T01:31:50Z\",\"data\":{\"cpu_util\":2}\n";
	struct host_metrics m;
	struct buf err = BUF_INIT;
	REQUIRE(host_metrics_parse("m", t, sizeof t - 1, &m, &err) == 0);
	CHECK_INT(m.lines, 4);
	CHECK_INT(m.bad_lines, 3);
	CHECK_INT(m.points, 1);
	/* the first bad one: line 3 (the month 13) */
	CHECK(strncmp(m.first_bad, "line 3 (byte ", 13) == 0);
	CHECK(strstr(m.first_bad, "\"time\" is not") != NULL);
	host_metrics_free(&m);
	buf_free(&err);
}

TEST(hostmetrics_nothing_usable_is_an_error)
{
	const char *const bad[] = {"", "garbage\n", "{\"error\":\"getMetrics: bad\"}\n",
				   "time = yesterday data = {}\n", "{\"time\":\"2026-11-22T01:31:49Z\",\"data\":{}}\n"};
	const char *const want[] = {"m: empty", "m: no metrics read: line 1 (byte 0)", "m: no metrics read: line 1",
				    "m: no metrics read: line 1 (byte 7)", "m: no numeric metric in 1 line"};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		struct host_metrics m;
		struct buf err = BUF_INIT;
		CHECK(host_metrics_parse("m", bad[k], strlen(bad[k]), &m, &err) == -1);
		if (strncmp(err.data, want[k], strlen(want[k])) != 0)
			CHECK_STR(err.data, want[k]);
		host_metrics_free(&m);
		buf_free(&err);
	}
	struct host_metrics m;
	struct buf err = BUF_INIT;
	CHECK(host_metrics_load("/nonexistent/metrics.json", &m, &err) == -1);
	CHECK(strstr(err.data, "/nonexistent/metrics.json: No such file") != NULL);
	host_metrics_free(&m);
	buf_free(&err);
}
