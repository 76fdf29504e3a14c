/*
 * ipc_filter.h - a budget of datagrams per sending user and per sending
 * process on the daemon's IPC socket, enforced in the kernel by an eBPF
 * socket filter (ipc_filter.bpf.c), so that one local user flooding the
 * endpoint cannot keep its kernel queue (net.unix.max_dgram_qlen slots)
 * full and crowd out other users' Kineto processes.
 *
 * ipc_filter_attach loads the program (libbpf skeleton) with the budgets
 * given and attaches it with SO_ATTACH_BPF.  It needs root or CAP_BPF; when
 * the kernel refuses, it returns NULL with the reason and the endpoint runs
 * without it (tracing works; only the fairness is lost).  The filter counts
 * what it drops per uid in a map; ipc_filter_poll reads that map (two
 * bpf() calls per uid in it, at most once a second) on the loop thread and
 * logs, rate-limited, which uid went over its budget and by how much.
 * Kernel memory: two LRU hash maps of 16-byte values, 1024 uids and 8192
 * processes, preallocated: 89 KiB + 705 KiB (bpftool's memlock, 6.18),
 * charged to the daemon's memory cgroup, not its RSS; daemon memory: 24
 * bytes per uid that ever went over budget.
 */
#ifndef DYNO_IPC_FILTER_H
#define DYNO_IPC_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

struct ipc_filter_opts {
	int64_t uid_rate, uid_burst;   /* datagrams per second, and at once, per sending uid */
	int64_t proc_rate, proc_burst; /* the same per sending process */
};

/* Defaults: a Kineto process sends one `req` per poll (Kineto polls every
 * few seconds; a `ctxt` per GPU context at start).  200/s per uid is 100
 * processes of one user each polling every second, with room for double;
 * 20/s per process is 20 times that (and a burst of 40 covers a process
 * with many GPU contexts starting). */
#define IPC_FILTER_UID_RATE 200
#define IPC_FILTER_UID_BURST 400
#define IPC_FILTER_PROC_RATE 20
#define IPC_FILTER_PROC_BURST 40

struct ipc_filter;

/* Attach the filter to fd.  NULL, with the reason in why, when it cannot
 * be loaded or attached (not privileged, old kernel, bad budget). */
struct ipc_filter *ipc_filter_attach(int fd, const struct ipc_filter_opts *o, struct buf *why);
/* Read the drop counters if a second has passed since the last read (or
 * force): log the uids that went over budget since, rate-limited.
 * Returns the datagrams dropped since attach. */
uint64_t ipc_filter_poll(struct ipc_filter *f, int64_t now_ns, bool force);
/* Datagrams dropped per uid since attach, as "uid N: M, ..." (at exit). */
void ipc_filter_summary(const struct ipc_filter *f, struct buf *out);
void ipc_filter_free(struct ipc_filter *f);
/* The daemon's one attached filter, for the telemetry tick (collect/ipcbudget.c):
 * false when none is on (the metric is then absent, not 0); else the
 * datagrams it dropped since attach, read at most once a second. */
bool ipc_filter_dropped_total(int64_t now_ns, uint64_t *dropped);

#endif
