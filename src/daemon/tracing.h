/*
 * tracing.h - wiring of on-demand tracing in the daemon: the process
 * registry, the IPC endpoint, the RPC server and its security options,
 * started from the daemon's flags.
 *
 * main.c adds TRACING_FLAG_ROWS(&flags) to its option table, calls
 * tracing_start after the loop exists and tracing_stop at exit.  Other
 * modules add RPC functions with rpc_register_fn(tracing_rpc(t), ...) and
 * learn of new Kineto processes with tracing_on_new_process (main.c points
 * it at telemetry_track_pid, so tracing never depends on telemetry).
 */
#ifndef DYNO_TRACING_H
#define DYNO_TRACING_H

#include <stdbool.h>
#include <stdint.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/loop.h"
#include "daemon/ipc.h"
#include "daemon/rpc.h"

struct tracing_flags {
	int64_t port;
	bool enable_rpc, enable_ipc;
	const char *rpc_bind, *rpc_allow, *token_file, *trace_prefixes;
	const char *ipc_name, *ipc_dir;
	int64_t expiry_s, rpc_timeout_ms, rpc_max_frame, rpc_max_requests, max_procs;
	/* given on the command line: an explicitly empty list is an error */
	bool rpc_allow_seen, token_file_seen, trace_prefixes_seen;
};

#define TRACING_FLAGS_DEFAULT                                                                        \
	{.port = 1778, .enable_rpc = true, .rpc_bind = "", .rpc_allow = "", .token_file = "",          \
	 .trace_prefixes = "", .ipc_name = "dynolog", .ipc_dir = NULL, .expiry_s = 60,                \
	 .rpc_timeout_ms = 5000, .rpc_max_frame = 1 << 20, .rpc_max_requests = 1000,                 \
	 .max_procs = 8192}

/* Option rows for the daemon's table (upstream names first). */
#define TRACING_FLAG_ROWS(f)                                                                         \
	{"port", 0, ARG_INT, &(f)->port, "PORT", "RPC TCP port (0: any free port, logged)", 0, 65535, NULL}, \
	{"enable_rpc", 0, ARG_BOOL, &(f)->enable_rpc, NULL, "serve the dyno RPC protocol", 0, 0, NULL},   \
	{"rpc_bind", 0, ARG_STRING, &(f)->rpc_bind, "ADDR",                                         \
	 "listen on this address only (default: every IPv6 and IPv4 address)", 0, 0, NULL},         \
	{"rpc_allow", 0, ARG_STRING, &(f)->rpc_allow, "CIDR,...",                                   \
	 "accept RPC clients from these networks only (default: any)", 0, 0, &(f)->rpc_allow_seen},    \
	{"rpc_token_file", 0, ARG_STRING, &(f)->token_file, "PATH",                                 \
	 "require this shared secret as \"token\" in every RPC request", 0, 0, &(f)->token_file_seen}, \
	{"trace_path_prefixes", 0, ARG_STRING, &(f)->trace_prefixes, "DIR,...",                     \
	 "refuse trace requests writing outside these directories (default: any)", 0, 0,              \
	 &(f)->trace_prefixes_seen},                                                                   \
	{"rpc_timeout_ms", 0, ARG_INT, &(f)->rpc_timeout_ms, "MS", "drop an RPC client silent this long", \
	 1, 3600000, NULL},                                                                          \
	{"rpc_max_frame", 0, ARG_INT, &(f)->rpc_max_frame, "BYTES", "largest RPC request accepted", 64,  \
	 1 << 30, NULL},                                                                             \
	{"rpc_max_requests_per_connection", 0, ARG_INT, &(f)->rpc_max_requests, "N",                 \
	 "requests one keep-alive RPC connection may make (1: no keep-alive)", 1, 1000000, NULL},     \
	{"enable_ipc_monitor", 0, ARG_BOOL, &(f)->enable_ipc, NULL,                                 \
	 "serve Kineto (PyTorch) processes on the IPC fabric socket", 0, 0, NULL},                   \
	{"ipc_endpoint_name", 0, ARG_STRING, &(f)->ipc_name, "NAME",                               \
	 "IPC endpoint name (Kineto expects the default 'dynolog')", 0, 0, NULL},                    \
	{"ipc_socket_dir", 0, ARG_STRING, &(f)->ipc_dir, "DIR",                                     \
	 "filesystem socket mode (default: $KINETO_IPC_SOCKET_DIR, else abstract)", 0, 0, NULL},     \
	{"ipc_process_expiry_s", 0, ARG_INT, &(f)->expiry_s, "SECONDS",                            \
	 "forget a Kineto process silent for longer than this", 1, 86400, NULL},                     \
	{"ipc_max_processes", 0, ARG_INT, &(f)->max_procs, "N", "most Kineto processes registered", 1, \
	 10000000, NULL}

struct tracing;

/* NULL with a message when a flag is invalid or the IPC socket cannot be
 * bound.  An RPC port already in use is logged and tracing goes on without
 * RPC, as upstream. */
struct tracing *tracing_start(struct ev_loop *l, const struct tracing_flags *f, struct buf *err);
void tracing_stop(struct tracing *t);
/* NULL when RPC is disabled or could not listen. */
struct rpc_server *tracing_rpc(struct tracing *t);
/* Call fn for every Kineto process registered from now on (once per
 * process, on its first poll; see ipc_new_proc_fn for the pids).  fn runs
 * on the loop thread in the middle of an IPC wake-up: it must be quick and
 * must not block.  No-op without --enable_ipc_monitor. */
void tracing_on_new_process(struct tracing *t, ipc_new_proc_fn fn, void *ud);

#endif
