/*
 * ipc.h - the daemon's Kineto IPC fabric endpoint on the event loop.
 *
 * Binds the datagram socket `dynolog` (abstract "\0dynolog\0", or
 * $KINETO_IPC_SOCKET_DIR/dynolog), and on every wake-up drains all queued
 * datagrams: `req` registers/refreshes the process in the registry and is
 * answered with its pending config (or an empty reply), `ctxt` with the
 * per-GPU count.  Replies go with MSG_DONTWAIT to the exact sender address;
 * a reply that cannot be sent (peer gone, its queue full) is never retried
 * in the loop — its config is put back in the registry for the next poll.
 * Malformed datagrams are dropped and counted.  A one-shot timer expires
 * silent processes at the moment the oldest one goes stale, so nothing
 * wakes the daemon while nobody polls.
 */
#ifndef DYNO_IPC_H
#define DYNO_IPC_H

#include <stdint.h>

#include "core/buf.h"
#include "core/loop.h"
#include "daemon/registry.h"

struct ipc_opts {
	const char *name;  /* endpoint name, default "dynolog" */
	const char *dir;   /* filesystem mode directory, NULL: abstract */
	int64_t expiry_s;  /* stale-process age, default 60 */
};

struct ipc_stats {
	uint64_t datagrams, req, ctxt, unknown, malformed, foreign, replies, reply_failed;
};

struct ipc_endpoint;

struct ipc_endpoint *ipc_start(struct ev_loop *l, struct registry *reg, const struct ipc_opts *o,
			       struct buf *err);
void ipc_stop(struct ipc_endpoint *e);
const struct ipc_stats *ipc_get_stats(const struct ipc_endpoint *e);

#endif
