/*
 * test_ipc.c - the IPC fabric: byte-exact datagrams of wire-protocols.md
 * 3.6, every malformed-datagram rule, the abstract name with its trailing
 * NUL, and the daemon endpoint on a real loop with real datagram sockets
 * (conformance items 7 and 9): ctxt + req, one-shot delivery, n = 0 and
 * unknown types unanswered, drain of many queued polls, a vanished client,
 * filesystem mode (0666, stale file replaced), expiry by the timer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/loop.h"
#include "daemon/ipc/ipc.h"
#include "daemon/ipc/ipc_wire.h"
#include "daemon/ipc/registry.h"
#include "test.h"

static void quiet(void) { log_set_level(LOG_LEVEL_ERROR); }

static const uint8_t req_4242[68] = {
	0x1c, 0, 0, 0, 0, 0, 0, 0, 'r', 'e', 'q', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0,    0, 0, 0, 0, 0, 0, 0, 0,   0,   0,   0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
	0,    0, 0, 0, 0, 0, 0, 0, 0x92, 0x10, 0, 0, 0x68, 0x10, 0, 0, 0xe8, 0x03, 0, 0};

TEST(ipc_wire_req_matches_spec_bytes)
{
	int32_t pids[] = {4242, 4200, 1000};
	struct buf b = BUF_INIT;
	ipc_encode_req(&b, 2, 0, pids, 3);
	REQUIRE(b.len == sizeof req_4242);
	CHECK(memcmp(b.data, req_4242, sizeof req_4242) == 0);
	struct ipc_msg m;
	const char *why = NULL;
	REQUIRE(ipc_parse(req_4242, sizeof req_4242, &m, &why));
	CHECK_INT(m.kind, IPC_REQ);
	CHECK_INT(m.want, 2);
	CHECK_INT(m.n, 3);
	CHECK_INT(m.jobid, 0);
	CHECK_INT(m.pids[0], 4242);
	CHECK_INT(m.pids[2], 1000);
	buf_free(&b);
}

TEST(ipc_wire_ctxt_and_empty_reply_bytes)
{
	struct buf b = BUF_INIT;
	ipc_encode_ctxt(&b, 0, 4242, 123456);
	REQUIRE(b.len == 56);
	uint8_t tail[16] = {0, 0, 0, 0, 0x92, 0x10, 0, 0, 0x40, 0xe2, 0x01, 0, 0, 0, 0, 0};
	CHECK(memcmp(b.data + 40, tail, 16) == 0);
	CHECK(memcmp(b.data, "\x10\0\0\0\0\0\0\0ctxt\0", 13) == 0);
	struct ipc_msg m;
	const char *why;
	REQUIRE(ipc_parse(b.data, b.len, &m, &why));
	CHECK_INT(m.kind, IPC_CTXT);
	CHECK_INT(m.pid, 4242);
	CHECK_INT(m.jobid, 123456);
	buf_reset(&b);
	ipc_encode(&b, "req", NULL, 0);
	CHECK_INT(b.len, 40);
	uint8_t empty[40] = {0};
	memcpy(empty + 8, "req", 3);
	CHECK(memcmp(b.data, empty, 40) == 0);
	buf_free(&b);
}

TEST(ipc_wire_rejects_malformed)
{
	struct ipc_msg m;
	const char *why;
	uint8_t d[IPC_HDR_LEN + 16 + 4 * 70];
	/* short */
	CHECK(!ipc_parse(req_4242, 39, &m, &why));
	/* size field != length */
	memcpy(d, req_4242, sizeof req_4242);
	CHECK(!ipc_parse(d, sizeof req_4242 - 4, &m, &why));
	d[0] = 0xff;
	CHECK(!ipc_parse(d, sizeof req_4242, &m, &why));
	/* type without NUL */
	memcpy(d, req_4242, sizeof req_4242);
	memset(d + 8, 'r', 32);
	CHECK(!ipc_parse(d, sizeof req_4242, &m, &why));
	/* n = 0, negative, too large, and not matching size */
	struct buf b = BUF_INIT;
	int32_t pids[70] = {1};
	ipc_encode_req(&b, 2, 0, pids, 0);
	CHECK(!ipc_parse(b.data, b.len, &m, &why));
	CHECK(strstr(why, "n < 1") != NULL);
	buf_reset(&b);
	ipc_encode_req(&b, 2, 0, pids, 65);
	CHECK(!ipc_parse(b.data, b.len, &m, &why));
	buf_reset(&b);
	ipc_encode_req(&b, 2, 0, pids, 64);
	CHECK(ipc_parse(b.data, b.len, &m, &why));
	buf_reset(&b);
	ipc_encode_req(&b, 2, 0, pids, 2);
	int32_t lie = 3;
	memcpy(b.data + 44, &lie, 4);
	CHECK(!ipc_parse(b.data, b.len, &m, &why));
	lie = -1;
	memcpy(b.data + 44, &lie, 4);
	CHECK(!ipc_parse(b.data, b.len, &m, &why));
	/* req shorter than its fixed part, ctxt of the wrong size */
	buf_reset(&b);
	ipc_encode(&b, "req", "abcd", 4);
	CHECK(!ipc_parse(b.data, b.len, &m, &why));
	buf_reset(&b);
	ipc_encode(&b, "ctxt", "abcdefghijklmnopq", 17);
	CHECK(!ipc_parse(b.data, b.len, &m, &why));
	/* an unknown type is well-formed, just not served */
	buf_reset(&b);
	ipc_encode(&b, "hello", "x", 1);
	CHECK(ipc_parse(b.data, b.len, &m, &why));
	CHECK_INT(m.kind, IPC_OTHER);
	buf_free(&b);
}

