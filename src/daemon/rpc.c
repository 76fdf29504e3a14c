/* rpc.c - see rpc.h. */
#include "rpc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/net.h"
#include "daemon/security.h"

#define FAR_FUTURE_NS (3650ll * 86400 * NS_PER_SEC)

struct rpc_conn {
	struct rpc_server *s;
	int fd;
	int64_t deadline;
	struct rpc_conn *prev, *next; /* FIFO by deadline (constant timeout) */
	struct net_frame in;
	struct buf out;
	size_t out_off;
	bool watched; /* registered with the loop */
	char peer[72];
};

struct handler_entry {
	char *name;
	rpc_fn fn;
	void *ud;
};

struct rpc_server {
	struct ev_loop *loop;
	int lfd, port;
	struct net_acl acl;
	char *token;
	uint32_t max_frame;
	int timeout_ms, max_conns, nconns;
	struct rpc_conn *head, *tail;
	struct ev_timer *timer;
	int64_t timer_at;
	struct handler_entry *fns;
	size_t nfns;
	struct buf scratch;
	struct rpc_stats st;
};

static void on_listen(struct ev_loop *l, int fd, uint32_t events, void *ud);
static void on_conn(struct ev_loop *l, int fd, uint32_t events, void *ud);

/* One timer for every connection: deadlines are FIFO (constant timeout),
 * so it only ever needs the oldest.  It is armed when a connection arrives
 * and none is armed, and re-armed when it fires; it is never disarmed, so
 * a busy server makes no timer syscalls per request (an idle one gets one
 * spurious wake-up, timeout_ms after its last connection). */
static void arm_timer(struct rpc_server *s)
{
	if (!s->head || s->timer_at)
		return;
	int64_t now = clock_mono_ns();
	ev_timer_set(s->timer, s->head->deadline > now ? s->head->deadline - now : 1, 0);
	s->timer_at = s->head->deadline;
}

static void conn_close(struct rpc_conn *c)
{
	struct rpc_server *s = c->s;
	if (c->watched)
		ev_io_del(s->loop, c->fd);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->tail = c->prev;
	net_frame_free(&c->in);
	buf_free(&c->out);
	free(c);
	s->nconns--;
}

static void on_timer(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct rpc_server *s = ud;
	s->timer_at = 0;
	int64_t now = clock_mono_ns();
	while (s->head && s->head->deadline <= now) {
		s->st.timeouts++;
		log_debug("RPC: %s timed out", s->head->peer);
		conn_close(s->head);
	}
	arm_timer(s);
}

static const struct handler_entry *find_fn(const struct rpc_server *s, const char *name, size_t n)
{
	for (size_t i = 0; i < s->nfns; i++)
		if (strlen(s->fns[i].name) == n && memcmp(s->fns[i].name, name, n) == 0)
			return &s->fns[i];
	return NULL;
}

/* Decide the answer for one complete request body; false: no answer. */
static bool dispatch(struct rpc_server *s, struct rpc_conn *c, struct buf *resp)
{
	struct json_doc doc;
	struct json_error jerr;
	s->st.requests++;
	if (!json_parse(c->in.body.data, c->in.body.len, &doc, &jerr)) {
		s->st.bad_json++;
		char safe[sizeof jerr.msg];
		log_warn("RPC from %s: invalid JSON at byte %llu: %s", c->peer, (unsigned long long)jerr.offset,
			 sec_printable(jerr.msg, strlen(jerr.msg), safe, sizeof safe));
		return false;
	}
	bool answered = false;
	const char *fn;
	size_t fnlen;
	if (!doc.root || doc.root->type != JV_OBJECT || !json_get_str(doc.root, "fn", &fn, &fnlen)) {
		s->st.bad_json++;
		log_warn("RPC from %s: request is not an object with a string \"fn\"", c->peer);
		goto out;
	}
	if (s->token) {
		const char *tok;
		size_t toklen;
		if (!json_get_str(doc.root, "token", &tok, &toklen) ||
		    !sec_token_eq(tok, toklen, s->token, strlen(s->token))) {
			s->st.unauthorized++;
			char safe[65];
			log_warn("RPC from %s: %s refused: missing or wrong token", c->peer,
				 sec_printable(fn, fnlen, safe, sizeof safe));
			/* Answer so an honest client learns why; nothing else leaks. */
			buf_puts(resp, "{\"error\":\"unauthorized: this daemon requires a valid \\\"token\\\"\","
				       "\"status\":\"failed\"}");
			answered = true;
			goto out;
		}
	}
	const struct handler_entry *h = find_fn(s, fn, fnlen);
	if (!h) {
		s->st.unknown_fn++;
		char safe[65];
		log_warn("RPC from %s: unknown RPC call '%s'", c->peer, sec_printable(fn, fnlen, safe, sizeof safe));
		goto out;
	}
	answered = h->fn(doc.root, resp, h->ud);
out:
	json_doc_free(&doc);
	return answered;
}

/* Write what the socket takes; true while the connection stays open. */
static bool conn_write(struct rpc_conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t w = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (c->watched) {
					ev_io_mod(c->s->loop, c->fd, EPOLLOUT);
				} else if (ev_io_add(c->s->loop, c->fd, EPOLLOUT, on_conn, c) == 0) {
					c->watched = true;
					arm_timer(c->s);
				} else {
					break;
				}
				return true;
			}
			c->s->st.write_failed++;
			break;
		}
		c->out_off += (size_t)w;
	}
	conn_close(c);
	return false;
}

