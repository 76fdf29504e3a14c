/*
 * columns.c - allocation of the row columns of struct trace_rank through
 * the column table of columns.h, and a rank's construction and destruction.
 *
 * The columns are reserved once before the parse from the size of the
 * text (trace_columns_reserve), so a load allocates each column once
 * instead of doubling and copying it; past the estimate they double, which
 * for blocks this big is an mremap that moves pages without copying.
 *
 * A mid-size load (7-89 MB of text: every column under 2 MiB, all of them
 * together 2 MiB or more) gets its columns in one block on transparent huge
 * pages, the arena, where dyno analyze turned huge pages on.  Each column
 * alone would be too small for a huge page of its own and would fill on
 * 4 KiB pages, and on a virtual machine each such fault costs ~2 us: on the
 * 35 MB trace_diff/control, ~1,900 faults (~4 ms) for the columns of one
 * parse, plus freeing as many pages at exit; the arena (the estimate of
 * rows and half again) takes 5 faults and zeroes 10 MB (~1.1 ms).  A
 * column leaves the arena (for a block of its own) when it must grow past
 * the arena's room; shrinking a column there keeps its room (a load this
 * size is not what the memory limits are about); the block is unmapped
 * when its last column leaves or is freed.
 * Not under AddressSanitizer, which checks each column as its own block.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trace/columns.h"

#define HUGE_PAGE ((size_t)2 << 20)
/* Even at one huge page the arena wins: zeroing 2 MiB (~0.2 ms) against
 * ~2 us a 4 KiB fault for as many columns' pages as the rows reach (the
 * helper's part of a .json.gz in two parts, ~10 MB of text on
 * trace_diff/control: ~580 faults on small pages). */
#define ARENA_MIN ((size_t)2 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ALLOWED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ALLOWED 0
#endif
#endif
#ifndef ARENA_ALLOWED
#define ARENA_ALLOWED 1
#endif

