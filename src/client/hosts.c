/*
 * hosts.c - see hosts.h.  Host names are only checked for shape here
 * (length, no blanks or control bytes, a port in 1..65535); whether they
 * resolve is found out by rpc_client, concurrently, and reported per host.
 * SLURM node lists come from `squeue -h -j ID -o %N`, expanded by
 * `scontrol show hostnames` when they use bracket ranges (node[01-64]).
 */
#include "client/hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/secret.h"
#include "core/utf8.h"

#define MAX_HOSTFILE (16u << 20)
#define MAX_HOST_LEN 253

void targets_free(struct targets *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->t[i].host);
		free(t->t[i].label);
	}
	free(t->t);
	t->t = NULL;
	t->n = 0;
}

static bool parse_port(const char *s, size_t n, char out[8])
{
	if (n == 0 || n > 5)
		return false;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	snprintf(out, 8, "%ld", v);
	return true;
}

bool targets_add(struct targets *t, const char *spec, size_t len, int64_t default_port, struct buf *err)
{
	const char *host = spec, *port = NULL;
	size_t hlen = len, plen = 0;
	if (len > 0 && spec[0] == '[') {
		const char *close = memchr(spec, ']', len);
		if (!close) {
			buf_printf(err, "host '%.*s': missing ']'", (int)len, spec);
			return false;
		}
		host = spec + 1;
		hlen = (size_t)(close - host);
		size_t rest = len - (size_t)(close + 1 - spec);
		if (rest > 0) {
			if (close[1] != ':') {
				buf_printf(err, "host '%.*s': expected ':PORT' after ']'", (int)len, spec);
				return false;
			}
			port = close + 2;
			plen = rest - 1;
		}
	} else {
		const char *c = memchr(spec, ':', len);
		/* exactly one ':' is host:port; more is a bare IPv6 address */
		if (c && !memchr(c + 1, ':', len - (size_t)(c + 1 - spec))) {
			hlen = (size_t)(c - spec);
			port = c + 1;
			plen = len - hlen - 1;
		}
	}
	if (hlen == 0 || hlen > MAX_HOST_LEN) {
		buf_printf(err, "host '%.*s': empty or longer than %d bytes", (int)(len > 300 ? 300 : len), spec,
			   MAX_HOST_LEN);
		return false;
	}
	/* DNS names, IPv4 and IPv6 addresses (with a %zone): nothing else, so a
	 * host name substituted into a trace path stays a valid path */
	for (size_t i = 0; i < hlen; i++) {
		unsigned char ch = (unsigned char)host[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '-' || ch == '_' || ch == ':' || ch == '%')) {
			buf_printf(err, "host '%.*s': invalid character 0x%02x", (int)(len > 300 ? 300 : len), spec,
				   ch);
			return false;
		}
	}
	struct target nt = {0};
	if (port) {
		if (!parse_port(port, plen, nt.port)) {
			buf_printf(err, "host '%.*s': port must be 1..65535", (int)(len > 300 ? 300 : len), spec);
			return false;
		}
	} else {
		snprintf(nt.port, sizeof nt.port, "%d", (int)default_port);
	}
	nt.host = xstrndup(host, hlen);
	struct buf lb = BUF_INIT;
	bool v6 = memchr(host, ':', hlen) != NULL;
	if (!port && default_port == NET_RPC_PORT)
		buf_printf(&lb, "%s", nt.host);
	else if (v6)
		buf_printf(&lb, "[%s]:%s", nt.host, nt.port);
	else
		buf_printf(&lb, "%s:%s", nt.host, nt.port);
	nt.label = buf_detach(&lb, NULL);
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->t[i].host, nt.host) == 0 && strcmp(t->t[i].port, nt.port) == 0) {
			/* Twice the same daemon would trace twice (the second request
			 * finds the first one pending): keep one. */
			free(nt.host);
			free(nt.label);
			return true;
		}
	if ((t->n & (t->n - 1)) == 0 || t->n == 0)
		t->t = xrealloc(t->t, (t->n ? t->n * 2 : 1) * sizeof *t->t);
	t->t[t->n++] = nt;
	return true;
}

bool targets_add_list(struct targets *t, const char *list, int64_t port, struct buf *err)
{
	const char *p = list;
	while (*p) {
		const char *e = p + strcspn(p, ", \t\n");
		if (e > p && !targets_add(t, p, (size_t)(e - p), port, err))
			return false;
		p = *e ? e + 1 : e;
	}
	return true;
}

