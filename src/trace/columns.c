/*
 * columns.c - allocation of the row columns of struct trace_rank (model.h)
 * through the column table of columns.h, and a rank's construction and
 * destruction.
 *
 * The columns are reserved once before the parse from the size of the
 * text (trace_columns_reserve), so a load allocates each column once
 * instead of doubling and copying it; past the estimate they double, which
 * for blocks this big is an mremap that moves pages without copying.
 */
#include <stdlib.h>

#include "trace/columns.h"

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

void trace_columns_grow(struct trace_rank *r, size_t need)
{
	if (need <= r->cap)
		return;
	size_t cap = r->cap ? r->cap : 4096;
	while (cap < need)
		cap *= 2;
	for (size_t c = 0; c < TRACE_NCOLS; c++) {
		if (!trace_col_kept(r, c))
			continue;
		void **col = trace_col(r, c);
		*col = xrealloc(*col, cap * trace_columns[c].size);
	}
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
	trace_columns_grow(r, rows < (1u << 26) ? (size_t)rows : (size_t)1 << 26);
}

void trace_columns_free(struct trace_rank *r)
{
	for (size_t c = 0; c < TRACE_NCOLS; c++) {
		void **col = trace_col(r, c);
		free(*col);
		*col = NULL;
	}
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
