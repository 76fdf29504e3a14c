/*
 * rsort.c - adaptive stable sort of (key, value) pairs (see rsort.h): the
 * in-order part of the input stays, the rest is sorted (recursively) and
 * merged; input mostly out of order goes to an LSD radix sort with 11-bit
 * digits, six passes at most, where one counting pass builds every digit's
 * histogram and a digit on which all keys agree is skipped.  Below 64
 * pairs an insertion sort is faster and allocates nothing.
 */
#include "trace/rsort.h"

#include <stdbool.h>
#include <stdlib.h>

#include "core/buf.h"

#define DIGIT_BITS 11
#define NDIGITS 6 /* 6 * 11 >= 64 */
#define RADIX (1u << DIGIT_BITS)

static void insertion(uint64_t *key, uint32_t *val, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t k = key[i];
		uint32_t v = val ? val[i] : 0;
		size_t j = i;
		while (j > 0 && key[j - 1] > k) {
			key[j] = key[j - 1];
			if (val)
				val[j] = val[j - 1];
			j--;
		}
		key[j] = k;
		if (val)
			val[j] = v;
	}
}

static void radix(uint64_t *key, uint32_t *val, size_t n);

static void sort_rec(uint64_t *key, uint32_t *val, size_t n, int depth);

/* Mostly sorted input (the usual case: Kineto writes rows mostly in time
 * and correlation order, and the filtered table is two sorted runs, GPU
 * rows then CPU rows): the greedy non-decreasing subsequence "main" stays
 * in place, the keys below it ("rest") are sorted on their own (the same
 * way, recursively) and merged back.  A rest key never ties with a main
 * key that comes after it in the input (every later main key is greater),
 * so on equal keys main goes first and the result is the stable order.
 * Returns false (nothing moved) when most keys are out of order: then the
 * radix sort is cheaper. */
static bool split_merge(uint64_t *key, uint32_t *val, size_t n, int depth)
{
	size_t nrest = 0;
	uint64_t last = key[0];
	for (size_t i = 1; i < n; i++) {
		if (key[i] >= last)
			last = key[i];
		else
			nrest++;
	}
	if (nrest == 0)
		return true;
	if (depth >= 4 || nrest > n / 4 * 3)
		return false;
	uint64_t *rk = xmalloc(nrest * sizeof *rk);
	uint32_t *rv = val ? xmalloc(nrest * sizeof *rv) : NULL;
	size_t nm = 1, nr = 0;
	last = key[0];
	for (size_t i = 1; i < n; i++) {
		if (key[i] >= last) {
			last = key[i];
			key[nm] = key[i];
			if (val)
				val[nm] = val[i];
			nm++;
		} else {
			rk[nr] = key[i];
			if (val)
				rv[nr] = val[i];
			nr++;
		}
	}
	sort_rec(rk, rv, nr, depth + 1);
	/* merge from the back; on equal keys the rest element is the later one */
	size_t i = nm, j = nr, o = n;
	while (j > 0) {
		if (i > 0 && key[i - 1] > rk[j - 1]) {
			o--, i--;
			key[o] = key[i];
			if (val)
				val[o] = val[i];
		} else {
			o--, j--;
			key[o] = rk[j];
			if (val)
				val[o] = rv[j];
		}
	}
	free(rk);
	free(rv);
	return true;
}

static void sort_rec(uint64_t *key, uint32_t *val, size_t n, int depth)
{
	if (n < 64) {
		insertion(key, val, n);
		return;
	}
	if (split_merge(key, val, n, depth))
		return;
	radix(key, val, n);
}

void rsort_kv(uint64_t *key, uint32_t *val, size_t n)
{
	sort_rec(key, val, n, 0);
}

static void radix(uint64_t *key, uint32_t *val, size_t n)
{
	uint32_t(*hist)[RADIX] = xcalloc(NDIGITS, sizeof *hist);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key[i];
		for (int d = 0; d < NDIGITS; d++)
			hist[d][(k >> (d * DIGIT_BITS)) & (RADIX - 1)]++;
	}
	uint64_t *tk = NULL;
	uint32_t *tv = NULL;
	uint64_t *sk = key, *dk;
	uint32_t *sv = val, *dv;
	for (int d = 0; d < NDIGITS; d++) {
		unsigned shift = (unsigned)d * DIGIT_BITS;
		if (hist[d][(key[0] >> shift) & (RADIX - 1)] == n)
			continue; /* every key has this digit */
		if (!tk) {
			tk = xmalloc(n * sizeof *tk);
			if (val)
				tv = xmalloc(n * sizeof *tv);
		}
		dk = sk == key ? tk : key;
		dv = sv == val ? tv : val;
		uint32_t pos[RADIX], acc = 0;
		for (unsigned b = 0; b < RADIX; b++) {
			pos[b] = acc;
			acc += hist[d][b];
		}
		for (size_t i = 0; i < n; i++) {
			uint32_t b = (uint32_t)((sk[i] >> shift) & (RADIX - 1));
			uint32_t p = pos[b]++;
			dk[p] = sk[i];
			if (val)
				dv[p] = sv[i];
		}
		sk = dk;
		sv = dv;
	}
	if (sk != key) {
		memcpy(key, sk, n * sizeof *key);
		if (val)
			memcpy(val, sv, n * sizeof *val);
	}
	free(tk);
	free(tv);
	free(hist);
}
