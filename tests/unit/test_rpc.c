/*
 * test_rpc.c - the RPC server over real loopback TCP, the server's loop on
 * a second thread: upstream's exact requests (wire-protocols.md 2.6, the
 * 329-byte gputrace body) and byte-exact answers; every bad frame closed
 * without a byte and counted; upstream's type-error answers; a silent
 * client neither blocks others nor lives past its deadline; allow-list,
 * token and trace-path policy; getProcesses; the handler hook; the
 * keep-alive extension (several and pipelined requests, limits, idle
 * deadline, cut frames, lingering close) and answers never lost to a reset.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/net.h"
#include "daemon/ipc/registry.h"
#include "daemon/rpc/rpc.h"
#include "daemon/rpc/rpc_tracing.h"
#include "daemon/rpc/security.h"
#include "../lib/loop_thread.h"
#include "../lib/sock.h"
#include "test.h"

struct srv {
	struct ev_loop *loop;
	struct rpc_server *rpc;
	struct registry reg;
	struct path_policy policy;
	struct rpc_tracing h;
	struct loop_thread lt;
	int port;
	struct rpc_stats st; /* copied at stop */
};

static int64_t fake_now(void) { return 1000 * NS_PER_SEC; }

/* Configure, register processes (before the thread owns the registry), run. */
static void srv_init(struct srv *s, struct rpc_opts *o, const char *prefixes)
{
	log_set_level(LOG_LEVEL_ERROR);
	memset(s, 0, sizeof *s);
	s->loop = ev_loop_new();
	registry_init(&s->reg, 0);
	struct buf err = BUF_INIT;
	REQUIRE(path_policy_parse(&s->policy, prefixes, &err));
	o->bind = o->bind ? o->bind : "::1";
	s->rpc = rpc_start(s->loop, o, &err);
	if (!s->rpc)
		fprintf(stderr, "rpc_start: %s\n", err.data);
	REQUIRE(s->rpc);
	buf_free(&err);
	s->port = rpc_port(s->rpc);
	s->h.reg = &s->reg;
	s->h.policy = &s->policy;
	s->h.now_ns = fake_now;
	rpc_tracing_register(s->rpc, &s->h);
}

static void srv_run(struct srv *s) { REQUIRE(loop_thread_start(&s->lt, s->loop)); }

static void srv_stop(struct srv *s)
{
	loop_thread_stop(&s->lt);
	s->st = *rpc_get_stats(s->rpc);
	rpc_stop(s->rpc);
	path_policy_free(&s->policy);
	ev_loop_free(s->loop);
}

/* One request; returns 0 answered (body in resp), 1 closed silently. */
static int call(struct srv *s, const char *host, const void *body, size_t n, struct buf *resp)
{
	struct buf err = BUF_INIT;
	int fd = net_connect_tcp(host, s->port, 2000, &err);
	if (fd < 0)
		fprintf(stderr, "connect: %s\n", err.data);
	REQUIRE(fd >= 0);
	buf_reset(resp);
	int rc = net_rpc_call(fd, body, n, resp, 1 << 20, 3000, &err);
	if (rc < 0)
		fprintf(stderr, "call: %s\n", err.data);
	close(fd);
	buf_free(&err);
	return rc;
}

static int calls(struct srv *s, const char *body, struct buf *resp)
{
	return call(s, "::1", body, strlen(body), resp);
}

/* Raw bytes, no framing; returns how many bytes came back before close. */
static ssize_t raw(struct srv *s, const void *bytes, size_t n, bool close_write)
{
	struct buf err = BUF_INIT;
	int fd = net_connect_tcp("::1", s->port, 2000, &err);
	buf_free(&err);
	REQUIRE(fd >= 0);
	if (n)
		REQUIRE(write(fd, bytes, n) == (ssize_t)n);
	if (close_write)
		shutdown(fd, SHUT_WR);
	char tmp[256];
	ssize_t total = 0, r;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (poll(&p, 1, 3000) == 1 && (r = read(fd, tmp, sizeof tmp)) > 0)
		total += r;
	close(fd);
	return total;
}

static const char gputrace_329[] =
	"\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": "
	"\"ACTIVITIES_LOG_FILE=/tmp/libkineto_trace.json\\nPROFILE_START_TIME=0\\nACTIVITIES_DURATION_MSECS=500\\n"
	"PROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_"
	"MODULES=false\",\n    \"job_id\": 0,\n    \"pids\": [0],\n    \"process_limit\": 3\n}";

