/*
 * sock.h - the tests' blocking socket I/O: read exactly n bytes with a
 * deadline, write everything.  For test clients and fake servers on
 * loopback; the programs themselves use core/net.h.
 */
#ifndef DYNO_TEST_SOCK_H
#define DYNO_TEST_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Read exactly n bytes, waiting at most timeout_ms for each read: the
 * count read (short at end of file or at the timeout), -1 on an error
 * such as a reset (errno kept).  timeout_ms < 0: no deadline, plain
 * blocking reads (no poll before each). */
ssize_t sock_read_n(int fd, void *p, size_t n, int timeout_ms);
/* Write all n bytes (no SIGPIPE); false on an error. */
bool sock_write_all(int fd, const void *p, size_t n);

#endif
