/* sock.c - see sock.h. */
#include "sock.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

ssize_t sock_read_n(int fd, void *p, size_t n, int timeout_ms)
{
	size_t got = 0;
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	while (got < n) {
		/* no deadline: block in read itself, one syscall per read (the
		 * benches' baseline server is measured that way) */
		int pr = timeout_ms < 0 ? 1 : poll(&pf, 1, timeout_ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr != 1)
			break;
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

bool sock_write_all(int fd, const void *p, size_t n)
{
	size_t put = 0;
	while (put < n) {
		ssize_t w = send(fd, (const char *)p + put, n - put, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		put += (size_t)w;
	}
	return true;
}
