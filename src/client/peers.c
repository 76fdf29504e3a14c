/*
 * peers.c - host names and SLURM jobs as a trigger's peers.  The daemon
 * takes only numeric addresses, because a lookup could block its event
 * loop for seconds (docs/fleet.md); dyno is free to block, so it resolves
 * the names once, when the trigger is added, and sends the addresses.
 * A peer list that comes from a SLURM job names every node, this one
 * among them: a daemon asking itself would trace its own processes twice,
 * so the daemons the trigger is added to are left out.  Costs one
 * getaddrinfo per name (plus squeue/scontrol for a job), nothing at run
 * time; a peer whose address changes later keeps the old one.
 */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/peers.h"

/* "ADDR" of ai (numeric, v6 without brackets); false when it has none */
static bool numeric(const struct addrinfo *ai, char *host, size_t cap)
{
	return getnameinfo(ai->ai_addr, ai->ai_addrlen, host, (socklen_t)cap, NULL, 0, NI_NUMERICHOST) == 0;
}

static bool loopback(const struct addrinfo *ai)
{
	if (ai->ai_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >> 24) == 127;
	if (ai->ai_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* Every "ADDR port" of name at port, '\n'-separated, into set. */
static void add_self(struct buf *set, const char *name, const char *port, bool *is_loop)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	if (getaddrinfo(name, NULL, &hints, &ai) != 0)
		return;
	for (const struct addrinfo *p = ai; p; p = p->ai_next) {
		char h[NI_MAXHOST];
		if (!numeric(p, h, sizeof h))
			continue;
		buf_printf(set, "%s %s\n", h, port);
		if (is_loop && loopback(p))
			*is_loop = true;
	}
	freeaddrinfo(ai);
}

static bool in_set(const struct buf *set, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = set->data; p && *p;) {
		const char *e = strchr(p, '\n');
		if ((size_t)(e - p) == n && memcmp(p, line, n) == 0)
			return true;
		p = e + 1;
	}
	return false;
}

bool peers_resolve(const char *list, const char *slurm_job, int64_t default_port, const struct targets *self,
		   struct buf *out, struct buf *note, struct buf *err)
{
	struct targets t = {0};
	bool ok = (!list || targets_add_list(&t, list, default_port, err)) &&
		  (!slurm_job || hosts_slurm_job(slurm_job, &t, default_port, err));
	if (ok && t.n == 0) {
		buf_puts(err, "no peers given");
		ok = false;
	}
	/* "ADDR PORT" of every daemon the trigger goes to; this host's own
	 * addresses too at a loopback target's port (a SLURM node list names
	 * this host, not 127.0.0.1) */
	struct buf selfset = BUF_INIT, seen = BUF_INIT;
	for (size_t i = 0; ok && i < self->n; i++) {
		bool loop = false;
		add_self(&selfset, self->t[i].host, self->t[i].port, &loop);
		char me[256];
		if (loop && gethostname(me, sizeof me) == 0) {
			me[sizeof me - 1] = 0;
			add_self(&selfset, me, self->t[i].port, NULL);
		}
	}
	size_t kept = 0;
	for (size_t i = 0; ok && i < t.n; i++) {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
		int rc = getaddrinfo(t.t[i].host, NULL, &hints, &ai);
		if (rc != 0 || !ai) {
			buf_printf(err, "peer %s: cannot resolve: %s", t.t[i].label,
				   rc == EAI_SYSTEM ? "system error" : gai_strerror(rc));
			ok = false;
			break;
		}
		/* getaddrinfo's first answer: the address a connect would try first */
		char h[NI_MAXHOST], line[NI_MAXHOST + 16];
		if (!numeric(ai, h, sizeof h)) {
			buf_printf(err, "peer %s: its address cannot be written", t.t[i].label);
			freeaddrinfo(ai);
			ok = false;
			break;
		}
		bool v6 = ai->ai_family == AF_INET6;
		freeaddrinfo(ai);
		snprintf(line, sizeof line, "%s %s", h, t.t[i].port);
		if (in_set(&selfset, line)) {
			buf_printf(note, "%speer %s is a daemon the trigger is added to: left out", note->len ? "; " : "",
				   t.t[i].label);
			continue;
		}
		if (in_set(&seen, line))
			continue;
		buf_printf(&seen, "%s\n", line);
		buf_printf(out, "%s%s%s%s:%s", kept++ ? "," : "", v6 ? "[" : "", h, v6 ? "]" : "", t.t[i].port);
	}
	if (ok && kept == 0) {
		buf_puts(err, "no peers left: every one is a daemon the trigger is added to");
		ok = false;
	}
	buf_free(&selfset);
	buf_free(&seen);
	targets_free(&t);
	return ok;
}
