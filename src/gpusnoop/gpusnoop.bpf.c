/*
 * gpusnoop.bpf.c - the kernel half of gpusnoop: uprobes on the CUDA
 * runtime's and driver's entry points (and PyTorch's caching allocator's),
 * attached by the loader (probes.c) with a cookie saying which function it
 * is and where its arguments are (event.h).
 *
 * - An allocation is seen twice: at entry its out-pointer and size are
 *   saved per thread; at return, if the call succeeded, the pointer it
 *   wrote is read and the allocation goes into the live map (pointer ->
 *   size, time, stack id), its bytes added to its stack's and its space's
 *   totals.  A free, at entry, removes it there and takes its bytes off.
 *   So the state is here, exact whatever the reader's speed: the reader
 *   walks these maps once a second (the live table) and at the end (the
 *   report).  Records go to the ring buffer only for the timeline
 *   (--trace: want_records); a record it has no room for is counted, and
 *   costs the timeline a point, never the report a free.
 * - A launch is counted at entry in a per-CPU array (no record: launches
 *   come by the hundred thousand per second).  cudaLaunchKernel calls the
 *   driver's cuLaunchKernel, so it also has a return probe that marks the
 *   thread as inside it, and a driver launch made there is not counted.
 * - A synchronisation is seen twice, like an allocation: entry time saved,
 *   and at return its duration added to its stack's totals (count, time,
 *   longest); a record too with --trace.
 * - With --trace, the thread's current device is followed (cudaSetDevice,
 *   cudaGetDevice, cuCtxGetDevice at return; a driver context switch makes
 *   it unknown) so each allocation record carries its device.
 *
 * Cost per probed call: one uprobe trap (~1 us on bare metal, a few us to
 * tens of us in a VM, docs/gpusnoop.md) at entry, one more at return for
 * allocations and syncs (and cudaLaunchKernel where not x86); for an
 * allocation or free a stack walk (frame pointers; allocations only), a
 * live-map update and two totals' atomics; a ring-buffer record only with
 * --trace.  Other processes that map the same library take
 * the trap too and leave at the pid check.
 *
 * Why stacks are taken at return: at a function's first instruction the
 * frame-pointer chain still starts at the caller's frame, so a walk from
 * there skips the caller itself - the very function that leaks or waits.
 * At return the instruction pointer is inside the caller.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gpusnoop/event.h"

char LICENSE[] SEC("license") = "GPL";

/* The process to watch (the thread group id); set by the loader before load. */
const volatile __u32 target_tgid = 0;
/* a ring-buffer record per allocation, free and sync (the timeline needs
 * them in order); without it the maps below hold all the report needs */
const volatile __u32 want_records = 0;
/* the launch probes count while this is 1: --launch-sample attaches them
 * for a window of each period and clears it the moment the window ends
 * (their detaching takes ~0.1 s; what they see meanwhile is not counted) */
volatile __u32 launch_on = 1;

struct pending {
	__u64 outp;  /* where the callee writes the result, or the value itself (direct) */
	__u64 size;
	__u64 sp;    /* stack pointer at entry: a nested call's is lower */
	__u64 ts;    /* entry time (syncs) */
	__u32 cookie;
	__u32 depth; /* probed calls nested inside this one (cudaMalloc -> cuMemAlloc_v2) */
	__s32 dev;   /* an allocation's device, taken at entry (DEV_* when none) */
	__u32 pad;
};

/*
 * One call in flight per thread and layer (plus its nesting depth), keyed
 * by pid_tgid with a layer in the top bits: the CUDA allocations, PyTorch's
 * allocator (whose allocate may call cudaMalloc: both are recorded, each in
 * its own space), and launches/syncs.
 */
#define KEY_TORCH (1ull << 63)
#define KEY_CALL (1ull << 62)
#define KEY_DEV (1ull << 61)
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct pending);
} pending SEC(".maps");

/* each thread's current device, as last seen (absent: unknown); LRU: threads come and go */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __s32);
} devices SEC(".maps");

#define RINGBUF_BYTES (8 << 20) /* the default; the loader may resize it (--ringbuf-kb) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} events SEC(".maps");

/* A stack that hashes to a slot another stack holds is not recorded
 * (counted: "stacks unavailable"; replacing it would change the stack of
 * allocations already made there).  1,024 distinct ~35-frame stacks lost 3%
 * of their calls with 16,384 slots; 32,768 (16 MB) halves that. */
