/* trigger_peers.c - see trigger_peers.h. */
#include "trigger_peers.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/net.h"

enum { PEER_CONNECTING, PEER_READING, PEER_DONE };

struct peer {
	struct trig_batch *b;
	char name[80];
	int fd, state;
	struct buf out; /* the framed request */
	size_t off;
	struct net_frame in;
	struct buf result; /* this peer's summary object */
};

struct trig_batch {
	struct ev_loop *loop;
	struct peer *p;
	size_t n, left;
	struct ev_timer *deadline;
	trig_batch_done_fn done;
	void *ud;
};

/* One entry: its address in ss; false when it is not a literal. */
static bool parse_one(const char *s, size_t n, struct sockaddr_storage *ss, socklen_t *sl, char *name, size_t cap)
{
	char host[64], port[8] = "1778";
	const char *colon;
	if (n == 0 || n >= cap)
		return false;
	if (s[0] == '[') {
		const char *end = memchr(s, ']', n);
		if (!end || (size_t)(end - s - 1) >= sizeof host)
			return false;
		memcpy(host, s + 1, (size_t)(end - s - 1));
		host[end - s - 1] = 0;
		colon = end + 1 < s + n ? end + 1 : NULL;
		if (colon && *colon != ':')
			return false;
	} else {
		colon = memchr(s, ':', n);
		size_t hl = colon ? (size_t)(colon - s) : n;
		if (hl == 0 || hl >= sizeof host)
			return false;
		memcpy(host, s, hl);
		host[hl] = 0;
	}
	if (colon) {
		size_t pl = (size_t)(s + n - colon - 1);
		if (pl == 0 || pl >= sizeof port)
			return false;
		memcpy(port, colon + 1, pl);
		port[pl] = 0;
		for (size_t i = 0; i < pl; i++)
			if (port[i] < '0' || port[i] > '9')
				return false;
		long v = strtol(port, NULL, 10);
		if (v < 1 || v > 65535)
			return false;
	}
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai = NULL;
	if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
		return false;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sl = ai->ai_addrlen;
	freeaddrinfo(ai);
	memcpy(name, s, n);
	name[n] = 0;
	return true;
}

/* Walk the list: fn for each entry; false at the first bad one. */
static bool each(const char *spec, size_t n, struct buf *err,
		 bool (*fn)(void *ud, const struct sockaddr_storage *ss, socklen_t sl, const char *name), void *ud)
{
	size_t count = 0, i = 0;
	if (n == 0 || n > TRIG_PEERS_TEXT_MAX) {
		buf_printf(err, "peers: 1 to %d bytes of ADDR[:PORT],... expected", TRIG_PEERS_TEXT_MAX);
		return false;
	}
	while (i <= n) {
		size_t j = i;
		while (j < n && spec[j] != ',')
			j++;
		struct sockaddr_storage ss;
		socklen_t sl;
		char name[80];
		if (!parse_one(spec + i, j - i, &ss, &sl, name, sizeof name)) {
			buf_printf(err, "peers: \"%.*s\" is not ADDR[:PORT] with a numeric IPv4 or [IPv6] address (the daemon does "
				   "no DNS lookups)", (int)(j - i > 80 ? 80 : j - i), spec + i);
			return false;
		}
		if (++count > TRIG_PEERS_MAX) {
			buf_printf(err, "peers: more than %d", TRIG_PEERS_MAX);
			return false;
		}
		if (fn && !fn(ud, &ss, sl, name))
			return false;
		i = j + 1;
	}
	return true;
}

bool trig_peers_check(const char *spec, size_t n, struct buf *err) { return each(spec, n, err, NULL, NULL); }

/* This peer's summary object; its socket and buffers go. */
static void record(struct peer *p, const char *error)
{
	if (p->fd >= 0) {
		ev_io_del(p->b->loop, p->fd);
		close(p->fd);
		p->fd = -1;
	}
	struct jw w;
	jw_init(&w, &p->result);
	jw_obj_begin(&w);
	if (error) {
		jw_key(&w, "error"), jw_str(&w, error);
	} else {
		struct json_doc doc;
		struct json_error je;
		if (!json_parse(p->in.body.data ? p->in.body.data : "", p->in.body.len, &doc, &je)) {
			jw_key(&w, "error"), jw_str(&w, "the answer is not JSON");
		} else {
			const struct json_value *m = json_get(doc.root, "processesMatched");
			const struct json_value *t = json_get(doc.root, "activityProfilersTriggered");
			const struct json_value *busy = json_get(doc.root, "activityProfilersBusy");
			const char *s;
			size_t n;
			if (json_get_str(doc.root, "error", &s, &n) || json_get_str(doc.root, "status", &s, &n))
				jw_key(&w, "error"), jw_strn(&w, s, n > 200 ? 200 : n);
			if (busy && busy->type == JV_NUMBER)
				jw_key(&w, "busy"), jw_value(&w, busy);
			jw_key(&w, "matched"), jw_u64(&w, m && m->type == JV_ARRAY ? m->len : 0);
			jw_key(&w, "triggered");
			jw_arr_begin(&w);
			for (uint32_t i = 0; t && t->type == JV_ARRAY && i < t->len && i < 16; i++)
				if (t->u.items[i].type == JV_NUMBER)
					jw_value(&w, &t->u.items[i]);
			jw_arr_end(&w);
			json_doc_free(&doc);
		}
	}
	jw_key(&w, "peer"), jw_str(&w, p->name);
	jw_obj_end(&w);
	p->state = PEER_DONE;
	net_frame_free(&p->in);
	buf_free(&p->out);
}

