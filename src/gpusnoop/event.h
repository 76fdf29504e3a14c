/*
 * event.h - what gpusnoop's BPF program (gpusnoop.bpf.c) and its loader
 * (main.c) share: the probed functions, the record each probe writes to the
 * ring buffer, and the counters of what could not be recorded.  Included
 * by both sides, so it uses only fixed-width kernel types.
 *
 * A record is 48 bytes; at 10^5 allocations a second that is 4.8 MB/s of
 * ring buffer, drained by one user thread.
 */
#ifndef DYNO_GPUSNOOP_EVENT_H
#define DYNO_GPUSNOOP_EVENT_H

#include <linux/types.h>

/*
 * The probed functions, in the order of the loader's probe table.  The
 * BPF side only needs to know which argument holds what (see the
 * SNOOP_FN_* kinds below); the ids travel in records so the report can
 * name the entry point.
 */
enum snoop_fn {
	FN_CUDA_MALLOC,
	FN_CUDA_FREE,
	FN_CUDA_MALLOC_ASYNC,
	FN_CUDA_FREE_ASYNC,
	FN_CUDA_MALLOC_MANAGED,
	FN_CUDA_MALLOC_HOST,
	FN_CUDA_FREE_HOST,
	FN_CU_MEM_ALLOC,
	FN_CU_MEM_FREE,
	FN_CU_MEM_CREATE,
	FN_CU_MEM_RELEASE,
	FN_CU_MEM_MAP,
	FN_CU_MEM_UNMAP,
	FN_COUNT
};

/*
 * Address spaces that do not mix: device/host pointers (one unified
 * virtual space), cuMemCreate handles, and cuMemMap'ed ranges (a mapping
 * of a handle's memory; counting it as well as the handle would count the
 * same bytes twice, so the report keeps them apart).
 */
enum snoop_space { SPACE_PTR, SPACE_HANDLE, SPACE_MAP, SPACE_COUNT };

enum snoop_type { EV_ALLOC = 1, EV_FREE = 2 };

struct snoop_event {
	__u32 type;     /* enum snoop_type */
	__u32 fn;       /* enum snoop_fn */
	__u32 tid;
	__s32 stack_id; /* user stack in the stack map; < 0: not recorded */
	__u64 ts_ns;    /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 ptr;      /* the pointer / handle / mapped address */
	__u64 size;     /* bytes (EV_ALLOC only) */
	__u64 space;    /* enum snoop_space */
};

/* Indexes of the BPF program's counter array (all must reach the report). */
enum snoop_counter {
	CNT_RINGBUF_DROPS, /* no room in the ring buffer: a record lost */
	CNT_ARGS_FULL,     /* too many calls in flight: an allocation lost */
	CNT_STACK_FAIL,    /* stack map full or walk failed: record kept, stack not */
	CNT_NESTED,        /* inner call of an outer probed allocation (not counted twice) */
	CNT_FAILED_CALLS,  /* allocation returned an error: nothing allocated */
	CNT_COUNT
};

#endif
