/* rpc.c - see rpc.h. */
#include "rpc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/net.h"
#include "daemon/rpc/security.h"

#define FAR_FUTURE_NS (3650ll * 86400 * NS_PER_SEC)
/* Buffers an idle keep-alive connection may keep between requests. */
#define KEEP_CAP 16384
/* Answers up to this size leave at once with the FIN (a usual initial
 * congestion window is 10 segments of 1448 bytes); bigger ones may still
 * sit in the send queue when the server closes. */
#define SMALL_ANSWER 14000
/* The answer buffer shared by every connection is released after an
 * answer bigger than this, so one big answer does not stay resident. */
#define SCRATCH_KEEP (1u << 20)
/* see on_listen */
#define RPC_ACCEPT_BURST 64
/* A pipelined request is answered only while less than this much of the
 * connection's previous answers waits unsent in the kernel (SIOCOUTQNSD);
 * past it, the connection gets TCP_NOTSENT_LOWAT at this value and waits
 * for EPOLLOUT, which then comes only once the client has read below it.
 * Without it a client that pipelines keep-alive requests and never reads
 * had answers built for it until its send buffer, autotuned to ~580 KB on
 * loopback, was full (~25 of them), and one accept pass built 37 MB of
 * answers for 64 such clients (bench/soak.sh, slow readers: the tick
 * waited 0.5-0.8 s).  Only then: a client that sends one request at a
 * time is served as before, the kernel taking what it takes. */
#define RPC_NOTSENT_LOWAT (128u << 10)
/* Default of rpc_opts.turn_bytes. */
#define RPC_TURN_BYTES (256u << 10)
/* Default of rpc_opts.accept_serve_ns: see on_listen. */
#define RPC_ACCEPT_SERVE_NS (2 * NS_PER_MS)

