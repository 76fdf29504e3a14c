/*
 * rpc_client.c - see rpc_client.h.  Two phases: resolve every name (thread
 * pool, because getaddrinfo blocks and a slow DNS server must not serialize
 * hundreds of hosts), then drive every connection as a small state machine
 * on one epoll loop.  A single re-armed timer enforces the per-host
 * deadlines, so a dead host costs one timeout however many there are.
 */
#include "client/rpc_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/loop.h"

#define RESOLVE_THREADS 16

enum conn_state { ST_WAITING, ST_CONNECTING, ST_SENDING, ST_READING, ST_DONE };

struct fanout;
struct conn {
	struct fanout *f;
	struct rpc_job *job;
	struct sockaddr_storage sa;
	socklen_t salen;
	bool resolved;
	enum conn_state st;
	int fd;
	struct buf out; /* framed request */
	size_t sent;
	struct net_frame in; /* the answer */
	int64_t start_ns, deadline_ns;
};

struct fanout {
	struct ev_loop *loop;
	struct ev_timer *timer;
	struct conn *c;
	size_t n, next, active, done;
	int max_parallel;
	int64_t timeout_ns;
	const char *token;
	bool starting; /* inside start_more: finish() must not recurse into it */
};

const char *rpc_status_name(enum rpc_status s)
{
	switch (s) {
	case RPC_OK: return "ok";
	case RPC_ERR_RESOLVE: return "unresolved";
	case RPC_ERR_CONNECT: return "unreachable";
	case RPC_ERR_TIMEOUT: return "timeout";
	case RPC_ERR_IO: return "io-error";
	case RPC_ERR_NO_RESPONSE: return "no-answer";
	case RPC_ERR_BAD_LENGTH: return "bad-answer";
	case RPC_ERR_TRUNCATED: return "truncated";
	case RPC_ERR_UNAUTHORIZED: return "unauthorized";
	}
	return "?";
}

void rpc_job_init(struct rpc_job *j, const char *host, const char *port, const char *req, size_t req_len)
{
	memset(j, 0, sizeof *j);
	j->host = host;
	j->port = port;
	j->req = req;
	j->req_len = req_len;
	buf_init(&j->resp);
}

void rpc_job_free(struct rpc_job *j) { buf_free(&j->resp); }

static void fmt_addr(const struct sockaddr_storage *sa, char *out, size_t cap)
{
	char h[INET6_ADDRSTRLEN] = "?";
	if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof h);
		snprintf(out, cap, "[%s]:%u", h, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof h);
		snprintf(out, cap, "%s:%u", h, ntohs(s4->sin_port));
	}
}

/* ---- phase 1: resolution ---- */

