/*
 * test_otlp.c - the OTLP sink against a real receiver of ours on loopback
 * (a forked child speaking minimal HTTP/1.1): payload shape, retry with
 * backoff on 503/429, rejection on 400, drop-oldest when the queue is full,
 * and a dead or silent receiver never blocking the caller.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/loop.h"
#include "daemon/publish/otlp.h"
#include "test.h"

static int listen_any(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) != 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* The receiver: answers each request with the next status of statuses[],
 * saving the body to <tmp>/body<N>.json.  Exits after n requests. */
static void receiver(int lfd, const int *statuses, int n)
{
	for (int i = 0; i < n; i++) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			_exit(1);
		char buf[1 << 16];
		size_t len = 0;
		char *body = NULL;
		long clen = -1;
		for (;;) {
			ssize_t r = recv(c, buf + len, sizeof buf - 1 - len, 0);
			if (r <= 0)
				break;
			len += (size_t)r;
			buf[len] = 0;
			char *e = strstr(buf, "\r\n\r\n");
			if (e && clen < 0) {
				char *cl = strcasestr(buf, "Content-Length:");
				clen = cl ? strtol(cl + 15, NULL, 10) : 0;
				body = e + 4;
			}
			if (body && (long)(len - (size_t)(body - buf)) >= clen)
				break;
		}
		if (body) {
			char path[512];
			snprintf(path, sizeof path, "%s/body%d.json", test_tmpdir(), i);
			FILE *f = fopen(path, "w");
			if (f) {
				fwrite(body, 1, (size_t)clen, f);
				fclose(f);
			}
		}
		char resp[256];
		int st = statuses[i];
		int rl = snprintf(resp, sizeof resp,
				  "HTTP/1.1 %d X\r\nContent-Length: 2\r\nConnection: close\r\n%s\r\n{}", st,
				  st == 429 ? "Retry-After: 1\r\n" : "");
		send(c, resp, (size_t)rl, MSG_NOSIGNAL);
		close(c);
	}
	_exit(0);
}

struct ctx {
	struct otlp_sink *s;
	uint64_t want_sent;
	int64_t deadline;
};

static void on_check(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)t;
	struct ctx *c = ud;
	struct otlp_stats st;
	otlp_get_stats(c->s, &st);
	if ((st.sent + st.rejected >= c->want_sent && st.queued == 0) || clock_mono_ns() > c->deadline)
		ev_stop(l);
}

static void frame_for(struct frame *f, int i)
{
	frame_reset(f, (int64_t)(1700000000 + i) * NS_PER_SEC);
	frame_uint(f, "rx_bytes.eth0", 100 + (uint64_t)i);
	frame_float(f, "cpu_util", 50);
	frame_uint(f, "proc_rss_bytes.42", 4096);
	frame_str(f, "proc_job_id.42", "777");
	frame_float(f, "gpu_temp.0", 60);
}

static const struct json_value *metric(const struct json_value *root, const char *name)
{
	const struct json_value *rm = json_get(root, "resourceMetrics");
	if (!rm || rm->type != JV_ARRAY || !rm->len)
		return NULL;
	const struct json_value *sm = json_get(&rm->u.items[0], "scopeMetrics");
	if (!sm || sm->type != JV_ARRAY || !sm->len)
		return NULL;
	const struct json_value *ms = json_get(&sm->u.items[0], "metrics");
	for (uint32_t i = 0; ms && i < ms->len; i++) {
		const char *n;
		if (json_get_str(&ms->u.items[i], "name", &n, NULL) && strcmp(n, name) == 0)
			return &ms->u.items[i];
	}
	return NULL;
}

static bool has_attr(const struct json_value *dp, const char *k, const char *v)
{
	const struct json_value *a = json_get(dp, "attributes");
	for (uint32_t i = 0; a && i < a->len; i++) {
		const char *kk, *vv;
		const struct json_value *val = json_get(&a->u.items[i], "value");
		if (json_get_str(&a->u.items[i], "key", &kk, NULL) && strcmp(kk, k) == 0 && val &&
		    json_get_str(val, "stringValue", &vv, NULL) && strcmp(vv, v) == 0)
			return true;
	}
	return false;
}