struct rpc_conn {
	struct rpc_server *s;
	int fd;
	int64_t deadline;
	struct rpc_conn *prev, *next; /* FIFO by deadline (constant timeout) */
	struct net_frame in;
	struct buf out; /* the part of an answer the socket did not take at once */
	size_t out_off;
	uint32_t nreq;   /* requests answered on this connection */
	uint32_t watch;  /* events registered with the loop; 0: not registered */
	bool keep;       /* keep-alive: read the next request once `out` is sent */
	bool refused;    /* asked for keep-alive, closing at max_requests */
	bool big;        /* the answer may still be queued unsent at close:
			  * over SMALL_ANSWER, or the socket was full */
	bool lingering;  /* answered and shut for writing; discarding input until EOF */
	bool lowat;      /* TCP_NOTSENT_LOWAT set (see backlogged) */
	size_t held;     /* heap bytes kept for it, as counted in the server's st.held */
	socklen_t peerlen;
	struct sockaddr_storage peer; /* formatted only when a message needs it */
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
	uint32_t max_requests;
	size_t max_queued, max_held;
	/* answer bytes built in the loop's current wake-up (turn_at: its
	 * number, ev_wakeups), and how many one wake-up may build before the
	 * rest of the work (pipelined requests, new connections, requests on
	 * other connections) waits for the next loop round */
	size_t turn, turn_bytes;
	uint64_t turn_at;
	int64_t accept_serve_ns;
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

/* Formatting the peer costs a printf per connection: only for messages. */
static const char *peer(const struct rpc_conn *c, char out[72])
{
	return net_addr_str((const struct sockaddr *)&c->peer, c->peerlen, out, 72);
}

static void conn_unlink(struct rpc_conn *c)
{
	struct rpc_server *s = c->s;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->tail = c->prev;
	c->prev = c->next = NULL;
}

static void conn_append(struct rpc_conn *c)
{
	struct rpc_server *s = c->s;
	c->prev = s->tail;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
}

static void conn_close(struct rpc_conn *c)
{
	struct rpc_server *s = c->s;
	if (c->watch)
		ev_io_del(s->loop, c->fd);
	close(c->fd);
	conn_unlink(c);
	net_frame_free(&c->in);
	buf_free(&c->out);
	s->st.held -= c->held;
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
		char a[72];
		log_debug("RPC: %s timed out", peer(s->head, a));
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

/* What dispatch must know before it builds a tree (issue #35 item 2): the
 * request's "fn", whether its "token" is right, how many values it has.
 * A tree costs ~48 bytes a value, so a 1 MB body of "0," took ~40 MB
 * before the token was even checked.  The tokenizer alone reads it here
 * (it validates the whole grammar and allocates nothing but its scratch
 * for an escaped string, at most the body), and the tree is built only
 * for a known function, the right token and at most RPC_MAX_VALUES values
 * nested at most RPC_MAX_DEPTH deep.  As json_get does, the first "fn" and
 * the first "token" of the top-level object count. */
struct prescan {
	bool object, fn_seen, fn_ok, token_seen, token_ok;
	const struct handler_entry *h;
	char fn[65]; /* for the log (cut) */
	size_t fnlen;
	uint64_t values;
};

static bool prescan(const struct rpc_server *s, const struct buf *body, struct prescan *ps, struct json_error *err)
{
	memset(ps, 0, sizeof *ps);
	struct json_reader r;
	json_reader_init_mem(&r, body->data, body->len, 0);
	json_reader_set_max_depth(&r, RPC_MAX_DEPTH);
	enum { OTHER, FN, TOKEN } next = OTHER; /* what the value after a top-level key is */
	bool ok = true;
	for (enum json_tok t; ok && (t = json_next(&r)) != JSON_EOF;) {
		if (t == JSON_ERROR) {
			*err = r.err;
			ok = false;
			break;
		}
		if (t == JSON_OBJ_END || t == JSON_ARR_END)
			continue;
		if (t == JSON_KEY) {
			size_t n;
			const char *k = json_str(&r, &n);
			next = OTHER;
			if (json_depth(&r) == 1 && n == 2 && memcmp(k, "fn", 2) == 0 && !ps->fn_seen)
				next = FN;
			else if (json_depth(&r) == 1 && n == 5 && memcmp(k, "token", 5) == 0 && !ps->token_seen)
				next = TOKEN;
			continue;
		}
		ps->values++;
		if (ps->values == 1)
			ps->object = t == JSON_OBJ_BEGIN;
		if (next == FN) {
			ps->fn_seen = true;
			ps->fn_ok = t == JSON_STRING;
			if (ps->fn_ok) {
				const char *f = json_str(&r, &ps->fnlen);
				ps->h = find_fn(s, f, ps->fnlen);
				sec_printable(f, ps->fnlen, ps->fn, sizeof ps->fn);
			}
		} else if (next == TOKEN) {
			size_t n;
			const char *tok = json_str(&r, &n);
			ps->token_seen = true;
			ps->token_ok = t == JSON_STRING && s->token && sec_token_eq(tok, n, s->token, strlen(s->token));
		}
		next = OTHER;
	}
	json_reader_free(&r);
	return ok;
}

/* Decide the answer for one complete request body; false: no answer.
 * *keep: the client asked to keep the connection open ("keepalive": true,
 * this server's extension; upstream clients never send it). */
static bool dispatch(struct rpc_server *s, struct rpc_conn *c, struct buf *resp, bool *keep)
{
	struct json_doc doc = {0};
	struct json_error jerr;
	struct prescan ps;
	char a[72];
	*keep = false;
	s->st.requests++;
	if (!prescan(s, &c->in.body, &ps, &jerr)) {
		s->st.bad_json++;
		char safe[sizeof jerr.msg];
		LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC from %s: invalid JSON at byte %llu: %s", peer(c, a), (unsigned long long)jerr.offset,
			 sec_printable(jerr.msg, strlen(jerr.msg), safe, sizeof safe));
		return false;
	}
	bool answered = false;
	if (!ps.object || !ps.fn_ok) {
		s->st.bad_json++;
		LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC from %s: request is not an object with a string \"fn\"", peer(c, a));
		return false;
	}
	if (s->token && !ps.token_ok) {
		s->st.unauthorized++;
		LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC from %s: %s refused: missing or wrong token", peer(c, a), ps.fn);
		/* Answer so an honest client learns why; nothing else leaks
		 * (and the connection closes: no keep-alive without the token). */
		buf_puts(resp, "{\"error\":\"unauthorized: this daemon requires a valid \\\"token\\\"\","
			       "\"status\":\"failed\"}");
		return true;
	}
	if (!ps.h) {
		s->st.unknown_fn++;
		LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC from %s: unknown RPC call '%s'", peer(c, a), ps.fn);
		return false;
	}
	if (ps.values > RPC_MAX_VALUES) {
		s->st.too_many_values++;
		LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC from %s: %s refused: %llu JSON values, more than %u", peer(c, a),
				ps.fn, (unsigned long long)ps.values, RPC_MAX_VALUES);
		buf_printf(resp, "{\"error\":\"request too large: %llu JSON values, at most %u\",\"status\":\"failed\"}",
			   (unsigned long long)ps.values, RPC_MAX_VALUES);
		return true;
	}
	if (!json_parse(c->in.body.data, c->in.body.len, &doc, &jerr)) { /* validated above: never */
		s->st.bad_json++;
		return false;
	}
	answered = ps.h->fn(doc.root, resp, ps.h->ud);
	bool ka;
	*keep = answered && json_get_bool(doc.root, "keepalive", &ka) && ka;
	json_doc_free(&doc);
	return answered;
}

