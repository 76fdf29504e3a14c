/* net.c - see net.h. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"

static int listen_on(int family, const struct sockaddr *sa, socklen_t len, bool dual, int backlog,
		     struct buf *err)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		buf_printf(err, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	/* Upstream leaves IPV6_V6ONLY at the host default; clearing it makes
	 * "::" serve IPv4 clients too even where bindv6only=1. */
	if (family == AF_INET6 && dual)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
	if (bind(fd, sa, len) < 0 || listen(fd, backlog) < 0) {
		buf_printf(err, "bind/listen: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &l) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int net_listen_tcp(const char *addr, int port, int backlog, int *bound_port, struct buf *err)
{
	int fd;
	if (port < 0 || port > 65535) {
		buf_printf(err, "port %d out of range", port);
		return -1;
	}
	if (!addr || !*addr || strcmp(addr, "::") == 0) {
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
					  .sin6_addr = IN6ADDR_ANY_INIT};
		struct buf e6 = BUF_INIT;
		fd = listen_on(AF_INET6, (struct sockaddr *)&s6, sizeof s6, true, backlog, &e6);
		if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
			/* No IPv6 in this kernel: upstream gives up, we serve IPv4. */
			struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
						 .sin_addr.s_addr = htonl(INADDR_ANY)};
			fd = listen_on(AF_INET, (struct sockaddr *)&s4, sizeof s4, false, backlog, err);
		} else if (fd < 0) {
			buf_append(err, e6.data, e6.len);
		}
		buf_free(&e6);
	} else {
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
		struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		char tmp[INET6_ADDRSTRLEN + 2];
		const char *a = addr;
		size_t n = strlen(addr);
		if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']' && n - 2 < sizeof tmp) {
			memcpy(tmp, addr + 1, n - 2);
			tmp[n - 2] = 0;
			a = tmp;
		}
		if (inet_pton(AF_INET6, a, &s6.sin6_addr) == 1)
			fd = listen_on(AF_INET6, (struct sockaddr *)&s6, sizeof s6, false, backlog, err);
		else if (inet_pton(AF_INET, a, &s4.sin_addr) == 1)
			fd = listen_on(AF_INET, (struct sockaddr *)&s4, sizeof s4, false, backlog, err);
		else {
			buf_printf(err, "'%s' is not an IPv4 or IPv6 address", addr);
			return -1;
		}
	}
	if (fd >= 0 && bound_port)
		*bound_port = port_of(fd);
	return fd;
}

const char *net_addr_str(const struct sockaddr *sa, socklen_t len, char *out, size_t cap)
{
	char a[INET6_ADDRSTRLEN];
	if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			inet_ntop(AF_INET, s6->sin6_addr.s6_addr + 12, a, sizeof a);
			snprintf(out, cap, "%s:%u", a, ntohs(s6->sin6_port));
		} else {
			inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
			snprintf(out, cap, "[%s]:%u", a, ntohs(s6->sin6_port));
		}
	} else if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
		snprintf(out, cap, "%s:%u", a, ntohs(s4->sin_port));
	} else {
		snprintf(out, cap, "(unknown address family %d)", sa->sa_family);
	}
	return out;
}

void net_body_with_token(struct buf *out, const char *req, size_t n, const char *token)
{
	const char *brace = memchr(req, '{', n);
	if (!brace) {
		buf_append(out, req, n);
		return;
	}
	size_t head = (size_t)(brace + 1 - req);
	buf_append(out, req, head);
	buf_puts(out, "\"token\":");
	json_escape(out, token, strlen(token));
	/* a comma unless the object is empty */
	size_t k = head;
	while (k < n && (req[k] == ' ' || req[k] == '\t' || req[k] == '\n' || req[k] == '\r'))
		k++;
	if (k < n && req[k] != '}')
		buf_putc(out, ',');
	buf_append(out, req + head, n - head);
}

/* ---- frames ---- */

void net_frame_init(struct net_frame *f, uint32_t max)
{
	memset(f, 0, sizeof *f);
	buf_init(&f->body);
	buf_init(&f->rest);
	f->max = max;
}

void net_frame_free(struct net_frame *f)
{
	buf_free(&f->body);
	buf_free(&f->rest);
	f->rest_off = 0;
}

void net_frame_drop_pending(struct net_frame *f)
{
	buf_free(&f->rest);
	f->rest_off = 0;
}

void net_frame_reset(struct net_frame *f, size_t keep_cap)
{
	f->nhdr = 0;
	f->len = 0;
	if (f->body.cap > keep_cap)
		buf_free(&f->body);
	else
		buf_reset(&f->body);
}

