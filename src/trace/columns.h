/*
 * columns.h - the row columns of struct trace_rank as a table, and their
 * allocation (columns.c); internal to the trace library and its tests.
 *
 * Every step that treats all columns alike (grow, free, the filter's
 * gather, the two-thread merge, the tests' model comparison) walks
 * trace_columns[] instead of naming fifteen fields, so a new column is one
 * row of the table.  The table order is the TRACE_COL_* order.  A column
 * only some loads ask for (occupancy) is optional: its array is allocated
 * only on a rank that keeps it (trace_col_kept), so a load without it
 * costs nothing.
 */
#ifndef DYNO_TRACE_COLUMNS_H
#define DYNO_TRACE_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/model.h"

enum trace_col {
	TRACE_COL_TS,
	TRACE_COL_DUR,
	TRACE_COL_NAME,
	TRACE_COL_CAT,
	TRACE_COL_KIND,
	TRACE_COL_PID,
	TRACE_COL_TID,
	TRACE_COL_STREAM,
	TRACE_COL_CORRELATION,
	TRACE_COL_EXTERNAL_ID,
	TRACE_COL_BYTES,
	TRACE_COL_MEM_BW_GBPS,
	TRACE_COL_IDX,
	TRACE_COL_LINK,
	TRACE_COL_ITERATION,
	TRACE_COL_OCCUPANCY, /* optional: keep_kernel_occupancy */
	TRACE_NCOLS
};

struct trace_column {
	const char *name;
	size_t offset; /* of the array pointer in struct trace_rank */
	size_t size;   /* bytes per row: 1, 4 or 8 */
	/* an optional column: the offset of the bool in struct trace_rank
	 * that says whether this rank keeps it (set by the parser from its
	 * load option before the first row); 0: every rank has it */
	size_t kept;
};
extern const struct trace_column trace_columns[TRACE_NCOLS];

/* Does r have column c?  An optional column that is not kept stays NULL
 * and every walker of the table skips it. */
static inline bool trace_col_kept(const struct trace_rank *r, size_t c)
{
	return !trace_columns[c].kept || *(const bool *)((const char *)r + trace_columns[c].kept);
}

/* The array pointer of column c in r (e.g. &r->ts as a void **). */
static inline void **trace_col(struct trace_rank *r, size_t c)
{
	return (void **)((char *)r + trace_columns[c].offset);
}
static inline const void *trace_col_data(const struct trace_rank *r, size_t c)
{
	return *(void *const *)((const char *)r + trace_columns[c].offset);
}

/* An empty rank named path (a copy), no columns yet. */
struct trace_rank *trace_rank_new(const char *path);
/* Room for at least `need` rows in every column: doubling from 4096. */
void trace_columns_grow(struct trace_rank *r, size_t need);
/* The check of the parse's per-row commit, inline; the growth is not. */
static inline void trace_columns_need(struct trace_rank *r, size_t need)
{
	if (__builtin_expect(need > r->cap, 0))
		trace_columns_grow(r, need);
}
/* Room reserved before a parse for the rows that `bytes` of text likely
 * hold (see columns.c). */
void trace_columns_reserve(struct trace_rank *r, uint64_t bytes);
/* Free every column; n and cap become 0. */
void trace_columns_free(struct trace_rank *r);
/* Column c to room for `rows` rows, its rows [0, r->n) kept (realloc, or
 * out of the arena into a block of its own when the arena's room is too
 * small; a smaller size keeps the arena's room).  Tasks of one par_for may
 * resize different columns of r at once. */
void trace_col_resize(struct trace_rank *r, size_t c, size_t rows);
/* Free column c (NULL after); likewise safe for different columns at once. */
void trace_col_release(struct trace_rank *r, size_t c);
/* dst[i] = col[idx[i]] for i < n, as whole values of `size` bytes (1, 4 or
 * 8: doubles by their bits).  dst may be col itself when idx is ascending
 * with idx[i] >= i (rows moved down in place). */
void trace_col_gather(void *dst, const void *col, size_t size, const uint32_t *idx, size_t n);
/* Whether a reservation may put the columns in an arena now (huge pages
 * on, not under AddressSanitizer); for tests. */
bool trace_columns_arena_possible(void);

#endif
