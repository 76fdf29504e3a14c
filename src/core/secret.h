/*
 * secret.h - read a small secret file (an RPC token) the one careful way,
 * for the daemon's --rpc_token_file and dyno's --token-file alike.
 *
 * secret_read opens without blocking (a FIFO or a device must not hang
 * the caller: O_NONBLOCK, O_CLOEXEC, O_NOCTTY; symlinks are followed, as
 * secret mounts are symlinks, and fstat checks the target), insists on a
 * regular file, applies the caller's permission rule (mode bits it
 * refuses), refuses anything larger than the caller's bound, reads it
 * whole and strips trailing whitespace (the newline editors add).  It
 * reports what went wrong as a code plus errno, so each caller keeps its
 * own wording; what the text must look like (length, UTF-8) stays with
 * the caller too.  Costs one small allocation, wiped when freed.
 */
#ifndef DYNO_CORE_SECRET_H
#define DYNO_CORE_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum secret_status {
	SECRET_OK,
	SECRET_OPEN,           /* open(2) failed: errno in .err */
	SECRET_STAT,           /* fstat(2) failed: errno in .err */
	SECRET_NOT_REGULAR,    /* a directory, FIFO, device, ... */
	SECRET_MODE,           /* has a mode bit the caller refuses (.mode) */
	SECRET_TOO_BIG,        /* more than max bytes */
	SECRET_READ,           /* read(2) failed: errno in .err */
};

struct secret {
	char *data;   /* the text, NUL-terminated (SECRET_OK only) */
	size_t len;   /* without the stripped trailing whitespace */
	mode_t mode;  /* the file's st_mode, once fstat succeeded */
	int err;      /* errno for SECRET_OPEN / _STAT / _READ */
	size_t cap;   /* the allocation, all of it wiped by secret_free */
};

/* Read path into *s (zeroed first).  refuse_mode: permission bits that
 * make the file unacceptable (0004: readable by others; 0: any).  max:
 * the largest file, in bytes, checked on the size and on what is read. */
enum secret_status secret_read(const char *path, mode_t refuse_mode, size_t max, struct secret *s);
/* Wipe and free the text; s can be read into again. */
void secret_free(struct secret *s);

#endif