TEST(rpc_upstream_status_version_exact_bytes)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	REQUIRE(calls(&s, "{\"fn\":\"getStatus\"}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":1}");
	CHECK_INT(r.len, 12);
	/* one request per connection; a new connection works again */
	REQUIRE(calls(&s, "{\"fn\":\"getVersion\"}", &r) == 0);
	CHECK_STR(r.data, "{\"version\":\"" DYNO_VERSION "\"}");
	REQUIRE(calls(&s, "{\"fn\":\"dcgmProfResume\"}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":false}");
	/* dcgm-pause as the real CLI pretty-prints it (53 bytes for 300) */
	const char *pause = "\n{\n    \"fn\": \"dcgmProfPause\",\n    \"duration_s\": 300\n}";
	CHECK_INT(strlen(pause), 53);
	REQUIRE(calls(&s, pause, &r) == 0);
	CHECK_STR(r.data, "{\"status\":false}");
	REQUIRE(calls(&s, "{\"fn\":\"dcgmProfPause\"}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":\"failed\"}");
	/* IPv4 clients reach the same server when bound to :: (dual-stack) */
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.answered, 5);
}

TEST(rpc_dual_stack_default_bind_serves_ipv4_and_ipv6)
{
	struct srv s;
	struct rpc_opts o = {.bind = "::"};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	CHECK(call(&s, "127.0.0.1", "{\"fn\":\"getStatus\"}", 18, &r) == 0);
	CHECK(call(&s, "::1", "{\"fn\":\"getStatus\"}", 18, &r) == 0);
	buf_free(&r);
	srv_stop(&s);
}

TEST(rpc_gputrace_request_bytes_and_stored_config)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	struct reg_delivery d;
	int32_t pid = 151419;
	registry_poll(&s.reg, 0, &pid, 1, 2, fake_now(), &d);
	srv_run(&s);
	CHECK_INT(strlen(gputrace_329), 329);
	struct buf r = BUF_INIT;
	REQUIRE(calls(&s, gputrace_329, &r) == 0);
	CHECK_STR(r.data, "{\"activityProfilersBusy\":0,\"activityProfilersTriggered\":[151419],\"eventProfilersBusy\":0,"
			  "\"eventProfilersTriggered\":[],\"processesMatched\":[151419]}");
	CHECK_INT(r.len, 145);
	/* again: busy, nothing triggered */
	REQUIRE(calls(&s, gputrace_329, &r) == 0);
	CHECK_STR(r.data, "{\"activityProfilersBusy\":1,\"activityProfilersTriggered\":[],\"eventProfilersBusy\":0,"
			  "\"eventProfilersTriggered\":[],\"processesMatched\":[151419]}");
	/* getProcesses shows it pending */
	REQUIRE(calls(&s, "{\"fn\":\"getProcesses\"}", &r) == 0);
	CHECK_STR(r.data, "{\"count\":1,\"processes\":[{\"jobId\":\"0\",\"lastSeenMs\":0,\"pid\":151419,\"pids\":[151419],"
			  "\"state\":\"pending\"}]}");
	buf_free(&r);
	srv_stop(&s);
	/* the config text of 5.3, stored verbatim inside upstream's wrapper */
	struct reg_job *j = registry_find_job(&s.reg, "0");
	REQUIRE(j && j->n == 1 && j->procs[0]->pending_act);
	const char *want = "\n    ACTIVITIES_LOG_FILE=/tmp/libkineto_trace.json\nPROFILE_START_TIME=0\n"
			   "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\nPROFILE_WITH_STACK=false\n"
			   "PROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false\n    REQUEST_TRACE_ID=";
	CHECK(strncmp(j->procs[0]->pending_act, want, strlen(want)) == 0);
	registry_free(&s.reg);
}

TEST(rpc_bad_frames_closed_without_answer_and_counted)
{
	struct srv s;
	struct rpc_opts o = {.max_frame = 4096, .timeout_ms = 2000};
	srv_init(&s, &o, "");
	srv_run(&s);
	int32_t len;
	uint8_t frame[64];
	len = 0;
	CHECK_INT(raw(&s, &len, 4, false), 0);
	len = -5;
	CHECK_INT(raw(&s, &len, 4, false), 0);
	len = 5000; /* over max_frame */
	CHECK_INT(raw(&s, &len, 4, false), 0);
	len = 100; /* short body, then EOF */
	memcpy(frame, &len, 4);
	memcpy(frame + 4, "{\"fn\":", 6);
	CHECK_INT(raw(&s, frame, 10, true), 0);
	CHECK_INT(raw(&s, "\x01\x00", 2, true), 0); /* short prefix */
	struct buf r = BUF_INIT;
	const char *silent[] = {"{\"fn\":\"getStatus\"", "[1,2]", "{}", "{\"fn\":7}", "{\"fn\":\"nope\"}", "\"fn\"",
				"{\"fn\":\"getStatus\"} x"};
	for (size_t i = 0; i < sizeof silent / sizeof *silent; i++)
		CHECK_INT(calls(&s, silent[i], &r), 1);
	/* and the server is fine afterwards */
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.bad_frame, 4);
	CHECK_INT(s.st.too_big, 1);
	CHECK_INT(s.st.bad_json, 6);
	CHECK_INT(s.st.unknown_fn, 1);
	CHECK_INT(s.st.silent, 7);
	CHECK_INT(s.st.answered, 1);
	registry_free(&s.reg);
}