/* Advance one connection; false when it was closed. */
static bool serve(struct rpc_conn *c, uint32_t events)
{
	struct rpc_server *s = c->s;
	if (c->out.len) /* writing the answer */
		return conn_write(c);
	enum net_frame_status st = net_frame_read(&c->in, c->fd);
	if (st == NET_FRAME_MORE && !(events & (EPOLLHUP | EPOLLERR)))
		return true;
	if (st != NET_FRAME_DONE) {
		if (st == NET_FRAME_TOO_BIG) {
			s->st.too_big++;
			log_warn("RPC from %s: frame of %d bytes over the %u-byte limit", c->peer, (int)c->in.len,
				 s->max_frame);
		} else {
			s->st.bad_frame++;
			log_debug("RPC from %s: %s", c->peer, net_frame_status_str(st));
		}
		conn_close(c);
		return false;
	}
	buf_reset(&s->scratch);
	if (!dispatch(s, c, &s->scratch)) {
		s->st.silent++;
		conn_close(c);
		return false;
	}
	s->st.answered++;
	net_frame_put(&c->out, s->scratch.data, s->scratch.len);
	return conn_write(c);
}

static void on_conn(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)fd;
	serve(ud, events);
}

static void on_listen(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)events;
	struct rpc_server *s = ud;
	for (;;) {
		if (s->nconns >= s->max_conns) {
			/* Full of clients that have not completed a request: drop the
			 * oldest, so idle connections cannot lock real clients out
			 * for a whole timeout. */
			s->st.evicted++;
			log_debug("RPC: %d connections open, dropping the oldest (%s)", s->nconns, s->head->peer);
			conn_close(s->head);
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				LOG_ONCE(LOG_LEVEL_ERROR, "RPC accept failed: %s", strerror(errno));
			return;
		}
		if (!net_acl_allows(&s->acl, (struct sockaddr *)&ss, sl)) {
			char a[72];
			s->st.refused_peer++;
			log_warn("RPC: refused connection from %s (not in --rpc_allow)",
				 net_addr_str((struct sockaddr *)&ss, sl, a, sizeof a));
			close(cfd);
			continue;
		}
		struct rpc_conn *c = xcalloc(1, sizeof *c);
		c->s = s;
		c->fd = cfd;
		net_frame_init(&c->in, s->max_frame);
		buf_init(&c->out);
		net_addr_str((struct sockaddr *)&ss, sl, c->peer, sizeof c->peer);
		c->deadline = clock_mono_ns() + (int64_t)s->timeout_ms * NS_PER_MS;
		c->prev = s->tail;
		if (s->tail)
			s->tail->next = c;
		else
			s->head = c;
		s->tail = c;
		s->nconns++;
		s->st.accepted++;
		/* Most requests are already there: serve them right away, without
		 * ever adding the socket to epoll. */
		if (!serve(c, 0) || c->watched)
			continue; /* answered and closed, or waiting to write */
		if (ev_io_add(l, cfd, EPOLLIN | EPOLLRDHUP, on_conn, c) < 0) {
			conn_close(c);
			continue;
		}
		c->watched = true;
		arm_timer(s);
	}
}

struct rpc_server *rpc_start(struct ev_loop *l, const struct rpc_opts *o, struct buf *err)
{
	struct rpc_server *s = xcalloc(1, sizeof *s);
	s->loop = l;
	s->lfd = -1;
	s->max_frame = o->max_frame ? o->max_frame : 1u << 20;
	s->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 5000;
	s->max_conns = o->max_conns > 0 ? o->max_conns : 256;
	buf_init(&s->scratch);
	if (!net_acl_parse(&s->acl, o->allow, err))
		goto fail;
	if (o->token)
		s->token = xstrdup(o->token);
	s->lfd = net_listen_tcp(o->bind, o->port, 128, &s->port, err);
	if (s->lfd < 0)
		goto fail;
	/* Wake us only when a request's first bytes are there: the accept pass
	 * then answers at once, and bare connects cost no slot. */
	int defer_s = 1;
	setsockopt(s->lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof defer_s);
	s->timer = ev_timer_add(l, FAR_FUTURE_NS, 0, on_timer, s);
	if (!s->timer || ev_io_add(l, s->lfd, EPOLLIN, on_listen, s) < 0) {
		buf_printf(err, "cannot watch the RPC socket: %s", strerror(errno));
		goto fail;
	}
	log_info("RPC server listening on %s port %d%s%s", o->bind && *o->bind ? o->bind : "[::] (IPv6+IPv4)",
		 s->port, s->acl.n ? ", allow-list on" : "", s->token ? ", token required" : "");
	return s;
fail:
	rpc_stop(s);
	return NULL;
}

void rpc_stop(struct rpc_server *s)
{
	if (!s)
		return;
	while (s->head)
		conn_close(s->head);
	if (s->lfd >= 0) {
		ev_io_del(s->loop, s->lfd);
		close(s->lfd);
	}
	if (s->timer)
		ev_timer_del(s->loop, s->timer);
	for (size_t i = 0; i < s->nfns; i++)
		free(s->fns[i].name);
	free(s->fns);
	net_acl_free(&s->acl);
	free(s->token);
	buf_free(&s->scratch);
	free(s);
}

int rpc_port(const struct rpc_server *s) { return s->port; }
const struct rpc_stats *rpc_get_stats(const struct rpc_server *s) { return &s->st; }

void rpc_register_fn(struct rpc_server *s, const char *name, rpc_fn fn, void *ud)
{
	for (size_t i = 0; i < s->nfns; i++)
		if (strcmp(s->fns[i].name, name) == 0) {
			s->fns[i].fn = fn;
			s->fns[i].ud = ud;
			return;
		}
	s->fns = xrealloc(s->fns, (s->nfns + 1) * sizeof *s->fns);
	s->fns[s->nfns++] = (struct handler_entry){xstrdup(name), fn, ud};
}
