/*
 * prom_accept.c - see prom_accept.h.
 *
 * The test is on the fourth byte: an RPC frame starts with its int32
 * length in host (little-endian) order, so for any frame under 128 MiB
 * byte 3 is below 0x08; an HTTP request line starts with a method token
 * (or the CRLF a server must skip), whose bytes are never below 0x09.  So
 * four bytes decide, a byte below 0x08 there is never valid HTTP (the 400
 * is right for it either way), and HTTP is handed on untouched: the bytes
 * were only peeked.
 *
 * Connections are watched edge-triggered: one that sent 1-3 bytes and
 * pauses is not woken again until more arrive (level-triggered, the
 * peeked bytes would wake the loop in a spin until the deadline).
 *
 * The turned-away connection is drained of what it sent before the answer
 * and shut down for writing before it is closed, so the peer reads the
 * answer instead of a reset.
 */
#include "prom_accept.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"

struct pend {
	int fd;
	int64_t deadline_ns;
	struct sockaddr_storage ss;
	socklen_t sl;
};

struct prom_accept {
	struct ev_loop *loop;
	int lfd;
	const int *rpc_port;
	int64_t timeout_ns;
	prom_handoff_fn handoff;
	void *ud;
	struct pend *p;
	size_t n, max;
	struct ev_timer *timer; /* armed while connections are undecided */
	uint64_t evicted;       /* undecided connections closed for a newer one */
};

enum prom_sniff prom_sniff(const unsigned char *p, size_t n)
{
	if (n < 4)
		return SNIFF_MORE;
	return p[3] < 0x08 ? SNIFF_RPC : SNIFF_HTTP;
}

static void drop(struct prom_accept *a, size_t i, bool close_fd)
{
	ev_io_del(a->loop, a->p[i].fd);
	if (close_fd)
		close(a->p[i].fd);
	a->p[i] = a->p[--a->n];
}

static void turn_away(struct prom_accept *a, int fd)
{
	char sink[4096];
	for (int k = 0; k < 16 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; k++)
		; /* what the peer sent: unread data would make close() send a reset */
	struct buf body = BUF_INIT, msg = BUF_INIT;
	buf_puts(&body, "This is dynolog's Prometheus port (HTTP, metrics at /metrics), not its RPC port");
	if (a->rpc_port && *a->rpc_port > 0)
		buf_printf(&body, ": dynolog RPC is on port %d", *a->rpc_port);
	buf_puts(&body, ".\n");
	buf_printf(&msg,
		   "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
		   "Connection: close\r\n\r\n%s",
		   body.len, body.data);
	/* a fresh socket's send buffer takes a few hundred bytes at once */
	ssize_t w = send(fd, msg.data, msg.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)w;
	shutdown(fd, SHUT_WR);
	close(fd);
	buf_free(&body);
	buf_free(&msg);
	LOG_RATELIMITED(LOG_LEVEL_INFO, "prometheus: a dynolog RPC request on the Prometheus port answered with 400");
}

static void on_conn(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	struct prom_accept *a = ud;
	size_t i = 0;
	while (i < a->n && a->p[i].fd != fd)
		i++;
	if (i == a->n)
		return;
	unsigned char b[4];
	ssize_t r = recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EINTR) && !(events & (EPOLLHUP | EPOLLERR)))
		return;
	enum prom_sniff s = r > 0 ? prom_sniff(b, (size_t)r) : SNIFF_MORE;
	if (r <= 0 || (s == SNIFF_MORE && (events & (EPOLLHUP | EPOLLRDHUP)))) {
		drop(a, i, true); /* closed or failed before deciding */
		return;
	}
	if (s == SNIFF_MORE)
		return; /* edge-triggered: woken again when more arrives, not before */
	struct pend pc = a->p[i];
	drop(a, i, false);
	if (s == SNIFF_RPC)
		turn_away(a, fd);
	else
		a->handoff(a->ud, fd, (struct sockaddr *)&pc.ss, pc.sl);
}

