/*
 * order.h - sorting an array of records by radix-sortable keys
 * (src/trace/rsort.h): rsort_kv sorts (key, position) pairs, order_apply
 * then moves the records into that order.  One gather through a scratch
 * copy: O(n) time and n records of memory.  Header only, inline, so that
 * the record size is a constant at each call (a plain load and store per
 * record, not a memcpy call).
 */
#ifndef DYNO_ANALYZE_ORDER_H
#define DYNO_ANALYZE_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

/* The positions 0..n-1 (free() it): the payload to sort with the keys. */
static inline uint32_t *order_identity(size_t n)
{
	uint32_t *pos = xmalloc((n ? n : 1) * sizeof *pos);
	for (size_t i = 0; i < n; i++)
		pos[i] = (uint32_t)i;
	return pos;
}

/* base[j] = the old base[pos[j]] for every j < n; records of size bytes. */
static inline void order_apply(void *base, size_t n, size_t size, const uint32_t *pos)
{
	if (n == 0)
		return;
	char *tmp = xmalloc(n * size);
	const char *src = base;
	for (size_t j = 0; j < n; j++)
		memcpy(tmp + j * size, src + (size_t)pos[j] * size, size);
	memcpy(base, tmp, n * size);
	free(tmp);
}

#endif