TEST(rpc_type_errors_as_upstream)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	struct reg_delivery d;
	int32_t a[] = {123, 1}, b[] = {456, 1};
	registry_poll(&s.reg, 10, a, 2, 2, fake_now(), &d);
	registry_poll(&s.reg, 10, b, 2, 2, fake_now(), &d);
	srv_run(&s);
	struct buf r = BUF_INIT;
	REQUIRE(calls(&s, "{\"fn\":\"setKinetOnDemandRequest\",\"job_id\":\"10\",\"pids\":[123],\"config\":\"X=1\"}", &r) ==
		0);
	CHECK(strstr(r.data, "json.exception") != NULL);
	CHECK_STR(r.data, "{\"status\":\"failed with exception = [json.exception.type_error.302] type must be number, "
			  "but is string\"}");
	REQUIRE(calls(&s, "{\"fn\":\"setKinetOnDemandRequest\",\"job_id\":10,\"config\":\"X=1\"}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":\"failed\"}");
	REQUIRE(calls(&s, "{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[1]}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":\"failed\"}");
	const char *typed[] = {
		"{\"fn\":\"setKinetOnDemandRequest\",\"pids\":\"1,2\",\"config\":\"X=1\"}",
		"{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[1,\"2\"],\"config\":\"X=1\"}",
		"{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[1],\"config\":5}",
		"{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[1],\"config\":\"X\",\"process_limit\":null}",
		"{\"fn\":\"dcgmProfPause\",\"duration_s\":\"300\"}",
	};
	for (size_t i = 0; i < sizeof typed / sizeof *typed; i++) {
		REQUIRE(calls(&s, typed[i], &r) == 0);
		CHECK(strstr(r.data, "failed with exception = [json.exception.type_error.302]") != NULL);
	}
	/* conformance item 3: the good request reaches the registry as given;
	 * floats truncate, job ids wrap to int32 (4294967306 -> 10) */
	REQUIRE(calls(&s, "{\"fn\":\"setKinetOnDemandRequest\",\"job_id\":4294967306,\"pids\":[123,456.9],"
			  "\"process_limit\":42,\"config\":\"TEST_CONFIG_STRING\"}",
		      &r) == 0);
	CHECK_STR(r.data, "{\"activityProfilersBusy\":0,\"activityProfilersTriggered\":[123,456],\"eventProfilersBusy\":0,"
			  "\"eventProfilersTriggered\":[],\"processesMatched\":[123,456]}");
	/* unknown job: empty arrays */
	REQUIRE(calls(&s, "{\"fn\":\"setKinetOnDemandRequest\",\"job_id\":11,\"pids\":[],\"config\":\"X=1\"}", &r) == 0);
	CHECK_STR(r.data, "{\"activityProfilersBusy\":0,\"activityProfilersTriggered\":[],\"eventProfilersBusy\":0,"
			  "\"eventProfilersTriggered\":[],\"processesMatched\":[]}");
	buf_free(&r);
	srv_stop(&s);
	registry_free(&s.reg);
}

TEST(rpc_silent_client_does_not_block_and_times_out)
{
	struct srv s;
	struct rpc_opts o = {.timeout_ms = 1500};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf err = BUF_INIT;
	int slow = net_connect_tcp("::1", s.port, 2000, &err);
	REQUIRE(slow >= 0);
	REQUIRE(write(slow, "\x20\x00", 2) == 2); /* half a length prefix, then nothing */
	struct buf r = BUF_INIT;
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	/* served while the slow one is still waiting (not closed yet) */
	struct pollfd p = {.fd = slow, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0);
	char c;
	CHECK(poll(&p, 1, 10000) == 1);
	CHECK(read(slow, &c, 1) == 0); /* then closed by its deadline, no answer */
	close(slow);
	buf_free(&r);
	buf_free(&err);
	srv_stop(&s);
	CHECK_INT(s.st.timeouts, 1);
	CHECK_INT(s.st.answered, 1);
	registry_free(&s.reg);
}

TEST(rpc_allow_list)
{
	struct srv s;
	struct rpc_opts o = {.bind = "::", .allow = "10.0.0.0/8,fd00::/8"};
	srv_init(&s, &o, "");
	srv_run(&s);
	CHECK_INT(raw(&s, "\x12\0\0\0{\"fn\":\"getStatus\"}", 22, false), 0);
	srv_stop(&s);
	CHECK_INT(s.st.refused_peer, 1);
	CHECK_INT(s.st.answered, 0);
	registry_free(&s.reg);

	struct rpc_opts o2 = {.bind = "::", .allow = "127.0.0.0/8,::1"};
	srv_init(&s, &o2, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	CHECK_INT(call(&s, "127.0.0.1", "{\"fn\":\"getStatus\"}", 18, &r), 0); /* v4-mapped peer */
	CHECK_INT(call(&s, "::1", "{\"fn\":\"getStatus\"}", 18, &r), 0);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.refused_peer, 0);
	registry_free(&s.reg);
}

TEST(rpc_token_required)
{
	struct srv s;
	struct rpc_opts o = {.token = "s3cret-token-value"};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	REQUIRE(calls(&s, "{\"fn\":\"getStatus\"}", &r) == 0);
	CHECK(strstr(r.data, "unauthorized") != NULL);
	REQUIRE(calls(&s, "{\"fn\":\"getStatus\",\"token\":\"s3cret-token-valuf\"}", &r) == 0);
	CHECK(strstr(r.data, "unauthorized") != NULL);
	REQUIRE(calls(&s, "{\"fn\":\"getStatus\",\"token\":\"s3cret-token-value\"}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":1}");
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.unauthorized, 2);
	registry_free(&s.reg);
}

TEST(rpc_trace_path_policy)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "/tmp/allowed,/data/traces/");
	struct reg_delivery d;
	int32_t pid = 99;
	registry_poll(&s.reg, 0, &pid, 1, 2, fake_now(), &d);
	srv_run(&s);
	struct buf r = BUF_INIT;
	const char *refused[] = {
		"ACTIVITIES_LOG_FILE=/etc/cron.d/x.json",
		"ACTIVITIES_LOG_FILE=/tmp/allowed/../../etc/x.json",
		"ACTIVITIES_LOG_FILE=relative.json",
		"ACTIVITIES_DURATION_MSECS=500", /* Kineto's default /tmp/libkineto_activities_<pid>.json */
		"ACTIVITIES_LOG_FILE=/tmp/allowed/a.json\\nACTIVITIES_LOG_FILE=/root/b.json",
		"ACTIVITIES_LOG_FILE = /tmp/allowedX/a.json",
		"ACTIVITIES_LOG_FILE=/data/traces/a.json\\nPROFILE_MEMORY=true",
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		struct buf q = BUF_INIT;
		buf_printf(&q, "{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[0],\"config\":\"%s\"}", refused[i]);
		REQUIRE(calls(&s, q.data, &r) == 0);
		CHECK(strncmp(r.data, "{\"error\":\"", 10) == 0);
		CHECK(strstr(r.data, "\"status\":\"failed\"") != NULL);
		buf_free(&q);
	}
	REQUIRE(calls(&s, "{\"fn\":\"setKinetOnDemandRequest\",\"pids\":[0],\"config\":"
			  "\"ACTIVITIES_LOG_FILE=/tmp/allowed/a.json # comment\\nACTIVITIES_DURATION_MSECS=100\"}",
		      &r) == 0);
	CHECK(strstr(r.data, "\"activityProfilersTriggered\":[99]") != NULL);
	buf_free(&r);
	srv_stop(&s);
	registry_free(&s.reg);
}

static bool fake_metrics(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)ud;
	int64_t since;
	if (json_get(req, "since_s") && !json_get_i64(req, "since_s", &since)) {
		buf_puts(resp, "{\"error\":\"since_s must be an integer\"}");
		return true;
	}
	buf_puts(resp, "{\"interval_s\":1,\"metrics\":{},\"window_s\":60}");
	return true;
}

static bool override_status(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)req;
	(void)ud;
	buf_puts(resp, "{\"status\":0}");
	return true;
}

