/*
 * rpc_tracing.h - the RPC functions of on-demand tracing and upstream's
 * other fixed answers: getStatus, getVersion, setKinetOnDemandRequest,
 * dcgmProfPause, dcgmProfResume (byte-compatible with upstream, section 2.4
 * of wire-protocols.md), and the extension getProcesses.
 *
 * Request parsing mimics upstream's JSON library where clients can see it:
 * missing config/pids -> {"status":"failed"}; a wrong type -> a status
 * string with "json.exception" and the library's wording; floats truncate,
 * job_id wraps to int32.  The DCGM functions pause/resume the GPU
 * profiling metrics (collect/gpu_prof.h) and answer false when no GPU
 * backend with profiling metrics is on, as upstream without DCGM.
 */
#ifndef DYNO_RPC_TRACING_H
#define DYNO_RPC_TRACING_H

#include "daemon/ipc/registry.h"
#include "daemon/rpc/rpc.h"
#include "daemon/rpc/security.h"

struct ipc_endpoint;

/* getProcesses lists at most this many processes (job by job) unless
 * max_processes says otherwise; "count" is still the total and
 * "truncated": true says some were left out. */
#define RPC_PROCESSES_MAX 1000

struct rpc_tracing {
	struct registry *reg;
	const struct path_policy *policy; /* NULL: any path (upstream) */
	int64_t (*now_ns)(void);          /* monotonic clock (tests may fake it) */
	size_t max_processes;             /* getProcesses list cap; 0: RPC_PROCESSES_MAX */
	struct ipc_endpoint *ipc;         /* getStatus reports its datagram budget; NULL: no IPC */
};

void rpc_tracing_register(struct rpc_server *s, struct rpc_tracing *t);

/* Exposed for the fuzzer and tests: answer one request object. */
bool rpc_set_on_demand(const struct json_value *req, struct buf *resp, void *ud);
bool rpc_get_processes(const struct json_value *req, struct buf *resp, void *ud);

#endif