/* Watch c for these events (add or change the registration). */
static bool conn_watch(struct rpc_conn *c, uint32_t events)
{
	if (c->watch == events)
		return true;
	int rc = c->watch ? ev_io_mod(c->s->loop, c->fd, events) : ev_io_add(c->s->loop, c->fd, events, on_conn, c);
	if (rc < 0)
		return false;
	c->watch = events;
	arm_timer(c->s);
	return true;
}

/* A connection that closes after this answer sends it with MSG_MORE: the
 * kernel holds the last segment back and the shutdown() that follows sends
 * it with the FIN in one segment (one segment and one ACK fewer for both
 * sides).  A keep-alive answer must go out at once. */
static int send_flags(const struct rpc_conn *c) { return MSG_NOSIGNAL | MSG_DONTWAIT | (c->keep ? 0 : MSG_MORE); }

/* Send what is left in c->out: 1 all sent, 0 the socket is full, -1 error. */
static int conn_flush(struct rpc_conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t w = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, send_flags(c));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			c->s->st.write_failed++;
			return -1;
		}
		c->out_off += (size_t)w;
	}
	if (c->out.cap > KEEP_CAP)
		buf_free(&c->out);
	else
		buf_reset(&c->out);
	c->out_off = 0;
	return 1;
}

/* Send the framed answer (prefix and body) with one sendmsg, straight from
 * the server's scratch buffer; only what the socket does not take is
 * copied, to c->out.  Same results as conn_flush. */
static int conn_send(struct rpc_conn *c, const struct buf *body)
{
	uint32_t n = (uint32_t)body->len; /* int32, native order, as upstream */
	uint8_t hdr[4];
	memcpy(hdr, &n, 4);
	struct iovec iov[2] = {{hdr, 4}, {body->data, body->len}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t w;
	do
		w = sendmsg(c->fd, &m, send_flags(c));
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			c->s->st.write_failed++;
			return -1;
		}
		w = 0;
	}
	size_t sent = (size_t)w;
	if (sent == 4 + body->len)
		return 1;
	buf_reset(&c->out);
	c->out_off = 0;
	if (sent < 4)
		buf_append(&c->out, hdr + sent, 4 - sent);
	size_t from = sent > 4 ? sent - 4 : 0;
	buf_append(&c->out, body->data + from, body->len - from);
	return 0;
}

/* A pipelining client has not read its previous answers: more than
 * RPC_NOTSENT_LOWAT of them waits unsent in the kernel.  The first time,
 * the socket gets TCP_NOTSENT_LOWAT, so that EPOLLOUT means the client has
 * read below it.  False when the kernel does not say. */