TEST(rpc_register_fn_hook_adds_and_overrides)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	rpc_register_fn(s.rpc, "getMetrics", fake_metrics, NULL);
	rpc_register_fn(s.rpc, "getStatus", override_status, NULL);
	srv_run(&s);
	struct buf r = BUF_INIT;
	REQUIRE(calls(&s, "{\"fn\":\"getMetrics\"}", &r) == 0);
	CHECK_STR(r.data, "{\"interval_s\":1,\"metrics\":{},\"window_s\":60}");
	REQUIRE(calls(&s, "{\"fn\":\"getMetrics\",\"since_s\":\"x\"}", &r) == 0);
	CHECK(strstr(r.data, "error") != NULL);
	REQUIRE(calls(&s, "{\"fn\":\"getStatus\"}", &r) == 0);
	CHECK_STR(r.data, "{\"status\":0}");
	buf_free(&r);
	srv_stop(&s);
	registry_free(&s.reg);
}

TEST(rpc_many_parallel_connections)
{
	struct srv s;
	struct rpc_opts o = {.max_conns = 8};
	srv_init(&s, &o, "");
	srv_run(&s);
	/* 50 connections open at once, more than max_conns: all get answers */
	enum { N = 50 };
	int fds[N];
	struct buf err = BUF_INIT, out = BUF_INIT;
	net_frame_put(&out, "{\"fn\":\"getStatus\"}", 18);
	for (int i = 0; i < N; i++) {
		fds[i] = net_connect_tcp("::1", s.port, 2000, &err);
		REQUIRE(fds[i] >= 0);
		REQUIRE(write(fds[i], out.data, out.len) == (ssize_t)out.len);
	}
	int ok = 0;
	for (int i = 0; i < N; i++) {
		char tmp[64];
		ssize_t got = 0, r;
		while ((r = read(fds[i], tmp + got, sizeof tmp - (size_t)got)) > 0)
			got += r;
		ok += got == 16 && memcmp(tmp + 4, "{\"status\":1}", 12) == 0;
		close(fds[i]);
	}
	CHECK_INT(ok, N);
	buf_free(&err);
	buf_free(&out);
	srv_stop(&s);
	registry_free(&s.reg);
}

TEST(rpc_full_of_silent_clients_evicts_the_oldest)
{
	struct srv s;
	struct rpc_opts o = {.max_conns = 4, .timeout_ms = 10000};
	/* (the only time bound below is half the timeout it rules out) */
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf err = BUF_INIT, r = BUF_INIT;
	int idle[6];
	for (int i = 0; i < 6; i++) {
		idle[i] = net_connect_tcp("::1", s.port, 2000, &err);
		REQUIRE(idle[i] >= 0);
		REQUIRE(write(idle[i], "\x10", 1) == 1); /* a third of a prefix */
	}
	usleep(100000);
	int64_t t0 = clock_mono_ns();
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	CHECK(clock_mono_ns() - t0 < 5000 * NS_PER_MS); /* not after the 10 s timeout */
	/* the two oldest idle ones were dropped first */
	char c;
	struct pollfd p = {.fd = idle[0], .events = POLLIN};
	CHECK(poll(&p, 1, 1000) == 1 && read(idle[0], &c, 1) == 0);
	for (int i = 0; i < 6; i++)
		close(idle[i]);
	buf_free(&err);
	buf_free(&r);
	srv_stop(&s);
	CHECK(s.st.evicted >= 3);
	CHECK_INT(s.st.answered, 1);
	registry_free(&s.reg);
}

/* ---- keep-alive extension ("keepalive": true) ---- */

static int ka_connect(struct srv *s)
{
	struct buf err = BUF_INIT;
	int fd = net_connect_tcp("::1", s->port, 2000, &err);
	buf_free(&err);
	REQUIRE(fd >= 0);
	return fd;
}

static void send_frames(int fd, const char *const *bodies, size_t n)
{
	struct buf out = BUF_INIT;
	for (size_t i = 0; i < n; i++)
		net_frame_put(&out, bodies[i], strlen(bodies[i]));
	REQUIRE(write(fd, out.data, out.len) == (ssize_t)out.len);
	buf_free(&out);
}

/* One answer frame as upstream dyno reads it: 0 with the body, 1 at a
 * clean EOF before any byte, -1 otherwise. */
static int read_answer(int fd, struct buf *body)
{
	int32_t len;
	ssize_t r = sock_read_n(fd, &len, 4, 3000);
	if (r == 0)
		return 1;
	if (r != 4 || len <= 0 || len > (1 << 26))
		return -1;
	buf_reset(body);
	buf_reserve(body, (size_t)len + 1);
	if (sock_read_n(fd, body->data, (size_t)len, 3000) != len)
		return -1;
	body->len = (size_t)len;
	body->data[len] = 0;
	return 0;
}

/* The server closed cleanly (FIN, no reset) within 3 s. */
static bool closed_cleanly(int fd)
{
	char c;
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	return poll(&pf, 1, 3000) == 1 && read(fd, &c, 1) == 0;
}

#define KA_STATUS "{\"fn\":\"getStatus\",\"keepalive\":true}"

