/* ipc.c - see ipc.h. */
#include "ipc.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/ipc/ipc_wire.h"
#include "daemon/rpc/security.h"

#define FAR_FUTURE_NS (3650ll * 86400 * NS_PER_SEC)

struct ipc_endpoint {
	struct ev_loop *loop;
	struct registry *reg;
	int fd;
	char *name, *dir;
	int64_t expiry_s;
	struct ev_timer *gc;
	int64_t gc_at; /* monotonic deadline armed, 0: none */
	uint8_t *rx;   /* IPC_MAX_DGRAM: IPC_BATCH receive slots */
	struct buf tx, text;
	struct ipc_stats st;
	dev_t sock_dev; /* dir mode: the socket file we bound, removed at exit only if still ours */
	ino_t sock_ino;
	bool sock_known;
	ipc_new_proc_fn on_new;
	void *on_new_ud;
	struct ipc_filter *filter; /* NULL: none (filter_why says why) */
	char *filter_why;
};

static void arm_gc(struct ipc_endpoint *e)
{
	int64_t at = registry_next_expiry(e->reg, e->expiry_s);
	if (at < 0) {
		if (e->gc_at)
			ev_timer_set(e->gc, FAR_FUTURE_NS, 0);
		e->gc_at = 0;
		return;
	}
	if (e->gc_at && e->gc_at <= at)
		return; /* an earlier deadline is armed; it re-arms when it fires */
	int64_t now = clock_mono_ns();
	ev_timer_set(e->gc, at > now ? at - now : 1, 0);
	e->gc_at = at;
}

static void on_gc(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct ipc_endpoint *e = ud;
	e->gc_at = 0;
	registry_expire(e->reg, clock_mono_ns(), e->expiry_s);
	arm_gc(e);
}

enum { SENT = 1, NOT_NOW = 0, TOO_BIG = -1 };

static int send_reply(struct ipc_endpoint *e, const struct sockaddr_un *to, socklen_t tolen, const char *type,
		      const void *payload, size_t n)
{
	buf_reset(&e->tx);
	ipc_encode(&e->tx, type, payload, n);
	for (int tries = 0;; tries++) {
		ssize_t w = sendto(e->fd, e->tx.data, e->tx.len, MSG_DONTWAIT | MSG_NOSIGNAL,
				   (const struct sockaddr *)to, tolen);
		if (w == (ssize_t)e->tx.len) {
			e->st.replies++;
			return SENT;
		}
		if (w < 0 && errno == EINTR && tries < 3)
			continue;
		/* ECONNREFUSED/ENOENT: the process is gone.  EAGAIN: its queue
		 * is full (it stopped reading).  Either way, never wait here.
		 * EMSGSIZE: no retry can ever send it. */
		int err = w < 0 ? errno : 0;
		e->st.reply_failed++;
		log_debug("IPC reply not sent: %s", w < 0 ? strerror(err) : "short send");
		return err == EMSGSIZE ? TOO_BIG : NOT_NOW;
	}
}

/* The datagram's sender credentials (SCM_CREDENTIALS): pid is the kernel's
 * pid in our pid namespace (0: not visible from here), -1 when none came. */
struct peer {
	int32_t pid;
	bool has_uid;
	uint32_t uid;
};

