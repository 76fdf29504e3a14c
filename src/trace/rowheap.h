/*
 * rowheap.h - a binary max-heap of row numbers, for the sweeps that need
 * "the last row in trace order among those still open": which ProfilerStep
 * holds a row (finish.c, the iteration column) and which step a memory row
 * of an MTIA rank starts in (filter_mtia.c).  Rows are unique, so the top
 * does not depend on the order of pushes.  O(log n) per push and pop; the
 * caller owns the array (room for every row it will push).
 */
#ifndef DYNO_TRACE_ROWHEAP_H
#define DYNO_TRACE_ROWHEAP_H

#include <stddef.h>
#include <stdint.h>

static inline void rowheap_push(uint32_t *h, size_t *n, uint32_t row)
{
	size_t i = (*n)++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (h[p] >= row)
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = row;
}

/* Drop the top (the largest row); *n > 0. */
static inline void rowheap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= *n)
			break;
		if (l + 1 < *n && h[l + 1] > h[l])
			m = l + 1;
		if (h[m] <= v)
			break;
		h[i] = h[m];
		i = m;
	}
	if (*n)
		h[i] = v;
}

#endif