TEST(ipc_abstract_name_has_trailing_nul)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct buf err = BUF_INIT;
	REQUIRE(ipc_addr("dynolog", NULL, &sa, &len, &err));
	CHECK_INT(len, 11);
	CHECK(memcmp(sa.sun_path, "\0dynolog\0", 9) == 0);
	REQUIRE(ipc_addr("dynolog", "/run/x", &sa, &len, &err));
	CHECK_STR(sa.sun_path, "/run/x/dynolog");
	CHECK_INT(len, 2 + 14 + 1);
	char longname[200];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK(!ipc_addr(longname, NULL, &sa, &len, &err));
	buf_free(&err);
}

/* ---- endpoint on a real loop ---- */

struct fixture {
	struct ev_loop *loop;
	struct registry reg;
	struct ipc_endpoint *ep;
	char name[64];
};

static void stop_cb(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)t;
	(void)ud;
	ev_stop(l);
}

/* Let the daemon loop run for ms milliseconds. */
static void pump(struct fixture *f, int ms)
{
	struct ev_timer *t = ev_timer_add(f->loop, (int64_t)ms * NS_PER_MS, 0, stop_cb, NULL);
	ev_run(f->loop);
	ev_timer_del(f->loop, t);
}

static void fixture_start(struct fixture *f, const char *dir, int64_t expiry_s)
{
	quiet();
	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "dynolog_unittest_%d", (int)getpid());
	f->loop = ev_loop_new();
	registry_init(&f->reg, 0);
	struct ipc_opts o = {.name = f->name, .dir = dir, .expiry_s = expiry_s};
	struct buf err = BUF_INIT;
	f->ep = ipc_start(f->loop, &f->reg, &o, &err);
	if (!f->ep)
		fprintf(stderr, "ipc_start: %s\n", err.data);
	buf_free(&err);
	REQUIRE(f->ep);
}

static void fixture_stop(struct fixture *f)
{
	ipc_stop(f->ep);
	registry_free(&f->reg);
	ev_loop_free(f->loop);
}

static int client(const char *name, const char *dir)
{
	struct buf err = BUF_INIT;
	int fd = ipc_bind(name, dir, &err);
	buf_free(&err);
	return fd;
}

static void send_to(int fd, const char *daemon, const char *dir, const struct buf *msg)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct buf err = BUF_INIT;
	ipc_addr(daemon, dir, &sa, &len, &err);
	buf_free(&err);
	CHECK(sendto(fd, msg->data, msg->len, 0, (struct sockaddr *)&sa, len) == (ssize_t)msg->len);
}

/* The next queued reply, or -1. */
static ssize_t reply(int fd, uint8_t *out, size_t cap)
{
	return recv(fd, out, cap, MSG_DONTWAIT);
}