#define SNOOP_STACK_DEPTH 64
#define SNOOP_STACK_SLOTS 32768
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, SNOOP_STACK_SLOTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SNOOP_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* per CPU: the hot ones (allocations, frees) are bumped on every call */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* the allocations still live; not preallocated: the loader sets the bound
 * (--max-live), memory is taken as allocations come */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct live_key);
	__type(value, struct live_val);
} live SEC(".maps");

/* outstanding bytes and count per (stack, space): a stack id per stack-map
 * slot, in each space, and the unavailable ones (-1) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4 * SNOOP_STACK_SLOTS + 4);
	__type(key, struct stack_key);
	__type(value, struct stack_total);
} stack_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPACE_COUNT);
	__type(key, __u32);
	__type(value, struct space_total);
} space_totals SEC(".maps");

/* per sync stack (-1: unavailable) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SNOOP_STACK_SLOTS + 1);
	__type(key, __s32);
	__type(value, struct sync_total);
} sync_totals SEC(".maps");

/* calls per function (launches and syncs), per CPU: no shared cache line on the launch path */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FN_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		(*c)++;
}

/* *m = max(*m, v) against other CPUs doing the same: a few tries (each
 * failure means another CPU raised it, usually past v) */
static __always_inline void raise_max(__u64 *m, __u64 v)
{
	__u64 cur = *m;
	for (int i = 0; i < 4 && v > cur; i++) {
		__u64 was = __sync_val_compare_and_swap(m, cur, v);
		if (was == cur)
			break;
		cur = was;
	}
}

/* the (stack, space) totals of an allocation made (sign 1) or freed (-1);
 * 0 when its entry cannot be made (the map full: counted) */
static __always_inline int stack_add(__s32 sid, __u32 space, __s64 size, __s64 sign)
{
	struct stack_key k = {.stack_id = sid < 0 ? -1 : sid, .space = space};
	struct stack_total *t = bpf_map_lookup_elem(&stack_totals, &k);
	if (!t && sign > 0) {
		struct stack_total z = {0};
		bpf_map_update_elem(&stack_totals, &k, &z, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&stack_totals, &k);
		if (!t)
			count(CNT_TOTALS_FULL);
	}
	if (!t)
		return 0;
	__sync_fetch_and_add(&t->bytes, sign * size);
	__sync_fetch_and_add(&t->count, sign);
	return 1;
}

static __always_inline void space_add(__u32 space, __s64 size)
{
	struct space_total *t = bpf_map_lookup_elem(&space_totals, &space);
	if (!t)
		return;
	__s64 now = __sync_fetch_and_add(&t->bytes, size) + size;
	if (size > 0 && now > 0)
		raise_max(&t->peak, (__u64)now);
}

/* a live allocation gone (freed, or replaced): its entry already deleted by us */
static __always_inline void forget(const struct live_key *k, const struct live_val *v)
{
	if (v->in_totals)
		stack_add(v->stack_id, k->space, (__s64)v->size, -1);
	space_add(k->space, -(__s64)v->size);
}

/* removes (ptr, space) from the live map; 1 when this call removed it (two
 * CPUs freeing one pointer at once: only one takes its bytes off) */
static __always_inline int take_live(const struct live_key *k)
{
	struct live_val *p = bpf_map_lookup_elem(&live, k);
	if (!p)
		return 0;
	struct live_val v = *p;
	if (bpf_map_delete_elem(&live, k))
		return 0;
	forget(k, &v);
	return 1;
}

static __always_inline void count_call(__u32 fn)
{
	__u64 *c = bpf_map_lookup_elem(&calls, &fn);
	if (c)
		(*c)++;
}

static __always_inline int mine(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/* argument i (0-4); each register is loaded on its own, as the verifier
 * refuses a context pointer moved by a computed offset */
static __always_inline __u64 arg(struct pt_regs *ctx, __u32 i)
{
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx), a3 = PT_REGS_PARM4(ctx),
	      a4 = PT_REGS_PARM5(ctx);
	asm volatile("" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4));
	return i == 0 ? a0 : i == 1 ? a1 : i == 2 ? a2 : i == 3 ? a3 : i == 4 ? a4 : 0;
}