TEST(otlp_retry_then_deliver_in_order)
{
	int port, lfd = listen_any(&port);
	REQUIRE(lfd >= 0);
	static const int statuses[] = {503, 429, 200, 400, 200};
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		receiver(lfd, statuses, 5);
	close(lfd);
	struct ev_loop *l = ev_loop_new();
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct otlp_options o = {.endpoint = url, .service_name = "svc", .timeout_ms = 5000, .max_queue = 10,
				 .backoff_initial_ms = 50, .backoff_max_ms = 200};
	struct buf err = BUF_INIT;
	struct otlp_sink *s = otlp_new(l, &o, &err);
	REQUIRE(s);
	struct frame f;
	frame_init(&f);
	for (int i = 0; i < 3; i++) {
		frame_for(&f, i);
		int64_t t0 = clock_mono_ns();
		otlp_publish(s, 0, &f);
		CHECK(clock_mono_ns() - t0 < 50 * NS_PER_MS); /* never blocks */
	}
	struct ctx c = {s, 3, clock_mono_ns() + 15 * NS_PER_SEC};
	ev_timer_add(l, 1, 20 * NS_PER_MS, on_check, &c);
	ev_run(l);
	struct otlp_stats st;
	otlp_get_stats(s, &st);
	CHECK_INT(st.sent, 2);
	CHECK_INT(st.rejected, 1); /* the 400 */
	CHECK_INT(st.retries, 2);  /* 503, 429 */
	CHECK_INT(st.queued, 0);
	int wst;
	CHECK(waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);

	/* bodies 0..2 are the same first payload (retries resend the same bytes) */
	struct buf b[5];
	for (int i = 0; i < 5; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/body%d.json", test_tmpdir(), i);
		buf_init(&b[i]);
		FILE *fp = fopen(path, "r");
		REQUIRE(fp);
		char tmp[4096];
		size_t n;
		while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
			buf_append(&b[i], tmp, n);
		fclose(fp);
	}
	CHECK_STR(b[0].data, b[1].data);
	CHECK_STR(b[0].data, b[2].data);
	CHECK(strcmp(b[2].data, b[3].data) != 0);
	struct json_doc d;
	struct json_error je;
	REQUIRE(json_parse(b[4].data, b[4].len, &d, &je));
	const struct json_value *net = metric(d.root, "system.network.io");
	REQUIRE(net);
	const struct json_value *sum = json_get(net, "sum");
	REQUIRE(sum);
	int64_t temporality;
	CHECK(json_get_i64(sum, "aggregationTemporality", &temporality) && temporality == 1);
	const struct json_value *dps = json_get(sum, "dataPoints");
	REQUIRE(dps && dps->len == 1);
	CHECK(has_attr(&dps->u.items[0], "network.interface.name", "eth0"));
	CHECK(has_attr(&dps->u.items[0], "network.io.direction", "receive"));
	CHECK_NEAR(json_value_f64(json_get(&dps->u.items[0], "asDouble")), 102, 1e-12); /* third frame */
	const char *ts;
	CHECK(json_get_str(&dps->u.items[0], "timeUnixNano", &ts, NULL) && strcmp(ts, "1700000002000000000") == 0);
	CHECK(json_get_str(&dps->u.items[0], "startTimeUnixNano", &ts, NULL) && strcmp(ts, "1700000001000000000") == 0);
	const struct json_value *util = metric(d.root, "system.cpu.utilization");
	REQUIRE(util && json_get(util, "gauge"));
	CHECK_NEAR(json_value_f64(json_get(&json_get(json_get(util, "gauge"), "dataPoints")->u.items[0], "asDouble")),
		   0.5, 1e-12);
	const struct json_value *mem = metric(d.root, "process.memory.usage");
	REQUIRE(mem);
	const struct json_value *mdp = &json_get(json_get(mem, "gauge"), "dataPoints")->u.items[0];
	CHECK(has_attr(mdp, "process.pid", "42"));
	CHECK(has_attr(mdp, "slurm.job.id", "777"));
	CHECK(metric(d.root, "dynolog.gpu_temp") != NULL);
	const struct json_value *rm = &json_get(d.root, "resourceMetrics")->u.items[0];
	CHECK(has_attr(json_get(rm, "resource"), "service.name", "svc"));
	json_doc_free(&d);
	for (int i = 0; i < 5; i++)
		buf_free(&b[i]);
	frame_free(&f);
	otlp_free(s);
	buf_free(&err);
	ev_loop_free(l);
}

