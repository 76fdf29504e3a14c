/*
 * buf.c - growable byte buffer and the allocation helpers that never fail.
 * See buf.h for the contract.
 */
#include "buf.h"

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char buf_empty_[1];

/* Big blocks on huge pages (opt-in, see buf.h).  Off by default: the daemon
 * keeps its small footprint; `dyno analyze` turns it on. */
static size_t huge_min; /* 0: off */
#define HUGE_PAGE ((size_t)2 << 20)

void xalloc_huge_pages(size_t min_bytes)
{
	huge_min = min_bytes < HUGE_PAGE ? (min_bytes ? HUGE_PAGE : 0) : min_bytes;
	if (huge_min) {
		/* every big block its own mapping (a fixed threshold also stops
		 * glibc from raising it after a free, which would put big blocks
		 * on the heap, where they cannot be aligned); freed heap memory
		 * kept for reuse rather than given back and faulted in again;
		 * and one heap for all threads, so that the scratch arrays one
		 * analysis task frees serve the next task on the other thread
		 * instead of each thread faulting in an arena of its own (the
		 * threads allocate a few big arrays, never per event, so the
		 * shared lock is not contended) */
		mallopt(M_MMAP_THRESHOLD, (int)(huge_min < (32u << 20) ? huge_min : 32u << 20));
		mallopt(M_TRIM_THRESHOLD, 64 << 20);
		mallopt(M_ARENA_MAX, 1);
	}
}

bool xalloc_huge_pages_on(void) { return huge_min != 0; }

/* The size to ask malloc for so that the block's mapping is a whole number of
 * huge pages: the kernel places such an anonymous mapping on a 2 MiB boundary
 * and fills it with 2 MiB pages.  64 bytes leave room for malloc's header
 * (16 bytes), so the mapping is exactly the rounded size. */
static size_t huge_size(size_t n)
{
	if (!huge_min || n < huge_min || n > SIZE_MAX / 2)
		return n;
	return ((n + 64 + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)) - 64;
}

/* Ask for transparent huge pages on every page the block touches.  Only a
 * hint: where the kernel has none (THP off) the block stays on 4 KiB pages
 * and nothing else changes; the contents are untouched.  Whole pages, not
 * just the inner ones: the block is a mapping of its own whose first page
 * holds malloc's header, and advising only part of it would split the
 * mapping in two, after which realloc can no longer grow it with mremap and
 * copies it instead. */
static void *advise(void *p, size_t n, bool fresh)
{
	if (!huge_min || n < huge_min)
		return p;
	uintptr_t pg = 4096, a = (uintptr_t)p & ~(pg - 1), e = ((uintptr_t)p + n + pg - 1) & ~(pg - 1);
	(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
	/* malloc wrote its header before the advice, so the first 2 MiB are on
	 * small pages already; collapse them into one huge page now (a copy of
	 * one 4 KiB page) rather than take 511 faults on them later */
	if (fresh && (a & (HUGE_PAGE - 1)) == 0 && e - a >= HUGE_PAGE)
		(void)madvise((void *)a, HUGE_PAGE, 25 /* MADV_COLLAPSE, Linux 6.1 */);
	return p;
}

static void oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	n = huge_size(n);
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return advise(p, n, true);
}

void *xcalloc(size_t n, size_t m)
{
	size_t t;
	if (huge_min && !__builtin_mul_overflow(n, m, &t) && t >= huge_min) {
		t = huge_size(t);
		void *p = calloc(1, t);
		if (!p)
			oom(t);
		return advise(p, t, true);
	}
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom(n * m);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	n = huge_size(n);
	if (p && huge_min && n >= huge_min) {
		/* A block that crosses into huge-page size moves from malloc's heap
		 * to a mapping of its own; realloc would copy it there before the
		 * mapping is advised, faulting every 4 KiB page of the copy.  So:
		 * a new advised block, then the copy.  Blocks already that big grow
		 * in place or by mremap, which moves pages without touching them. */
		size_t old = malloc_usable_size(p);
		if (old < huge_min) {
			void *q = xmalloc(n);
			memcpy(q, p, old < n ? old : n);
			free(p);
			return q;
		}
	}
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return advise(q, n, p == NULL);
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void buf_init(struct buf *b)
{
	b->data = (char *)buf_empty_;
	b->len = 0;
	b->cap = 0;
}

void buf_free(struct buf *b)
{
	if (b->cap)
		free(b->data);
	buf_init(b);
}

void buf_reserve(struct buf *b, size_t n)
{
	if (n > SIZE_MAX - b->len - 1)
		oom(SIZE_MAX);
	size_t need = b->len + n + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (b->cap) {
		b->data = xrealloc(b->data, cap);
	} else {
		b->data = xmalloc(cap);
		b->data[0] = 0;
	}
	b->cap = cap;
}

void buf_append_grow(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void buf_puts(struct buf *b, const char *s) { buf_append(b, s, strlen(s)); }

void buf_putc_grow(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = 0;
}

/* Two digits a step from a 200-byte table: vsnprintf's generic path costs
 * ~10x more per number, which showed in CSV output of tens of thousands of
 * rows and in written traces. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				     "25262728293031323334353637383940414243444546474849"
				     "50515253545556575859606162636465666768697071727374"
				     "75767778798081828384858687888990919293949596979899";

void buf_put_u64(struct buf *b, uint64_t v)
{
	char t[20]; /* UINT64_MAX has 20 digits */
	char *p = t + sizeof t;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, digit_pairs + 2 * d, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	buf_append(b, p, (size_t)(t + sizeof t - p));
}

void buf_put_i64(struct buf *b, int64_t v)
{
	if (v < 0) {
		buf_putc(b, '-');
		/* negated as unsigned: INT64_MIN has no positive int64_t */
		buf_put_u64(b, 0 - (uint64_t)v);
		return;
	}
	buf_put_u64(b, (uint64_t)v);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	char small[256];
	int n = vsnprintf(small, sizeof small, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		buf_append(b, small, (size_t)n);
		return;
	}
	buf_reserve(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_put_u32(struct buf *b, uint32_t v) { buf_append(b, &v, 4); }

void buf_truncate(struct buf *b, size_t len)
{
	if (len > b->len)
		len = b->len;
	b->len = len;
	if (b->cap)
		b->data[len] = 0;
}


char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->cap ? b->data : xstrdup("");
	if (len)
		*len = b->len;
	buf_init(b);
	return p;
}

int buf_read_fd(struct buf *b, int fd, size_t max)
{
	for (;;) {
		buf_reserve(b, 65536);
		ssize_t r = read(fd, b->data + b->len, 65536);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		b->len += (size_t)r;
		b->data[b->len] = 0;
		if (b->len > max)
			return 1;
	}
}

int buf_pread_all(struct buf *b, int fd, size_t max)
{
	buf_reset(b);
	for (;;) {
		/* all the room we have (a file that filled it last time grows it below) */
		buf_reserve(b, b->cap > b->len + 4096 ? b->cap - b->len - 1 : 4096);
		size_t space = b->cap - b->len - 1;
		ssize_t n = pread(fd, b->data + b->len, space, (off_t)b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		b->len += (size_t)n;
		b->data[b->len] = 0;
		if ((size_t)n < space)
			return 0;
		if (b->len > max)
			return 1;
	}
}