TEST(rpc_keepalive_several_requests_on_one_connection)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	int32_t pid = 4242;
	struct reg_delivery d;
	registry_poll(&s.reg, 0, &pid, 1, 2, fake_now(), &d);
	srv_run(&s);
	int fd = ka_connect(&s);
	struct buf r = BUF_INIT;
	for (int i = 0; i < 5; i++) {
		const char *b[] = {KA_STATUS};
		send_frames(fd, b, 1);
		REQUIRE(read_answer(fd, &r) == 0);
		CHECK_STR(r.data, "{\"status\":1}"); /* the same bytes as without the extension */
	}
	const char *tr[] = {"{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=/tmp/k.json\","
			    "\"pids\":[0],\"keepalive\":true}"};
	send_frames(fd, tr, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK_STR(r.data, "{\"activityProfilersBusy\":0,\"activityProfilersTriggered\":[4242],\"eventProfilersBusy\":0,"
			  "\"eventProfilersTriggered\":[],\"processesMatched\":[4242]}");
	/* a request without "keepalive" is the last: answered, then EOF */
	const char *last[] = {"{\"fn\":\"getVersion\"}"};
	send_frames(fd, last, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK(strncmp(r.data, "{\"version\":\"", 12) == 0);
	CHECK(closed_cleanly(fd));
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.accepted, 1);
	CHECK_INT(s.st.answered, 7);
	CHECK_INT(s.st.reused, 6);
	CHECK_INT(s.st.bad_frame, 0);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_connection_in_the_only_slot_is_not_evicted_by_its_own_accept)
{
	struct srv s;
	struct rpc_opts o = {.max_conns = 1};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	int fd = ka_connect(&s);
	for (int i = 0; i < 3; i++) {
		send_frames(fd, (const char *[]){KA_STATUS}, 1);
		REQUIRE(read_answer(fd, &r) == 0);
		CHECK_STR(r.data, "{\"status\":1}");
		usleep(50000);
	}
	/* a newcomer takes the slot: the idle kept-open connection goes */
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	CHECK(closed_cleanly(fd));
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.evicted, 1);
	CHECK_INT(s.st.answered, 4);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_only_for_json_true_and_answered_requests)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	/* anything but JSON true: upstream behaviour, answer then close */
	const char *not_true[] = {"{\"fn\":\"getStatus\",\"keepalive\":false}",
				  "{\"fn\":\"getStatus\",\"keepalive\":1}",
				  "{\"fn\":\"getStatus\",\"keepalive\":\"true\"}",
				  "{\"fn\":\"getStatus\",\"keepalive\":null}",
				  "{\"fn\":\"getStatus\",\"keepalive\":[true]}",
				  "{\"fn\":\"getStatus\",\"Keepalive\":true}"};
	for (size_t i = 0; i < sizeof not_true / sizeof *not_true; i++) {
		int fd = ka_connect(&s);
		send_frames(fd, &not_true[i], 1);
		CHECK(read_answer(fd, &r) == 0);
		CHECK_STR(r.data, "{\"status\":1}");
		CHECK(closed_cleanly(fd));
		close(fd);
	}
	/* silent errors still close without a byte */
	const char *silent[] = {"{\"fn\":\"nope\",\"keepalive\":true}", "{\"keepalive\":true}",
				"[{\"fn\":\"getStatus\",\"keepalive\":true}]"};
	for (size_t i = 0; i < sizeof silent / sizeof *silent; i++) {
		int fd = ka_connect(&s);
		send_frames(fd, &silent[i], 1);
		CHECK(read_answer(fd, &r) == 1);
		close(fd);
	}
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.answered, 6);
	CHECK_INT(s.st.reused, 0);
	CHECK_INT(s.st.silent, 3);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_needs_the_token_on_every_request)
{
	struct srv s;
	struct rpc_opts o = {.token = "tok-1234567890"};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	int fd = ka_connect(&s);
	const char *ok[] = {"{\"fn\":\"getStatus\",\"keepalive\":true,\"token\":\"tok-1234567890\"}"};
	send_frames(fd, ok, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK_STR(r.data, "{\"status\":1}");
	/* refused: answered with the reason and closed, keep-alive or not */
	send_frames(fd, (const char *[]){KA_STATUS}, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK(strstr(r.data, "unauthorized") != NULL);
	CHECK(closed_cleanly(fd));
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.unauthorized, 1);
	CHECK_INT(s.st.answered, 2);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_pipelined_requests_answered_in_order)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	srv_run(&s);
	int fd = ka_connect(&s);
	/* three requests in one write; the last one ends the connection */
	const char *b[] = {KA_STATUS, "{\"fn\":\"getVersion\",\"keepalive\":true}", "{\"fn\":\"dcgmProfResume\"}"};
	send_frames(fd, b, 3);
	struct buf r = BUF_INIT;
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK_STR(r.data, "{\"status\":1}");
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK(strncmp(r.data, "{\"version\":", 11) == 0);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK_STR(r.data, "{\"status\":false}");
	CHECK(closed_cleanly(fd));
	close(fd);
	/* without the extension, bytes past the first frame are dropped, as
	 * upstream: one answer, then a clean close (no reset losing it) */
	fd = ka_connect(&s);
	const char *two[] = {"{\"fn\":\"getStatus\"}", "{\"fn\":\"getVersion\"}"};
	send_frames(fd, two, 2);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK_STR(r.data, "{\"status\":1}");
	CHECK(read_answer(fd, &r) == 1);
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.answered, 4);
	CHECK_INT(s.st.reused, 2);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_request_limit_boundaries)
{
	struct buf r = BUF_INIT;
	/* max_requests = 3: the third answer comes with the close; = 1: the
	 * extension is off */
	for (uint32_t max = 1; max <= 3; max += 2) {
		struct srv s;
		struct rpc_opts o = {.max_requests = max};
		srv_init(&s, &o, "");
		srv_run(&s);
		int fd = ka_connect(&s);
		for (uint32_t i = 0; i < max; i++) {
			send_frames(fd, (const char *[]){KA_STATUS}, 1);
			REQUIRE(read_answer(fd, &r) == 0);
			CHECK_STR(r.data, "{\"status\":1}");
		}
		CHECK(closed_cleanly(fd));
		close(fd);
		/* pipelined past the limit: `max` answers, then a clean EOF, not
		 * a reset (the server reads until the client closes) */
		fd = ka_connect(&s);
		const char *five[] = {KA_STATUS, KA_STATUS, KA_STATUS, KA_STATUS, KA_STATUS};
		send_frames(fd, five, 5);
		for (uint32_t i = 0; i < max; i++) {
			REQUIRE(read_answer(fd, &r) == 0);
			CHECK_STR(r.data, "{\"status\":1}");
		}
		CHECK(read_answer(fd, &r) == 1);
		close(fd);
		srv_stop(&s);
		CHECK_INT(s.st.answered, 2 * max);
		CHECK_INT(s.st.request_limit, 2);
		CHECK_INT(s.st.reused, 2 * (max - 1));
		registry_free(&s.reg);
	}
	buf_free(&r);
}

