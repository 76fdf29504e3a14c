/*
 * ipc_filter.bpf.c - the socket filter on the daemon's IPC datagram socket:
 * a budget per sending user (uid) and per sending process, so one local
 * user cannot keep the daemon's kernel queue full (docs/security.md, "the
 * datagram queue refill").
 *
 * Why a socket filter: in unix_dgram_sendmsg the receiver's filter runs
 * before the queue-full check, and a datagram it refuses is freed while the
 * sender is told it was sent.  So a datagram over budget never takes one of
 * the net.unix.max_dgram_qlen slots, and a flooder sleeping in a blocking
 * send is not woken to refill a slot: it spins on its own CPU time.
 *
 * Who sent it: the filter runs inside the sender's sendmsg system call, so
 * the current task is the sender; its real uid (bpf_get_current_uid_gid)
 * and process id (tgid, bpf_get_current_pid_tgid) key the budgets.  Not
 * the skb's socket: on Linux 6.18 bpf_get_socket_uid() and
 * bpf_get_socket_cookie() gave the daemon's own uid and one cookie for
 * every sender (skb->sk is the receiving socket there).  A kernel whose
 * verifier does not let a socket filter call the current-task helpers
 * refuses the program, and the daemon runs without it (it says so).
 *
 * Cost per datagram: two LRU hash lookups and two atomic adds.  The
 * buckets are updated without a lock: two CPUs racing on one bucket may
 * admit a datagram or two more than the budget, never fewer.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "daemon/ipc/ipc_filter_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before the program is loaded (rate -> interval). */
const volatile __u64 uid_interval_ns = 5000000;    /* 200/s */
const volatile __u64 uid_window_ns = 2000000000;   /* burst 400 */
const volatile __u64 proc_interval_ns = 50000000;  /* 20/s */
const volatile __u64 proc_window_ns = 2000000000;  /* burst 40 */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IPCF_MAX_UIDS);
	__type(key, __u32);
	__type(value, struct ipcf_bucket);
} by_uid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IPCF_MAX_PROCS);
	__type(key, __u64);
	__type(value, struct ipcf_bucket);
} by_proc SEC(".maps");

static struct ipcf_bucket *bucket(void *map, const void *key)
{
	struct ipcf_bucket *b = bpf_map_lookup_elem(map, key);
	if (b)
		return b;
	struct ipcf_bucket fresh = {0, 0};
	bpf_map_update_elem(map, key, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* Take one token: 1 admitted, 0 over budget (nothing taken). */
static int take(struct ipcf_bucket *b, __u64 now, __u64 interval, __u64 window)
{
	/* an idle sender's bucket is full again: start from now, not from
	 * the past (racy store: at worst one concurrent token is lost) */
	if (b->tat < now)
		b->tat = now;
	__u64 tat = __sync_fetch_and_add(&b->tat, interval) + interval;
	if (tat <= now + window)
		return 1;
	__sync_fetch_and_add(&b->tat, -interval);
	return 0;
}

static void give_back(struct ipcf_bucket *b, __u64 interval)
{
	__sync_fetch_and_add(&b->tat, -interval);
}

SEC("socket")
int ipc_budget(struct __sk_buff *skb)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid();
	/* the process as (uid, tgid): threads of one process that run as
	 * different users (bench/soak's legit client and its flooder) are
	 * budgeted apart */
	__u64 proc = (__u64)uid << 32 | bpf_get_current_pid_tgid() >> 32;
	__u64 now = bpf_ktime_get_ns();
	struct ipcf_bucket *u = bucket(&by_uid, &uid);
	struct ipcf_bucket *s = bucket(&by_proc, &proc);
	if (!u || !s)
		return skb->len; /* no room to keep a budget: admit */
	if (!take(s, now, proc_interval_ns, proc_window_ns)) {
		__sync_fetch_and_add(&u->drops, 1);
		return 0;
	}
	if (!take(u, now, uid_interval_ns, uid_window_ns)) {
		give_back(s, proc_interval_ns);
		__sync_fetch_and_add(&u->drops, 1);
		return 0;
	}
	return skb->len;
}
