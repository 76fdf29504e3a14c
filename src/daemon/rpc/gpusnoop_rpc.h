/*
 * gpusnoop_rpc.h - the daemon runs gpusnoop on demand: the RPC function
 * "gpusnoop" starts a bounded session (the gpusnoop program as a child
 * process: a pid, a duration, a report file and optionally a timeline)
 * and answers at once; the session is watched on the daemon's loop (its
 * pidfd, its stderr through a pipe, logged line by line, and a deadline
 * timer), never blocking it.  Bounds: --gpusnoop_max_sessions at once,
 * --gpusnoop_max_duration_s each.  The daemon creates the output files
 * itself (new files only, no symlink followed) where --trace_path_prefixes
 * allows, and hands them to the child as descriptors; without
 * --trace_path_prefixes the function refuses (the daemon's user writes
 * them).  Request and answer: docs/rpc.md; the program: docs/gpusnoop.md.
 *
 * A session that fails (gpusnoop's exit status not 0, or a signal) or is
 * stopped at its deadline says so in its report file too, with what
 * gpusnoop wrote on stderr: whoever reads the report need not read the
 * daemon's log.
 *
 * Cost: nothing until asked; per session a fork/exec (posix_spawn), four
 * descriptors (three on the loop), a log line per line gpusnoop writes on
 * stderr (at most 200) and the first 4 KiB of them kept for the report.
 */
#ifndef DYNO_GPUSNOOP_RPC_H
#define DYNO_GPUSNOOP_RPC_H

#include <stdint.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/loop.h"
#include "daemon/rpc/rpc.h"

#define GPUSNOOP_SESSIONS_MAX 16 /* the flag's upper bound */

struct gpusnoop_flags {
	const char *path;       /* the program; "": gpusnoop beside dynolog */
	int64_t max_sessions;   /* 0: the RPC refuses */
	int64_t max_duration_s;
	int64_t grace_s;        /* past the duration, before the deadline's SIGTERM */
};

#define GPUSNOOP_FLAGS_DEFAULT {.path = "", .max_sessions = 2, .max_duration_s = 600, .grace_s = 30}

#define GPUSNOOP_FLAG_ROWS(f)                                                                          \
	{"gpusnoop_path", 0, ARG_STRING, &(f)->path, "PATH",                                             \
	 "the gpusnoop program the gpusnoop RPC runs (default: beside dynolog)", 0, 0, NULL},           \
	{"gpusnoop_max_sessions", 0, ARG_INT, &(f)->max_sessions, "N",                                   \
	 "gpusnoop sessions the RPC may run at once (0: refuse the RPC)", 0, GPUSNOOP_SESSIONS_MAX, NULL}, \
	{"gpusnoop_max_duration_s", 0, ARG_INT, &(f)->max_duration_s, "SECONDS",                         \
	 "longest gpusnoop session the RPC may start", 1, 86400, NULL},                                  \
	{"gpusnoop_grace_s", 0, ARG_INT, &(f)->grace_s, "SECONDS",                                       \
	 "a gpusnoop session still running this long past its duration gets SIGTERM (SIGKILL 10 s later)", \
	 1, 3600, NULL}

struct gpusnoop_rpc;

/* trace_prefixes: the daemon's --trace_path_prefixes value (already
 * validated by tracing_start).  NULL with a message on a bad flag. */
struct gpusnoop_rpc *gpusnoop_rpc_start(struct ev_loop *l, const struct gpusnoop_flags *f, const char *trace_prefixes,
					struct buf *err);
void gpusnoop_rpc_register(struct gpusnoop_rpc *g, struct rpc_server *s);
/* Answer a gpusnoop request as the RPC function does (the triggers start
 * sessions this way); g NULL: refused. */
bool gpusnoop_rpc_call(struct gpusnoop_rpc *g, const struct json_value *req, struct buf *resp);
/* Whether g can run sessions at all (on, and --trace_path_prefixes given:
 * it writes their files): a trigger asking for them is refused when it is
 * added, not when it fires.  g NULL: no.  false with the reason in why. */
bool gpusnoop_rpc_available(const struct gpusnoop_rpc *g, struct buf *why);
/* Sessions still running get SIGTERM: each writes its report and exits. */
void gpusnoop_rpc_stop(struct gpusnoop_rpc *g);

#endif