static void handle(struct ipc_endpoint *e, const uint8_t *data, size_t len, const struct sockaddr_un *from,
		   socklen_t fromlen, int64_t now, const struct peer *peer)
{
	int32_t sender = peer->pid;
	struct ipc_msg m;
	const char *why = NULL;
	e->st.datagrams++;
	if (!ipc_parse(data, len, &m, &why)) {
		e->st.malformed++;
		log_debug("IPC: dropped malformed datagram (%zu bytes): %s", len, why);
		return;
	}
	if (!ipc_peer_ok(from, fromlen, e->dir)) {
		e->st.foreign++;
		LOG_ONCE(LOG_LEVEL_WARN, "IPC: dropped a message from an unnamed or foreign sender");
		return;
	}
	if (m.kind == IPC_CTXT) {
		e->st.ctxt++;
		/* Counted against the sender's user like a req, and expired: a job
		 * it creates goes after --ipc_process_expiry_s without a ctxt. */
		struct reg_sender cs = {.has_uid = peer->has_uid, .uid = peer->uid};
		int32_t count = registry_ctxt_from(e->reg, &cs, m.jobid, m.gpu, m.pid, now);
		if (count >= 0)
			(void)send_reply(e, from, fromlen, "ctxt", &count, sizeof count);
		if (!e->gc_at) /* an armed deadline is never later than this job's */
			arm_gc(e);
		return;
	}
	if (m.kind == IPC_OTHER) {
		e->st.unknown++;
		char safe[IPC_TYPE_LEN + 1];
		log_debug("IPC: unknown message type '%s'", sec_printable(m.type, strlen(m.type), safe, sizeof safe));
		return;
	}
	e->st.req++;
	struct reg_delivery d;
	bool was_empty = e->reg->nprocs == 0;
	/* The caps count by uid and by the exact sender address. */
	size_t off = offsetof(struct sockaddr_un, sun_path);
	struct reg_sender rs = {.has_uid = peer->has_uid, .uid = peer->uid, .name = from->sun_path,
				.name_len = fromlen > (socklen_t)off ? (size_t)fromlen - off : 0};
	int polled = registry_poll_from(e->reg, &rs, m.jobid, m.pids, (uint32_t)m.n, m.want, now, &d);
	if (polled < 0)
		return;
	if (polled == 1 && e->on_new) {
		char job[24];
		registry_job_str(m.jobid, job);
		/* Without credentials (SO_PASSCRED refused, never seen on Linux)
		 * the reported pid is all there is. */
		e->on_new(sender >= 0 ? sender : m.pids[0], m.pids[0], job, e->on_new_ud);
	}
	buf_reset(&e->text);
	registry_delivery_text(&d, &e->text);
	int sent = send_reply(e, from, fromlen, "req", e->text.data, e->text.len);
	if (sent == SENT) {
		if (d.act || d.evt)
			LOG_RATELIMITED(LOG_LEVEL_INFO, "delivered a trace config to process %d (job %lld)", (int)m.pids[0],
				 (long long)m.jobid);
		registry_delivery_free(&d);
	} else if (sent == TOO_BIG && (d.act || d.evt)) {
		/* Putting it back would fail the same way on every poll and
		 * leave the process unanswered and "busy" for good. */
		e->st.dropped_too_big++;
		LOG_RATELIMITED(LOG_LEVEL_WARN,
				"IPC: dropped a trace config for process %d (job %lld): its %zu-byte reply does not "
				"fit in one datagram",
				(int)m.pids[0], (long long)m.jobid, e->text.len + IPC_HDR_LEN);
		registry_delivery_free(&d);
		(void)send_reply(e, from, fromlen, "req", NULL, 0);
	} else {
		registry_restore(e->reg, m.jobid, m.pids, (uint32_t)m.n, &d);
	}
	if (was_empty)
		arm_gc(e);
}

static struct peer sender_of(struct msghdr *mh)
{
	struct peer p = {.pid = -1};
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof uc);
			p.pid = uc.pid > 0 ? (int32_t)uc.pid : 0;
			p.has_uid = true;
			p.uid = (uint32_t)uc.uid;
			return p;
		}
	return p;
}

/* Datagrams served per wake-up: the kernel queue holds only
 * net.unix.max_dgram_qlen (10 by default) of them, so 64 is several queue
 * fills, and 64 polls cost well under a millisecond to answer. */
#define IPC_BURST 64
/* They are taken IPC_BATCH at a time with one recvmmsg (one system call
 * per 16 datagrams, not one each: under a flood the receive path is most
 * of the daemon's work).  A valid datagram is at most 312 bytes (a req
 * with 64 pids), so IPC_SLOT bytes each hold any of them; a longer one is
 * counted malformed, as before.  The slots are the one 64 KiB receive
 * buffer of before. */
#define IPC_BATCH 16
#define IPC_SLOT (IPC_MAX_DGRAM / IPC_BATCH)

union ipc_ctl {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(struct ucred))];
};

static void on_readable(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)events;
	struct ipc_endpoint *e = ud;
	int64_t now = clock_mono_ns();
	struct sockaddr_un from[IPC_BATCH];
	struct iovec iov[IPC_BATCH];
	union ipc_ctl ctl[IPC_BATCH];
	struct mmsghdr mm[IPC_BATCH];
	/* Kineto waits only ~90 ms for its answer, so serve what is queued -
	 * but at most IPC_BURST datagrams per wake-up: a flooder refills the
	 * queue as fast as it is drained, and an unbounded drain would keep
	 * the one loop here while timers (collection ticks) and the RPC server
	 * wait.  The socket is level-triggered: epoll returns it again at once,
	 * after the other ready fds have had their turn. */
	for (int done = 0; done < IPC_BURST;) {
		for (int i = 0; i < IPC_BATCH; i++) {
			iov[i] = (struct iovec){.iov_base = e->rx + (size_t)i * IPC_SLOT, .iov_len = IPC_SLOT};
			memset(&from[i], 0, sizeof from[i]);
			mm[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &from[i], .msg_namelen = sizeof from[i],
							     .msg_iov = &iov[i], .msg_iovlen = 1,
							     .msg_control = &ctl[i], .msg_controllen = sizeof ctl[i]}};
		}
		int n = recvmmsg(fd, mm, IPC_BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				LOG_ONCE(LOG_LEVEL_ERROR, "IPC receive failed: %s", strerror(errno));
			return;
		}
		if (done == 0)
			(void)ipc_filter_poll(e->filter, now, false);
		for (int i = 0; i < n; i++) {
			struct msghdr *mh = &mm[i].msg_hdr;
			size_t r = mm[i].msg_len;
			if (r > IPC_SLOT || (mh->msg_flags & MSG_TRUNC)) {
				e->st.datagrams++;
				e->st.malformed++;
				log_debug("IPC: dropped oversized datagram (%zu bytes)", r);
				continue;
			}
			struct peer peer = sender_of(mh);
			handle(e, (uint8_t *)iov[i].iov_base, r, &from[i], mh->msg_namelen, now, &peer);
		}
		done += n;
		if (n < IPC_BATCH)
			return; /* the queue is empty */
	}
}