TEST(ipc_endpoint_ctxt_then_req_conformance)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	int c = client("client_unittest", NULL);
	REQUIRE(c >= 0);
	CHECK(registry_find_job(&f.reg, "0") == NULL);
	struct buf m = BUF_INIT;
	ipc_encode_ctxt(&m, 2, getpid(), 42);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	uint8_t rx[4096];
	ssize_t r = reply(c, rx, sizeof rx);
	REQUIRE(r == 44);
	CHECK(memcmp(rx + 8, "ctxt", 5) == 0);
	int32_t count;
	memcpy(&count, rx + 40, 4);
	CHECK_INT(count, 1);
	CHECK_INT(f.reg.nprocs, 0); /* ctxt registers nothing */
	buf_reset(&m);
	int32_t self = getpid();
	ipc_encode_req(&m, 2, 42, &self, 1);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	r = reply(c, rx, sizeof rx);
	CHECK_INT(r, 40); /* empty config */
	struct reg_job *j = registry_find_job(&f.reg, "42");
	REQUIRE(j);
	CHECK_INT(j->n, 1);
	CHECK_INT(ipc_get_stats(f.ep)->replies, 2);
	buf_free(&m);
	close(c);
	fixture_stop(&f);
}

/* Other descriptors always ready on the daemon's loop (busy RPC
 * connections); the first of their callbacks notes whether the poll
 * queued before the loop started was already answered, and stops. */
struct busy_probe {
	struct ipc_endpoint *ep;
	int calls;
	uint64_t replies_at_first;
};

static void busy_probe_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)fd;
	(void)ev;
	struct busy_probe *b = ud;
	if (b->calls++ == 0)
		b->replies_at_first = ipc_get_stats(b->ep)->replies;
	ev_stop(l);
}

/* The IPC socket is urgent on the loop (ev_io_urgent): a Kineto poll is
 * answered before the loop runs any other ready descriptor, even 100 that
 * were ready before it (epoll_wait returns 64 at a time, in the order
 * they became ready: as plain I/O the poll waited for two batches). */
TEST(ipc_endpoint_served_before_other_ready_io)
{
	enum { N = 100 };
	struct fixture f;
	fixture_start(&f, NULL, 60);
	struct busy_probe b = {.ep = f.ep};
	int p[N][2];
	for (int i = 0; i < N; i++) {
		REQUIRE(pipe(p[i]) == 0);
		REQUIRE(write(p[i][1], "x", 1) == 1);
		REQUIRE(ev_io_add(f.loop, p[i][0], EPOLLIN, busy_probe_io, &b) == 0);
	}
	int c = client("client_unittest_urgent", NULL);
	REQUIRE(c >= 0);
	struct buf m = BUF_INIT;
	int32_t self = getpid();
	ipc_encode_req(&m, 2, 42, &self, 1);
	send_to(c, f.name, NULL, &m);
	CHECK(ev_run(f.loop) == 0);
	CHECK_INT(b.calls, 1);
	CHECK_INT(b.replies_at_first, 1);
	uint8_t rx[4096];
	CHECK_INT(reply(c, rx, sizeof rx), 40);
	buf_free(&m);
	close(c);
	for (int i = 0; i < N; i++) {
		ev_io_del(f.loop, p[i][0]);
		close(p[i][0]);
		close(p[i][1]);
	}
	fixture_stop(&f);
}

TEST(ipc_endpoint_bad_datagrams_unanswered_and_counted)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	int c = client("client_bad", NULL);
	REQUIRE(c >= 0);
	struct buf m = BUF_INIT;
	int32_t p = 5;
	ipc_encode_req(&m, 2, 0, &p, 0); /* n = 0 */
	send_to(c, f.name, NULL, &m);
	buf_reset(&m);
	ipc_encode(&m, "bogus", "xyz", 3); /* unknown type */
	send_to(c, f.name, NULL, &m);
	buf_reset(&m);
	buf_append(&m, "short", 5); /* shorter than a header */
	send_to(c, f.name, NULL, &m);
	buf_reset(&m);
	buf_reserve(&m, 70000); /* larger than any real message */
	memset(m.data, 7, 70000);
	m.len = 70000;
	struct sockaddr_un sa;
	socklen_t len;
	struct buf err = BUF_INIT;
	ipc_addr(f.name, NULL, &sa, &len, &err);
	int big = 200000;
	setsockopt(c, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	ssize_t w = sendto(c, m.data, m.len, 0, (struct sockaddr *)&sa, len);
	pump(&f, 30);
	uint8_t rx[256];
	CHECK_INT(reply(c, rx, sizeof rx), -1);
	const struct ipc_stats *st = ipc_get_stats(f.ep);
	CHECK_INT(st->malformed, w > 0 ? 3 : 2);
	CHECK_INT(st->unknown, 1);
	CHECK_INT(st->replies, 0);
	CHECK_INT(f.reg.nprocs, 0);
	/* still serving */
	buf_reset(&m);
	ipc_encode_req(&m, 2, 0, &p, 1);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	CHECK_INT(reply(c, rx, sizeof rx), 40);
	buf_free(&m);
	buf_free(&err);
	close(c);
	fixture_stop(&f);
}