TEST(otlp_dead_receiver_drops_oldest)
{
	int port, lfd = listen_any(&port);
	REQUIRE(lfd >= 0);
	close(lfd); /* nothing listens there now: connection refused */
	struct ev_loop *l = ev_loop_new();
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
	struct otlp_options o = {.endpoint = url, .timeout_ms = 500, .max_queue = 3, .backoff_initial_ms = 30,
				 .backoff_max_ms = 60};
	struct buf err = BUF_INIT;
	struct otlp_sink *s = otlp_new(l, &o, &err);
	REQUIRE(s);
	struct frame f;
	frame_init(&f);
	for (int i = 0; i < 10; i++) {
		frame_for(&f, i);
		otlp_publish(s, 0, &f);
	}
	struct otlp_stats st;
	otlp_get_stats(s, &st);
	CHECK_INT(st.dropped, 7);
	CHECK_INT(st.queued, 3);
	struct ctx c = {s, 1000, clock_mono_ns() + 400 * NS_PER_MS};
	ev_timer_add(l, 1, 20 * NS_PER_MS, on_check, &c);
	ev_run(l);
	otlp_get_stats(s, &st);
	CHECK(st.failures >= 2); /* retried with backoff, still failing */
	CHECK_INT(st.sent, 0);
	CHECK_INT(st.queued, 3);
	/* both conditions are said (rate-limited), not silent */
	CHECK(strstr(test_stderr(), "otlp: queue full (3 payloads); dropping the oldest") != NULL);
	CHECK(strstr(test_stderr(), "failed: Couldn't connect to server (will retry with backoff)") != NULL);
	frame_free(&f);
	otlp_free(s);
	buf_free(&err);
	ev_loop_free(l);
}

/* A long outage on a big host: the queue holds many payloads of tens of KB
 * each, so a cap in payloads alone lets it grow past the daemon's memory
 * limit.  The bytes are capped too, the oldest dropped and counted. */
TEST(otlp_queue_capped_in_bytes)
{
	int port, lfd = listen_any(&port);
	REQUIRE(lfd >= 0);
	close(lfd); /* connection refused */
	struct frame f;
	frame_init(&f);
	frame_reset(&f, (int64_t)1700000000 * NS_PER_SEC);
	for (int k = 0; k < 500; k++) { /* a payload of ~70 KB, like a host with many CPUs and disks */
		char key[64];
		snprintf(key, sizeof key, "rx_bytes.veth%d", k);
		frame_uint(&f, key, (uint64_t)k);
	}
	struct buf one = BUF_INIT;
	otlp_render(&f, 0, "dynolog", "host", &one);
	size_t len = one.len; /* within a few bytes: the sink's host name differs */
	buf_free(&one);
	REQUIRE(len > 20000);
	struct ev_loop *l = ev_loop_new();
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	/* room for 3.5 payloads (give or take the host name); the payload count
	 * alone would allow 1000 */
	struct otlp_options o = {.endpoint = url, .timeout_ms = 500, .max_queue = 1000,
				 .max_queue_bytes = len * 7 / 2, .backoff_initial_ms = 1000, .backoff_max_ms = 1000};
	struct buf err = BUF_INIT;
	struct otlp_sink *s = otlp_new(l, &o, &err);
	REQUIRE(s);
	for (int i = 0; i < 10; i++) {
		f.wall_ns = (int64_t)(1700000000 + i) * NS_PER_SEC;
		otlp_publish(s, 0, &f);
	}
	struct otlp_stats st;
	otlp_get_stats(s, &st);
	CHECK(st.queued_bytes <= o.max_queue_bytes);
	CHECK_INT(st.queued, 3);
	CHECK_INT(st.dropped, 7);
	/* a payload bigger than the whole cap is dropped (and counted), never queued */
	otlp_free(s);
	o.max_queue_bytes = len / 2;
	s = otlp_new(l, &o, &err);
	REQUIRE(s);
	otlp_publish(s, 0, &f);
	otlp_get_stats(s, &st);
	CHECK_INT(st.queued, 0);
	CHECK_INT(st.queued_bytes, 0);
	CHECK_INT(st.dropped, 1);
	otlp_free(s);
	frame_free(&f);
	buf_free(&err);
	ev_loop_free(l);
}