static bool backlogged(struct rpc_conn *c)
{
	int unsent = 0;
	if (ioctl(c->fd, SIOCOUTQNSD, &unsent) < 0 || unsent <= (int)RPC_NOTSENT_LOWAT)
		return false;
	if (!c->lowat) {
		int v = RPC_NOTSENT_LOWAT;
		c->lowat = setsockopt(c->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof v) == 0;
		if (!c->lowat)
			return false; /* EPOLLOUT would come at once: no bound, as before */
	}
	return true;
}

/* After a keep-alive answer went out: a fresh deadline (the connection
 * moves to the back of the FIFO), then the next request if its bytes are
 * already here (1), else wait for them (0); -1 if the loop refuses. */
static int keep_open(struct rpc_conn *c)
{
	struct rpc_server *s = c->s;
	c->keep = false;
	c->deadline = clock_mono_ns() + (int64_t)s->timeout_ms * NS_PER_MS;
	conn_unlink(c);
	conn_append(c);
	if (net_frame_pending(&c->in))
		return 1;
	return conn_watch(c, EPOLLIN | EPOLLRDHUP) ? 0 : -1;
}

/* Advance one connection as far as it goes without blocking: read a
 * request, answer it, and on a keep-alive connection go on with the next
 * one.  False when the connection was closed. */
static bool serve_step(struct rpc_conn *c, uint32_t events)
{
	struct rpc_server *s = c->s;
	char a[72];
	int w;
	for (;;) {
		if (c->out_off < c->out.len) { /* the rest of an answer */
			w = conn_flush(c);
			goto sent;
		}
		/* Bytes read past a frame are kept in c->in for the next one (a
		 * keep-alive client may send its next request early); a
		 * connection that closes after its answer drops them, as
		 * upstream. */
		enum net_frame_status st = net_frame_read(&c->in, c->fd);
		if (st == NET_FRAME_MORE && !(events & (EPOLLHUP | EPOLLERR))) {
			if (conn_watch(c, EPOLLIN | EPOLLRDHUP))
				return true;
			goto close;
		}
		if (st != NET_FRAME_DONE) {
			if (st == NET_FRAME_EOF && c->nreq && c->in.nhdr == 0) {
				/* a keep-alive client done with the connection */
			} else if (st == NET_FRAME_TOO_BIG) {
				s->st.too_big++;
				LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC from %s: frame of %d bytes over the %u-byte limit", peer(c, a), (int)c->in.len,
					 s->max_frame);
			} else {
				s->st.bad_frame++;
				log_debug("RPC from %s: %s", peer(c, a), net_frame_status_str(st));
			}
			goto close;
		}
		buf_reset(&s->scratch);
		bool keep;
		if (!dispatch(s, c, &s->scratch, &keep)) {
			s->st.silent++;
			goto close;
		}
		s->st.answered++;
		s->turn += s->scratch.len;
		if (s->turn > s->st.turn_peak)
			s->st.turn_peak = s->turn;
		if (c->nreq++)
			s->st.reused++;
		c->keep = keep && c->nreq < s->max_requests;
		c->refused = keep && !c->keep;
		s->st.request_limit += c->refused;
		net_frame_reset(&c->in, KEEP_CAP);
		c->big = s->scratch.len > SMALL_ANSWER;
		w = conn_send(c, &s->scratch);
		if (s->scratch.cap > SCRATCH_KEEP)
			buf_free(&s->scratch);
	sent:
		if (w < 0)
			goto close;
		if (w == 0) { /* the socket is full: finish when it drains */
			c->big = true; /* (and linger after it) */
			if (conn_watch(c, EPOLLOUT))
				return true;
			goto close;
		}
		if (!c->keep) {
			/* Sends the answer's held-back last segment with the FIN. */
			shutdown(c->fd, SHUT_WR);
			/* close() on a socket with unread bytes resets the
			 * connection, which drops what is still unsent.  Upstream
			 * clients send one frame and wait, but a keep-alive
			 * client may have sent its next request already, and any
			 * client may send more while a big answer drains: then
			 * read until the client closes (or the deadline) before
			 * closing.  Small answers are on their way already. */
			if (c->refused || c->big || net_frame_pending(&c->in))
				goto linger;
			goto close;
		}
		int k = keep_open(c);
		if (k <= 0) {
			if (k == 0)
				return true;
			goto close;
		}
		/* A pipelined request is here, but this wake-up has built its
		 * share of answers, or the client has not read the previous
		 * ones: answer it when the socket next has room (level-triggered,
		 * so at the next loop round for a client that reads; never for
		 * one that does not, until its deadline). */
		if (s->turn >= s->turn_bytes || backlogged(c)) {
			s->st.yields++;
			if (conn_watch(c, EPOLLOUT | EPOLLRDHUP))
				return true;
			goto close;
		}
		events = 0;
	}