/* The socket directory as clients spell it: "//" collapsed, "/./" and a
 * trailing "/" or "/." dropped ("/tmp/x/" -> "/tmp/x").  Clients bind
 * "<their dir>/dynoconfigclient…" and replies go only to peers under our
 * dir (ipc_peer_ok compares the text), so "/tmp/x/" on our side dropped
 * every datagram from clients on "/tmp/x".  Textual only: realpath would
 * turn a symlinked directory into its target, which clients do not use. */
static char *dir_normalise(const char *in)
{
	size_t n = strlen(in);
	char *out = xmalloc(n + 1);
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (in[i] == '/') {
			if (o == 0 || out[o - 1] != '/')
				out[o++] = '/';
			i++;
		} else if (in[i] == '.' && (o == 0 || out[o - 1] == '/') && (in[i + 1] == '/' || in[i + 1] == 0) &&
			   o > 0) {
			i++; /* a "." component under a slash */
		} else {
			out[o++] = in[i++];
		}
	}
	while (o > 1 && out[o - 1] == '/')
		o--;
	out[o] = 0;
	return out;
}

/* The datagram budget: never fatal.  Without it tracing works as before;
 * only one local user's flood can then crowd out the others. */
static void attach_filter(struct ipc_endpoint *e, const struct ipc_filter_opts *fo)
{
	if (!fo) {
		e->filter_why = xstrdup("off: not enabled (--ipc_bpf_filter=off)");
		return;
	}
	struct buf why = BUF_INIT;
	e->filter = ipc_filter_attach(e->fd, fo, &why);
	if (e->filter) {
		log_info("IPC: datagram budget on: %lld/s (burst %lld) per sending user, %lld/s (burst %lld) per "
			 "process; over it the kernel drops them",
			 (long long)fo->uid_rate, (long long)fo->uid_burst, (long long)fo->proc_rate,
			 (long long)fo->proc_burst);
	} else {
		log_warn("IPC: running without the datagram budget per user: %s; one local user's flood can "
			 "keep the socket's queue full (docs/security.md)",
			 why.data);
		e->filter_why = xmalloc(why.len + 6);
		memcpy(e->filter_why, "off: ", 5);
		memcpy(e->filter_why + 5, why.data, why.len + 1);
	}
	buf_free(&why);
}

