/*
 * rsort.c - stable LSD radix sort (see rsort.h).  11-bit digits, six
 * passes at most; one counting pass builds every digit's histogram, and a
 * digit on which all keys agree is skipped.  Below 64 pairs an insertion
 * sort is faster and allocates nothing.
 */
#include "trace/rsort.h"

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

void rsort_kv(uint64_t *key, uint32_t *val, size_t n)
{
	if (n < 64) {
		insertion(key, val, n);
		return;
	}
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

void rsort_idx(uint32_t *idx, size_t n, const uint64_t *key_of_row)
{
	uint64_t *k = xmalloc((n ? n : 1) * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = key_of_row[idx[i]];
	rsort_kv(k, idx, n);
	free(k);
}