linger:
	c->lingering = true;
	net_frame_drop_pending(&c->in);
	c->deadline = clock_mono_ns() + (int64_t)s->timeout_ms * NS_PER_MS;
	conn_unlink(c);
	conn_append(c);
	if (conn_watch(c, EPOLLIN | EPOLLRDHUP))
		return true;
close:
	conn_close(c);
	return false;
}

#define WHY_QUEUED "unsent answer over the per-connection limit"
#define WHY_HELD "memory for connections over the limit"

/* Each of the two bounds is said once when it first bites (a LOG_ONCE per
 * reason: which one bites first depends on the clients). */
static void drop(struct rpc_conn *c, bool total)
{
	char a[72];
	c->s->st.overflow++;
	if (total)
		LOG_ONCE(LOG_LEVEL_WARN, "RPC: dropping clients that do not read their answers (" WHY_HELD
					 "); see docs/rpc.md");
	else
		LOG_ONCE(LOG_LEVEL_WARN, "RPC: dropping clients that do not read their answers (" WHY_QUEUED
					 "); see docs/rpc.md");
	log_debug("RPC: %s dropped: %s", peer(c, a), total ? WHY_HELD : WHY_QUEUED);
	conn_close(c);
}

/* Count what c keeps now and enforce the memory bounds: c itself over
 * max_queued is dropped; over max_held in all, the connections that have
 * held memory longest (the FIFO's oldest, c last) are dropped until the
 * rest fits.  False when c was dropped. */
static bool conn_budget(struct rpc_conn *c)
{
	struct rpc_server *s = c->s;
	size_t h = net_frame_held(&c->in) + c->out.cap;
	s->st.held = s->st.held - c->held + h;
	c->held = h;
	if (c->out.len - c->out_off > s->max_queued) {
		drop(c, false);
		return false;
	}
	for (struct rpc_conn *v = s->head; s->st.held > s->max_held && v;) {
		struct rpc_conn *next = v->next;
		if (v != c && v->held)
			drop(v, true);
		v = next;
	}
	if (s->st.held > s->max_held) {
		drop(c, true);
		return false;
	}
	if (s->st.held > s->st.held_peak)
		s->st.held_peak = s->st.held;
	return true;
}

static bool serve(struct rpc_conn *c, uint32_t events) { return serve_step(c, events) && conn_budget(c); }

/* A lingering connection: drop what the client still sends; close at its
 * EOF (or the deadline).  A few reads per wake-up, so a client that keeps
 * sending cannot hold the loop. */
static void drain(struct rpc_conn *c)
{
	char tmp[16384];
	for (int i = 0; i < 8; i++) {
		ssize_t r = read(c->fd, tmp, sizeof tmp);
		if (r > 0)
			continue;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_close(c);
		return;
	}
}

/* Start counting this wake-up's answers if it is a new one. */
static void turn_start(struct rpc_server *s)
{
	uint64_t w = ev_wakeups(s->loop);
	if (w != s->turn_at) {
		s->turn_at = w;
		s->turn = 0;
	}
}

static void on_conn(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)fd;
	struct rpc_conn *c = ud;
	struct rpc_server *s = c->s;
	turn_start(s);
	if (c->lingering) {
		drain(c);
	} else if (s->turn >= s->turn_bytes && c->out_off == c->out.len) {
		/* This wake-up has built its share of answers: the request (or
		 * the rest of one) stays in the socket, which epoll reports
		 * again; the next round starts with this connection. */
		s->st.yields++;
		ev_defer(l);
	} else {
		serve(c, events);
	}
}