/* Undecided connections past their deadline are closed. */
static void on_timer(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	struct prom_accept *a = ud;
	int64_t now = clock_mono_ns(), next = 0;
	for (size_t i = 0; i < a->n;) {
		if (a->p[i].deadline_ns <= now) {
			drop(a, i, true);
			continue;
		}
		if (!next || a->p[i].deadline_ns < next)
			next = a->p[i].deadline_ns;
		i++;
	}
	if (next)
		ev_timer_set(t, next - now, 0);
	else
		ev_timer_disarm(t);
}

static void on_listen(struct ev_loop *l, int lfd, uint32_t events, void *ud)
{
	(void)l;
	(void)events;
	struct prom_accept *a = ud;
	for (int k = 0; k < 64; k++) {
		struct pend pc = {.sl = sizeof pc.ss};
		pc.fd = accept4(lfd, (struct sockaddr *)&pc.ss, &pc.sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (pc.fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				LOG_RATELIMITED(LOG_LEVEL_WARN, "prometheus: accept: %s", strerror(errno));
			return;
		}
		if (a->n == a->max) {
			/* Full: the connection that has waited longest goes, not the
			 * new one.  Closing the newest let 1,100 connections that
			 * never send 4 bytes hold every slot while each real scrape
			 * was closed on arrival (issue #35 item 4); now an idle one
			 * holds a slot only until max_pending newer ones arrive. */
			size_t old = 0;
			for (size_t i = 1; i < a->n; i++)
				if (a->p[i].deadline_ns < a->p[old].deadline_ns)
					old = i;
			drop(a, old, true);
			a->evicted++;
			LOG_RATELIMITED(LOG_LEVEL_WARN,
					"prometheus: %zu connections undecided, closing the oldest for a new one", a->max);
		}
		if (ev_io_add(a->loop, pc.fd, EPOLLIN | EPOLLRDHUP | EPOLLET, on_conn, a) < 0) {
			LOG_RATELIMITED(LOG_LEVEL_WARN, "prometheus: cannot watch a new connection: %s", strerror(errno));
			close(pc.fd);
			continue;
		}
		pc.deadline_ns = clock_mono_ns() + a->timeout_ns;
		if (a->n == 0)
			ev_timer_set(a->timer, a->timeout_ns, 0);
		a->p[a->n++] = pc;
	}
}

struct prom_accept *prom_accept_new(struct ev_loop *loop, int lfd, size_t max_pending, int timeout_ms,
				    prom_handoff_fn handoff, void *ud)
{
	struct prom_accept *a = xcalloc(1, sizeof *a);
	a->loop = loop;
	a->lfd = lfd;
	a->max = max_pending ? max_pending : 1;
	a->p = xcalloc(a->max, sizeof *a->p);
	a->timeout_ns = (int64_t)(timeout_ms > 0 ? timeout_ms : 10000) * NS_PER_MS;
	a->handoff = handoff;
	a->ud = ud;
	a->timer = ev_timer_add(loop, 0, 0, on_timer, a);
	if (!a->timer || ev_io_add(loop, lfd, EPOLLIN, on_listen, a) < 0) {
		if (a->timer)
			ev_timer_del(loop, a->timer);
		free(a->p);
		free(a);
		return NULL;
	}
	ev_timer_disarm(a->timer);
	return a;
}

void prom_accept_set_rpc_port(struct prom_accept *a, const int *port) { a->rpc_port = port; }

void prom_accept_free(struct prom_accept *a)
{
	if (!a)
		return;
	if (a->evicted)
		log_info("prometheus: %llu undecided connections closed for newer ones (all %zu slots taken)",
			 (unsigned long long)a->evicted, a->max);
	while (a->n)
		drop(a, a->n - 1, true);
	ev_io_del(a->loop, a->lfd);
	close(a->lfd);
	ev_timer_del(a->loop, a->timer);
	free(a->p);
	free(a);
}
