/*
 * ipc_filter_abi.h - what the IPC socket filter (ipc_filter.bpf.c) and its
 * loader (ipc_filter.c) share: the value of its two budget maps.  No cost:
 * a struct.
 */
#ifndef DYNO_IPC_FILTER_ABI_H
#define DYNO_IPC_FILTER_ABI_H

/* One token bucket, kept as a "theoretical arrival time" (GCRA): tat is
 * the monotonic time (ns) at which the sender's budget is whole again; a
 * datagram moves it one interval forward and is admitted while tat stays
 * within a burst of intervals of now.  drops: datagrams refused (only in
 * the per-uid map; the daemon reads it on its tick). */
struct ipcf_bucket {
	unsigned long long tat;
	unsigned long long drops;
};

/* Entries of the maps: uids and sending processes remembered at once (LRU:
 * the least recently seen are forgotten first). */
#define IPCF_MAX_UIDS 1024
#define IPCF_MAX_PROCS 8192

#endif