#define COL(field, NAME)                                                                             \
	[TRACE_COL_##NAME] = {#field, offsetof(struct trace_rank, field), sizeof *((struct trace_rank *)0)->field}
const struct trace_column trace_columns[TRACE_NCOLS] = {
	COL(ts, TS),
	COL(dur, DUR),
	COL(name, NAME),
	COL(cat, CAT),
	COL(kind, KIND),
	COL(pid, PID),
	COL(tid, TID),
	COL(stream, STREAM),
	COL(correlation, CORRELATION),
	COL(external_id, EXTERNAL_ID),
	COL(bytes, BYTES),
	COL(mem_bw_gbps, MEM_BW_GBPS),
	COL(idx, IDX),
	COL(link, LINK),
	COL(iteration, ITERATION),
	[TRACE_COL_OCCUPANCY] = {"occupancy", offsetof(struct trace_rank, occupancy), sizeof(float),
				 offsetof(struct trace_rank, occupancy_kept)},
};
#undef COL

struct trace_rank *trace_rank_new(const char *path)
{
	struct trace_rank *r = xcalloc(1, sizeof *r);
	r->path = xstrdup(path);
	trace_strtab_init(&r->strs);
	return r;
}

bool trace_columns_arena_possible(void) { return ARENA_ALLOWED && xalloc_huge_pages_on(); }

static bool in_arena(const struct trace_rank *r, size_t c)
{
	return __atomic_load_n(&r->col_in_arena, __ATOMIC_RELAXED) >> c & 1;
}

/* Column c no longer lies in the arena; the last one out unmaps it.  Tasks
 * of one par_for may move different columns out at once. */
static void arena_leave(struct trace_rank *r, size_t c)
{
	if (__atomic_and_fetch(&r->col_in_arena, ~(1u << c), __ATOMIC_ACQ_REL) == 0) {
		munmap(r->col_arena, r->col_arena_len);
		r->col_arena = NULL;
		r->col_arena_len = r->col_arena_cap = 0;
	}
}

/* The reservation of a rank without columns yet, cap rows: in an arena
 * when the load is the size it pays for (see the top of the file). */
static bool arena_new(struct trace_rank *r, size_t cap)
{
	if (!trace_columns_arena_possible() || cap * 8 >= HUGE_PAGE)
		return false; /* big columns get huge pages of their own (xrealloc) */
	size_t bytes = 0;
	for (size_t c = 0; c < TRACE_NCOLS; c++)
		if (trace_col_kept(r, c))
			bytes += (cap * trace_columns[c].size + 63) & ~(size_t)63;
	if (bytes < ARENA_MIN)
		return false;
	size_t len = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	/* one huge page more, so the block can start on a 2 MiB boundary */
	char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	char *a = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (m + HUGE_PAGE > a)
		munmap(a + len, (size_t)(m + HUGE_PAGE - a));
	(void)madvise(a, len, MADV_HUGEPAGE);
	size_t off = 0;
	uint32_t mask = 0;
	for (size_t c = 0; c < TRACE_NCOLS; c++) {
		if (!trace_col_kept(r, c))
			continue;
		*trace_col(r, c) = a + off;
		off += (cap * trace_columns[c].size + 63) & ~(size_t)63;
		mask |= 1u << c;
	}
	r->col_arena = a;
	r->col_arena_len = len;
	r->col_arena_cap = cap;
	__atomic_store_n(&r->col_in_arena, mask, __ATOMIC_RELAXED);
	r->cap = cap;
	return true;
}

void trace_col_resize(struct trace_rank *r, size_t c, size_t rows)
{
	void **col = trace_col(r, c);
	size_t size = trace_columns[c].size;
	if (in_arena(r, c)) {
		if (rows <= r->col_arena_cap)
			return;
		void *p = xmalloc(rows * size);
		memcpy(p, *col, (r->n < r->col_arena_cap ? r->n : r->col_arena_cap) * size);
		*col = p;
		arena_leave(r, c);
		return;
	}
	*col = xrealloc(*col, (rows ? rows : 1) * size);
}

void trace_col_release(struct trace_rank *r, size_t c)
{
	void **col = trace_col(r, c);
	if (in_arena(r, c))
		arena_leave(r, c);
	else
		free(*col);
	*col = NULL;
}

void trace_col_gather(void *dst, const void *col, size_t size, const uint32_t *idx, size_t n)
{
#define GATHER(T)                                                                                    \
	do {                                                                                         \
		const T *from = col;                                                                 \
		T *to = dst;                                                                         \
		for (size_t i = 0; i < n; i++)                                                       \
			to[i] = from[idx[i]];                                                        \
	} while (0)
	if (size == 8)
		GATHER(uint64_t);
	else if (size == 4)
		GATHER(uint32_t);
	else
		GATHER(uint8_t);
#undef GATHER
}

void trace_columns_grow(struct trace_rank *r, size_t need)
{
	if (need <= r->cap)
		return;
	size_t cap = r->cap ? r->cap : 4096;
	while (cap < need)
		cap *= 2;
	for (size_t c = 0; c < TRACE_NCOLS; c++)
		if (trace_col_kept(r, c))
			trace_col_resize(r, c, cap);
	r->cap = cap;
}

/* Room for the rows that `bytes` of trace text likely hold, reserved before
 * parsing so that the columns start big (on huge pages, see
 * xalloc_huge_pages) instead of doubling from 4096 rows, each doubling on
 * malloc's heap a copy into memory that must be faulted in.  Kineto events
 * take 250-800 bytes: one row per 512 bytes is near the mark; past it the
 * columns keep doubling.  The unused rest is address space, never touched,
 * and no more than doubling itself would claim. */
void trace_columns_reserve(struct trace_rank *r, uint64_t bytes)
{
	uint64_t rows = bytes / 512;
	if (rows > (1u << 26))
		rows = 1u << 26;
	/* an arena is all touched (every huge page holds some column's rows),
	 * so it is sized to the estimate and half as much again rather than
	 * to the next power of two: 10 MB instead of 13 on trace_diff/control
	 * (466 bytes a row there) */
	if (r->cap == 0 && arena_new(r, (size_t)(rows + rows / 2 + 63) & ~(size_t)63))
		return;
	trace_columns_grow(r, (size_t)rows);
}

void trace_columns_free(struct trace_rank *r)
{
	for (size_t c = 0; c < TRACE_NCOLS; c++)
		trace_col_release(r, c);
	r->n = r->cap = 0;
}

void trace_rank_free(struct trace_rank *r)
{
	if (!r)
		return;
	trace_columns_free(r);
	trace_strtab_free(&r->strs);
	free(r->str_ktype);
	free(r->iterations);
	free(r->flows);
	free(r->counters);
	free(r->waits);
	free(r->range_args);
	free(r->distributed_info);
	free(r->device_type);
	free(r->path);
	free(r);
}
