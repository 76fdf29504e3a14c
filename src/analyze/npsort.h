/*
 * npsort.h - the order numpy's default argsort (kind "quicksort", numpy
 * 1.24: an introsort without SIMD) gives, ties included.  HTA sorts its
 * counter series with pandas' sort_values, which is that argsort: its
 * order among equal times is not the input order, and the running sums
 * over the sorted rows (queue length, bandwidth) depend on it.  To give
 * HTA's rows and values exactly, those analyses sort with this instead of
 * a stable sort.  O(n log n) comparisons, no allocation beyond a fixed
 * stack.
 */
#ifndef DYNO_ANALYZE_NPSORT_H
#define DYNO_ANALYZE_NPSORT_H

#include <stddef.h>
#include <stdint.h>

/* Reorder idx[0..n) (positions into v) as numpy's argsort of v[idx[...]]
 * would, when idx holds 0..n-1 on entry: the result is a permutation with
 * v ascending.  v must hold no NaN. */
void np_argsort(const double *v, uint32_t *idx, size_t n);

#endif
