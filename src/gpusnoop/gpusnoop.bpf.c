/*
 * gpusnoop.bpf.c - the kernel half of gpusnoop: uprobes on the CUDA
 * runtime's and driver's allocation entry points, attached by the loader
 * (main.c) with the function id as the BPF cookie.  An allocation is seen
 * twice: at entry its out-pointer and size are saved per thread; at return,
 * if the call succeeded, the pointer it wrote is read and one record goes
 * to the ring buffer with the user stack id.  A free is one record at entry.
 *
 * Cost per probed call: one uprobe trap (~1 us) at entry, one more for an
 * allocation's return, one hash update, one ring-buffer record; the stack
 * walk (frame pointers) at an allocation's return.  Other processes that
 * map the same library take the trap too and leave at the pid check.
 *
 * Why the stack is taken at return: at a function's first instruction the
 * frame-pointer chain still starts at the caller's frame, so a walk from
 * there skips the caller itself - the very function that leaks.  At return
 * the instruction pointer is inside the caller.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gpusnoop/event.h"

char LICENSE[] SEC("license") = "GPL";

/* The process to watch (the thread group id); set by the loader before load. */
const volatile __u32 target_tgid = 0;

struct pending {
	__u64 outp;  /* where the callee writes the result, or the value itself (direct) */
	__u64 size;
	__u64 sp;    /* stack pointer at entry: a nested call's is lower */
	__u32 fn;
	__u32 depth; /* probed allocations nested inside this one (cudaMalloc -> cuMemAlloc_v2) */
	__u32 direct;
	__u32 space;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid: one call in flight per thread (plus nesting depth) */
	__type(value, struct pending);
} pending SEC(".maps");

#define RINGBUF_BYTES (8 << 20) /* the default; the loader may resize it (--ringbuf-kb) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} events SEC(".maps");

#define SNOOP_STACK_DEPTH 64
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SNOOP_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CNT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		__sync_fetch_and_add(c, 1);
}

static __always_inline int mine(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

static __always_inline void emit(__u32 type, __u32 fn, __u64 ptr, __u64 size, __u32 space, __s32 stack_id)
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
	e->ts_ns = bpf_ktime_get_ns();
	e->ptr = ptr;
	e->size = size;
	e->space = space;
	/* waking the reader per record costs a context switch per call on a
	 * busy process; it polls every 100 ms anyway, so wake it only when the
	 * buffer is a quarter full */
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
				 bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4 ? BPF_RB_FORCE_WAKEUP
											: BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* The space of each function's result: its cookie is fn | space << 8. */
static __always_inline void save(__u64 sp, __u64 outp, __u64 size, __u32 cookie, __u32 direct)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&pending, &id);
	/* an entry left by a call that never returned (longjmp, a C++
	 * exception through it) is not an outer call: its stack is not above ours */
	if (p && sp < p->sp) {
		p->depth++;
		count(CNT_NESTED);
		return;
	}
	struct pending n = {.sp = sp, .outp = outp, .size = size, .fn = cookie & 0xff, .direct = direct,
			    .space = cookie >> 8};
	if (bpf_map_update_elem(&pending, &id, &n, BPF_ANY))
		count(CNT_ARGS_FULL);
}

/* cudaMalloc(void **p, size_t n) and the like: result through arg 0 */
SEC("uprobe")
int BPF_KPROBE(alloc_entry, void *outp, __u64 size)
{
	if (mine())
		save(PT_REGS_SP(ctx), (__u64)outp, size, (__u32)bpf_get_attach_cookie(ctx), 0);
	return 0;
}

/* cuMemMap(CUdeviceptr p, size_t n, ...): the address is arg 0 itself */
SEC("uprobe")
int BPF_KPROBE(map_entry, __u64 addr, __u64 size)
{
	if (mine())
		save(PT_REGS_SP(ctx), addr, size, (__u32)bpf_get_attach_cookie(ctx), 1);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, long rc)
{
	if (!mine())
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&pending, &id);
	if (!p)
		return 0;
	if (p->depth) {
		p->depth--;
		return 0;
	}
	struct pending n = *p;
	bpf_map_delete_elem(&pending, &id);
	/* cudaError_t and CUresult are both 0 on success (an int: low 32 bits) */
	if ((int)rc != 0) {
		count(CNT_FAILED_CALLS);
		return 0;
	}
	__u64 ptr = n.outp;
	if (!n.direct && bpf_probe_read_user(&ptr, sizeof(ptr), (void *)n.outp))
		return 0;
	long sid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (sid < 0)
		count(CNT_STACK_FAIL);
	emit(EV_ALLOC, n.fn, ptr, n.size, n.space, (__s32)sid);
	return 0;
}

/* cudaFree(void *p), cuMemRelease(handle), cuMemUnmap(p, n): arg 0 */
SEC("uprobe")
int BPF_KPROBE(free_entry, __u64 ptr)
{
	if (!mine() || ptr == 0)
		return 0;
	__u32 cookie = (__u32)bpf_get_attach_cookie(ctx);
	emit(EV_FREE, cookie & 0xff, ptr, 0, cookie >> 8, -1);
	return 0;
}
