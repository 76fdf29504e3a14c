/*
 * event.h - what gpusnoop's BPF program (gpusnoop.bpf.c) and its loader
 * (main.c, probes.c) share: the probed functions, how a probe's BPF cookie
 * says where each function keeps its arguments, the record each probe
 * writes to the ring buffer, and the counters of what could not be
 * recorded.  Included by both sides, so it uses only fixed-width kernel
 * types.
 *
 * Records go through the ring buffer only for the timeline (--trace): the
 * state itself (live allocations, per-stack and per-space totals, sync
 * stacks, counters) is kept in the kernel's maps, whose entries are
 * defined here too.  A record is 48 bytes; at 10^5 allocations a second
 * that is 4.8 MB/s of ring buffer, drained by one user thread.  Launches
 * make no record (they are counted in the kernel).
 */
#ifndef DYNO_GPUSNOOP_EVENT_H
#define DYNO_GPUSNOOP_EVENT_H

#include <linux/types.h>

/*
 * The probed functions, in the order of the loader's probe table
 * (probes.c).  The ids travel in records and index the call counters, so
 * the report can name the entry point.  At most 32 (a leak group keeps a
 * bit per function).
 */
enum snoop_fn {
	/* memory (--events mem) */
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
	/* launches (--events launch) */
	FN_CUDA_LAUNCH_KERNEL,
	FN_CU_LAUNCH_KERNEL,
	FN_CU_LAUNCH_KERNEL_EX,
	FN_CUDA_GRAPH_LAUNCH,
	/* synchronisations (--events sync) */
	FN_CUDA_DEVICE_SYNCHRONIZE,
	FN_CUDA_STREAM_SYNCHRONIZE,
	FN_CUDA_EVENT_SYNCHRONIZE,
	/* PyTorch's caching allocator (--torch) */
	FN_TORCH_ALLOCATE,
	FN_TORCH_MALLOC,
	FN_TORCH_RAW_ALLOC,
	FN_TORCH_LOCAL_RAW_DELETE,
	FN_TORCH_RAW_DELETE,
	FN_TORCH_UNCACHED_DELETE,
	/* the thread's current device, for the timeline's per-device bytes
	 * (attached with --trace only: cudaGetDevice is called often) */
	FN_CUDA_SET_DEVICE,
	FN_CUDA_GET_DEVICE,
	FN_CU_CTX_GET_DEVICE,
	FN_CU_CTX_SET_CURRENT,
	FN_CU_CTX_PUSH_CURRENT,
	FN_CU_CTX_POP_CURRENT,
	FN_COUNT
};

/*
 * Address spaces that do not mix: device/host pointers (one unified
 * virtual space), cuMemCreate handles, cuMemMap'ed ranges (a mapping of a
 * handle's memory; counting it as well as the handle would count the same
 * bytes twice, so the report keeps them apart), and the blocks PyTorch's
 * caching allocator hands to tensors (carved out of the first space's
 * segments: the same bytes again, one layer up).
 */
enum snoop_space { SPACE_PTR, SPACE_HANDLE, SPACE_MAP, SPACE_TORCH, SPACE_COUNT };

enum snoop_type { EV_ALLOC = 1, EV_FREE = 2, EV_SYNC = 3 };

/*
 * The device an allocation is on (snoop_event.device): an ordinal >= 0,
 * or one of these.  Unknown: the thread's current device was not seen
 * since the probes were attached (or a driver context switch made it
 * unknowable), managed memory (on no one device), a cuMemCreate whose
 * location could not be read; never guessed as device 0.
 */
#define DEV_UNKNOWN (-1)
#define DEV_HOST (-2) /* pinned host memory (cudaMallocHost, a cuMemCreate on a host location) */

/*
 * EV_ALLOC: ptr, size (bytes), space, device, stack at return.
 * EV_FREE:  ptr, space; no stack (stack_id -1).
 * EV_SYNC:  ts_ns the call's entry, size its duration in ns, ptr its first
 *           argument (the stream or event; 0 for cudaDeviceSynchronize),
 *           stack at return.
 */
struct snoop_event {
	__u32 type;     /* enum snoop_type */
	__u32 fn;       /* enum snoop_fn */
	__u32 tid;
	__s32 stack_id; /* user stack in the stack map; < 0: not recorded */
	__u64 ts_ns;    /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 ptr;      /* the pointer / handle / mapped address; a sync's stream or event */
	__u64 size;     /* bytes (EV_ALLOC); ns (EV_SYNC) */
	__u32 space;    /* enum snoop_space (EV_ALLOC, EV_FREE) */
	__s32 device;   /* EV_ALLOC: the device (>= 0) or DEV_*; DEV_UNKNOWN otherwise */
};

