/*
 * ipc_wire.h - the bytes of Kineto's IPC fabric (wire-protocols.md section
 * 3): datagram layout, message decoding with every limit checked, message
 * encoding, and the socket naming rules of both modes.
 *
 * Shared by the daemon endpoint (ipc.c), the fake Kineto client
 * (src/tools/fake-kineto.c), tests, the bench and the fuzzer, so both sides
 * of our tests speak through one definition and one validator.
 *
 * Datagram: u64 native `size` | 32-byte NUL-padded `type` | payload[size].
 * `req`  payload: i32 type bits, i32 n, i64 jobid, i32 pids[n].
 * `ctxt` payload: i32 gpu, i32 pid, i64 jobid.  Replies: `req` carries the
 * config text (no NUL), `ctxt` an i32 count.
 * Names: abstract "\0<name>\0" (the trailing NUL is part of the name), or
 * "<dir>/<name>" when KINETO_IPC_SOCKET_DIR is set.
 */
#ifndef DYNO_IPC_WIRE_H
#define DYNO_IPC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core/buf.h"
#include "daemon/ipc/registry.h"

#define IPC_HDR_LEN 40
#define IPC_TYPE_LEN 32
#define IPC_MAX_DGRAM 65536
#define IPC_DAEMON_NAME "dynolog"
#define IPC_NAME_MAX 106

enum ipc_kind { IPC_REQ, IPC_CTXT, IPC_OTHER };

struct ipc_msg {
	enum ipc_kind kind;
	char type[IPC_TYPE_LEN + 1];
	uint64_t size;
	const uint8_t *payload; /* points into the parsed buffer */
	/* IPC_REQ */
	int32_t want;           /* type bits */
	int32_t n;
	int64_t jobid;
	int32_t pids[REG_MAX_PIDS];
	/* IPC_CTXT */
	int32_t gpu, pid;
};

/* Decode one datagram.  Returns true for a well-formed message (IPC_OTHER
 * included: a valid header with a type we do not serve); false with a
 * reason for anything malformed: short datagram, size != len - 40, no NUL
 * in type, req with n outside 1..REG_MAX_PIDS or size != 16 + 4n, ctxt
 * with size != 16. */
bool ipc_parse(const void *data, size_t len, struct ipc_msg *m, const char **why);

/* Append a datagram (header + payload) to out. */
void ipc_encode(struct buf *out, const char *type, const void *payload, size_t n);
void ipc_encode_req(struct buf *out, int32_t want, int64_t jobid, const int32_t *pids, int32_t n);
void ipc_encode_ctxt(struct buf *out, int32_t gpu, int32_t pid, int64_t jobid);

/* Address of endpoint `name`: abstract when dir is NULL or empty, else the
 * file <dir>/<name>.  False with a message when the name does not fit. */
bool ipc_addr(const char *name, const char *dir, struct sockaddr_un *sa, socklen_t *len, struct buf *err);
/* A non-blocking datagram socket bound to `name` (in dir mode a stale
 * socket file is removed first, a live one -- another process answers on
 * it -- is an error, and the new one is made 0666).  -1 + message. */
int ipc_bind(const char *name, const char *dir, struct buf *err);
/* Whether a sender address can be replied to and, in dir mode, lies in
 * dir (upstream aborts the daemon on a foreign path; we drop the message). */
bool ipc_peer_ok(const struct sockaddr_un *sa, socklen_t len, const char *dir);
/* KINETO_IPC_SOCKET_DIR, or NULL when unset/empty (abstract mode). */
const char *ipc_env_dir(void);

#endif