static __always_inline void emit(__u32 type, __u32 fn, __u64 ts, __u64 ptr, __u64 size, __u32 space, __s32 dev,
				 __s32 stack_id)
{
	struct snoop_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CNT_RINGBUF_DROPS);
		return;
	}
	e->type = type;
	e->fn = fn;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->stack_id = stack_id;
	e->ts_ns = ts ? ts : bpf_ktime_get_ns();
	e->ptr = ptr;
	e->size = size;
	e->space = space;
	e->device = dev;
	/* waking the reader per record costs a context switch per call on a
	 * busy process; it polls every 100 ms anyway, so wake it only when the
	 * buffer is a quarter full */
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
				 bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4 ? BPF_RB_FORCE_WAKEUP
											: BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* remember a call until its return; a call inside a pending one of the same layer only deepens it */
static __always_inline void save(__u64 key, __u64 sp, __u64 outp, __u64 size, __u32 cookie, __s32 dev)
{
	struct pending *p = bpf_map_lookup_elem(&pending, &key);
	/* an entry left by a call that never returned (longjmp, a C++
	 * exception through it) is not an outer call: its stack is not above ours */
	if (p && sp < p->sp) {
		p->depth++;
		if (!(key & KEY_DEV)) /* cudaGetDevice -> cuCtxGetDevice: no allocation hidden */
			count(CNT_NESTED);
		return;
	}
	struct pending n = {.sp = sp, .outp = outp, .size = size, .cookie = cookie, .ts = bpf_ktime_get_ns(), .dev = dev};
	if (bpf_map_update_elem(&pending, &key, &n, BPF_ANY))
		count(CNT_ARGS_FULL);
}

/* at a return: the pending call, removed, if this is the outer call's
 * return (a nested call's only makes the nesting shallower) */
static __always_inline int take_outer(__u64 key, struct pending *out)
{
	struct pending *p = bpf_map_lookup_elem(&pending, &key);
	if (!p)
		return 0;
	if (p->depth) {
		p->depth--;
		return 0;
	}
	*out = *p;
	bpf_map_delete_elem(&pending, &key);
	return 1;
}

static __always_inline __u64 alloc_key(__u32 cookie)
{
	return bpf_get_current_pid_tgid() | (cookie & COOKIE_TORCH ? KEY_TORCH : 0);
}

/* CUmemAllocationProp: type, requestedHandleTypes, then its CUmemLocation {type, id} at byte 8 */
#define CU_MEM_LOCATION_TYPE_DEVICE 1
#define CU_MEM_LOCATION_TYPE_HOST 2              /* and 3, 4: HOST_NUMA, HOST_NUMA_CURRENT */
#define CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT 4

