/*
 * rsort.h - the sorts of the after-parse steps (finish.c, set.c) and the
 * analyses (src/analyze): a stable LSD radix sort of (uint64 key, uint32
 * value) pairs, and the order-preserving key maps of doubles and int64s.
 *
 * Why not qsort: the analyses sort hundreds of thousands of rows by time,
 * several times per rank, and qsort's comparator calls were the largest
 * cost after the JSON parse.  A comparator sort with a tie-break on the row
 * number gives the same order as this stable sort of the primary key over
 * rows in ascending order, so every caller keeps qsort's exact result; a
 * multi-key order is stable passes from the last key to the first.
 */
#ifndef DYNO_TRACE_RSORT_H
#define DYNO_TRACE_RSORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Sort key[0..n) ascending, moving val[i] (may be NULL) with key[i]; equal
 * keys keep their order.  Mostly sorted input costs a few linear passes (the
 * keys out of order are sorted alone and merged back); otherwise radix
 * passes, skipping digits where every key agrees.  n < 2^32. */
void rsort_kv(uint64_t *key, uint32_t *val, size_t n);

/* x < y as doubles <=> key(x) < key(y), and -0.0 == 0.0 like the
 * comparators it replaces (NaN never occurs in the model's times). */
static inline uint64_t rsort_key_f64(double d)
{
	if (d == 0)
		d = 0; /* -0.0 compares equal to 0.0: same key */
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return (u >> 63) ? ~u : u | (1ull << 63);
}

static inline uint64_t rsort_key_i64(int64_t v) { return (uint64_t)v ^ (1ull << 63); }

#endif