bool targets_parse_hostfile(struct targets *t, const char *text, size_t len, int64_t default_port,
			    const char *fname, struct buf *err)
{
	size_t line = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		line++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *hash = memchr(p, '#', (size_t)(le - p));
		const char *ce = hash ? hash : le;
		while (p < ce && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		const char *w = p;
		while (w < ce && *w != ' ' && *w != '\t' && *w != '\r')
			w++;
		if (w > p) {
			struct buf e = BUF_INIT;
			if (!targets_add(t, p, (size_t)(w - p), default_port, &e)) {
				buf_printf(err, "%s:%zu: %s", fname, line, e.data);
				buf_free(&e);
				return false;
			}
			buf_free(&e);
		}
		p = nl ? nl + 1 : end;
	}
	return true;
}

static bool read_file(const char *path, struct buf *out, struct buf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return false;
	}
	int rc = buf_read_fd(out, fd, MAX_HOSTFILE);
	if (rc < 0)
		buf_printf(err, "%s: %s", path, strerror(errno));
	else if (rc > 0)
		buf_printf(err, "%s: larger than %u MiB, not a host file", path, MAX_HOSTFILE >> 20);
	close(fd);
	return rc == 0;
}

int hosts_run_capture(char *const argv[], struct buf *out, struct buf *err)
{
	/* epfd carries execvp's errno back (closed by a successful exec), so
	 * the parent alone reports a command that cannot run, once. */
	int pfd[2], epfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		buf_printf(err, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(epfd, O_CLOEXEC) < 0) {
		buf_printf(err, "pipe: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		buf_printf(err, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		close(epfd[0]);
		close(epfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		int e = errno;
		if (write(epfd[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	close(epfd[1]);
	int exec_errno = 0;
	ssize_t en;
	while ((en = read(epfd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
		;
	close(epfd[0]);
	if (en == (ssize_t)sizeof exec_errno) {
		close(pfd[0]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		buf_printf(err, "cannot run %s: %s (not installed or not on PATH?)", argv[0], strerror(exec_errno));
		return -1;
	}
	bool toobig = buf_read_fd(out, pfd[0], MAX_HOSTFILE) > 0; /* a read error: what came so far */
	if (toobig)
		kill(pid, SIGKILL);
	close(pfd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (toobig) {
		buf_printf(err, "%s printed more than %u MiB", argv[0], MAX_HOSTFILE >> 20);
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

bool hosts_slurm_job(const char *job, struct targets *t, int64_t port, struct buf *err)
{
	size_t n = strlen(job);
	if (n == 0 || n > 20 || strspn(job, "0123456789") != n) {
		buf_printf(err,
			   "--slurm-job '%s': expected a numeric job id (for an array task use its own "
			   "SLURM_JOB_ID, not JOB_TASK)",
			   job);
		return false;
	}
	struct buf out = BUF_INIT, e = BUF_INIT;
	char *sq[] = {"squeue", "-h", "-j", (char *)job, "-o", "%N", NULL};
	int rc = hosts_run_capture(sq, &out, &e);
	if (rc != 0) {
		if (rc > 0)
			buf_printf(err, "squeue -h -j %s -o %%N failed (exit %d): is the job id right?", job, rc);
		else
			buf_printf(err, "%s", e.data);
		buf_free(&out);
		buf_free(&e);
		return false;
	}
	/* One line per job (several for an array): join them. */
	struct buf list = BUF_INIT;
	for (char *p = out.data; *p;) {
		size_t l = strcspn(p, "\n");
		size_t s = 0;
		while (s < l && (p[s] == ' ' || p[s] == '\t' || p[s] == '\r'))
			s++;
		size_t e2 = l;
		while (e2 > s && (p[e2 - 1] == ' ' || p[e2 - 1] == '\t' || p[e2 - 1] == '\r'))
			e2--;
		/* "(null)" / "" for pending jobs */
		if (e2 > s && !(e2 - s == 6 && memcmp(p + s, "(null)", 6) == 0)) {
			if (list.len)
				buf_putc(&list, ',');
			buf_append(&list, p + s, e2 - s);
		}
		p += l;
		if (*p)
			p++;
	}
	buf_free(&out);
	bool ok = true;
	if (list.len == 0) {
		buf_printf(err, "SLURM job %s has no nodes (not running, finished, or unknown)", job);
		ok = false;
	} else if (strchr(list.data, '[')) {
		char *sc[] = {"scontrol", "show", "hostnames", list.data, NULL};
		rc = hosts_run_capture(sc, &out, &e);
		if (rc != 0) {
			if (rc > 0)
				buf_printf(err, "scontrol show hostnames %s failed (exit %d)", list.data, rc);
			else
				buf_printf(err, "%s", e.data);
			ok = false;
		} else {
			ok = targets_add_list(t, out.data, port, err);
		}
	} else {
		ok = targets_add_list(t, list.data, port, err);
	}
	if (ok && t->n == 0) {
		buf_printf(err, "SLURM job %s: no host names found", job);
		ok = false;
	}
	buf_free(&list);
	buf_free(&out);
	buf_free(&e);
	return ok;
}

bool hosts_token_load(const char *path, char out[HOST_TOKEN_MAX + 1], struct buf *err)
{
	/* any permissions: the daemon is the side that refuses a readable file */
	struct secret s;
	switch (secret_read(path, 0, 4096, &s)) {
	case SECRET_OK:
		break;
	case SECRET_OPEN:
	case SECRET_STAT:
	case SECRET_READ:
		buf_printf(err, "token file %s: %s", path, strerror(s.err));
		return false;
	case SECRET_NOT_REGULAR:
		buf_printf(err, "token file %s: not a regular file", path);
		return false;
	case SECRET_MODE: /* refuses none */
	case SECRET_TOO_BIG:
		buf_printf(err, "token file %s: larger than 4 KiB, not a token", path);
		return false;
	}
	size_t n = s.len;
	bool ok = true;
	if (n < HOST_TOKEN_MIN || n > HOST_TOKEN_MAX || memchr(s.data, 0, n)) {
		buf_printf(err, "token file %s: the token must be %d to %d bytes of text", path, HOST_TOKEN_MIN,
			   HOST_TOKEN_MAX);
		ok = false;
	}
	/* JSON carries text: invalid UTF-8 would arrive changed (U+FFFD) and
	 * never match. */
	for (size_t i = 0; ok && i < n;) {
		const unsigned char *u = (const unsigned char *)s.data + i;
		int l = *u < 0x80 ? 1 : utf8_seq(u, (const unsigned char *)s.data + n);
		if (l <= 0) {
			buf_printf(err, "token file %s: the token is not valid UTF-8 text", path);
			ok = false;
		}
		i += l > 0 ? (size_t)l : 1;
	}
	if (ok) {
		memcpy(out, s.data, n);
		out[n] = 0;
	}
	secret_free(&s);
	return ok;
}

bool hosts_collect(struct host_opts *o, struct targets *out, struct buf *err)
{
	memset(out, 0, sizeof *out);
	if (!(o->timeout_s > 0 && o->timeout_s <= 86400)) {
		buf_printf(err, "--timeout-s must be in (0, 86400]");
		return false;
	}
	o->token[0] = 0;
	const char *tf = o->token_file;
	if (!tf) {
		tf = getenv(HOST_TOKEN_ENV);
		if (tf && !*tf)
			tf = NULL;
	}
	if (tf && !hosts_token_load(tf, o->token, err))
		return false;
	if (o->hostname_seen && (o->hostnames || o->hostfile || o->slurm_job)) {
		buf_printf(err, "--hostname names one daemon; with --hostnames, --hostfile or --slurm-job leave it out");
		return false;
	}
	bool ok = true;
	if (o->hostnames) {
		out->many = true;
		ok = targets_add_list(out, o->hostnames, o->port, err);
	}
	if (ok && o->hostfile) {
		out->many = true;
		struct buf text = BUF_INIT;
		ok = read_file(o->hostfile, &text, err) &&
		     targets_parse_hostfile(out, text.data, text.len, o->port, o->hostfile, err);
		buf_free(&text);
	}
	if (ok && o->slurm_job) {
		out->many = true;
		ok = hosts_slurm_job(o->slurm_job, out, o->port, err);
	}
	if (ok && out->many && out->n == 0) {
		buf_printf(err, "no hosts given (empty --hostnames/--hostfile)");
		ok = false;
	}
	if (ok && !out->many)
		ok = targets_add(out, o->hostname, strlen(o->hostname), o->port, err);
	if (!ok)
		targets_free(out);
	return ok;
}

struct rpc_client_opts hosts_rpc_opts(const struct host_opts *o)
{
	struct rpc_client_opts r = {0};
	r.token = o->token[0] ? o->token : NULL;
	double ms = o->timeout_s * 1000.0;
	r.timeout_ms = ms >= 1 ? (int64_t)ms : 1;
	r.max_parallel = (int)o->parallel;
	return r;
}

void hosts_jobs(const struct targets *t, struct rpc_job *jobs, const char *req, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		rpc_job_init(&jobs[i], t->t[i].host, t->t[i].port, req, len);
}