TEST(rpc_keepalive_lingering_connection_closes_at_client_eof)
{
	struct srv s;
	struct rpc_opts o = {.max_requests = 2, .max_conns = 1, .timeout_ms = 20000};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	int fd = ka_connect(&s);
	const char *three[] = {KA_STATUS, KA_STATUS, KA_STATUS};
	send_frames(fd, three, 3);
	REQUIRE(read_answer(fd, &r) == 0);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK(read_answer(fd, &r) == 1);
	/* the server lingers (reading) until this close ... */
	close(fd);
	usleep(200000);
	/* ... also when the extra request comes after the server's last answer
	 * went out (a closed socket would answer it with a reset) */
	fd = ka_connect(&s);
	send_frames(fd, (const char *[]){KA_STATUS}, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	send_frames(fd, (const char *[]){KA_STATUS}, 1);
	usleep(100000); /* answered and shut for writing by now */
	send_frames(fd, (const char *[]){KA_STATUS}, 1);
	usleep(100000);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK(read_answer(fd, &r) == 1); /* a clean EOF, not ECONNRESET */
	close(fd);
	usleep(200000);
	/* ... and then frees the only slot: no eviction for the next client */
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.evicted, 0);
	CHECK_INT(s.st.timeouts, 0);
	CHECK_INT(s.st.answered, 5);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_idle_timeout_and_refresh)
{
	struct srv s;
	struct rpc_opts o = {.timeout_ms = 1000};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	int fd = ka_connect(&s);
	/* each answer restarts the idle deadline: requests 600 ms apart go on
	 * past the 1 s timeout counted from the first */
	for (int i = 0; i < 3; i++) {
		if (i)
			usleep(600000);
		send_frames(fd, (const char *[]){KA_STATUS}, 1);
		REQUIRE(read_answer(fd, &r) == 0);
		CHECK_STR(r.data, "{\"status\":1}");
	}
	/* then silence: the server closes it (no answer pending) */
	int64_t t0 = clock_mono_ns();
	char c;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CHECK(poll(&p, 1, 10000) == 1 && read(fd, &c, 1) == 0);
	CHECK(clock_mono_ns() - t0 >= 500 * NS_PER_MS); /* not before half the timeout */
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.timeouts, 1);
	CHECK_INT(s.st.answered, 3);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_second_request_cut_mid_frame)
{
	struct srv s;
	struct rpc_opts o = {.timeout_ms = 5000};
	srv_init(&s, &o, "");
	srv_run(&s);
	struct buf r = BUF_INIT;
	/* cut in the length prefix, then in the body */
	for (int cut = 2; cut <= 10; cut += 8) {
		int fd = ka_connect(&s);
		send_frames(fd, (const char *[]){KA_STATUS}, 1);
		REQUIRE(read_answer(fd, &r) == 0);
		struct buf f = BUF_INIT;
		net_frame_put(&f, KA_STATUS, strlen(KA_STATUS));
		REQUIRE(write(fd, f.data, (size_t)cut) == cut);
		buf_free(&f);
		shutdown(fd, SHUT_WR);
		CHECK(read_answer(fd, &r) == 1); /* closed, nothing more */
		close(fd);
	}
	/* a keep-alive client that closes between requests is no error */
	int fd = ka_connect(&s);
	send_frames(fd, (const char *[]){KA_STATUS}, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	close(fd);
	usleep(100000);
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.bad_frame, 2);
	CHECK_INT(s.st.answered, 4);
	CHECK_INT(s.st.timeouts, 0);
	registry_free(&s.reg);
}

TEST(rpc_keepalive_big_answer_waits_for_the_socket_then_goes_on)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	s.h.max_processes = 20000; /* every one: a 1.2 MB answer */
	struct reg_delivery d;
	for (int i = 0; i < 20000; i++) {
		int32_t anc[] = {200000 + i, 7000 + i / 16, 4000};
		registry_poll(&s.reg, 0, anc, 3, 2, fake_now(), &d);
	}
	srv_run(&s);
	struct buf r = BUF_INIT;
	int fd = ka_connect(&s);
	send_frames(fd, (const char *[]){"{\"fn\":\"getProcesses\",\"keepalive\":true}"}, 1);
	usleep(200000); /* the server meets a full socket and waits for EPOLLOUT */
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK(r.len > 1000000);
	CHECK(strncmp(r.data, "{\"count\":20000,", 15) == 0);
	CHECK(r.data[r.len - 1] == '}');
	send_frames(fd, (const char *[]){"{\"fn\":\"getStatus\"}"}, 1);
	REQUIRE(read_answer(fd, &r) == 0);
	CHECK_STR(r.data, "{\"status\":1}");
	CHECK(closed_cleanly(fd));
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.answered, 2);
	CHECK_INT(s.st.write_failed, 0);
	registry_free(&s.reg);
}

/* A big answer still in the server's send queue when the client sends more
 * bytes: a plain close() would reset the connection and drop the queued
 * rest of the answer; the server shuts for writing and reads until the
 * client closes.  With and without keep-alive (at the request limit). */