static void resolve_one(struct conn *c)
{
	struct rpc_job *j = c->job;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(j->host, j->port, &hints, &res);
	if (rc != 0 || !res) {
		j->status = RPC_ERR_RESOLVE;
		snprintf(j->err, sizeof j->err, "cannot resolve '%s' port '%s': %s", j->host, j->port,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		if (res)
			freeaddrinfo(res);
		return;
	}
	/* Like upstream dyno: the first address only, no fallback. */
	if (res->ai_addrlen <= sizeof c->sa) {
		memcpy(&c->sa, res->ai_addr, res->ai_addrlen);
		c->salen = res->ai_addrlen;
		c->resolved = true;
		fmt_addr(&c->sa, j->addr, sizeof j->addr);
	} else {
		j->status = RPC_ERR_RESOLVE;
		snprintf(j->err, sizeof j->err, "'%s': unsupported address type", j->host);
	}
	freeaddrinfo(res);
}

struct resolver {
	struct conn *c;
	size_t n;
	atomic_size_t next;
};

static void *resolve_worker(void *arg)
{
	struct resolver *r = arg;
	for (size_t i; (i = atomic_fetch_add(&r->next, 1)) < r->n;)
		resolve_one(&r->c[i]);
	return NULL;
}

static void resolve_all(struct conn *c, size_t n)
{
	struct resolver r = {.c = c, .n = n};
	atomic_init(&r.next, 0);
	size_t nt = n < RESOLVE_THREADS ? n : RESOLVE_THREADS;
	pthread_t th[RESOLVE_THREADS];
	size_t started = 0;
	if (nt > 1)
		for (; started < nt; started++)
			if (pthread_create(&th[started], NULL, resolve_worker, &r) != 0)
				break;
	resolve_worker(&r); /* the caller works too (and alone when n == 1) */
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/* ---- phase 2: the exchanges ---- */

static void start_more(struct fanout *f);
static void arm_timer(struct fanout *f);

static void finish(struct fanout *f, struct conn *c, enum rpc_status st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void finish(struct fanout *f, struct conn *c, enum rpc_status st, const char *fmt, ...)
{
	struct rpc_job *j = c->job;
	j->status = st;
	if (fmt) {
		char msg[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		snprintf(j->err, sizeof j->err, "%.253s (%.63s): %.180s", j->host, j->addr, msg);
	}
	j->elapsed_ms = (double)(clock_mono_ns() - c->start_ns) / 1e6;
	if (c->fd >= 0) {
		ev_io_del(f->loop, c->fd);
		close(c->fd);
		c->fd = -1;
	}
	buf_free(&c->out);
	net_frame_free(&c->in);
	if (st != RPC_OK)
		buf_reset(&j->resp);
	c->st = ST_DONE;
	f->active--;
	f->done++;
	if (f->done == f->n)
		ev_stop(f->loop);
	else if (!f->starting)
		start_more(f);
}

/* Our daemon's answer to a request without the right token (compact,
 * keys sorted, so always these bytes first). */
#define UNAUTHORIZED_PREFIX "{\"error\":\"unauthorized"

/* Read what is there; returns false when c finished (either way). */
static bool on_readable(struct fanout *f, struct conn *c)
{
	struct rpc_job *j = c->job;
	enum net_frame_status st = net_frame_read(&c->in, c->fd);
	switch (st) {
	case NET_FRAME_MORE: return true;
	case NET_FRAME_DONE: break;
	case NET_FRAME_IO_ERROR: finish(f, c, RPC_ERR_IO, "receive failed: %s", strerror(errno)); return false;
	case NET_FRAME_BAD_LEN:
	case NET_FRAME_TOO_BIG:
		/* An HTTP server (a Prometheus port, a proxy) answers with a
		 * status line: "HTTP" read as a length is 1347703880. */
		if (memcmp(c->in.hdr, "HTTP", 4) == 0) {
			finish(f, c, RPC_ERR_BAD_LENGTH, "not a dynolog RPC server (it answered HTTP): wrong --port?");
			return false;
		}
		finish(f, c, RPC_ERR_BAD_LENGTH, "invalid answer length %d (expected 1..%u)", (int)c->in.len,
		       RPC_MAX_RESPONSE);
		return false;
	case NET_FRAME_EOF:
		if (c->in.nhdr == 0)
			finish(f, c, RPC_ERR_NO_RESPONSE,
			       "the daemon closed the connection without answering (it does not know "
			       "this request, or refused it)");
		else if (c->in.nhdr < 4)
			finish(f, c, RPC_ERR_TRUNCATED, "connection closed inside the length prefix (%u of 4 bytes)",
			       c->in.nhdr);
		else
			finish(f, c, RPC_ERR_TRUNCATED, "connection closed after %zu of the %d announced answer bytes",
			       c->in.body.len, (int)c->in.len);
		return false;
	}
	/* Complete: no need to wait for the close.  The body moves to the job. */
	buf_free(&j->resp);
	j->resp = c->in.body;
	buf_init(&c->in.body);
	size_t pl = sizeof UNAUTHORIZED_PREFIX - 1;
	if (j->resp.len >= pl && memcmp(j->resp.data, UNAUTHORIZED_PREFIX, pl) == 0) {
		if (f->token)
			finish(f, c, RPC_ERR_UNAUTHORIZED,
			       "the daemon refused the token of --token-file (DYNO_TOKEN_FILE): it is not the one "
			       "of its --rpc_token_file");
		else
			finish(f, c, RPC_ERR_UNAUTHORIZED,
			       "the daemon requires a token: --token-file FILE (or DYNO_TOKEN_FILE=FILE) with the "
			       "secret of its --rpc_token_file");
		return false;
	}
	finish(f, c, RPC_OK, NULL);
	return false;
}

static void on_writable(struct fanout *f, struct conn *c)
{
	while (c->sent < c->out.len) {
		ssize_t w = send(c->fd, c->out.data + c->sent, c->out.len - c->sent, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			finish(f, c, RPC_ERR_IO, "send failed: %s", strerror(errno));
			return;
		}
		c->sent += (size_t)w;
	}
	c->st = ST_READING;
	ev_io_mod(f->loop, c->fd, EPOLLIN | EPOLLRDHUP);
}

static void on_event(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)fd;
	struct conn *c = ud;
	struct fanout *f = c->f;
	if (c->st == ST_CONNECTING) {
		int err = 0;
		socklen_t el = sizeof err;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			err = errno;
		if (err) {
			finish(f, c, RPC_ERR_CONNECT, "connect failed: %s", strerror(err));
			return;
		}
		c->st = ST_SENDING;
	}
	if (c->st == ST_SENDING) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			on_writable(f, c);
		return;
	}
	if (c->st == ST_READING)
		on_readable(f, c);
}

static void start_one(struct fanout *f, struct conn *c)
{
	struct rpc_job *j = c->job;
	f->active++;
	c->start_ns = clock_mono_ns();
	c->deadline_ns = c->start_ns + f->timeout_ns;
	c->fd = -1;
	if (!c->resolved) { /* resolution failed: message already set */
		c->st = ST_DONE;
		f->active--;
		f->done++;
		return;
	}
	buf_init(&c->out);
	buf_put_u32(&c->out, 0); /* the length, once the body is there */
	if (f->token)
		net_body_with_token(&c->out, j->req, j->req_len, f->token);
	else
		buf_append(&c->out, j->req, j->req_len);
	uint32_t len = (uint32_t)(c->out.len - 4);
	memcpy(c->out.data, &len, 4); /* native order, like upstream */
	net_frame_init(&c->in, RPC_MAX_RESPONSE);
	c->fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		finish(f, c, RPC_ERR_CONNECT, "socket: %s", strerror(errno));
		return;
	}
	int rc = connect(c->fd, (struct sockaddr *)&c->sa, c->salen);
	if (rc < 0 && errno != EINPROGRESS) {
		finish(f, c, RPC_ERR_CONNECT, "connect failed: %s", strerror(errno));
		return;
	}
	c->st = rc == 0 ? ST_SENDING : ST_CONNECTING;
	if (ev_io_add(f->loop, c->fd, EPOLLOUT, on_event, c) < 0) {
		finish(f, c, RPC_ERR_IO, "event loop: %s", strerror(errno));
		return;
	}
}

static void start_more(struct fanout *f)
{
	f->starting = true;
	while (f->next < f->n && f->active < (size_t)f->max_parallel)
		start_one(f, &f->c[f->next++]);
	f->starting = false;
	if (f->done == f->n)
		ev_stop(f->loop);
}

/* Fail every connection past its deadline, then re-arm for the earliest
 * remaining one. */
static void on_timer(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct fanout *f = ud;
	int64_t now = clock_mono_ns();
	for (size_t i = 0; i < f->next; i++) {
		struct conn *c = &f->c[i];
		if (c->st != ST_DONE && c->st != ST_WAITING && c->deadline_ns <= now)
			/* Not a byte back: a third-party HTTP server waits for a
			 * request line our frame never completes; say so (nothing
			 * is sent to find out: the bytes stay upstream's). */
			finish(f, c, RPC_ERR_TIMEOUT, "no complete answer within %lld ms (%s)",
			       (long long)(f->timeout_ns / NS_PER_MS),
			       c->st == ST_CONNECTING ? "still connecting"
			       : c->st == ST_SENDING  ? "still sending"
			       : c->in.nhdr == 0      ? "not a byte back: a busy daemon, or not a dynolog RPC port "
							"(an HTTP server waits for a request line)"
						      : "waiting for the answer");
	}
	if (f->done < f->n)
		arm_timer(f);
}

static void arm_timer(struct fanout *f)
{
	int64_t earliest = INT64_MAX;
	for (size_t i = 0; i < f->next; i++)
		if (f->c[i].st != ST_DONE && f->c[i].deadline_ns < earliest)
			earliest = f->c[i].deadline_ns;
	if (earliest == INT64_MAX)
		earliest = clock_mono_ns() + f->timeout_ns;
	int64_t d = earliest - clock_mono_ns();
	ev_timer_set(f->timer, d > 0 ? d : 1, 0);
}

/* Allow as many sockets as the hard limit permits: a fan-out to a thousand
 * hosts should not fail on the default soft limit of 1024. */
static int fd_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 512;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	rlim_t avail = rl.rlim_cur > 64 ? rl.rlim_cur - 64 : 16;
	return avail > 65536 ? 65536 : (int)avail;
}