TEST(ipc_endpoint_not_reachable_without_trailing_nul)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	int c = client("client_nonul", NULL);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(f.name);
	memcpy(sa.sun_path + 1, f.name, n);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n); /* no trailing NUL */
	struct buf m = BUF_INIT;
	int32_t p = 5;
	ipc_encode_req(&m, 2, 0, &p, 1);
	errno = 0;
	CHECK(sendto(c, m.data, m.len, 0, (struct sockaddr *)&sa, len) < 0);
	CHECK_INT(errno, ECONNREFUSED);
	buf_free(&m);
	close(c);
	fixture_stop(&f);
}

/* Send one poll from each client.  The kernel queues at most
 * net.unix.max_dgram_qlen (10 by default) datagrams per receiver, so the
 * polls go in batches of 10, each answered within one daemon wake-up. */
static void poll_all(struct fixture *f, int *fds, int n, struct buf *m, uint64_t *max_wakeups)
{
	for (int i = 0; i < n; i += 10) {
		for (int k = i; k < n && k < i + 10; k++) {
			int32_t anc[] = {10000 + k, 999};
			buf_reset(m);
			ipc_encode_req(m, 2, 7, anc, 2);
			send_to(fds[k], f->name, NULL, m);
		}
		uint64_t w0 = ev_wakeups(f->loop);
		pump(f, 5);
		uint64_t w = ev_wakeups(f->loop) - w0;
		if (w > *max_wakeups)
			*max_wakeups = w;
	}
}

TEST(ipc_endpoint_one_shot_delivery_many_clients_drained)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	enum { N = 200 };
	int fds[N];
	struct buf m = BUF_INIT;
	for (int i = 0; i < N; i++) {
		char nm[64];
		snprintf(nm, sizeof nm, "client_%d_%d", (int)getpid(), i);
		fds[i] = client(nm, NULL);
		REQUIRE(fds[i] >= 0);
	}
	uint64_t maxw = 0;
	poll_all(&f, fds, N, &m, &maxw);
	/* a full queue is drained in one wake-up (+1 for the stop timer) */
	CHECK(maxw <= 2);
	uint8_t rx[4096];
	int answered = 0;
	for (int i = 0; i < N; i++)
		answered += reply(fds[i], rx, sizeof rx) == 40;
	CHECK_INT(answered, N);
	CHECK_INT(f.reg.nprocs, N);
	/* trigger via the registry the way the RPC does, for the parent pid */
	int32_t parent = 999;
	const char *cfg = "ACTIVITIES_LOG_FILE=/tmp/a.json";
	struct reg_trigger t;
	registry_trigger(&f.reg, "7", &parent, 1, cfg, strlen(cfg), REG_ACTIVITIES, 5, clock_mono_ns(), &t);
	CHECK_INT(t.nmatched, N);
	CHECK_INT(t.nact, 5);
	registry_trigger_free(&t);
	for (int round = 0; round < 2; round++) {
		poll_all(&f, fds, N, &m, &maxw);
		int with_config = 0;
		for (int i = 0; i < N; i++) {
			ssize_t r = reply(fds[i], rx, sizeof rx - 1);
			if (r > 40) {
				with_config++;
				rx[r] = 0;
				CHECK(i < 5);
				CHECK(strstr((char *)rx + 40, "ACTIVITIES_LOG_FILE=/tmp/a.json\n    REQUEST_TRACE_ID=") != NULL);
			}
		}
		CHECK_INT(with_config, round == 0 ? 5 : 0); /* one-shot */
	}
	for (int i = 0; i < N; i++)
		close(fds[i]);
	buf_free(&m);
	fixture_stop(&f);
}

