/*
 * tracing.h - wiring of on-demand tracing in the daemon: the process
 * registry, the IPC endpoint, the trace path policy and the RPC functions
 * that serve them, started from the daemon's flags.
 *
 * main.c adds TRACING_FLAG_ROWS(&flags) to its option table, calls
 * tracing_start after the loop exists, registers the tracing RPC functions
 * on the server it owns (tracing_register_rpc) and calls tracing_stop at
 * exit.  New Kineto processes are announced with tracing_on_new_process
 * (main.c points it at telemetry_track_pid, so tracing never depends on
 * telemetry).
 */
#ifndef DYNO_TRACING_H
#define DYNO_TRACING_H

#include <stdbool.h>
#include <stdint.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/loop.h"
#include "daemon/ipc/ipc.h"
#include "daemon/rpc/rpc.h"

struct tracing_flags {
	bool enable_ipc;
	const char *trace_prefixes;
	const char *ipc_name, *ipc_dir;
	int64_t expiry_s, max_procs;
	/* the kernel-side datagram budget (daemon/ipc/ipc_filter.h) */
	bool bpf_filter;
	int64_t rate_uid, burst_uid, rate_proc, burst_proc;
	/* given on the command line: an explicitly empty list is an error */
	bool trace_prefixes_seen;
};

#define TRACING_FLAGS_DEFAULT                                                                        \
	{.trace_prefixes = "", .ipc_name = "dynolog", .ipc_dir = NULL, .expiry_s = 60, .max_procs = 8192, \
	 .bpf_filter = true, .rate_uid = IPC_FILTER_UID_RATE, .burst_uid = IPC_FILTER_UID_BURST,           \
	 .rate_proc = IPC_FILTER_PROC_RATE, .burst_proc = IPC_FILTER_PROC_BURST}

/* Option rows for the daemon's table (upstream names first). */
#define TRACING_FLAG_ROWS(f)                                                                         \
	{"trace_path_prefixes", 0, ARG_STRING, &(f)->trace_prefixes, "DIR,...",                     \
	 "refuse trace requests writing outside these directories (default: any)", 0, 0,              \
	 &(f)->trace_prefixes_seen},                                                                   \
	{"enable_ipc_monitor", 0, ARG_BOOL, &(f)->enable_ipc, NULL,                                 \
	 "serve Kineto (PyTorch) processes on the IPC fabric socket", 0, 0, NULL},                   \
	{"ipc_endpoint_name", 0, ARG_STRING, &(f)->ipc_name, "NAME",                               \
	 "IPC endpoint name (Kineto expects the default 'dynolog')", 0, 0, NULL},                    \
	{"ipc_socket_dir", 0, ARG_STRING, &(f)->ipc_dir, "DIR",                                     \
	 "filesystem socket mode (default: $KINETO_IPC_SOCKET_DIR, else abstract)", 0, 0, NULL},     \
	{"ipc_process_expiry_s", 0, ARG_INT, &(f)->expiry_s, "SECONDS",                            \
	 "forget a Kineto process silent for longer than this", 1, 86400, NULL},                     \
	{"ipc_max_processes", 0, ARG_INT, &(f)->max_procs, "N", "most Kineto processes registered", 1, \
	 10000000, NULL},                                                                              \
	{"ipc_bpf_filter", 0, ARG_BOOL, &(f)->bpf_filter, NULL,                                      \
	 "budget IPC datagrams per sending user and process in the kernel (eBPF; needs root or CAP_BPF)", \
	 0, 0, NULL},                                                                                  \
	{"ipc_rate_per_uid", 0, ARG_INT, &(f)->rate_uid, "N",                                       \
	 "IPC datagrams per second one user's processes may send (together)", 1, 1000000, NULL},     \
	{"ipc_burst_per_uid", 0, ARG_INT, &(f)->burst_uid, "N",                                     \
	 "IPC datagrams one user may send at once above the rate", 1, 1000000, NULL},                \
	{"ipc_rate_per_process", 0, ARG_INT, &(f)->rate_proc, "N",                                   \
	 "IPC datagrams per second one sending process may send", 1, 1000000, NULL},         \
	{"ipc_burst_per_process", 0, ARG_INT, &(f)->burst_proc, "N",                                 \
	 "IPC datagrams one sending process may send at once above the rate", 1, 1000000, NULL}

struct tracing;

/* NULL with a message when a flag is invalid or the IPC socket cannot be
 * bound. */
struct tracing *tracing_start(struct ev_loop *l, const struct tracing_flags *f, struct buf *err);
void tracing_stop(struct tracing *t);
/* Register upstream's RPC functions (getStatus, setKinetOnDemandRequest,
 * getProcesses...) on s; they answer as long as t runs. */
void tracing_register_rpc(struct tracing *t, struct rpc_server *s);
/* Call fn for every Kineto process registered from now on (once per
 * process, on its first poll; see ipc_new_proc_fn for the pids).  fn runs
 * on the loop thread in the middle of an IPC wake-up: it must be quick and
 * must not block.  No-op without --enable_ipc_monitor. */
void tracing_on_new_process(struct tracing *t, ipc_new_proc_fn fn, void *ud);

/* For the triggers (trigger.c): the registry of Kineto processes (owned by
 * t, loop thread only), the on-demand request answered exactly as the
 * setKinetOnDemandRequest RPC answers it (same checks, same delivery), and
 * the checks a config passes there (the trace path policy, the size a
 * process can receive), false with the reason. */
struct registry *tracing_registry(struct tracing *t);
bool tracing_on_demand(struct tracing *t, const struct json_value *req, struct buf *resp);
bool tracing_check_config(const struct tracing *t, const char *config, size_t len, struct buf *why);
/* One file the daemon will write itself (a trigger's gpusnoop log) by the
 * same --trace_path_prefixes policy; true without one. */
bool tracing_check_path(const struct tracing *t, const char *path, size_t len, struct buf *why);

#endif