TEST(otlp_silent_receiver_times_out_without_blocking)
{
	int port, lfd = listen_any(&port); /* listens, never accepts or answers */
	REQUIRE(lfd >= 0);
	struct ev_loop *l = ev_loop_new();
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	struct otlp_options o = {.endpoint = url, .timeout_ms = 200, .max_queue = 2, .backoff_initial_ms = 1000,
				 .backoff_max_ms = 1000};
	struct buf err = BUF_INIT;
	struct otlp_sink *s = otlp_new(l, &o, &err);
	REQUIRE(s);
	struct frame f;
	frame_init(&f);
	frame_for(&f, 0);
	otlp_publish(s, 0, &f);
	struct ctx c = {s, 1000, clock_mono_ns() + 600 * NS_PER_MS};
	ev_timer_add(l, 1, 20 * NS_PER_MS, on_check, &c);
	int64_t t0 = clock_mono_ns();
	ev_run(l);
	CHECK(clock_mono_ns() - t0 < 2 * NS_PER_SEC);
	struct otlp_stats st;
	otlp_get_stats(s, &st);
	CHECK_INT(st.failures, 1); /* the 200 ms timeout */
	CHECK_INT(st.queued, 1);   /* kept for the retry */
	frame_free(&f);
	otlp_free(s);
	buf_free(&err);
	close(lfd);
	ev_loop_free(l);
}

TEST(otlp_bad_endpoint)
{
	struct ev_loop *l = ev_loop_new();
	struct otlp_options o = {.endpoint = "ftp://x"};
	struct buf err = BUF_INIT;
	CHECK(otlp_new(l, &o, &err) == NULL);
	CHECK(strstr(err.data, "ftp://x") != NULL);
	buf_free(&err);
	ev_loop_free(l);
}

/* ---------- end to end: the real dynolog binary pushing to our receiver ---------- */

#include <limits.h>
#include <math.h>
#include <time.h>

static bool dynolog_path(char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return false;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = 0;
	snprintf(out, cap, "%s/dynolog", self); /* built next to unit-tests */
	return access(out, X_OK) == 0;
}

/* Accept one request on lfd (10 s at most), read it into buf (headers,
 * then a body of Content-Length bytes), answer 200; the body, NULL when
 * none came. */
static char *recv_post(int lfd, char *buf, size_t cap, long *clen)
{
	struct timeval tv = {10, 0};
	setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	buf[0] = 0;
	int c = accept(lfd, NULL, NULL);
	if (c < 0)
		return NULL;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	size_t len = 0;
	char *body = NULL;
	*clen = -1;
	for (;;) {
		ssize_t r = recv(c, buf + len, cap - 1 - len, 0);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = 0;
		char *e = strstr(buf, "\r\n\r\n");
		if (e && !body) {
			char *cl = strcasestr(buf, "Content-Length:");
			*clen = cl ? strtol(cl + 15, NULL, 10) : 0;
			body = e + 4;
		}
		if (body && (long)(len - (size_t)(body - buf)) >= *clen)
			break;
	}
	const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
	send(c, ok, sizeof ok - 1, MSG_NOSIGNAL);
	close(c);
	return body;
}

static pid_t spawn_dynolog(const char *bin, char *const *args)
{
	pid_t p = fork();
	if (p == 0) {
		char log[600];
		snprintf(log, sizeof log, "%s/dynolog.log", test_tmpdir());
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, args);
		_exit(127);
	}
	return p;
}