struct ipc_endpoint *ipc_start(struct ev_loop *l, struct registry *reg, const struct ipc_opts *o,
			       struct buf *err)
{
	const char *name = o && o->name && *o->name ? o->name : IPC_DAEMON_NAME;
	char *ndir = o && o->dir && *o->dir ? dir_normalise(o->dir) : NULL;
	const char *dir = ndir;
	int fd = ipc_bind(name, dir, err);
	if (fd < 0) {
		free(ndir);
		return NULL;
	}
	struct ipc_endpoint *e = xcalloc(1, sizeof *e);
	e->loop = l;
	e->reg = reg;
	e->fd = fd;
	e->name = xstrdup(name);
	e->dir = ndir;
	if (dir) {
		struct sockaddr_un sa;
		socklen_t salen;
		struct stat st;
		if (ipc_addr(name, dir, &sa, &salen, err) && stat(sa.sun_path, &st) == 0) {
			e->sock_dev = st.st_dev;
			e->sock_ino = st.st_ino;
			e->sock_known = true;
		}
	}
	e->expiry_s = o && o->expiry_s > 0 ? o->expiry_s : 60;
	e->rx = xmalloc(IPC_MAX_DGRAM);
	buf_init(&e->tx);
	buf_init(&e->text);
	/* The largest reply this socket can send: Linux refuses a datagram
	 * longer than SO_SNDBUF - 32 (EMSGSIZE).  Configs that would not fit
	 * are refused when requested (rpc_tracing.c reads max_config). */
	int sndbuf = 0;
	socklen_t sl = sizeof sndbuf;
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) == 0 && sndbuf > 32 + IPC_HDR_LEN + REG_WRAP_OVERHEAD) {
		size_t carry = (size_t)sndbuf - 32 - IPC_HDR_LEN - REG_WRAP_OVERHEAD;
		if (carry < reg->max_config)
			reg->max_config = carry;
	}
	log_debug("IPC: replies up to %zu bytes of config (SO_SNDBUF %d)", reg->max_config, sndbuf);
	int one = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
		log_warn("IPC: no sender credentials (SO_PASSCRED: %s); tracking processes by the pid they report",
			 strerror(errno));
	attach_filter(e, o ? o->filter : NULL);
	e->gc = ev_timer_add(l, FAR_FUTURE_NS, 0, on_gc, e);
	if (!e->gc || ev_io_add(l, fd, EPOLLIN, on_readable, e) < 0) {
		buf_printf(err, "cannot watch the IPC socket: %s", strerror(errno));
		ipc_stop(e);
		return NULL;
	}
	/* Kineto waits ~90 ms for its answer, and then polls again a second
	 * later (docs/wire-protocols.md): the socket is served at the top of
	 * every loop batch, not behind the RPC server's or Prometheus's ready
	 * connections (bench/soak.sh: 7-10 % of polls answered late that
	 * way).  on_readable bounds itself (IPC_BURST datagrams a call), and
	 * the datagram budget bounds what a flood gets into the queue. */
	if (ev_io_urgent(l, fd) < 0)
		log_warn("IPC: the socket is served as plain I/O (ev_io_urgent: %s)", strerror(errno));
	if (dir)
		log_info("IPC endpoint listening at %s/%s", dir, name);
	else
		log_info("IPC endpoint listening at @%s@ (abstract)", name);
	return e;
}

void ipc_stop(struct ipc_endpoint *e)
{
	if (!e)
		return;
	const struct reg_stats *rs = &e->reg->stats;
	if (e->st.dropped_too_big)
		log_info("IPC: %llu trace configs dropped: too big for one datagram",
			 (unsigned long long)e->st.dropped_too_big);
	if (rs->refused_sender || rs->refused_uid || rs->refused_full)
		log_info("registry: %llu refused (%llu per-sender cap, %llu per-user cap, %llu full)",
			 (unsigned long long)(rs->refused_sender + rs->refused_uid + rs->refused_full),
			 (unsigned long long)rs->refused_sender, (unsigned long long)rs->refused_uid,
			 (unsigned long long)rs->refused_full);
	if (e->filter) {
		uint64_t d = ipc_filter_poll(e->filter, clock_mono_ns(), true);
		struct buf who = BUF_INIT;
		ipc_filter_summary(e->filter, &who);
		if (d)
			log_info("IPC: %llu datagrams dropped over their sender's budget (%s)", (unsigned long long)d,
				 who.data);
		buf_free(&who);
	}
	ev_io_del(e->loop, e->fd);
	if (e->gc)
		ev_timer_del(e->loop, e->gc);
	close(e->fd);
	ipc_filter_free(e->filter);
	free(e->filter_why);
	if (e->dir) {
		/* Leave no stale endpoint behind, but remove our own socket file
		 * only: another daemon may have bound the path since (after ours
		 * was deleted by hand), and deleting its file would cut it off. */
		struct sockaddr_un sa;
		socklen_t len;
		struct buf tmp = BUF_INIT;
		struct stat st;
		if (ipc_addr(e->name, e->dir, &sa, &len, &tmp) && stat(sa.sun_path, &st) == 0) {
			if (e->sock_known && st.st_dev == e->sock_dev && st.st_ino == e->sock_ino)
				unlink(sa.sun_path);
			else
				log_warn("IPC: not removing %s: it is no longer this daemon's socket", sa.sun_path);
		}
		buf_free(&tmp);
	}
	free(e->name);
	free(e->dir);
	free(e->rx);
	buf_free(&e->tx);
	buf_free(&e->text);
	free(e);
}

const struct ipc_stats *ipc_get_stats(struct ipc_endpoint *e)
{
	e->st.dropped_over_budget = ipc_filter_poll(e->filter, clock_mono_ns(), false);
	return &e->st;
}

const char *ipc_filter_state(const struct ipc_endpoint *e) { return e->filter ? "on" : e->filter_why; }

void ipc_on_new_process(struct ipc_endpoint *e, ipc_new_proc_fn fn, void *ud)
{
	e->on_new = fn;
	e->on_new_ud = ud;
}
