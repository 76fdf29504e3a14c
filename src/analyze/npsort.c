/*
 * npsort.c - numpy's argsort order (see npsort.h).  The algorithm, as numpy
 * 1.24 runs it for 64-bit numbers: while a range holds more than 16
 * entries, partition it around the median of its first, middle and last
 * entries (Hoare style, the pivot parked next to the last entry), go on
 * with the smaller side and push the larger one; ranges of 16 or fewer are
 * insertion sorted; past 2*floor(log2 n) partitions in depth a range is
 * heapsorted.  Every choice here decides where equal keys land, so each
 * step mirrors that behaviour exactly; a different but correct sort would
 * give another tie order.
 */
#include "analyze/npsort.h"

static inline void swap32(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;
	*a = *b;
	*b = t;
}

/* numpy's sift-down: put tmp at a[i] of the heap a[1..n], moving larger
 * children up */
static void sift_down(const double *v, uint32_t *a, size_t i, size_t n, uint32_t tmp)
{
	for (size_t j = i << 1; j <= n;) {
		if (j < n && v[a[j]] < v[a[j + 1]])
			j++;
		if (v[tmp] < v[a[j]]) {
			a[i] = a[j];
			i = j;
			j += j;
		} else {
			break;
		}
	}
	a[i] = tmp;
}

/* numpy's heapsort of the index range a[0..n) (1-based heap arithmetic) */
static void heap_argsort(const double *v, uint32_t *a0, size_t n)
{
	uint32_t *a = a0 - 1; /* a[1..n] */
	for (size_t l = n >> 1; l > 0; --l)
		sift_down(v, a, l, n, a[l]);
	for (; n > 1;) {
		uint32_t tmp = a[n];
		a[n] = a[1];
		n -= 1;
		sift_down(v, a, 1, n, tmp);
	}
}

static int msb(size_t n)
{
	int d = 0;
	while (n >>= 1)
		d++;
	return d;
}

/* a range of SMALL + 1 entries or fewer is insertion sorted (with 16 here
 * instead, three conformance traces get other tie orders) */
enum { SMALL = 15, STACK = 128 };

void np_argsort(const double *v, uint32_t *idx, size_t n)
{
	if (n < 2)
		return;
	uint32_t *lo = idx, *hi = idx + n - 1;
	uint32_t *stack[STACK];
	int depths[STACK / 2];
	size_t sp = 0, dp = 0;
	int budget = msb(n) * 2;
	for (;;) {
		if (budget < 0) {
			heap_argsort(v, lo, (size_t)(hi - lo) + 1);
		} else {
			while (hi - lo > SMALL) {
				uint32_t *mid = lo + ((hi - lo) >> 1);
				if (v[*mid] < v[*lo])
					swap32(mid, lo);
				if (v[*hi] < v[*mid])
					swap32(hi, mid);
				if (v[*mid] < v[*lo])
					swap32(mid, lo);
				double pivot = v[*mid];
				uint32_t *i = lo, *j = hi - 1;
				swap32(mid, j);
				for (;;) {
					do
						++i;
					while (v[*i] < pivot);
					do
						--j;
					while (pivot < v[*j]);
					if (i >= j)
						break;
					swap32(i, j);
				}
				swap32(i, hi - 1);
				/* the larger side waits on the stack */
				if (i - lo < hi - i) {
					stack[sp++] = i + 1;
					stack[sp++] = hi;
					hi = i - 1;
				} else {
					stack[sp++] = lo;
					stack[sp++] = i - 1;
					lo = i + 1;
				}
				depths[dp++] = --budget;
			}
			for (uint32_t *p = lo + 1; p <= hi; ++p) {
				uint32_t x = *p;
				double xv = v[x];
				uint32_t *q = p;
				while (q > lo && xv < v[q[-1]]) {
					*q = q[-1];
					--q;
				}
				*q = x;
			}
		}
		if (sp == 0)
			break;
		hi = stack[--sp];
		lo = stack[--sp];
		budget = depths[--dp];
	}
}
