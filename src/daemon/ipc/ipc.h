/*
 * ipc.h - the daemon's Kineto IPC fabric endpoint on the event loop.
 *
 * Binds the datagram socket `dynolog` (abstract "\0dynolog\0", or
 * $KINETO_IPC_SOCKET_DIR/dynolog), and on every wake-up drains all queued
 * datagrams: `req` registers/refreshes the process in the registry and is
 * answered with its pending config (or an empty reply), `ctxt` with the
 * per-GPU count.  Replies go with MSG_DONTWAIT to the exact sender address;
 * a reply that cannot be sent (peer gone, its queue full) is never retried
 * in the loop — its config is put back in the registry for the next poll,
 * unless the reply is too big for any datagram (EMSGSIZE): then the
 * config is dropped with a log line and the process gets an empty reply,
 * so one undeliverable config never blocks it.  At start the endpoint
 * lowers the registry's max_config to what its socket can send (SO_SNDBUF),
 * so setKinetOnDemandRequest refuses such configs up front.
 * Malformed datagrams are dropped and counted.  With ipc_opts.filter, an
 * eBPF socket filter (ipc_filter.h) keeps a datagram budget per sending
 * uid and socket in the kernel; if it cannot be loaded the endpoint says
 * why once and runs without it.  A one-shot timer expires
 * silent processes at the moment the oldest one goes stale, so nothing
 * wakes the daemon while nobody polls.
 *
 * The socket has SO_PASSCRED on, so every datagram carries its sender's
 * pid as the kernel sees it from the daemon's pid namespace.  The registry
 * keeps the pids the process reported (upstream matches --pids on those),
 * but the new-process hook gets the kernel's pid: a training process in a
 * container (own pid namespace, host network) reports getpid() == 1 or 2,
 * which is init or kthreadd here, and its CPU/RSS must not be read from
 * those.
 */
#ifndef DYNO_IPC_H
#define DYNO_IPC_H

#include <stdint.h>

#include "core/buf.h"
#include "core/loop.h"
#include "daemon/ipc/ipc_filter.h"
#include "daemon/ipc/registry.h"

struct ipc_opts {
	const char *name;  /* endpoint name, default "dynolog" */
	const char *dir;   /* filesystem mode directory, NULL: abstract */
	int64_t expiry_s;  /* stale-process age, default 60 */
	/* the per-uid / per-socket datagram budget (ipc_filter.h); NULL: none */
	const struct ipc_filter_opts *filter;
};

struct ipc_stats {
	uint64_t datagrams, req, ctxt, unknown, malformed, foreign, replies, reply_failed;
	uint64_t dropped_too_big; /* configs whose reply the socket could never carry */
	/* datagrams the kernel dropped over a sender's budget (read at most
	 * once a second); meaningful only while the filter is on */
	uint64_t dropped_over_budget;
};

struct ipc_endpoint;

/* A Kineto process registered (its first poll).  pid: the sender as the
 * kernel sees it in the daemon's pid namespace (0: not visible from here,
 * e.g. the daemon runs in a container and the process on the host);
 * reported: pids[0] of its poll; job: its decimal job id. */
typedef void (*ipc_new_proc_fn)(int32_t pid, int32_t reported, const char *job, void *ud);

struct ipc_endpoint *ipc_start(struct ev_loop *l, struct registry *reg, const struct ipc_opts *o,
			       struct buf *err);
void ipc_stop(struct ipc_endpoint *e);
const struct ipc_stats *ipc_get_stats(struct ipc_endpoint *e);
/* "on", or "off: <why>" (not asked for, or the kernel refused it). */
const char *ipc_filter_state(const struct ipc_endpoint *e);
/* Call fn for every process registered from now on (on the loop thread,
 * in the middle of a wake-up: it must be quick). */
void ipc_on_new_process(struct ipc_endpoint *e, ipc_new_proc_fn fn, void *ud);

#endif