TEST(rpc_big_answer_not_lost_when_client_sends_more)
{
	const char *req[] = {"{\"fn\":\"getProcesses\"}", "{\"fn\":\"getProcesses\",\"keepalive\":true}"};
	for (int k = 0; k < 2; k++) {
		struct srv s;
		struct rpc_opts o = {.max_requests = 1};
		srv_init(&s, &o, "");
		s.h.max_processes = 20000; /* every one: a 1.2 MB answer */
		struct reg_delivery d;
		for (int i = 0; i < 20000; i++) {
			int32_t anc[] = {200000 + i, 7000 + i / 16, 4000};
			registry_poll(&s.reg, 0, anc, 3, 2, fake_now(), &d);
		}
		srv_run(&s);
		int fd = ka_connect(&s);
		send_frames(fd, &req[k], 1);
		usleep(100000); /* the server fills the socket and waits */
		send_frames(fd, (const char *[]){KA_STATUS}, 1);
		struct buf r = BUF_INIT;
		/* read slowly, so the end of the answer is still queued on the
		 * server when it has written it all */
		usleep(100000);
		REQUIRE(read_answer(fd, &r) == 0);
		CHECK(r.len > 1000000);
		CHECK(strncmp(r.data, "{\"count\":20000,", 15) == 0);
		CHECK(r.data[r.len - 1] == '}');
		CHECK(read_answer(fd, &r) == 1);
		close(fd);
		buf_free(&r);
		srv_stop(&s);
		CHECK_INT(s.st.answered, 1);
		registry_free(&s.reg);
	}
}

/* ---- memory bounds: clients that do not read ---- */

static bool big_answer(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)req;
	size_t n = *(size_t *)ud;
	buf_puts(resp, "{\"x\":\"");
	buf_reserve(resp, resp->len + n + 3);
	memset(resp->data + resp->len, 'a', n);
	resp->len += n;
	buf_puts(resp, "\"}");
	return true;
}

/* A client with a tiny receive buffer: the server's kernel takes at most
 * its send buffer (<= 4 MiB by default) of an answer. */
static int slow_reader(struct srv *s)
{
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(fd >= 0);
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)s->port),
				 .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	REQUIRE(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
	return fd;
}

TEST(rpc_unread_answer_over_the_per_connection_cap_is_dropped)
{
	struct srv s;
	struct rpc_opts o = {.max_queued = 1u << 20};
	srv_init(&s, &o, "");
	size_t n = 12u << 20; /* the kernel takes <= 4 MiB: >= 8 MiB would wait here */
	rpc_register_fn(s.rpc, "big", big_answer, &n);
	srv_run(&s);
	int fd = slow_reader(&s);
	send_frames(fd, (const char *[]){"{\"fn\":\"big\"}"}, 1);
	struct buf r = BUF_INIT;
	usleep(300000);
	/* what arrives is cut short: the rest was never kept */
	CHECK(read_answer(fd, &r) == -1);
	close(fd);
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.overflow, 1);
	CHECK(s.st.held_peak <= (1u << 20) + 65536 * 2);
	CHECK_INT(s.st.held, 0);
	registry_free(&s.reg);
}

TEST(rpc_unread_answers_over_the_total_cap_drop_the_oldest)
{
	struct srv s;
	struct rpc_opts o = {.max_queued = 12u << 20, .max_held = 16u << 20};
	srv_init(&s, &o, "");
	size_t n = 10u << 20; /* >= 6 MiB of each stays in the server */
	rpc_register_fn(s.rpc, "big", big_answer, &n);
	srv_run(&s);
	int fd[4];
	for (int i = 0; i < 4; i++) {
		fd[i] = slow_reader(&s);
		send_frames(fd[i], (const char *[]){"{\"fn\":\"big\"}"}, 1);
		usleep(100000);
	}
	/* the first ones were dropped for the later ones: the oldest is gone */
	struct pollfd p = {.fd = fd[0], .events = POLLIN};
	CHECK(poll(&p, 1, 2000) == 1);
	struct buf r = BUF_INIT;
	CHECK(read_answer(fd[0], &r) == -1);
	for (int i = 0; i < 4; i++)
		close(fd[i]);
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	buf_free(&r);
	srv_stop(&s);
	CHECK(s.st.overflow >= 2);
	CHECK(s.st.held_peak <= 16u << 20);
	CHECK_INT(s.st.held, 0);
	registry_free(&s.reg);
}

/* ---- work per wake-up: pipelined and queued requests take turns ---- */

/* A 100 KiB answer that notes the loop wake-up it was built in (written on
 * the loop's thread; `built` is read from the test's while it runs). */
struct turn_rec {
	struct ev_loop *loop;
	size_t size;
	_Atomic size_t built;
	uint64_t wakeup[64];
};

static bool recorded_answer(const struct json_value *req, struct buf *resp, void *ud)
{
	struct turn_rec *t = ud;
	size_t i = t->built;
	if (i < 64)
		t->wakeup[i] = ev_wakeups(t->loop);
	t->built = i + 1;
	return big_answer(req, resp, &t->size);
}

/* The most answers built in one wake-up (wake-up numbers only grow). */
static size_t most_per_wakeup(const struct turn_rec *t)
{
	size_t most = 0, run = 0, n = t->built < 64 ? t->built : 64;
	for (size_t i = 0; i < n; i++) {
		run = i && t->wakeup[i] == t->wakeup[i - 1] ? run + 1 : 1;
		most = run > most ? run : most;
	}
	return most;
}

#define BIG_KA "{\"fn\":\"big\",\"keepalive\":true}"

/* A keep-alive client that pipelines 64 requests for 100 KiB answers and
 * does not read: the server builds the next answer only while less than
 * 128 KiB of the previous ones waits unsent in the kernel (then
 * TCP_NOTSENT_LOWAT and EPOLLOUT), not as many as an autotuned send
 * buffer takes (28 here; ~25 per connection in bench/soak.sh); then the
 * client reads and gets all 64, in order. */
TEST(rpc_pipelined_answers_wait_for_the_client_to_read)
{
	struct srv s;
	struct rpc_opts o = {.turn_bytes = 64u << 20}; /* only the socket bounds it here */
	srv_init(&s, &o, "");
	struct turn_rec t = {.loop = s.loop, .size = 100u << 10};
	rpc_register_fn(s.rpc, "big", recorded_answer, &t);
	srv_run(&s);
	int fd = slow_reader(&s);
	const char *req[64];
	for (int i = 0; i < 64; i++)
		req[i] = i < 63 ? BIG_KA : "{\"fn\":\"big\"}";
	send_frames(fd, req, 64);
	/* a second client, accepted after the first: once it is answered, the
	 * server has done all it would for the first without a read */
	struct buf r = BUF_INIT;
	CHECK_INT(calls(&s, "{\"fn\":\"getStatus\"}", &r), 0);
	size_t ahead = t.built;
	if (ahead < 1 || ahead > 3)
		test_fail(__FILE__, __LINE__, "%zu answers built for a client that read none (want 1-3)", ahead);
	for (int i = 0; i < 64; i++) {
		REQUIRE(read_answer(fd, &r) == 0);
		CHECK_INT(r.len, t.size + 8);
	}
	CHECK(closed_cleanly(fd));
	close(fd);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(t.built, 64);
	CHECK_INT(s.st.answered, 65);
	CHECK_INT(s.st.overflow, 0);
	CHECK_INT(s.st.write_failed, 0);
	registry_free(&s.reg);
}