size_t rpc_call_many(struct rpc_job *jobs, size_t n, const struct rpc_client_opts *o)
{
	if (n == 0)
		return 0;
	struct fanout f = {0};
	f.n = n;
	f.timeout_ns = (o && o->timeout_ms > 0 ? o->timeout_ms : RPC_DEFAULT_TIMEOUT_MS) * NS_PER_MS;
	f.max_parallel = o && o->max_parallel > 0 ? o->max_parallel : RPC_DEFAULT_PARALLEL;
	f.token = o ? o->token : NULL;
	int budget = fd_budget();
	if (f.max_parallel > budget)
		f.max_parallel = budget;
	f.c = xcalloc(n, sizeof *f.c);
	for (size_t i = 0; i < n; i++) {
		f.c[i].f = &f;
		f.c[i].job = &jobs[i];
		f.c[i].fd = -1;
		jobs[i].status = RPC_OK;
		jobs[i].err[0] = 0;
		jobs[i].addr[0] = 0;
		buf_reset(&jobs[i].resp);
	}
	resolve_all(f.c, n);

	f.loop = ev_loop_new();
	f.timer = f.loop ? ev_timer_add(f.loop, f.timeout_ns, 0, on_timer, &f) : NULL;
	if (!f.loop || !f.timer) {
		for (size_t i = 0; i < n; i++)
			if (jobs[i].status == RPC_OK) {
				jobs[i].status = RPC_ERR_IO;
				snprintf(jobs[i].err, sizeof jobs[i].err, "%s: cannot set up the event loop: %s",
					 jobs[i].host, strerror(errno));
			}
	} else {
		start_more(&f);
		if (f.done < f.n) {
			arm_timer(&f);
			ev_run(f.loop);
		}
	}
	/* Anything still open (only if the loop failed) is an error. */
	for (size_t i = 0; i < n; i++) {
		struct conn *c = &f.c[i];
		if (c->fd >= 0) {
			close(c->fd);
			c->fd = -1;
		}
		buf_free(&c->out);
		net_frame_free(&c->in);
		if (c->st != ST_DONE && jobs[i].status == RPC_OK) {
			jobs[i].status = RPC_ERR_IO;
			snprintf(jobs[i].err, sizeof jobs[i].err, "%s: event loop failed", jobs[i].host);
		}
	}
	if (f.timer)
		ev_timer_del(f.loop, f.timer);
	if (f.loop)
		ev_loop_free(f.loop);
	free(f.c);
	size_t failed = 0;
	for (size_t i = 0; i < n; i++)
		failed += jobs[i].status != RPC_OK;
	return failed;
}