TEST(ipc_endpoint_vanished_client_keeps_config)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	int c = client("client_vanish", NULL);
	struct buf m = BUF_INIT;
	int32_t p = 31337;
	ipc_encode_req(&m, 2, 0, &p, 1);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	struct reg_trigger t;
	registry_trigger(&f.reg, "0", &p, 1, "A=1", 3, REG_ACTIVITIES, 1, clock_mono_ns(), &t);
	registry_trigger_free(&t);
	/* poll, then vanish before the daemon answers */
	send_to(c, f.name, NULL, &m);
	close(c);
	int64_t t0 = clock_mono_ns();
	pump(&f, 20);
	CHECK(clock_mono_ns() - t0 < 5 * NS_PER_SEC); /* upstream retries ~10 s here */
	CHECK_INT(ipc_get_stats(f.ep)->reply_failed, 1);
	/* the config was put back: a new endpoint of the same process gets it */
	c = client("client_vanish", NULL);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	uint8_t rx[4096];
	CHECK(reply(c, rx, sizeof rx) > 40);
	close(c);
	buf_free(&m);
	fixture_stop(&f);
}

TEST(ipc_endpoint_filesystem_mode)
{
	char dir[300];
	snprintf(dir, sizeof dir, "%s/sock", test_tmpdir());
	REQUIRE(mkdir(dir, 0755) == 0);
	/* a stale file from an earlier daemon */
	char path[400];
	snprintf(path, sizeof path, "%s/dynolog_unittest_%d", dir, (int)getpid());
	FILE *stale = fopen(path, "w");
	REQUIRE(stale);
	fclose(stale);
	struct fixture f;
	fixture_start(&f, dir, 60);
	struct stat st;
	REQUIRE(stat(path, &st) == 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_INT(st.st_mode & 0777, 0666);
	int c = client("dynoconfigclient-fs", dir);
	REQUIRE(c >= 0);
	struct buf m = BUF_INIT;
	int32_t p = 77;
	ipc_encode_req(&m, 2, 3, &p, 1);
	send_to(c, f.name, dir, &m);
	pump(&f, 20);
	uint8_t rx[256];
	CHECK_INT(reply(c, rx, sizeof rx), 40);
	CHECK(registry_find_job(&f.reg, "3") != NULL);
	/* a sender outside the directory is dropped */
	int outsider = client("outsider", NULL);
	send_to(outsider, f.name, dir, &m);
	pump(&f, 20);
	CHECK_INT(reply(outsider, rx, sizeof rx), -1);
	CHECK_INT(ipc_get_stats(f.ep)->foreign, 1);
	close(outsider);
	close(c);
	buf_free(&m);
	fixture_stop(&f);
	CHECK(access(path, F_OK) != 0); /* our socket file is removed at stop */
}

TEST(ipc_endpoint_expiry_timer)
{
	struct fixture f;
	fixture_start(&f, NULL, 1); /* expire after > 1 s of silence */
	int c = client("client_expire", NULL);
	struct buf m = BUF_INIT;
	int32_t p = 4;
	ipc_encode_req(&m, 2, 0, &p, 1);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	CHECK_INT(f.reg.nprocs, 1);
	pump(&f, 1000);
	CHECK_INT(f.reg.nprocs, 1); /* 1 s: still there */
	uint64_t w0 = ev_wakeups(f.loop);
	pump(&f, 1200);
	CHECK_INT(f.reg.nprocs, 0); /* gone at ~2 s */
	CHECK(registry_find_job(&f.reg, "0") == NULL);
	/* wake-ups in that second: the expiry timer and our stop timer */
	CHECK(ev_wakeups(f.loop) - w0 <= 3);
	close(c);
	buf_free(&m);
	fixture_stop(&f);
}

TEST(ipc_endpoint_full_client_queue_keeps_config)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	int c = client("client_full", NULL);
	struct buf m = BUF_INIT;
	int32_t p = 4711;
	ipc_encode_req(&m, 2, 0, &p, 1);
	/* poll over and over without reading the answers: the client's
	 * receive queue fills and the daemon's sends start failing (EAGAIN) */
	for (int i = 0; i < 40 && ipc_get_stats(f.ep)->reply_failed == 0; i++) {
		send_to(c, f.name, NULL, &m);
		pump(&f, 2);
	}
	REQUIRE(ipc_get_stats(f.ep)->reply_failed > 0);
	struct reg_trigger t;
	registry_trigger(&f.reg, "0", &p, 1, "A=1", 3, REG_ACTIVITIES, 1, clock_mono_ns(), &t);
	CHECK_INT(t.nact, 1);
	registry_trigger_free(&t);
	/* this poll's answer (carrying the config) cannot be queued */
	uint64_t failed = ipc_get_stats(f.ep)->reply_failed;
	send_to(c, f.name, NULL, &m);
	int64_t t0 = clock_mono_ns();
	pump(&f, 10);
	CHECK(clock_mono_ns() - t0 < 5 * NS_PER_SEC); /* upstream retries ~10 s here */
	CHECK_INT(ipc_get_stats(f.ep)->reply_failed, failed + 1);
	/* the client catches up, polls again and gets the config after all */
	uint8_t rx[4096];
	while (reply(c, rx, sizeof rx) >= 0)
		;
	send_to(c, f.name, NULL, &m);
	pump(&f, 10);
	ssize_t r = reply(c, rx, sizeof rx - 1);
	REQUIRE(r > 40);
	rx[r] = 0;
	CHECK(strstr((char *)rx + 40, "A=1\n    REQUEST_TRACE_ID=") != NULL);
	close(c);
	buf_free(&m);
	fixture_stop(&f);
}

