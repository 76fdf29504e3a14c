/*
 * test_prometheus.c - the Prometheus sink: exposition rendering (families,
 * types, units, counters accumulated from deltas, vanished series, label
 * escaping) and the real HTTP server on the event loop, including
 * malformed requests and a 1,000-connection flood while a collection timer
 * keeps ticking.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/loop.h"
#include "daemon/publish/prom_accept.h"
#include "daemon/publish/prometheus.h"
#include "test.h"

static char *render(struct prom_sink *p)
{
	struct buf b = BUF_INIT;
	struct self_metric s[1] = {{"dynolog_collector_success", "ok", "gauge", "collector", "kernel", 1}};
	prom_render(p, s, 1, &b);
	return buf_detach(&b, NULL);
}

TEST(prom_render_families_and_counters)
{
	struct prom_sink *p = prom_new_offline();
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 0);
	/* node_exporter's families: the kernel's totals, as read */
	frame_uint(&f, "@rx_bytes.eth0", 100);
	frame_uint(&f, "@rx_bytes.lo", 5);
	frame_float(&f, "@cpu_user_s.cpu3", 1.5);
	frame_float(&f, "@cpu_idle_s.cpu3", 0.5);
	frame_float(&f, "@cpu_guest_s.cpu3", 0.25);
	/* the per-interval deltas (JSON log, OTLP): not on the page */
	frame_uint(&f, "rx_bytes.eth0", 3);
	frame_int(&f, "cpu_u_ms.cpu3", 40);
	frame_float(&f, "cpu_util", 42.5);
	frame_uint(&f, "mem_total_bytes", 1024);
	frame_int(&f, "cpu_u_ms", 99); /* upstream aggregate: not exported */
	frame_float(&f, "gpu_power.0", 250.5); /* uncatalogued: generic gauge */
	frame_float(&f, "build_info", 3);       /* would clash with dynolog_build_info: dropped */
	frame_float(&f, "swap_used_bytes.x", 3); /* catalogued without a label: as uncatalogued it would clash */
	frame_str(&f, "proc_job_id.12", "77\"x");
	frame_str(&f, "proc_cgroup.12", "/a\\b");
	prom_update(p, 0, &f);
	char *page = render(p);
	CHECK(strstr(page, "# HELP node_network_receive_bytes_total ") != NULL);
	CHECK(strstr(page, "# TYPE node_network_receive_bytes_total counter\n") != NULL);
	CHECK(strstr(page, "node_network_receive_bytes_total{device=\"eth0\"} 100\n") != NULL);
	CHECK(strstr(page, "node_cpu_seconds_total{cpu=\"3\",mode=\"user\"} 1.5\n") != NULL);
	CHECK(strstr(page, "node_cpu_seconds_total{cpu=\"3\",mode=\"idle\"} 0.5\n") != NULL);
	CHECK(strstr(page, "# TYPE node_cpu_guest_seconds_total counter\nnode_cpu_guest_seconds_total{cpu=\"3\",mode=\"user\"} 0.25\n") != NULL);
	CHECK(strstr(page, "} 3\n") == NULL && strstr(page, "} 0.04\n") == NULL);
	CHECK(strstr(page, "dynolog_cpu_utilization_ratio 0.425\n") != NULL);
	CHECK(strstr(page, "# TYPE dynolog_memory_total_bytes gauge\ndynolog_memory_total_bytes 1024\n") != NULL);
	CHECK(strstr(page, "cpu_u_ms ") == NULL);
	CHECK(strstr(page, "dynolog_gpu_power{key=\"0\"} 250.5\n") != NULL);
	CHECK(strstr(page, "dynolog_process_info{pid=\"12\",job_id=\"77\\\"x\",cgroup=\"/a\\\\b\"} 1\n") != NULL);
	CHECK(strstr(page, "dynolog_build_info{version=\"") != NULL);
	CHECK(strstr(page, "dynolog_build_info 3") == NULL);
	CHECK(strstr(page, "dynolog_swap_used_bytes{") == NULL);
	CHECK(strstr(page, "dynolog_collector_success{collector=\"kernel\"} 1\n") != NULL);
	/* one HELP per family */
	const char *h = strstr(page, "# HELP node_cpu_seconds_total");
	CHECK(h && !strstr(h + 1, "# HELP node_cpu_seconds_total"));
	free(page);

	/* next tick: counters accumulate, lo vanished */
	frame_reset(&f, 1);
	frame_uint(&f, "@rx_bytes.eth0", 150);
	frame_float(&f, "@cpu_user_s.cpu3", 2);
	prom_update(p, 0, &f);
	page = render(p);
	CHECK(strstr(page, "node_network_receive_bytes_total{device=\"eth0\"} 150\n") != NULL);
	CHECK(strstr(page, "node_cpu_seconds_total{cpu=\"3\",mode=\"user\"} 2\n") != NULL);
	CHECK(strstr(page, "device=\"lo\"") == NULL);
	CHECK(strstr(page, "dynolog_memory_total_bytes") == NULL);
	free(page);

	/* lo comes back: the kernel's total, as read */
	frame_reset(&f, 2);
	frame_uint(&f, "@rx_bytes.lo", 7);
	prom_update(p, 0, &f);
	/* a second source keeps its own series */
	struct frame g;
	frame_init(&g);
	frame_uint(&g, "perf_cycles", 1000);
	prom_update(p, 1, &g);
	prom_update(p, 1, &g);
	page = render(p);
	CHECK(strstr(page, "node_network_receive_bytes_total{device=\"lo\"} 7\n") != NULL);
	CHECK(strstr(page, "dynolog_perf_cycles_total 2000\n") != NULL);
	free(page);
	/* a percentage that is not exactly representable, scaled to a ratio:
	 * 15.000000000000002 / 100 would print 0.15000000000000002, 12.3 / 100
	 * 0.12300000000000001; both print short (issue #15 item 6), while a
	 * value with real 17-digit content keeps it */
	frame_reset(&f, 3);
	frame_float(&f, "cpu_util", 15.000000000000002);
	frame_float(&f, "cpu_util.cpu0", 12.3);
	frame_float(&f, "cpu_util.cpu1", 100.0 / 3.0);
	prom_update(p, 0, &f);
	page = render(p);
	CHECK(strstr(page, "dynolog_cpu_utilization_ratio 0.15\n") != NULL);
	CHECK(strstr(page, "dynolog_cpu_core_utilization_ratio{cpu=\"0\"} 0.123\n") != NULL);
	CHECK(strstr(page, "dynolog_cpu_core_utilization_ratio{cpu=\"1\"} 0.333333333333333") != NULL);
	free(page);
	frame_free(&g);
	frame_free(&f);
	prom_free(p);
}

