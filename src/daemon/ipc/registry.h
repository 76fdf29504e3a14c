/*
 * registry.h - the daemon's table of Kineto (PyTorch) processes, shared by
 * the IPC endpoint (which registers processes and hands configs over) and
 * the RPC server (which leaves configs and lists processes).
 *
 * Plain data owned by the loop thread: no locks, no I/O, no clock reads
 * (callers pass "now"), so every rule is unit-testable.  Semantics follow
 * upstream Dynolog (wire-protocols.md section 4):
 *   - job id string -> processes keyed by the *set* of pids of their
 *     ancestry, kept in the set order of section 4.1 (that order decides
 *     processesMatched and who wins under process_limit);
 *   - implicit registration on every poll; one-shot delivery of pending
 *     configs filtered by the poll's type bits (1 EVENTS, 2 ACTIVITIES);
 *   - matching by job id, any ancestor pid, trace-all for [] / [0], limit;
 *     a second request while one is undelivered counts as busy and the old
 *     config wins;
 *   - stored config = "\n    " + config + "\n    REQUEST_TRACE_ID=<id>";
 *   - stale expiry by last poll time; ctxt pid sets per (job, gpu) are
 *     dropped with their job; a job with no process expires by its last
 *     ctxt (upstream keeps it until restart).
 * Beyond upstream: a delivery whose reply could not be sent can be put back
 * (registry_restore), so a config is never lost to a full socket, and the
 * number of processes is capped so a local flood cannot exhaust memory:
 * in total (max_procs), per sending user (the peer credential's uid, a
 * quarter of the total: root counts like anyone) and per sender socket
 * name (REG_MAX_PER_SENDER: Kineto uses one socket per process), so one
 * local user cannot crowd the others out.  The same per-user quarter
 * covers every table a datagram can grow: job ids (REG_MAX_JOBS_PER_UID)
 * and ctxt tables and pids (max_procs / 4).  Counting costs one small hash
 * table of (uid, table) or socket name -> count.
 */
#ifndef DYNO_REGISTRY_H
#define DYNO_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum { REG_EVENTS = 1, REG_ACTIVITIES = 2 };
#define REG_MAX_PIDS 64   /* longest ancestry accepted (Kineto sends <= 11) */
#define REG_MAX_JOBS 4096 /* distinct job ids (a host runs a handful) */
#define REG_MAX_GPUS 1024 /* ctxt tables per job */
#define REG_MAX_PER_SENDER 16 /* processes one socket name may register */
/* Job ids one user may create (by req or ctxt): a quarter of the table, so
 * one user's made-up ids cannot lock out a new job of another user. */
#define REG_MAX_JOBS_PER_UID (REG_MAX_JOBS / 4)
/* What a delivered config carries beyond the requested text: "\n    " in
 * front, "\n    REQUEST_TRACE_ID=<up to 20 digits>" and the reply's "\n"
 * behind. */
#define REG_WRAP_OVERHEAD 48
/* Largest config accepted by default: its reply (40-byte IPC header +
 * wrapped text) is at most 64 KiB, which every Unix datagram socket with
 * the kernel's default buffer (212992 bytes) carries and our own receivers
 * take whole.  The IPC endpoint lowers it when its socket carries less. */
#define REG_MAX_CONFIG (65536 - 40 - REG_WRAP_OVERHEAD)
/* All undelivered configs together: one request for every process of a
 * full table would otherwise copy a 64 KiB config thousands of times. */
#define REG_MAX_PENDING_BYTES (4u << 20)

struct reg_proc {
	int32_t leaf;            /* pids[0] of the first poll */
	int32_t *ancestry;       /* as received, leaf first */
	uint32_t nanc;
	int32_t *key;            /* ascending, duplicates removed: the identity */
	uint32_t nkey;
	char *pending_evt;       /* NUL-terminated, NULL when none */
	char *pending_act;
	int64_t first_seen_ns;   /* monotonic */
	int64_t last_seen_ns;    /* monotonic, last poll */
	int32_t last_type;       /* type bits of the last poll */
	int64_t delivered_ns;    /* monotonic time of the last activity delivery, 0: never */
	int64_t busy_until_ns;   /* estimated end of the delivered trace window */
	uint64_t uid_key, name_key; /* the sender's counters (0: not counted) */
};

/* Who sent a poll, for the per-user and per-socket caps. */
struct reg_sender {
	bool has_uid;
	uint32_t uid;       /* peer credentials (SCM_CREDENTIALS) */
	const void *name;   /* the sender's socket address bytes */
	size_t name_len;
};

struct reg_ctxt {
	int32_t gpu;
	int32_t *pids; /* ascending */
	uint64_t *by;  /* by[i]: the ctxt counter of the user who added pids[i] (0: none) */
	uint64_t by_table; /* ... and of the user who created the table */
	size_t n;
};

struct reg_job {
	char id[24];             /* decimal job id */
	struct reg_proc **procs; /* ascending by key */
	size_t n, cap;
	struct reg_ctxt *ctxt;
	size_t nctxt;
	/* Who created the job (its user's job counter, 0: not counted) and the
	 * last ctxt for it: a job without processes expires like a process
	 * (issue #35 item 1: ctxt-only jobs used to stay until restart). */
	uint64_t owner_key;
	int64_t ctxt_seen_ns;
};