/* The new-process hook (main.c: telemetry_track_pid) gets the sender's pid
 * as the kernel reports it (SCM_CREDENTIALS), not the pid the datagram
 * claims; once per new process; not for a refresh or a refused datagram. */
struct new_seen {
	int calls;
	int32_t pid[4], reported[4];
	char job[4][24];
};

static void record_new(int32_t pid, int32_t reported, const char *job, void *ud)
{
	struct new_seen *s = ud;
	if (s->calls < 4) {
		s->pid[s->calls] = pid;
		s->reported[s->calls] = reported;
		snprintf(s->job[s->calls], sizeof s->job[0], "%s", job);
	}
	s->calls++;
}

TEST(ipc_endpoint_new_process_hook_gets_kernel_pid)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	struct new_seen seen = {0};
	ipc_on_new_process(f.ep, record_new, &seen);
	int c = client("client_newhook", NULL);
	REQUIRE(c >= 0);
	struct buf m = BUF_INIT;
	int32_t claimed[] = {2000000000, 1999999999}; /* as a process in another pid namespace would */
	ipc_encode_req(&m, 2, 42, claimed, 2);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	send_to(c, f.name, NULL, &m); /* refresh */
	pump(&f, 20);
	buf_reset(&m);
	ipc_encode_req(&m, 2, 42, claimed, 0); /* n = 0: refused */
	send_to(c, f.name, NULL, &m);
	buf_reset(&m);
	int32_t other = 7;
	ipc_encode_req(&m, 2, -5, &other, 1);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	REQUIRE(seen.calls == 2);
	CHECK_INT(seen.pid[0], getpid());
	CHECK_INT(seen.reported[0], 2000000000);
	CHECK_STR(seen.job[0], "42");
	CHECK_INT(seen.pid[1], getpid());
	CHECK_INT(seen.reported[1], 7);
	CHECK_STR(seen.job[1], "-5");
	CHECK_INT(f.reg.nprocs, 2);
	buf_free(&m);
	close(c);
	fixture_stop(&f);
}

/* A config whose reply cannot go out as one datagram (the kernel says
 * EMSGSIZE) is dropped with a log line, and the process gets an empty
 * reply now and on every later poll: it is not blocked by it forever. */
TEST(ipc_endpoint_undeliverable_config_dropped)
{
	struct fixture f;
	fixture_start(&f, NULL, 60);
	int c = client("client_too_big", NULL);
	REQUIRE(c >= 0);
	int32_t self = getpid();
	struct buf m = BUF_INIT;
	ipc_encode_req(&m, 2, 0, &self, 1);
	send_to(c, f.name, NULL, &m);
	pump(&f, 20);
	static uint8_t rx[1 << 20];
	CHECK_INT(reply(c, rx, sizeof rx), 40);
	/* the registry API takes any size (the RPC refuses it first) */
	size_t big = 300000;
	char *cfg = malloc(big);
	REQUIRE(cfg);
	memset(cfg, '#', big);
	struct reg_trigger t;
	registry_trigger(&f.reg, "0", NULL, 0, cfg, big, REG_ACTIVITIES, 10, 0, &t);
	CHECK_INT(t.nact, 1);
	registry_trigger_free(&t);
	free(cfg);
	for (int i = 0; i < 3; i++) {
		send_to(c, f.name, NULL, &m);
		pump(&f, 20);
		CHECK_INT(reply(c, rx, sizeof rx), 40); /* answered, empty */
	}
	CHECK_INT(ipc_get_stats(f.ep)->dropped_too_big, 1);
	struct reg_job *j = registry_find_job(&f.reg, "0");
	REQUIRE(j && j->n == 1);
	CHECK(!j->procs[0]->pending_act); /* nothing left to re-send */
	buf_free(&m);
	close(c);
	fixture_stop(&f);
}