/*
 * A probe's BPF cookie: which function, and where it keeps what the probe
 * reads, so one BPF program serves C functions and C++ methods alike
 * (`this` is argument 0; a returned C++ object is written through a hidden
 * pointer in argument 0).  Argument indexes 0-4 (x86-64: rdi, rsi, rdx,
 * rcx, r8); COOKIE_RET: the function's return value.
 */
#define COOKIE_FN(c) ((c) & 0xff)
#define COOKIE_SPACE(c) (((c) >> 8) & 0xf)
#define COOKIE_PTR_ARG(c) (((c) >> 12) & 0x7)  /* alloc: the out-pointer; free: the pointer */
#define COOKIE_SIZE_ARG(c) (((c) >> 16) & 0x7)
#define COOKIE_RET 7
#define COOKIE_DIRECT (1u << 20)   /* the PTR_ARG is the value itself (cuMemMap's address) */
#define COOKIE_CHECK_RC (1u << 21) /* 0 returned means success (CUDA's error codes) */
#define COOKIE_TORCH (1u << 22)    /* PyTorch's layer: nests apart from the CUDA calls it makes */
#define COOKIE_OUTER (1u << 23)    /* a launch that makes a probed launch inside (cudaLaunchKernel) */
/* where an allocation's device comes from (bits 24-25) */
#define COOKIE_DEVSRC(c) ((c) & (3u << 24))
#define DEVSRC_THREAD 0 /* the thread's current device (cudaSetDevice/cudaGetDevice/cuCtxGetDevice) */
#define DEVSRC_HOST (1u << 24)    /* pinned host memory */
#define DEVSRC_PROP (2u << 24)    /* cuMemCreate: its CUmemAllocationProp's location (argument 2) */
#define DEVSRC_NONE (3u << 24)    /* on no one device (managed memory), or not device memory */
#define COOKIE_FORGET (1u << 26)  /* a driver context switch: the thread's device becomes unknown */
#define COOKIE(fn, space, ptr_arg, size_arg, flags) \
	((fn) | (space) << 8 | (ptr_arg) << 12 | (size_arg) << 16 | (flags))

/*
 * The allocations still live, in the kernel (the live map), keyed by
 * (pointer, space): a free removes its entry there, so nothing about a
 * free depends on the ring buffer.  Per (stack, space) the outstanding
 * bytes and count (the live table's top stacks), per space the outstanding
 * bytes and their peak, per sync stack its count and time waited.
 */
struct live_key {
	__u64 ptr;
	__u32 space;
	__u32 pad;
};

struct live_val {
	__u64 size;
	__u64 ts_ns;
	__s32 stack_id; /* < 0: not recorded */
	__u32 fn;
	__s32 device;
	__u32 in_totals; /* added to its stack's totals (that map may be full) */
};

struct stack_key {
	__s32 stack_id; /* -1 for every allocation whose stack is unavailable */
	__u32 space;
};

struct stack_total {
	__s64 bytes;
	__s64 count;
};

struct space_total {
	__s64 bytes; /* outstanding */
	__u64 peak;
};

struct sync_total {
	__u64 count, total_ns, max_ns;
	__u32 fn_mask; /* bit per enum snoop_fn */
	__u32 pad;
};

/* Indexes of the BPF program's counter array (per CPU; all must reach the report). */
enum snoop_counter {
	CNT_RINGBUF_DROPS,   /* no room in the ring buffer: a record lost */
	CNT_ARGS_FULL,       /* too many calls in flight: an allocation or sync lost */
	CNT_STACK_FAIL,      /* stack map full or walk failed: record kept, stack not */
	CNT_NESTED,          /* inner call of an outer probed allocation (not counted twice) */
	CNT_FAILED_CALLS,    /* allocation returned an error: nothing allocated */
	CNT_NESTED_LAUNCHES, /* a driver launch made by cudaLaunchKernel (counted once, as the outer) */
	/* the allocations' state, kept in the kernel (the live map): */
	CNT_ALLOCS,          /* allocations recorded */
	CNT_FREES,           /* frees seen */
	CNT_UNMATCHED_FREES, /* frees of a pointer not live (a nested free, or allocated before the probes) */
	CNT_REPLACED,        /* an allocation of a pointer still live: its free was missed */
	CNT_LIVE_FULL,       /* the live map full (--max-live): an allocation not tracked */
	CNT_TOTALS_FULL,     /* the per-stack totals full: the live table misses it (the report does not) */
	CNT_SYNC_FULL,       /* the sync stacks map full: a sync left out of the stacks (still counted) */
	CNT_COUNT
};

#endif