/* Every peer is done: hand the summary over and free the batch. */
static void complete(struct trig_batch *b)
{
	struct buf sum = BUF_INIT;
	buf_putc(&sum, '[');
	for (size_t i = 0; i < b->n; i++) {
		if (i)
			buf_putc(&sum, ',');
		buf_append(&sum, b->p[i].result.data, b->p[i].result.len);
	}
	buf_putc(&sum, ']');
	b->done(b->ud, b, sum.data, sum.len);
	buf_free(&sum);
	trig_batch_free(b);
}

/* A started peer is done; the last one completes the batch (b is then freed). */
static bool finish(struct peer *p, const char *error)
{
	record(p, error);
	struct trig_batch *b = p->b;
	if (--b->left)
		return false;
	complete(b);
	return true;
}

static void on_io(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)fd;
	struct peer *p = ud;
	if (p->state == PEER_CONNECTING) {
		int e = 0;
		socklen_t el = sizeof e;
		if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e) {
			finish(p, strerror(e));
			return;
		}
		while (p->off < p->out.len) {
			ssize_t w = send(p->fd, p->out.data + p->off, p->out.len - p->off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 && errno == EAGAIN)
				return; /* the rest when writable again */
			if (w <= 0) {
				finish(p, w < 0 ? strerror(errno) : "send made no progress");
				return;
			}
			p->off += (size_t)w;
		}
		p->state = PEER_READING;
		ev_io_mod(p->b->loop, p->fd, EPOLLIN);
		return;
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	enum net_frame_status s = net_frame_read(&p->in, p->fd);
	if (s == NET_FRAME_MORE)
		return;
	if (s == NET_FRAME_DONE)
		finish(p, NULL);
	else if (s == NET_FRAME_EOF)
		finish(p, "closed without an answer (no such function, or refused: token, allow-list)");
	else
		finish(p, net_frame_status_str(s));
}

static void on_deadline(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct trig_batch *b = ud;
	for (size_t i = 0; i < b->n; i++)
		if (b->p[i].state != PEER_DONE && finish(&b->p[i], "no answer within the deadline"))
			return; /* that was the last: b is gone */
}

struct start_ctx {
	struct trig_batch *b;
	const char *body;
	size_t len;
};

static bool start_one(void *ud, const struct sockaddr_storage *ss, socklen_t sl, const char *name)
{
	struct start_ctx *c = ud;
	struct trig_batch *b = c->b;
	struct peer *p = &b->p[b->n++];
	p->b = b;
	p->state = PEER_CONNECTING;
	snprintf(p->name, sizeof p->name, "%s", name);
	net_frame_init(&p->in, TRIG_PEER_ANSWER_MAX);
	net_frame_put(&p->out, c->body, c->len);
	p->fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0 || (connect(p->fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS)) {
		char why[160];
		snprintf(why, sizeof why, "cannot connect: %s", strerror(errno));
		record(p, why);
	} else if (ev_io_add(b->loop, p->fd, EPOLLOUT, on_io, p) < 0)
		record(p, "cannot watch the socket");
	else
		b->left++;
	return true;
}

struct trig_batch *trig_peers_send(struct ev_loop *l, const char *spec, const char *body, size_t len,
				   trig_batch_done_fn done, void *ud, struct buf *err)
{
	struct trig_batch *b = xcalloc(1, sizeof *b);
	b->loop = l;
	b->done = done;
	b->ud = ud;
	b->p = xcalloc(TRIG_PEERS_MAX, sizeof *b->p);
	b->deadline = ev_timer_add(l, (int64_t)TRIG_PEER_TIMEOUT_MS * NS_PER_MS, 0, on_deadline, b);
	struct start_ctx c = {b, body, len};
	if (!b->deadline)
		buf_printf(err, "peers: cannot create a timer: %s", strerror(errno));
	if (!b->deadline || !each(spec, strlen(spec), err, start_one, &c)) {
		trig_batch_free(b);
		return NULL;
	}
	if (b->left == 0) { /* no peer could even be asked: done now */
		complete(b);
		return NULL;
	}
	return b;
}

void trig_batch_free(struct trig_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		struct peer *p = &b->p[i];
		if (p->fd >= 0) {
			ev_io_del(b->loop, p->fd);
			close(p->fd);
		}
		net_frame_free(&p->in);
		buf_free(&p->out);
		buf_free(&p->result);
	}
	if (b->deadline)
		ev_timer_del(b->loop, b->deadline);
	free(b->p);
	free(b);
}