enum net_frame_status net_frame_feed(struct net_frame *f, const void *p, size_t n, size_t *used)
{
	const uint8_t *s = p;
	size_t u = 0;
	while (f->nhdr < 4 && u < n)
		f->hdr[f->nhdr++] = s[u++];
	if (f->nhdr < 4) {
		*used = u;
		return NET_FRAME_MORE;
	}
	memcpy(&f->len, f->hdr, 4); /* native order, as upstream */
	if (f->len <= 0) {
		*used = u;
		return NET_FRAME_BAD_LEN;
	}
	if ((uint32_t)f->len > f->max) {
		*used = u;
		return NET_FRAME_TOO_BIG;
	}
	size_t want = (size_t)f->len - f->body.len;
	size_t take = n - u < want ? n - u : want;
	buf_append(&f->body, s + u, take);
	u += take;
	*used = u;
	return f->body.len == (size_t)f->len ? NET_FRAME_DONE : NET_FRAME_MORE;
}

enum net_frame_status net_frame_read(struct net_frame *f, int fd)
{
	size_t used;
	if (net_frame_pending(f)) {
		enum net_frame_status st = net_frame_feed(f, f->rest.data + f->rest_off, f->rest.len - f->rest_off, &used);
		f->rest_off += used;
		if (f->rest_off == f->rest.len) {
			buf_reset(&f->rest);
			f->rest_off = 0;
		}
		if (st != NET_FRAME_MORE)
			return st;
	}
	char tmp[65536];
	for (;;) {
		/* One read usually takes a whole request; a big answer takes a few. */
		ssize_t r = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return NET_FRAME_MORE;
			return NET_FRAME_IO_ERROR;
		}
		if (r == 0)
			return NET_FRAME_EOF;
		enum net_frame_status st = net_frame_feed(f, tmp, (size_t)r, &used);
		if (st == NET_FRAME_DONE && used < (size_t)r)
			buf_append(&f->rest, tmp + used, (size_t)r - used);
		if (st != NET_FRAME_MORE)
			return st;
	}
}

const char *net_frame_status_str(enum net_frame_status s)
{
	switch (s) {
	case NET_FRAME_MORE: return "incomplete frame";
	case NET_FRAME_DONE: return "complete";
	case NET_FRAME_EOF: return "connection closed before a complete frame";
	case NET_FRAME_BAD_LEN: return "length prefix <= 0";
	case NET_FRAME_TOO_BIG: return "length prefix over the limit";
	case NET_FRAME_IO_ERROR: return "read error";
	}
	return "?";
}

void net_frame_put(struct buf *out, const void *body, size_t n)
{
	buf_put_u32(out, (uint32_t)n);
	buf_append(out, body, n);
}

/* ---- allow-lists ---- */

static bool parse_rule(const char *s, size_t n, struct net_rule *r, struct buf *err)
{
	char tmp[INET6_ADDRSTRLEN + 8];
	if (n == 0 || n >= sizeof tmp) {
		buf_printf(err, "bad network '%.*s'", (int)(n > 64 ? 64 : n), s);
		return false;
	}
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *slash = strchr(tmp, '/');
	int prefix = -1;
	if (slash) {
		*slash = 0;
		char *end;
		errno = 0;
		long p = strtol(slash + 1, &end, 10);
		if (!slash[1] || *end || errno || p < 0 || p > 128) {
			buf_printf(err, "bad prefix length in '%.*s'", (int)n, s);
			return false;
		}
		prefix = (int)p;
	}
	memset(r, 0, sizeof *r);
	if (inet_pton(AF_INET, tmp, r->addr) == 1) {
		r->family = AF_INET;
		if (prefix > 32) {
			buf_printf(err, "prefix length over 32 in '%.*s'", (int)n, s);
			return false;
		}
		r->prefix = prefix < 0 ? 32 : prefix;
	} else if (inet_pton(AF_INET6, tmp, r->addr) == 1) {
		r->family = AF_INET6;
		r->prefix = prefix < 0 ? 128 : prefix;
	} else {
		buf_printf(err, "'%s' is not an IPv4 or IPv6 address", tmp);
		return false;
	}
	return true;
}

