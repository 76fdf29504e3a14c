/* secret.c - see secret.h. */
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"

enum secret_status secret_read(const char *path, mode_t refuse_mode, size_t max, struct secret *s)
{
	memset(s, 0, sizeof *s);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		s->err = errno;
		return SECRET_OPEN;
	}
	struct stat st;
	enum secret_status rc = SECRET_OK;
	if (fstat(fd, &st) < 0) {
		s->err = errno;
		rc = SECRET_STAT;
	} else if (s->mode = st.st_mode, !S_ISREG(st.st_mode)) {
		rc = SECRET_NOT_REGULAR;
	} else if (st.st_mode & refuse_mode) {
		rc = SECRET_MODE;
	} else if ((unsigned long long)st.st_size > max) {
		rc = SECRET_TOO_BIG;
	}
	if (rc != SECRET_OK) {
		close(fd);
		return rc;
	}
	/* one byte more than allowed: a file that grew after fstat shows it */
	s->cap = max + 2;
	s->data = xmalloc(s->cap);
	size_t got = 0;
	while (got <= max) {
		ssize_t r = read(fd, s->data + got, max + 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			s->err = errno;
			rc = SECRET_READ;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (rc == SECRET_OK && got > max)
		rc = SECRET_TOO_BIG;
	if (rc != SECRET_OK) {
		secret_free(s);
		return rc;
	}
	while (got > 0 && (s->data[got - 1] == '\n' || s->data[got - 1] == '\r' || s->data[got - 1] == ' ' ||
			   s->data[got - 1] == '\t'))
		got--;
	s->data[got] = 0;
	s->len = got;
	return SECRET_OK;
}

void secret_free(struct secret *s)
{
	if (s->data) {
		/* the secret does not stay in freed memory */
		explicit_bzero(s->data, s->cap);
		free(s->data);
	}
	s->data = NULL;
	s->len = s->cap = 0;
}
