/* ipc_wire.c - see ipc_wire.h. */
#include "ipc_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool ipc_parse(const void *data, size_t len, struct ipc_msg *m, const char **why)
{
	const uint8_t *p = data;
	memset(m, 0, offsetof(struct ipc_msg, pids));
	if (len < IPC_HDR_LEN) {
		*why = "datagram shorter than the 40-byte header";
		return false;
	}
	memcpy(&m->size, p, 8);
	if (m->size != len - IPC_HDR_LEN) {
		*why = "header size does not match the datagram length";
		return false;
	}
	if (!memchr(p + 8, 0, IPC_TYPE_LEN)) {
		*why = "message type is not NUL-terminated";
		return false;
	}
	memcpy(m->type, p + 8, IPC_TYPE_LEN);
	m->type[IPC_TYPE_LEN] = 0;
	m->payload = p + IPC_HDR_LEN;
	/* Upstream compares prefixes: "ctxt" (4 bytes), then "req" (3 bytes). */
	if (strncmp(m->type, "ctxt", 4) == 0) {
		m->kind = IPC_CTXT;
		if (m->size != 16) {
			*why = "ctxt payload is not 16 bytes";
			return false;
		}
		memcpy(&m->gpu, m->payload, 4);
		memcpy(&m->pid, m->payload + 4, 4);
		memcpy(&m->jobid, m->payload + 8, 8);
		return true;
	}
	if (strncmp(m->type, "req", 3) == 0) {
		m->kind = IPC_REQ;
		if (m->size < 16) {
			*why = "req payload shorter than 16 bytes";
			return false;
		}
		memcpy(&m->want, m->payload, 4);
		memcpy(&m->n, m->payload + 4, 4);
		memcpy(&m->jobid, m->payload + 8, 8);
		if (m->n < 1 || m->n > REG_MAX_PIDS) {
			*why = m->n < 1 ? "req with no pids (n < 1)" : "req with too many pids";
			return false;
		}
		if (m->size != 16 + 4 * (uint64_t)m->n) {
			*why = "req size does not match its pid count";
			return false;
		}
		memcpy(m->pids, m->payload + 16, 4 * (size_t)m->n);
		return true;
	}
	m->kind = IPC_OTHER;
	return true;
}

void ipc_encode(struct buf *out, const char *type, const void *payload, size_t n)
{
	uint64_t size = n;
	char t[IPC_TYPE_LEN] = {0};
	strncpy(t, type, IPC_TYPE_LEN - 1);
	buf_append(out, &size, 8);
	buf_append(out, t, IPC_TYPE_LEN);
	if (n)
		buf_append(out, payload, n);
}

void ipc_encode_req(struct buf *out, int32_t want, int64_t jobid, const int32_t *pids, int32_t n)
{
	struct buf p = BUF_INIT;
	buf_append(&p, &want, 4);
	buf_append(&p, &n, 4);
	buf_append(&p, &jobid, 8);
	if (n > 0)
		buf_append(&p, pids, 4 * (size_t)n);
	ipc_encode(out, "req", p.data, p.len);
	buf_free(&p);
}

void ipc_encode_ctxt(struct buf *out, int32_t gpu, int32_t pid, int64_t jobid)
{
	uint8_t p[16];
	memcpy(p, &gpu, 4);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &jobid, 8);
	ipc_encode(out, "ctxt", p, sizeof p);
}

const char *ipc_env_dir(void)
{
	const char *d = getenv("KINETO_IPC_SOCKET_DIR");
	return d && *d ? d : NULL;
}

bool ipc_addr(const char *name, const char *dir, struct sockaddr_un *sa, socklen_t *len, struct buf *err)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(name);
	if (!dir || !*dir) {
		/* "\0name\0": the trailing NUL is part of the abstract name. */
		if (n > IPC_NAME_MAX) {
			buf_printf(err, "IPC endpoint name longer than %d bytes", IPC_NAME_MAX);
			return false;
		}
		memcpy(sa->sun_path + 1, name, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 2);
		return true;
	}
	size_t dn = strlen(dir);
	if (dn + 1 + n + 1 > sizeof sa->sun_path) {
		buf_printf(err, "socket path %s/%s is too long for a Unix socket", dir, name);
		return false;
	}
	memcpy(sa->sun_path, dir, dn);
	sa->sun_path[dn] = '/';
	memcpy(sa->sun_path + dn + 1, name, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + dn + 1 + n + 1);
	return true;
}

/* Filesystem mode: a file already at the socket's path is removed only
 * when nobody serves it.  A socket a live daemon is bound to accepts a
 * connect(); one left by a crashed daemon answers ECONNREFUSED.  Without
 * the probe a second daemon would unlink a running one's socket and leave
 * it unreachable. */
static bool clear_stale(const struct sockaddr_un *sa, socklen_t len, struct buf *err)
{
	struct stat st;
	if (lstat(sa->sun_path, &st) < 0)
		return true; /* nothing there */
	if (S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (probe < 0) {
			buf_printf(err, "socket: %s", strerror(errno));
			return false;
		}
		int rc = connect(probe, (const struct sockaddr *)sa, len);
		int e = errno;
		close(probe);
		if (rc == 0) {
			buf_printf(err, "another daemon is serving %s; not replacing its socket", sa->sun_path);
			return false;
		}
		if (e != ECONNREFUSED) {
			buf_printf(err, "cannot tell whether %s is in use: %s", sa->sun_path, strerror(e));
			return false;
		}
	}
	unlink(sa->sun_path); /* a stale file from an earlier run */
	return true;
}

int ipc_bind(const char *name, const char *dir, struct buf *err)
{
	struct sockaddr_un sa;
	socklen_t len;
	if (!ipc_addr(name, dir, &sa, &len, err))
		return -1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		buf_printf(err, "socket: %s", strerror(errno));
		return -1;
	}
	if (dir && *dir && !clear_stale(&sa, len, err)) {
		close(fd);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sa, len) < 0) {
		buf_printf(err, "cannot bind IPC endpoint %s%s%s: %s", dir && *dir ? sa.sun_path : "@",
			   dir && *dir ? "" : name, dir && *dir ? "" : "@", strerror(errno));
		close(fd);
		return -1;
	}
	/* Processes of other users must be able to reach the daemon. */
	if (dir && *dir && chmod(sa.sun_path, 0666) < 0) {
		buf_printf(err, "chmod %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

bool ipc_peer_ok(const struct sockaddr_un *sa, socklen_t len, const char *dir)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	if (len <= (socklen_t)off || sa->sun_family != AF_UNIX)
		return false; /* unnamed socket: nowhere to reply */
	size_t plen = (size_t)len - off;
	if (!dir || !*dir)
		return plen >= 1; /* abstract or path: reply to the exact address */
	size_t dn = strlen(dir);
	return sa->sun_path[0] != 0 && plen > dn + 1 && memcmp(sa->sun_path, dir, dn) == 0 &&
	       sa->sun_path[dn] == '/';
}