static void on_listen(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)events;
	struct rpc_server *s = ud;
	/* At most RPC_ACCEPT_BURST connections per wake-up: connection churn
	 * refills the backlog as fast as it is drained; the listening socket
	 * is level-triggered, so the rest waits one epoll round, behind the
	 * timers and the other fds.  Each accepted connection is served at
	 * once until the answers of this wake-up reach turn_bytes; later ones
	 * are still accepted (cheap: the backlog keeps draining, so a burst of
	 * connections with big answers does not hold it up; a full backlog
	 * drops SYNs, a 1 s retransmission for whoever sent one) but wait in
	 * epoll for their turn.  Serving at once also stops after
	 * accept_serve_ns (the turn permitting, a pass's first connection is
	 * served whatever the time): under
	 * connection churn one pass served 64 small requests, 20-25 ms of CPU
	 * in one callback, so the loop's 10 ms batch budget (src/core/loop.c)
	 * could not bound a batch; the others are served in callbacks of
	 * their own, which the budget does bound, and the loop's timers and
	 * its urgent handler (the IPC socket: Kineto waits ~90 ms for its
	 * answer) get their turn in between (bench/soak.sh). */
	turn_start(s);
	int64_t pass_start = clock_mono_ns();
	int served = 0;
	for (int n = 0; n < RPC_ACCEPT_BURST; n++) {
		bool at_once = s->turn < s->turn_bytes && (!served || clock_mono_ns() - pass_start < s->accept_serve_ns);
		/* A newcomer that would only wait for its turn is not taken into
		 * the last free slot: it would push out, or make the next pass's
		 * first newcomer push out, a connection already waiting for its
		 * answer (a burst beyond the cap lost answers that way:
		 * rpc_many_parallel_connections under ASan, where a pass passes
		 * accept_serve_ns at once).  It stays in the backlog for the next
		 * round, whose first newcomer is served at once (and evicts the
		 * oldest only if every slot is taken, by idle ones). */
		if (!at_once && s->nconns + 1 >= s->max_conns)
			return;
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
			LOG_RATELIMITED(LOG_LEVEL_WARN, "RPC: refused connection from %s (not in --rpc_allow)",
				 net_addr_str((struct sockaddr *)&ss, sl, a, sizeof a));
			close(cfd);
			continue;
		}
		if (s->nconns >= s->max_conns) {
			/* Full: drop the connection that has waited longest (an idle
			 * keep-alive one, or one that has not completed a request),
			 * so idle connections cannot lock real clients out for a
			 * whole timeout.  Only for a newcomer actually accepted. */
			char a[72];
			s->st.evicted++;
			log_debug("RPC: %d connections open, dropping the oldest (%s)", s->nconns, peer(s->head, a));
			conn_close(s->head);
		}
		struct rpc_conn *c = xcalloc(1, sizeof *c);
		c->s = s;
		c->fd = cfd;
		net_frame_init(&c->in, s->max_frame);
		buf_init(&c->out);
		c->peer = ss;
		c->peerlen = sl;
		c->deadline = clock_mono_ns() + (int64_t)s->timeout_ms * NS_PER_MS;
		conn_append(c);
		s->nconns++;
		s->st.accepted++;
		/* With TCP_DEFER_ACCEPT the request is usually here already:
		 * serve it now; the socket joins epoll only if it must wait. */
		if (at_once) {
			served++;
			serve(c, 0);
		} else {
			s->st.yields++;
			if (!conn_watch(c, EPOLLIN | EPOLLRDHUP))
				conn_close(c);
		}
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
	s->max_requests = o->max_requests > 0 ? o->max_requests : 1000;
	s->max_held = o->max_held ? o->max_held : 8u << 20;
	s->max_queued = o->max_queued ? o->max_queued : 2u << 20;
	if (s->max_queued > s->max_held)
		s->max_queued = s->max_held;
	s->turn_bytes = o->turn_bytes ? o->turn_bytes : RPC_TURN_BYTES;
	s->accept_serve_ns = o->accept_serve_ns > 0 ? o->accept_serve_ns : RPC_ACCEPT_SERVE_NS;
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