/* ---------- the live server ---------- */

struct srv {
	struct prom_sink *p;
	struct frame f;
	int64_t ticks, last_ns, max_gap_ns;
	pid_t child;
	int child_status;
};

static void on_tick(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct srv *s = ud;
	int64_t now = clock_mono_ns();
	if (s->last_ns && now - s->last_ns > s->max_gap_ns)
		s->max_gap_ns = now - s->last_ns;
	s->last_ns = now;
	s->ticks++;
	frame_reset(&s->f, clock_wall_ns());
	frame_uint(&s->f, "@rx_bytes.eth0", 10);
	frame_float(&s->f, "load1", (double)s->ticks);
	prom_update(s->p, 0, &s->f);
	prom_publish(s->p, NULL, 0);
}

static void on_chld(struct ev_loop *l, int signo, void *ud)
{
	(void)signo;
	struct srv *s = ud;
	if (waitpid(s->child, &s->child_status, WNOHANG) == s->child)
		ev_stop(l);
}

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = {20, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send req, read the whole answer into out (connection: close). */
static int http(int port, const char *req, size_t reqlen, char *out, size_t cap)
{
	int fd = connect_to(port);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < reqlen) {
		ssize_t w = send(fd, req + off, reqlen - off, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = recv(fd, out + n, cap - 1 - n, 0)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(fd);
	return (int)n;
}

static int status_of(const char *resp)
{
	int st = 0;
	return sscanf(resp, "HTTP/1.%*d %d", &st) == 1 ? st : 0;
}

/* The client side, in the child: exit code = number of failed checks. */
static int client(int port)
{
	int fails = 0;
	static char out[1 << 20];
	const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	http(port, get, sizeof get - 1, out, sizeof out);
	if (status_of(out) != 200 || !strstr(out, "node_network_receive_bytes_total{device=\"eth0\"}") ||
	    !strstr(out, "text/plain; version=0.0.4")) {
		fprintf(stderr, "plain scrape failed: %.200s\n", out);
		fails++;
	}
	const char *post = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
	http(port, post, strlen(post), out, sizeof out);
	if (status_of(out) != 405) {
		fprintf(stderr, "POST: %.100s\n", out);
		fails++;
	}
	const char *nf = "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	http(port, nf, strlen(nf), out, sizeof out);
	if (status_of(out) != 404) {
		fprintf(stderr, "404: %.100s\n", out);
		fails++;
	}
	/* garbage, binary, a header far beyond the per-connection memory cap */
	const char *garbage[] = {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", "GET\r\n\r\n",
				 "GET /metrics HTTP/9.9\r\n\r\n", "HELLO WORLD\r\n\r\n"};
	for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
		http(port, garbage[i], strlen(garbage[i]), out, sizeof out);
		int st = status_of(out);
		if (st == 200) {
			fprintf(stderr, "garbage %zu answered 200\n", i);
			fails++;
		}
	}
	struct buf big = BUF_INIT;
	buf_puts(&big, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
	for (int i = 0; i < 200000; i++)
		buf_putc(&big, 'a');
	buf_puts(&big, "\r\n\r\n");
	http(port, big.data, big.len, out, sizeof out);
	if (status_of(out) == 200) {
		fprintf(stderr, "huge header answered 200\n");
		fails++;
	}
	buf_free(&big);

	/* the flood: 1,000 connections, idle, half-sent, or sending junk */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 1100 && rl.rlim_max >= 1100) {
		rl.rlim_cur = 1100;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	static int fds[1000];
	int opened = 0;
	for (int i = 0; i < 1000; i++) {
		fds[i] = connect_to(port);
		if (fds[i] < 0)
			continue;
		opened++;
		if (i % 3 == 1)
			send(fds[i], "GET /metrics HTTP/1.1\r\nHost:", 28, MSG_NOSIGNAL);
		else if (i % 3 == 2)
			send(fds[i], "\x01\x02\x03garbage", 10, MSG_NOSIGNAL);
	}
	if (opened < 900) {
		fprintf(stderr, "only %d of 1000 connections opened\n", opened);
		fails++;
	}
	/* while they hang on, a real scrape still gets through (idle ones time out) */
	int64_t t0 = clock_mono_ns();
	http(port, get, sizeof get - 1, out, sizeof out);
	if (status_of(out) != 200) {
		fprintf(stderr, "scrape during the flood failed: %.100s\n", out);
		fails++;
	}
	fprintf(stderr, "scrape during a 1000-connection flood took %.2f s\n", (double)(clock_mono_ns() - t0) / 1e9);
	for (int i = 0; i < 1000; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* and after it, immediately */
	http(port, get, sizeof get - 1, out, sizeof out);
	if (status_of(out) != 200) {
		fprintf(stderr, "scrape after the flood failed\n");
		fails++;
	}
	return fails;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

TEST(prom_server_on_loop_survives_abuse)
{
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	struct buf err = BUF_INIT;
	struct prom_options o = {"127.0.0.1", 0, 1100, 2};
	struct srv s = {0};
	frame_init(&s.f);
	s.p = prom_new(l, &o, &err);
	if (!s.p)
		test_fail(__FILE__, __LINE__, "prom_new: %s", err.data);
	REQUIRE(s.p);
	int port = prom_port(s.p);
	REQUIRE(port > 0);
	REQUIRE(ev_timer_add(l, 1, 100 * NS_PER_MS, on_tick, &s));
	REQUIRE(ev_signal_add(l, SIGCHLD, on_chld, &s) == 0);
	/* publish once before the client starts */
	on_tick(l, NULL, &s);
	long rss0 = rss_kb();
	s.child = fork();
	REQUIRE(s.child >= 0);
	if (s.child == 0)
		_exit(client(port));
	int64_t t0 = clock_mono_ns();
	ev_run(l);
	double secs = (double)(clock_mono_ns() - t0) / 1e9;
	long rss1 = rss_kb();
	CHECK(WIFEXITED(s.child_status) && WEXITSTATUS(s.child_status) == 0);
	/* collection never stalled: the 100 ms timer kept firing */
	fprintf(stderr, "    %.1f s, %lld ticks, max gap %.0f ms, RSS %ld -> %ld kB, %llu requests\n", secs,
		(long long)s.ticks, (double)s.max_gap_ns / 1e6, rss0, rss1, (unsigned long long)prom_requests(s.p));
	CHECK(s.max_gap_ns < 1000 * NS_PER_MS);
	CHECK(s.ticks >= (int64_t)(secs * 10 * 0.7));
	/* memory bounded by the connection cap x the 8 KiB per-connection pool (ASan inflates it) */
	CHECK(rss1 - rss0 < 24 * 1024);
	prom_free(s.p);
	frame_free(&s.f);
	buf_free(&err);
	ev_loop_free(l);
}

/* Issue #15 item 7: the first four bytes tell a dynolog RPC frame (int32
 * length, little-endian, then the JSON) from an HTTP request line. */
TEST(prom_sniff_rpc_frame_or_http)
{
	static const struct {
		const char *p;
		size_t n;
		enum prom_sniff want;
	} c[] = {
		{"\x12\0\0\0{\"fn\":\"getStatus\"}", 22, SNIFF_RPC},  /* dyno status --no-processes */
		{"\x49\x01\0\0\n{\n", 7, SNIFF_RPC},                  /* gputrace's 329-byte pretty form */
		{"G\0\0\0{", 5, SNIFF_RPC},                            /* a length of 71 starts with 'G' */
		{"\x12\0\0", 3, SNIFF_MORE},                           /* the prefix in pieces */
		{"GET", 3, SNIFF_MORE},
		{"GET /metrics HTTP/1.1\r\n", 23, SNIFF_HTTP},
		{"HEAD /metrics HTTP/1.0\r\n", 24, SNIFF_HTTP},
		{"POST / HTTP/1.1\r\n", 17, SNIFF_HTTP},
		{"PUT / HTTP/1.1\r\n", 16, SNIFF_HTTP},
		{"\r\nGET / HTTP/1.1\r\n", 18, SNIFF_HTTP}, /* the CRLF a server skips */
		{"\x16\x03\x01\x02\x00", 5, SNIFF_RPC},      /* TLS, not HTTP either: the 400 at once */
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		if (prom_sniff((const unsigned char *)c[i].p, c[i].n) != c[i].want)
			test_fail(__FILE__, __LINE__, "case %zu: %d, want %d", i,
				  (int)prom_sniff((const unsigned char *)c[i].p, c[i].n), (int)c[i].want);
}

TEST(prom_bad_address_is_an_error)
{
	struct ev_loop *l = ev_loop_new();
	struct buf err = BUF_INIT;
	struct prom_options o = {"not-an-ip", 0, 0, 0};
	CHECK(prom_new(l, &o, &err) == NULL);
	CHECK(strstr(err.data, "not-an-ip") != NULL);
	buf_free(&err);
	ev_loop_free(l);
}

TEST(prom_ipv6_loopback)
{
	int s6 = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	bool have6 = s6 >= 0 && bind(s6, (struct sockaddr *)&a6, sizeof a6) == 0;
	if (s6 >= 0)
		close(s6);
	if (!have6) {
		fprintf(stderr, "    no IPv6 loopback on this machine: nothing to check\n");
		return;
	}
	struct ev_loop *l = ev_loop_new();
	struct buf err = BUF_INIT;
	struct prom_options o = {"::1", 0, 4, 1};
	struct prom_sink *p = prom_new(l, &o, &err);
	if (!p)
		test_fail(__FILE__, __LINE__, "%s", err.data);
	REQUIRE(p);
	CHECK(prom_port(p) > 0);
	prom_free(p);
	buf_free(&err);
	ev_loop_free(l);
}