/* turn_bytes 150 KiB and 100 KiB answers: one wake-up builds at most two.
 * Eight connections queued before the loop runs (the first accept pass
 * takes them all), then one client pipelining 32 requests that reads as
 * it goes (the kernel takes everything: only the turn bounds it).  Before
 * the turn, the accept pass built all eight and the pipeline all 32 in
 * one wake-up (bench/soak.sh: 1,600 answers, 37 MB, 0.4 s of CPU in one
 * callback while the collection tick waited). */
TEST(rpc_one_wakeup_builds_a_bounded_share_of_answers)
{
	struct srv s;
	struct rpc_opts o = {.turn_bytes = 150u << 10};
	srv_init(&s, &o, "");
	struct turn_rec t = {.loop = s.loop, .size = 100u << 10};
	rpc_register_fn(s.rpc, "big", recorded_answer, &t);
	int fd[8];
	for (int i = 0; i < 8; i++) {
		fd[i] = ka_connect(&s);
		send_frames(fd[i], (const char *[]){"{\"fn\":\"big\"}"}, 1);
	}
	srv_run(&s);
	struct buf r = BUF_INIT;
	for (int i = 0; i < 8; i++) {
		REQUIRE(read_answer(fd[i], &r) == 0);
		CHECK_INT(r.len, t.size + 8);
		close(fd[i]);
	}
	/* all eight answered; the accept pass's wake-up built two */
	CHECK_INT(t.built, 8);
	size_t first = 0;
	while (first < 8 && t.wakeup[first] == t.wakeup[0])
		first++;
	CHECK(first <= 2);
	const char *req[32];
	for (int i = 0; i < 32; i++)
		req[i] = i < 31 ? BIG_KA : "{\"fn\":\"big\"}";
	int p = ka_connect(&s);
	send_frames(p, req, 32);
	for (int i = 0; i < 32; i++) {
		REQUIRE(read_answer(p, &r) == 0);
		CHECK_INT(r.len, t.size + 8);
	}
	CHECK(closed_cleanly(p));
	close(p);
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(t.built, 40);
	if (most_per_wakeup(&t) > 2)
		test_fail(__FILE__, __LINE__, "%zu answers of 100 KiB built in one wake-up (turn 150 KiB)",
			  most_per_wakeup(&t));
	/* at least six accepted connections and 15 pipelined requests waited */
	CHECK(s.st.yields >= 6 + 15);
	CHECK(s.st.turn_peak <= 2 * (t.size + 8));
	CHECK_INT(s.st.answered, 40);
	registry_free(&s.reg);
}

/* An accept pass serves new connections at once only for
 * accept_serve_ns (here 1 ns: the first one only); the others are
 * accepted and served in callbacks of their own, each answered.  Before,
 * a pass served every one it accepted, up to 64 (bench/soak.sh: 20-25 ms
 * of CPU in one callback under connection churn, while a Kineto poll
 * waited). */
TEST(rpc_accept_pass_serves_at_once_for_a_bounded_time)
{
	struct srv s;
	struct rpc_opts o = {.accept_serve_ns = 1};
	srv_init(&s, &o, "");
	int fd[8];
	for (int i = 0; i < 8; i++) {
		fd[i] = ka_connect(&s);
		send_frames(fd[i], (const char *[]){"{\"fn\":\"getStatus\"}"}, 1);
	}
	srv_run(&s);
	struct buf r = BUF_INIT;
	for (int i = 0; i < 8; i++) {
		REQUIRE(read_answer(fd[i], &r) == 0);
		CHECK_STR(r.data, "{\"status\":1}");
		close(fd[i]);
	}
	buf_free(&r);
	srv_stop(&s);
	CHECK_INT(s.st.answered, 8);
	/* the accept pass (or passes) served the first connection of each
	 * pass; at least seven of the eight waited for their own callback */
	if (s.st.yields < 7)
		test_fail(__FILE__, __LINE__, "%llu of 8 connections left to their own callback (want >= 7)",
			  (unsigned long long)s.st.yields);
	registry_free(&s.reg);
}

TEST(rpc_get_processes_is_capped_and_says_so)
{
	struct srv s;
	struct rpc_opts o = {0};
	srv_init(&s, &o, "");
	struct reg_delivery d;
	for (int i = 0; i < RPC_PROCESSES_MAX + 5; i++) {
		int32_t anc[] = {300000 + i, 4000};
		registry_poll(&s.reg, 0, anc, 2, 2, fake_now(), &d);
	}
	srv_run(&s);
	struct buf r = BUF_INIT;
	REQUIRE(calls(&s, "{\"fn\":\"getProcesses\"}", &r) == 0);
	char want[64];
	snprintf(want, sizeof want, "{\"count\":%d,\"processes\":[{", RPC_PROCESSES_MAX + 5);
	CHECK(strncmp(r.data, want, strlen(want)) == 0);
	CHECK(r.len > 20 && strcmp(r.data + r.len - 20, "}],\"truncated\":true}") == 0);
	size_t listed = 0;
	for (const char *p = r.data; (p = strstr(p, "\"jobId\"")); p++)
		listed++;
	CHECK_INT(listed, RPC_PROCESSES_MAX);
	buf_free(&r);
	srv_stop(&s);
	registry_free(&s.reg);
}