/* the device an allocation is on, at its entry */
static __always_inline __s32 device_of(struct pt_regs *ctx, __u32 c)
{
	__u32 src = COOKIE_DEVSRC(c);
	if (src == DEVSRC_HOST)
		return DEV_HOST;
	if (src == DEVSRC_PROP) {
		__s32 loc[2];
		if (bpf_probe_read_user(loc, sizeof(loc), (void *)(arg(ctx, 2) + 8)))
			return DEV_UNKNOWN;
		if (loc[0] == CU_MEM_LOCATION_TYPE_DEVICE && loc[1] >= 0)
			return loc[1];
		if (loc[0] >= CU_MEM_LOCATION_TYPE_HOST && loc[0] <= CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
			return DEV_HOST;
		return DEV_UNKNOWN;
	}
	if (src == DEVSRC_NONE)
		return DEV_UNKNOWN;
	__u64 id = bpf_get_current_pid_tgid();
	__s32 *d = bpf_map_lookup_elem(&devices, &id);
	return d ? *d : DEV_UNKNOWN;
}

/* cudaMalloc(void **p, size_t n), cuMemMap(CUdeviceptr p, size_t n, ...), allocate(ret, this, n), ... */
SEC("uprobe")
int alloc_entry(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u32 c = (__u32)bpf_get_attach_cookie(ctx);
	__u32 pa = COOKIE_PTR_ARG(c);
	save(alloc_key(c), PT_REGS_SP(ctx), pa == COOKIE_RET ? 0 : arg(ctx, pa), arg(ctx, COOKIE_SIZE_ARG(c)), c,
	     device_of(ctx, c));
	return 0;
}

SEC("uretprobe")
int alloc_return(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u32 c = (__u32)bpf_get_attach_cookie(ctx);
	struct pending n;
	if (!take_outer(alloc_key(c), &n))
		return 0;
	long rc = PT_REGS_RC(ctx);
	/* cudaError_t and CUresult are both 0 on success (an int: low 32 bits) */
	if ((n.cookie & COOKIE_CHECK_RC) && (int)rc != 0) {
		count(CNT_FAILED_CALLS);
		return 0;
	}
	__u64 ptr = n.outp;
	if (COOKIE_PTR_ARG(n.cookie) == COOKIE_RET)
		ptr = (__u64)rc;
	else if (!(n.cookie & COOKIE_DIRECT) && bpf_probe_read_user(&ptr, sizeof(ptr), (void *)n.outp))
		return 0;
	if (!ptr) { /* a C++ allocator's way to fail without throwing, or a 0-byte request */
		count(CNT_FAILED_CALLS);
		return 0;
	}
	long sid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (sid < 0)
		count(CNT_STACK_FAIL);
	__u32 space = COOKIE_SPACE(n.cookie);
	struct live_key k = {.ptr = ptr, .space = space};
	/* still live: its free was missed (a path not probed) */
	if (take_live(&k))
		count(CNT_REPLACED);
	__u64 now = bpf_ktime_get_ns();
	struct live_val v = {.size = n.size, .ts_ns = now, .stack_id = (__s32)sid, .fn = COOKIE_FN(n.cookie),
			     .device = n.dev};
	v.in_totals = stack_add((__s32)sid, space, (__s64)n.size, 1);
	if (bpf_map_update_elem(&live, &k, &v, BPF_NOEXIST)) {
		/* not tracked: never reported as a leak, and said */
		count(CNT_LIVE_FULL);
		if (v.in_totals)
			stack_add((__s32)sid, space, (__s64)n.size, -1);
	} else {
		space_add(space, (__s64)n.size);
	}
	count(CNT_ALLOCS);
	if (want_records)
		emit(EV_ALLOC, COOKIE_FN(n.cookie), now, ptr, n.size, space, n.dev, (__s32)sid);
	return 0;
}

/* cudaFree(void *p), cuMemRelease(handle), cuMemUnmap(p, n), raw_delete(this, p): the pointer argument */
SEC("uprobe")
int free_entry(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u32 c = (__u32)bpf_get_attach_cookie(ctx);
	__u64 ptr = arg(ctx, COOKIE_PTR_ARG(c));
	if (!ptr)
		return 0;
	struct live_key k = {.ptr = ptr, .space = COOKIE_SPACE(c)};
	count(CNT_FREES);
	if (!take_live(&k))
		count(CNT_UNMATCHED_FREES);
	if (want_records)
		emit(EV_FREE, COOKIE_FN(c), 0, ptr, 0, COOKIE_SPACE(c), DEV_UNKNOWN, -1);
	return 0;
}

/* every launch: counted here, unless it is the driver launch inside a cudaLaunchKernel */
SEC("uprobe")
int launch_entry(struct pt_regs *ctx)
{
	if (!mine() || !launch_on)
		return 0;
	__u32 c = (__u32)bpf_get_attach_cookie(ctx);
	__u64 key = bpf_get_current_pid_tgid() | KEY_CALL;
	__u64 sp = PT_REGS_SP(ctx);
	if (c & COOKIE_OUTER) {
		/* replaces whatever was left: a call that never returned */
		struct pending n = {.sp = sp, .cookie = c};
#ifdef __TARGET_ARCH_x86
		/* its return address, at the top of the stack at entry */
		if (bpf_probe_read_user(&n.outp, sizeof(n.outp), (void *)sp))
			n.outp = 0;
#endif
		if (bpf_map_update_elem(&pending, &key, &n, BPF_ANY))
			count(CNT_ARGS_FULL);
	} else {
		/* at or below the outer call's frame: a runtime that tail-calls
		 * the driver leaves the stack pointer where its own entry had it */
		struct pending *p = bpf_map_lookup_elem(&pending, &key);
		if (p && (p->cookie & COOKIE_OUTER) && sp <= p->sp) {
#ifdef __TARGET_ARCH_x86
			/*
			 * No return probe on cudaLaunchKernel (a trap per launch
			 * saved): the outer call is still running if its return
			 * address is still in its slot.  Once it has returned, any
			 * call its caller makes overwrites that slot with another
			 * return address, and a deeper frame reaching below it
			 * writes over it on the way.  (A call through one function
			 * pointer that is cudaLaunchKernel once and a direct
			 * driver launcher later would be taken for nested.)
			 */
			__u64 ra = 0;
			if (!p->outp || bpf_probe_read_user(&ra, sizeof(ra), (void *)p->sp) || ra != p->outp)
				goto counted;
#endif
			count(CNT_NESTED_LAUNCHES);
			return 0;
		}
	}
#ifdef __TARGET_ARCH_x86
counted:
#endif
	count_call(COOKIE_FN(c));
	return 0;
}

/* cudaLaunchKernel's return, where the return address cannot be read at
 * entry (not x86: it is in a register) */
SEC("uretprobe")
int launch_return(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u64 key = bpf_get_current_pid_tgid() | KEY_CALL;
	struct pending *p = bpf_map_lookup_elem(&pending, &key);
	if (p && (p->cookie & COOKIE_OUTER))
		bpf_map_delete_elem(&pending, &key);
	return 0;
}

/* cudaStreamSynchronize(stream), cudaEventSynchronize(event), cudaDeviceSynchronize() */
SEC("uprobe")
int sync_entry(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u32 c = (__u32)bpf_get_attach_cookie(ctx);
	count_call(COOKIE_FN(c));
	__u64 key = bpf_get_current_pid_tgid() | KEY_CALL;
	struct pending n = {.sp = PT_REGS_SP(ctx), .cookie = c, .outp = PT_REGS_PARM1(ctx), .ts = bpf_ktime_get_ns()};
	if (bpf_map_update_elem(&pending, &key, &n, BPF_ANY))
		count(CNT_ARGS_FULL);
	return 0;
}

SEC("uretprobe")
int sync_return(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u64 key = bpf_get_current_pid_tgid() | KEY_CALL;
	struct pending *p = bpf_map_lookup_elem(&pending, &key);
	if (!p || (p->cookie & COOKIE_OUTER))
		return 0;
	struct pending n = *p;
	bpf_map_delete_elem(&pending, &key);
	long sid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (sid < 0)
		count(CNT_STACK_FAIL);
	__u64 now = bpf_ktime_get_ns(), d = now - n.ts;
	__s32 sk = sid < 0 ? -1 : (__s32)sid;
	struct sync_total *t = bpf_map_lookup_elem(&sync_totals, &sk);
	if (!t) {
		struct sync_total z = {0};
		bpf_map_update_elem(&sync_totals, &sk, &z, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&sync_totals, &sk);
	}
	if (t) {
		__sync_fetch_and_add(&t->count, 1);
		__sync_fetch_and_add(&t->total_ns, d);
		__sync_fetch_and_or(&t->fn_mask, 1u << (COOKIE_FN(n.cookie) & 31));
		raise_max(&t->max_ns, d);
	} else {
		count(CNT_SYNC_FULL);
	}
	if (want_records)
		emit(EV_SYNC, COOKIE_FN(n.cookie), n.ts, COOKIE_FN(n.cookie) == FN_CUDA_DEVICE_SYNCHRONIZE ? 0 : n.outp, d,
		     0, DEV_UNKNOWN, (__s32)sid);
	return 0;
}

/*
 * cudaSetDevice(int d): d, at return if it succeeded; cudaGetDevice(int *d),
 * cuCtxGetDevice(CUdevice *d): what they wrote.  cuCtxSetCurrent,
 * cuCtxPushCurrent_v2, cuCtxPopCurrent_v2 (entry only): the thread's
 * context changes to one whose device is not known here, so the device is
 * forgotten - unless the thread is inside a probed device or allocation
 * call (the runtime switching to the device's own context inside
 * cudaSetDevice or cudaMalloc), which names its device itself.
 */
SEC("uprobe")
int dev_entry(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u32 c = (__u32)bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u64 sp = PT_REGS_SP(ctx);
	if (c & COOKIE_FORGET) {
		__u64 dk = id | KEY_DEV;
		struct pending *p = bpf_map_lookup_elem(&pending, &dk);
		if (p && sp < p->sp)
			return 0;
		p = bpf_map_lookup_elem(&pending, &id);
		if (p && sp < p->sp)
			return 0;
		bpf_map_delete_elem(&devices, &id);
		return 0;
	}
	save(id | KEY_DEV, sp, PT_REGS_PARM1(ctx), 0, c, DEV_UNKNOWN);
	return 0;
}

SEC("uretprobe")
int dev_return(struct pt_regs *ctx)
{
	if (!mine())
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct pending n;
	if (!take_outer(id | KEY_DEV, &n))
		return 0;
	if ((int)PT_REGS_RC(ctx) != 0)
		return 0;
	__s32 d = (__s32)n.outp;
	if (!(n.cookie & COOKIE_DIRECT) && bpf_probe_read_user(&d, sizeof(d), (void *)n.outp))
		return 0;
	if (d >= 0)
		bpf_map_update_elem(&devices, &id, &d, BPF_ANY);
	return 0;
}