struct reg_stats {
	uint64_t registered, expired, delivered, restored, refused_full, triggered, busy;
	uint64_t refused_sender, refused_uid, refused_memory;
};

/* Open-addressing counters: key (never 0) -> n. */
struct reg_counts {
	struct reg_count {
		uint64_t key;
		uint32_t n;
	} *slot;
	size_t cap, used;
};

struct registry {
	struct reg_job *jobs; /* unordered; few per host */
	size_t njobs;
	size_t nprocs, max_procs;
	size_t max_per_uid, max_per_sender;
	size_t max_config;    /* longest config a process can be handed (setKinetOnDemandRequest checks) */
	size_t nctxt_entries; /* ctxt tables + pids, bounded by max_procs */
	size_t pending_bytes; /* undelivered config texts, bounded by REG_MAX_PENDING_BYTES */
	struct reg_counts counts;
	uint64_t trace_seq;
	char host[64];
	struct reg_stats stats;
};

/* What one poll takes away: malloc'ed texts or NULL. */
struct reg_delivery {
	char *evt;
	char *act;
};

struct reg_trigger {
	int32_t *matched, *act_triggered, *evt_triggered;
	size_t nmatched, nact, nevt;
	int act_busy, evt_busy;
	size_t no_memory; /* matched but not triggered: REG_MAX_PENDING_BYTES reached */
};

enum reg_state { REG_IDLE, REG_PENDING, REG_BUSY };

/* max_procs 0: 65536 (the daemon passes --ipc_max_processes, default 8192).
 * Per-user cap: max_procs / 4 (at least 1). */
void registry_init(struct registry *r, size_t max_procs);
void registry_free(struct registry *r);

/* Job id as upstream renders it: decimal of the integer. */
void registry_job_str(int64_t job, char out[24]);
struct reg_job *registry_find_job(struct registry *r, const char *job);

/* A `req` poll: register or refresh (job, pids[0..n)) and take the pending
 * configs selected by type.  Returns 1 when the process is new, 0 when
 * known, -1 when refused (n out of range, or the table or the number of
 * jobs is full). */
int registry_poll(struct registry *r, int64_t job, const int32_t *pids, uint32_t n, int32_t type,
		  int64_t now_ns, struct reg_delivery *d);
/* The same, counting the process against its sender's caps (s NULL: not
 * counted, for tests and tools).  -1 also when the sender's cap is full. */
int registry_poll_from(struct registry *r, const struct reg_sender *s, int64_t job, const int32_t *pids,
		       uint32_t n, int32_t type, int64_t now_ns, struct reg_delivery *d);
/* The reply text of a delivery: each present config followed by "\n". */
void registry_delivery_text(const struct reg_delivery *d, struct buf *out);
/* The reply could not be sent: give the configs back to the process (unless
 * a newer one is pending or the process is gone).  Frees d's texts. */
void registry_restore(struct registry *r, int64_t job, const int32_t *pids, uint32_t n,
		      struct reg_delivery *d);
void registry_delivery_free(struct reg_delivery *d);

/* setKinetOnDemandRequest: leave config for the matching processes of job.
 * pids [] or [0] = every process of the job.  type: REG_ACTIVITIES and/or
 * REG_EVENTS.  Result arrays are malloc'ed; free with registry_trigger_free. */
void registry_trigger(struct registry *r, const char *job, const int32_t *pids, size_t npids,
		      const char *config, size_t config_len, int type, int64_t limit, int64_t now_ns,
		      struct reg_trigger *out);
void registry_trigger_free(struct reg_trigger *t);
/* The leaf pids of the processes registry_trigger would match for (job,
 * pids), in its order (the pids Kineto puts in its file names, checked by
 * the path policy before a request is delivered): malloc'ed, *n of them. */
int32_t *registry_match(struct registry *r, const char *job, const int32_t *pids, size_t npids, size_t *n);

/* `ctxt`: add pid to (job, gpu) and return the set's size; -1 when refused
 * (too many jobs or GPUs: a flood of made-up ids).  registry_ctxt_from
 * counts the job and the entries against the sender's user (s NULL: not
 * counted) and stamps the job with now_ns: a job that has no process
 * expires max_age_s after its last ctxt.  registry_ctxt: s NULL, now 0. */
int32_t registry_ctxt(struct registry *r, int64_t job, int32_t gpu, int32_t pid);
int32_t registry_ctxt_from(struct registry *r, const struct reg_sender *s, int64_t job, int32_t gpu, int32_t pid,
			   int64_t now_ns);

/* Remove processes whose last poll is more than max_age_s whole seconds
 * ago (upstream: 60), jobs left empty, and jobs without processes whose
 * last ctxt is that old (upstream keeps those for good: one user's
 * made-up ids filled the job table until restart).  Returns how many
 * processes. */
size_t registry_expire(struct registry *r, int64_t now_ns, int64_t max_age_s);
/* Monotonic time at which the next process would expire, -1 when empty. */
int64_t registry_next_expiry(const struct registry *r, int64_t max_age_s);

enum reg_state registry_proc_state(const struct reg_proc *p, int64_t now_ns);
const char *registry_state_str(enum reg_state s);

#endif