bool net_acl_parse(struct net_acl *acl, const char *spec, struct buf *err)
{
	acl->rules = NULL;
	acl->n = 0;
	const char *p = spec ? spec : "";
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, ", ");
		struct net_rule r;
		if (!parse_rule(p, n, &r, err)) {
			net_acl_free(acl);
			return false;
		}
		acl->rules = xrealloc(acl->rules, (acl->n + 1) * sizeof *acl->rules);
		acl->rules[acl->n++] = r;
		p += n;
	}
	return true;
}

void net_acl_free(struct net_acl *acl)
{
	free(acl->rules);
	acl->rules = NULL;
	acl->n = 0;
}

static bool prefix_eq(const uint8_t *a, const uint8_t *b, int bits)
{
	int full = bits / 8, rest = bits % 8;
	if (memcmp(a, b, (size_t)full) != 0)
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

bool net_acl_allows(const struct net_acl *acl, const struct sockaddr *sa, socklen_t len)
{
	if (!acl || acl->n == 0)
		return true;
	uint8_t a4[4], a6[16];
	bool has4 = false, has6 = false;
	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		memcpy(a4, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		has4 = true;
	} else if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct in6_addr *in6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		memcpy(a6, in6, 16);
		has6 = true;
		if (IN6_IS_ADDR_V4MAPPED(in6)) {
			memcpy(a4, in6->s6_addr + 12, 4);
			has4 = true;
		}
	}
	for (size_t i = 0; i < acl->n; i++) {
		const struct net_rule *r = &acl->rules[i];
		if (r->family == AF_INET && has4 && prefix_eq(a4, r->addr, r->prefix))
			return true;
		if (r->family == AF_INET6 && has6 && prefix_eq(a6, r->addr, r->prefix))
			return true;
	}
	return false;
}

/* ---- blocking client ---- */

static int remaining_ms(int64_t deadline)
{
	int64_t left = (deadline - clock_mono_ns()) / NS_PER_MS;
	return left < 0 ? 0 : (int)left;
}

static int wait_fd(int fd, short ev, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = ev};
		int r = poll(&p, 1, remaining_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = ETIMEDOUT;
		return r > 0 ? 0 : -1;
	}
}

int net_connect_tcp(const char *host, int port, int timeout_ms, struct buf *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	int g = getaddrinfo(host, ps, &hints, &res);
	if (g != 0) {
		buf_printf(err, "cannot resolve %s: %s", host, gai_strerror(g));
		return -1;
	}
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, res->ai_protocol);
	if (fd < 0) {
		buf_printf(err, "socket: %s", strerror(errno));
		freeaddrinfo(res);
		return -1;
	}
	int r = connect(fd, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (r < 0 && errno != EINPROGRESS)
		goto fail;
	if (r < 0) {
		if (wait_fd(fd, POLLOUT, deadline) < 0)
			goto fail;
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			errno = soerr;
			goto fail;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	buf_printf(err, "cannot connect to %s:%d: %s", host, port, strerror(errno));
	close(fd);
	return -1;
}

int net_rpc_call(int fd, const void *req, size_t n, struct buf *resp, uint32_t max, int timeout_ms,
		 struct buf *err)
{
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	struct buf out = BUF_INIT;
	net_frame_put(&out, req, n);
	size_t off = 0;
	while (off < out.len) {
		if (wait_fd(fd, POLLOUT, deadline) < 0) {
			buf_printf(err, "send: %s", strerror(errno));
			buf_free(&out);
			return -1;
		}
		ssize_t w = send(fd, out.data + off, out.len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			buf_printf(err, "send: %s", strerror(errno));
			buf_free(&out);
			return -1;
		}
		off += (size_t)w;
	}
	buf_free(&out);
	struct net_frame f;
	net_frame_init(&f, max);
	int rc = -1;
	for (;;) {
		if (wait_fd(fd, POLLIN, deadline) < 0) {
			buf_printf(err, "no answer: %s", strerror(errno));
			break;
		}
		enum net_frame_status st = net_frame_read(&f, fd);
		if (st == NET_FRAME_MORE)
			continue;
		if (st == NET_FRAME_DONE) {
			buf_reset(resp);
			buf_append(resp, f.body.data, f.body.len);
			rc = 0;
		} else if (st == NET_FRAME_EOF && f.nhdr == 0) {
			rc = 1;
		} else if (st == NET_FRAME_EOF) {
			buf_printf(err, "server closed mid-answer");
		} else if (st == NET_FRAME_IO_ERROR) {
			buf_printf(err, "recv: %s", strerror(errno));
		} else {
			buf_printf(err, "bad answer: %s", net_frame_status_str(st));
		}
		break;
	}
	net_frame_free(&f);
	return rc;
}
