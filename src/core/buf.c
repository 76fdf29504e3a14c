/*
 * buf.c - growable byte buffer and the allocation helpers that never fail.
 * See buf.h for the contract.
 */
#include "buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char buf_empty_[1];

static void oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom(n * m);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
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

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void buf_puts(struct buf *b, const char *s) { buf_append(b, s, strlen(s)); }

void buf_putc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = 0;
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

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	buf_truncate(b, b->len - n);
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
