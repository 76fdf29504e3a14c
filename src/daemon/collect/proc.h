/*
 * proc.h - the per-process collector: CPU time, RSS, threads and storage
 * I/O of the processes the daemon knows about (--track_pids, and training
 * processes registered through the tracing registry via
 * telemetry_track_pid()), each attributed to its SLURM job id and cgroup
 * where readable.  Keys carry the pid as label: "proc_rss_bytes.1234".
 */
#ifndef DYNO_COLLECT_PROC_H
#define DYNO_COLLECT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/frame.h"

#define PROC_MAX_TRACKED 4096

struct proc_collector;

struct proc_collector *proc_collector_new(const char *procfs_root);
void proc_collector_free(struct proc_collector *c);
/* Start tracking pid (idempotent).  False if pid is invalid or the table is full. */
bool proc_track(struct proc_collector *c, int pid);
size_t proc_tracked_count(const struct proc_collector *c);
/* Append this tick's values; drops processes that exited. */
void proc_collect(struct proc_collector *c, struct frame *f);

/* Exposed for tests and the fuzzer. */
struct proc_stat {
	uint64_t cpu_ticks, threads, start, rss_pages;
};
bool proc_parse_stat(const char *s, size_t len, struct proc_stat *out);
/* SLURM job id from a cgroup path ("/.../job_123/step_0" -> "123"), "" if none. */
void proc_job_from_cgroup(const char *path, char *job, size_t cap);

#endif
