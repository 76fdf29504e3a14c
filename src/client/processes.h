/*
 * processes.h - the getProcesses RPC extension seen from dyno: parse the
 * daemon's list of registered Kineto processes, print it, and explain why a
 * gputrace request matched nothing (no process at all, other job ids, pids
 * not in any ancestry, processes gone stale).
 */
#ifndef DYNO_CLI_PROCESSES_H
#define DYNO_CLI_PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* A process that has not polled for this long has probably exited (Kineto
 * polls every 5 s; the daemon forgets it after about a minute). */
#define PROC_STALE_MS 15000

struct proc_info {
	char *job;
	int64_t last_seen_ms;
	int64_t pid;
	int64_t *pids; /* ancestry, leaf first */
	size_t npids;
	char state[16]; /* idle, pending, busy */
};

struct proc_list {
	struct proc_info *p;
	size_t n;
	/* the daemon's "count": every registered process, also those a
	 * truncated answer ("truncated": true) leaves out; n when absent */
	size_t total;
	bool truncated;
};

#define GET_PROCESSES_REQUEST "{\"fn\":\"getProcesses\"}"

/* Parse a getProcesses answer; false with a message when it is not one.
 * Daemons list at most 1000 processes: then truncated is set and total
 * has the real number. */
bool processes_parse(const char *json, size_t len, struct proc_list *out, struct buf *err);
void processes_free(struct proc_list *l);
/* A table: PID JOB STATE LAST-POLL ANCESTRY, one line per process, and
 * a last line saying how many the daemon left out when it truncated. */
void processes_format(const struct proc_list *l, const char *indent, struct buf *out);
/* Why did a request for job_id / pids (the --pids text) match nothing?
 * One or more lines, each starting with indent. */
void processes_explain(const struct proc_list *l, uint64_t job_id, const char *pids, const char *indent,
		       struct buf *out);

#endif
