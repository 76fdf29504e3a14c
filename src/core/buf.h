/*
 * buf.h - the one growable byte/string buffer of dynolite.
 *
 * Everything that builds text or bytes (JSON output, log lines, RPC frames,
 * Prometheus pages, decoded JSON strings) appends to a struct buf.  The
 * contents are always followed by a NUL byte, so buf->data can be handed to
 * C string functions, but the length is authoritative: embedded NULs are
 * allowed.  Allocation failure aborts the process (like git's xmalloc): every
 * caller would otherwise need an error path for a condition it cannot handle.
 */
#ifndef DYNO_BUF_H
#define DYNO_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
	char *data; /* NUL-terminated when cap > 0; "" when empty */
	size_t len;
	size_t cap;
};

#define BUF_INIT {(char *)buf_empty_, 0, 0}
extern const char buf_empty_[1];

void buf_init(struct buf *b);
void buf_free(struct buf *b);
/* Make room for at least n more bytes (plus the NUL). */
void buf_reserve(struct buf *b, size_t n);
/* buf_append and buf_putc: inline while the bytes and the NUL fit (the
 * writers of big tables and traces call them per field), else these. */
void buf_append_grow(struct buf *b, const void *p, size_t n);
void buf_putc_grow(struct buf *b, char c);
static inline void buf_append(struct buf *b, const void *p, size_t n)
{
	if (n < b->cap - b->len) { /* cap 0 (nothing yet): never */
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = 0;
		return;
	}
	buf_append_grow(b, p, n);
}
static inline void buf_putc(struct buf *b, char c)
{
	if (b->cap - b->len > 1) {
		b->data[b->len++] = c;
		b->data[b->len] = 0;
		return;
	}
	buf_putc_grow(b, c);
}
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/* Append a little-endian (native) 32-bit integer, as the RPC framing needs. */
void buf_put_u32(struct buf *b, uint32_t v);
/* Append v in decimal, as printf's %llu / %lld would, without printf: the
 * writers of big tables and traces call these once per number. */
void buf_put_u64(struct buf *b, uint64_t v);
void buf_put_i64(struct buf *b, int64_t v);
/* Set the length (must be <= len) and keep the NUL terminator. */
void buf_truncate(struct buf *b, size_t len);
/* Forget the contents, keep the memory. */
static inline void buf_reset(struct buf *b) { buf_truncate(b, 0); }
/* Hand the malloc'ed string to the caller and reset b. Never NULL. */
char *buf_detach(struct buf *b, size_t *len);
/* Append what fd gives until end of file (EINTR retried).  Returns 0 at the
 * end, 1 as soon as b->len exceeds max (reading stops there), -1 on a read
 * error (errno says which; what came before it stays in b). */
int buf_read_fd(struct buf *b, int fd, size_t max);
/* Read the whole of fd from offset 0 with pread() into b (replacing what it
 * held), NUL-terminated: the collectors' read of a procfs/sysfs file, so a
 * descriptor kept open is re-read without a seek.  A read shorter than the
 * room given is the end of the file (regular files, procfs and sysfs fill
 * the buffer unless the file ended): one syscall for a file that fits b.
 * Returns 0 at the end, 1 when the file exceeds max (reading stops; b is
 * partial), -1 on a read error (errno says which). */
int buf_pread_all(struct buf *b, int fd, size_t max);

/* Allocation helpers that never return NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* From now on, blocks of at least min_bytes (2 MiB at the least) that the
 * helpers above return are advised to the kernel as transparent huge pages
 * (madvise MADV_HUGEPAGE), so that filling them takes one page fault per 2 MiB
 * instead of per 4 KiB: on a virtual machine a fault can cost 10 us, and a
 * 1 GB trace fills ~250 MB of columns.  Turning it on also tunes malloc for
 * it (big blocks mapped on their own, one arena, no trimming below 64 MiB);
 * 0 turns the advice off (the default) but leaves malloc's tuning as it is. */
void xalloc_huge_pages(size_t min_bytes);
/* Whether that advice is on. */
bool xalloc_huge_pages_on(void);

#endif