TEST(otlp_end_to_end_real_daemon)
{
	char bin[PATH_MAX + 16];
	REQUIRE(dynolog_path(bin, sizeof bin));
	int port, lfd = listen_any(&port);
	REQUIRE(lfd >= 0);
	char url[80], root[600];
	snprintf(url, sizeof url, "--otlp_endpoint=http://127.0.0.1:%d", port);
	snprintf(root, sizeof root, "--procfs_root=%s/tests/data/procfs/basic/t0/proc", getcwd((char[PATH_MAX]){0}, PATH_MAX));
	char *args[] = {bin, "--port=0", "--use_otlp", url, root, "--use_JSON=false", "--kernel_monitor_reporting_interval_s=1",
			"--otlp_service_name=e2e", NULL};
	pid_t d = spawn_dynolog(bin, args);
	REQUIRE(d > 0);
	static char buf[1 << 17];
	long clen = -1;
	char *body = recv_post(lfd, buf, sizeof buf, &clen);
	CHECK(strncmp(buf, "POST /v1/metrics HTTP/1.1", 25) == 0);
	CHECK(strcasestr(buf, "Content-Type: application/json") != NULL);
	REQUIRE(body);
	struct json_doc doc;
	struct json_error je;
	REQUIRE(json_parse(body, (size_t)clen, &doc, &je));
	const struct json_value *lim = metric(doc.root, "system.memory.limit");
	REQUIRE(lim);
	CHECK_NEAR(json_value_f64(json_get(&json_get(json_get(lim, "gauge"), "dataPoints")->u.items[0], "asDouble")),
		   16384000.0 * 1024, 1e-12);
	CHECK(has_attr(json_get(&json_get(doc.root, "resourceMetrics")->u.items[0], "resource"), "service.name", "e2e"));
	json_doc_free(&doc);
	kill(d, SIGTERM);
	int st;
	CHECK(waitpid(d, &st, 0) == d && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(lfd);
}

TEST(otlp_dead_receiver_does_not_delay_collection)
{
	char bin[PATH_MAX + 16];
	REQUIRE(dynolog_path(bin, sizeof bin));
	int port, lfd = listen_any(&port); /* a listener that never accepts: connects hang in the backlog */
	REQUIRE(lfd >= 0);
	char url[80], out[600];
	snprintf(url, sizeof url, "--otlp_endpoint=http://127.0.0.1:%d", port);
	snprintf(out, sizeof out, "--json_log_file=%s/m.json", test_tmpdir());
	char *args[] = {bin, "--port=0", "--use_otlp", url, out, "--kernel_monitor_reporting_interval_s=1", "--otlp_timeout_ms=60000",
			NULL};
	pid_t d = spawn_dynolog(bin, args);
	REQUIRE(d > 0);
	struct timespec ts = {4, 500000000};
	nanosleep(&ts, NULL);
	kill(d, SIGTERM);
	int st;
	CHECK(waitpid(d, &st, 0) == d && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char path[700];
	snprintf(path, sizeof path, "%s/m.json", test_tmpdir());
	FILE *f = fopen(path, "r");
	REQUIRE(f);
	int lines = 0, ch;
	while ((ch = fgetc(f)) != EOF)
		lines += ch == '\n';
	fclose(f);
	CHECK(lines >= 4); /* ticks at 0,1,2,3,4 s kept coming while the POST hung */
	close(lfd);
}

/* The data point of metric m whose attribute k is v. */
static const struct json_value *point(const struct json_value *m, const char *k, const char *v)
{
	const struct json_value *g = json_get(m, "gauge");
	const struct json_value *dps = json_get(g ? g : json_get(m, "sum"), "dataPoints");
	for (uint32_t i = 0; dps && i < dps->len; i++)
		if (has_attr(&dps->u.items[i], k, v))
			return &dps->u.items[i];
	return NULL;
}

static int count_attr(const struct json_value *dp, const char *k)
{
	const struct json_value *a = json_get(dp, "attributes");
	int n = 0;
	for (uint32_t i = 0; a && i < a->len; i++) {
		const char *kk;
		n += json_get_str(&a->u.items[i], "key", &kk, NULL) && strcmp(kk, k) == 0;
	}
	return n;
}

/* GPU 0's data point of every metric named name (several frame keys share
 * one OTLP metric) whose fixed attribute fk is fv (fk NULL: any) */
static const struct json_value *gpu0_point(const struct json_value *root, const char *name, const char *fk,
					   const char *fv)
{
	const struct json_value *ms = json_get(
		&json_get(&json_get(root, "resourceMetrics")->u.items[0], "scopeMetrics")->u.items[0], "metrics");
	for (uint32_t i = 0; ms && i < ms->len; i++) {
		const char *n;
		if (!json_get_str(&ms->u.items[i], "name", &n, NULL) || strcmp(n, name) != 0)
			continue;
		const struct json_value *g = json_get(&ms->u.items[i], "gauge");
		const struct json_value *dps = json_get(g ? g : json_get(&ms->u.items[i], "sum"), "dataPoints");
		for (uint32_t k = 0; dps && k < dps->len; k++)
			if (has_attr(&dps->u.items[k], "hw.id", "GPU-abc") && (!fk || has_attr(&dps->u.items[k], fk, fv)))
				return &dps->u.items[k];
	}
	return NULL;
}

/* The real daemon with the fake NVML (build/libfake-nvml.so) pushing to our
 * receiver: GPU data points carry the OpenTelemetry hardware conventions'
 * attributes, every GPU metric arrives under its semantic-convention name
 * (docs/metrics.md's OTLP column) in base units, and the FLOPs/s estimate. */
TEST(otlp_gpu_semconv_end_to_end)
{
	char bin[PATH_MAX + 16], lib[PATH_MAX + 32], cwd[PATH_MAX];
	REQUIRE(dynolog_path(bin, sizeof bin));
	snprintf(lib, sizeof lib, "--nvml_library=%.*s/libfake-nvml.so", (int)(strrchr(bin, '/') - bin), bin);
	REQUIRE(access(lib + strlen("--nvml_library="), R_OK) == 0);
	REQUIRE(getcwd(cwd, sizeof cwd));
	char script[700], peaks[PATH_MAX + 40];
	snprintf(script, sizeof script, "%s/script", test_tmpdir());
	FILE *sf = fopen(script, "w");
	REQUIRE(sf);
	fputs("gpus 2\nname 0 NVIDIA H100 80GB HBM3\nuuid 0 GPU-abc\nmem 0 100:40:7\nclock_sm 0 1830\n"
	      "enc 0 5\ndec 0 7\nmemtemp 0 52\npcie_replay 0 10,12\nremap_cor 0 3\nremap_unc 0 1\nremap_fail 0 1\n"
	      "gpm 0 5 100\ngpm 0 13 0\ngpm 0 12 0\ngpm 0 11 0\npower 0 300000\n"
	      "util 0 60:25\nenergy 0 1000,3500\nclock_mem 0 2619\ntemp 0 45\npcie_tx 0 1000\npcie_rx 0 2000\n"
	      "ecc_corr 0 0,2\necc_uncorr 0 0\nthrottle 0 4\nxid 0 -,79\ngpm 0 1 80\ngpm 0 2 50\ngpm 0 3 25\n"
	      "gpm 0 4 3\ngpm 0 10 33\ngpm 0 60 100\ngpm 0 61 200\n"
	      "name 1 NVIDIA H100 80GB HBM3\nuuid 1 GPU-def\nmig 1 1\n"
	      "name 1/mig0 NVIDIA H100 80GB HBM3 MIG 1g.10gb\nuuid 1/mig0 MIG-x\nmem 1/mig0 10:5\n",
	      sf);
	fclose(sf);
	setenv("FAKE_NVML_SCRIPT", script, 1);
	snprintf(peaks, sizeof peaks, "--gpu_peaks_file=%s/data/gpu-peaks.tsv", cwd);
	int port, lfd = listen_any(&port);
	REQUIRE(lfd >= 0);
	char url[80];
	snprintf(url, sizeof url, "--otlp_endpoint=http://127.0.0.1:%d", port);
	char *args[] = {bin, "--port=0", "--use_otlp", url, "--use_JSON=false", "--kernel_monitor_reporting_interval_s=3600",
			"--enable_gpu_monitor", "--dcgm_reporting_interval_s=1", lib, peaks, NULL};
	pid_t d = spawn_dynolog(bin, args);
	REQUIRE(d > 0);
	/* the first GPU tick has no GPM values: read payloads until the estimate comes */
	static char buf[1 << 18];
	struct json_doc doc;
	bool have = false;
	for (int i = 0; i < 12 && !have; i++) {
		long clen;
		char *body = recv_post(lfd, buf, sizeof buf, &clen);
		if (!body)
			break;
		struct json_error je;
		if (!strstr(body, "dynolog.gpu.flops\"") || !json_parse(body, (size_t)clen, &doc, &je))
			continue;
		have = true;
	}
	kill(d, SIGTERM);
	int st;
	CHECK(waitpid(d, &st, 0) == d && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(lfd);
	REQUIRE(have);
	const char *unit;
	const struct json_value *mem = metric(doc.root, "hw.gpu.memory.usage");
	REQUIRE(mem);
	const struct json_value *g0 = point(mem, "hw.id", "GPU-abc");
	REQUIRE(g0);
	CHECK(has_attr(g0, "hw.name", "0"));
	CHECK(has_attr(g0, "hw.model", "NVIDIA H100 80GB HBM3"));
	CHECK(has_attr(g0, "hw.type", "gpu"));
	/* the v2 memory query's used: the 7 reserved bytes left out */
	CHECK_NEAR(json_value_f64(json_get(g0, "asDouble")), 40, 1e-12);
	/* the collector's own cost: one point per entry point, a time in seconds */
	const struct json_value *calls = metric(doc.root, "dynolog.collector.call.duration");
	REQUIRE(calls);
	const struct json_value *cu = point(calls, "dynolog.call", "nvmlDeviceGetMemoryInfo_v2");
	REQUIRE(cu);
	CHECK(has_attr(cu, "dynolog.collector", "nvml"));
	CHECK(json_get_str(calls, "unit", &unit, NULL) && strcmp(unit, "s") == 0);
	CHECK(metric(doc.root, "dynolog.collector.cpu.time") != NULL);
	const struct json_value *mig = point(mem, "hw.id", "MIG-x");
	REQUIRE(mig);
	CHECK(has_attr(mig, "hw.parent", "GPU-def"));
	CHECK(has_attr(mig, "hw.name", "1/mig0"));
	/* hw.power names hw.type itself: once only */
	const struct json_value *pw = metric(doc.root, "hw.power");
	REQUIRE(pw && point(pw, "hw.id", "GPU-abc"));
	CHECK_INT(count_attr(point(pw, "hw.id", "GPU-abc"), "hw.type"), 1);
	/* NVML's memory utilization is not the convention's (memory in use) */
	CHECK(!metric(doc.root, "hw.gpu.memory.utilization"));
	/* a BF16/FP16 tensor pipe fully busy at the H100's quoted 1830 MHz: 989.4 TFLOP/s */
	const struct json_value *fl = metric(doc.root, "dynolog.gpu.flops");
	REQUIRE(fl && point(fl, "hw.id", "GPU-abc"));
	CHECK_NEAR(json_value_f64(json_get(point(fl, "hw.id", "GPU-abc"), "asDouble")), 989.4e12, 1e-12);
	CHECK(json_get_str(fl, "unit", &unit, NULL) && strcmp(unit, "{flop}/s") == 0);
	/* every other GPU metric of the second GPU tick (the first with GPM and increments) */
	static const struct {
		const char *name, *fk, *fv;
		double want;
	} every[] = {
		{"hw.gpu.utilization", "hw.gpu.task", "general", 0.6},
		{"dynolog.gpu.memory.controller.utilization", NULL, NULL, 0.25},
		{"hw.gpu.memory.limit", NULL, NULL, 100},
		{"dynolog.gpu.memory.reserved", NULL, NULL, 7},
		{"dynolog.gpu.memory.temperature", NULL, NULL, 52},
		{"hw.gpu.utilization", "hw.gpu.task", "encoder", 0.05},
		{"hw.gpu.utilization", "hw.gpu.task", "decoder", 0.07},
		{"dynolog.gpu.pcie.replays", NULL, NULL, 2},
		{"dynolog.gpu.memory.remapped_rows", "error.type", "correctable", 3},
		{"dynolog.gpu.memory.remapped_rows", "error.type", "uncorrectable", 1},
		{"dynolog.gpu.memory.row_remap_failure", NULL, NULL, 1},
		{"hw.power", "hw.type", "gpu", 300},
		{"hw.energy", "hw.type", "gpu", 2.5},
		{"dynolog.gpu.sm_clock", NULL, NULL, 1830e6},
		{"dynolog.gpu.memory_clock", NULL, NULL, 2619e6},
		{"hw.temperature", "hw.type", "gpu", 45},
		{"dynolog.gpu.pcie.throughput", "network.io.direction", "transmit", 1024000},
		{"dynolog.gpu.pcie.throughput", "network.io.direction", "receive", 2048000},
		{"hw.errors", "error.type", "ecc_corrected", 2},
		{"hw.errors", "error.type", "ecc_uncorrected", 0},
		{"hw.errors", "error.type", "xid", 1},
		{"dynolog.gpu.xid.last", NULL, NULL, 79},
		{"dynolog.gpu.clocks_throttle_reasons", NULL, NULL, 4},
		{"hw.gpu.utilization", "hw.gpu.task", "graphics_engine", 0.8},
		{"dynolog.gpu.sm.utilization", NULL, NULL, 0.5},
		{"dynolog.gpu.sm.occupancy", NULL, NULL, 0.25},
		{"dynolog.gpu.pipe.utilization", "pipe", "tensor", 1},
		{"dynolog.gpu.pipe.utilization", "pipe", "fp16", 0},
		{"dynolog.gpu.pipe.utilization", "pipe", "fp32", 0},
		{"dynolog.gpu.pipe.utilization", "pipe", "fp64", 0},
		{"dynolog.gpu.pipe.utilization", "pipe", "integer", 0.03},
		{"dynolog.gpu.memory.bandwidth.utilization", NULL, NULL, 0.33},
		{"dynolog.gpu.nvlink.throughput", "network.io.direction", "transmit", 209715200},
		{"dynolog.gpu.nvlink.throughput", "network.io.direction", "receive", 104857600},
		{"dynolog.gpu.flops.utilization", NULL, NULL, 1},
	};
	for (size_t i = 0; i < sizeof every / sizeof every[0]; i++) {
		const struct json_value *dp = gpu0_point(doc.root, every[i].name, every[i].fk, every[i].fv);
		const struct json_value *v = dp ? json_get(dp, "asDouble") : NULL;
		if (!v)
			v = dp ? json_get(dp, "asInt") : NULL;
		double got = v ? json_value_f64(v) : NAN;
		if (!(fabs(got - every[i].want) <= 1e-9 * fabs(every[i].want)))
			test_fail(__FILE__, __LINE__, "OTLP %s{%s=%s} of GPU 0: got %g, want %g", every[i].name,
				  every[i].fk ? every[i].fk : "", every[i].fv ? every[i].fv : "", got, every[i].want);
	}
	json_doc_free(&doc);
}

/* Issue #38: a driver without nvmlDeviceGetMemoryInfo_v2 (the old-driver
 * fake): OTLP's memory in use is the v1 query's, the reserved memory
 * counted in it, and there is no reserved series (absent, not 0). */
TEST(otlp_gpu_memory_v1_driver)
{
	char bin[PATH_MAX + 16], lib[PATH_MAX + 40];
	REQUIRE(dynolog_path(bin, sizeof bin));
	snprintf(lib, sizeof lib, "--nvml_library=%.*s/libfake-nvml-old.so", (int)(strrchr(bin, '/') - bin), bin);
	REQUIRE(access(lib + strlen("--nvml_library="), R_OK) == 0);
	char script[700];
	snprintf(script, sizeof script, "%s/script-v1", test_tmpdir());
	FILE *sf = fopen(script, "w");
	REQUIRE(sf);
	fputs("gpus 1\nname 0 NVIDIA A100-SXM4-80GB\nuuid 0 GPU-abc\nmem 0 100:40:7\n", sf);
	fclose(sf);
	setenv("FAKE_NVML_SCRIPT", script, 1);
	int port, lfd = listen_any(&port);
	REQUIRE(lfd >= 0);
	char url[80];
	snprintf(url, sizeof url, "--otlp_endpoint=http://127.0.0.1:%d", port);
	char *args[] = {bin, "--port=0", "--use_otlp", url, "--use_JSON=false",
			"--kernel_monitor_reporting_interval_s=3600", "--enable_gpu_monitor", "--dcgm_reporting_interval_s=1",
			lib, NULL};
	pid_t d = spawn_dynolog(bin, args);
	REQUIRE(d > 0);
	static char buf[1 << 18];
	struct json_doc doc;
	bool have = false;
	for (int i = 0; i < 6 && !have; i++) {
		long clen;
		char *body = recv_post(lfd, buf, sizeof buf, &clen);
		if (!body)
			break;
		struct json_error je;
		have = strstr(body, "hw.gpu.memory.usage\"") && json_parse(body, (size_t)clen, &doc, &je);
	}
	kill(d, SIGTERM);
	int st;
	CHECK(waitpid(d, &st, 0) == d && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(lfd);
	REQUIRE(have);
	const struct json_value *mem = metric(doc.root, "hw.gpu.memory.usage");
	const struct json_value *g0 = mem ? point(mem, "hw.id", "GPU-abc") : NULL;
	REQUIRE(g0);
	CHECK_NEAR(json_value_f64(json_get(g0, "asDouble")), 47, 1e-12);
	CHECK(metric(doc.root, "dynolog.gpu.memory.reserved") == NULL);
	json_doc_free(&doc);
}
