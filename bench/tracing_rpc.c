/*
 * tracing_rpc.c - RPC requests per second on loopback.
 *
 * Server: the real RPC server (daemon/rpc.c + the tracing handlers) on its
 * event loop thread, with 1,000 registered processes.  Clients: 1 and then
 * 2 threads, each doing upstream dyno's pattern in a loop - connect, send
 * one framed request, read the answer, close - for a fixed time.  Cases:
 * getStatus (pure protocol cost), getProcesses over 1,000 processes (a
 * ~100 KB answer) and setKinetOnDemandRequest for one pid.  Baseline, same
 * run: a minimal blocking accept-read-write-close server thread (the
 * upstream server's design) answering getStatus.
 * Target (issue #5): >= 20k requests/s on 2 cores.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/net.h"
#include "daemon/registry.h"
#include "daemon/rpc.h"
#include "daemon/rpc_tracing.h"

#define SECONDS 1.5

static int port;
static const char *body;

struct client_res {
	uint64_t ok, fail;
};

/* A lean client (no resolver, blocking calls) so the client threads take
 * as little of the 2 cores as possible: connect, write the frame, read to
 * EOF, close. */
static void *client_main(void *arg)
{
	struct client_res *r = arg;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct buf req = BUF_INIT;
	net_frame_put(&req, body, strlen(body));
	static __thread char rx[1 << 20];
	int64_t end = clock_mono_ns() + (int64_t)(SECONDS * NS_PER_SEC);
	while (clock_mono_ns() < end) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
		    write(fd, req.data, req.len) != (ssize_t)req.len) {
			r->fail++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		ssize_t got = 0, n;
		while ((n = read(fd, rx, sizeof rx)) > 0)
			got += n;
		if (got > 4)
			r->ok++;
		else
			r->fail++;
		close(fd);
	}
	buf_free(&req);
	return NULL;
}

static double run_clients(int n, uint64_t *fails)
{
	pthread_t th[4];
	struct client_res res[4] = {0};
	int64_t t0 = clock_mono_ns();
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, client_main, &res[i]);
	uint64_t ok = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ok += res[i].ok;
		*fails += res[i].fail;
	}
	return ok / ((clock_mono_ns() - t0) / 1e9);
}

static void on_pipe(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)fd, (void)ev, (void)ud;
	ev_stop(l);
}

static void *loop_main(void *arg)
{
	ev_run(arg);
	return NULL;
}

/* The baseline: upstream's shape, one blocking connection at a time. */
static int base_fd;
static volatile int base_stop;
static void *baseline_main(void *arg)
{
	(void)arg;
	while (!base_stop) {
		int c = accept(base_fd, NULL, NULL);
		if (c < 0)
			continue;
		int32_t len;
		char tmp[4096];
		if (read(c, &len, 4) == 4 && len > 0 && len < (int32_t)sizeof tmp) {
			ssize_t got = 0, r;
			while (got < len && (r = read(c, tmp + got, (size_t)(len - got))) > 0)
				got += r;
			const char ans[] = "\x0c\0\0\0{\"status\":1}";
			if (write(c, ans, 16) != 16)
				(void)0;
		}
		close(c);
	}
	return NULL;
}

int main(void)
{
	log_init("bench", LOG_LEVEL_ERROR);
	struct ev_loop *loop = ev_loop_new();
	struct registry reg;
	registry_init(&reg, 0);
	struct reg_delivery d;
	for (int i = 0; i < 1000; i++) {
		int32_t anc[] = {100000 + i, 5000 + i / 8, 4000};
		registry_poll(&reg, 0, anc, 3, 2, clock_mono_ns(), &d);
	}
	struct buf err = BUF_INIT;
	struct rpc_opts o = {.bind = "127.0.0.1"};
	struct rpc_server *srv = rpc_start(loop, &o, &err);
	if (!srv) {
		fprintf(stderr, "bench: %s\n", err.data);
		return 1;
	}
	struct rpc_tracing h = {.reg = &reg};
	rpc_tracing_register(srv, &h);
	port = rpc_port(srv);
	int pp[2];
	if (pipe(pp) < 0)
		return 1;
	ev_io_add(loop, pp[0], EPOLLIN, on_pipe, NULL);
	pthread_t lt;
	pthread_create(&lt, NULL, loop_main, loop);

	uint64_t fails = 0;
	printf("tracing_rpc: loopback RPC, one request per connection (connect, send, read, close), %.1f s per case\n",
	       SECONDS);
	printf("  %-48s %12s\n", "case", "requests/s");
	body = "{\"fn\":\"getStatus\"}";
	clockid_t cid;
	pthread_getcpuclockid(lt, &cid);
	double s1 = run_clients(1, &fails);
	struct timespec c0, c1;
	clock_gettime(cid, &c0);
	uint64_t a0 = rpc_get_stats(srv)->answered;
	double s2 = run_clients(2, &fails);
	clock_gettime(cid, &c1);
	uint64_t a1 = rpc_get_stats(srv)->answered; /* racy read of a counter, for a figure only */
	double server_us = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / 1e3 / (double)(a1 - a0);
	printf("  %-48s %12.0f\n", "dynolog getStatus, 1 client thread", s1);
	printf("  %-48s %12.0f\n", "dynolog getStatus, 2 client threads", s2);
	body = "{\"fn\":\"getProcesses\"}";
	double gp = run_clients(2, &fails);
	printf("  %-48s %12.0f\n", "dynolog getProcesses (1,000 processes), 2 clients", gp);
	body = "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=/tmp/t.json\",\"job_id\":0,"
	       "\"pids\":[100007],\"process_limit\":3}";
	double sk = run_clients(2, &fails);
	printf("  %-48s %12.0f\n", "dynolog setKinetOnDemandRequest, 2 clients", sk);
	if (write(pp[1], "x", 1) != 1)
		return 1;
	pthread_join(lt, NULL);
	const struct rpc_stats *st = rpc_get_stats(srv);
	uint64_t answered = st->answered;

	/* baseline: blocking accept loop on its own thread */
	int bport;
	base_fd = net_listen_tcp("127.0.0.1", 0, 128, &bport, &err);
	if (base_fd < 0)
		return 1;
	fcntl(base_fd, F_SETFL, fcntl(base_fd, F_GETFL) & ~O_NONBLOCK);
	pthread_t bt;
	pthread_create(&bt, NULL, baseline_main, NULL);
	port = bport;
	body = "{\"fn\":\"getStatus\"}";
	double b1 = run_clients(1, &fails);
	double b2 = run_clients(2, &fails);
	base_stop = 1;
	int kick = net_connect_tcp("127.0.0.1", bport, 1000, &err);
	if (kick >= 0)
		close(kick);
	pthread_join(bt, NULL);
	close(base_fd);
	printf("  %-48s %12.0f\n", "baseline blocking server, 1 client thread", b1);
	printf("  %-48s %12.0f\n", "baseline blocking server, 2 client threads", b2);
	printf("  server thread CPU per getStatus request: %.1f us (capacity of one core: %.0f requests/s)\n", server_us,
	       1e6 / server_us);
	printf("  getStatus vs baseline: %.2fx (1 client), %.2fx (2 clients); target >= 20000/s: %s\n", s1 / b1, s2 / b2,
	       (s1 > s2 ? s1 : s2) >= 20000 ? "met" : "MISSED");
	printf("  failed requests: %llu; answered by the server: %llu\n", (unsigned long long)fails,
	       (unsigned long long)answered);
	rpc_stop(srv);
	registry_free(&reg);
	ev_loop_free(loop);
	buf_free(&err);
	return 0;
}
