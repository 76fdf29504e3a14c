/*
 * procstat.c - /proc/PID/stat fields and a process's ancestry (procstat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/procstat.h"

bool procstat_parse(const char *text, struct procstat *st)
{
	memset(st, 0, sizeof *st);
	const char *p = strrchr(text, ')');
	if (!p || p[1] != ' ')
		return false;
	p += 2;
	while (*p && *p != ' ')
		p++; /* the state letter, field 3 */
	/* fields 4..24, all integers; a few (priority, nice) may be
	 * negative: strtoull keeps their bits, and none of them is used */
	unsigned long long v[21];
	int n = 0;
	while (n < 21 && *p == ' ') {
		char *end;
		errno = 0;
		v[n] = strtoull(p, &end, 10);
		if (end == p || errno)
			break;
		n++;
		p = end;
	}
	if (n < 1)
		return false;
	st->ppid = (int)v[0];
	st->nfields = n;
	if (n > 11) {
		st->utime = v[10];
		st->stime = v[11];
	}
	if (n > 18)
		st->starttime = v[18];
	if (n > 19)
		st->vsize = v[19];
	if (n > 20)
		st->rss = v[20];
	return true;
}

bool procstat_read(int pid, struct procstat *st)
{
	char path[64], text[4096];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = 0;
	return procstat_parse(text, st);
}

int procstat_ancestry(int32_t *pids, int max)
{
	int n = 0, cur = getpid();
	if (max < 1)
		return 0;
	pids[n++] = cur;
	while (n < max) {
		struct procstat st;
		if (!procstat_read(cur, &st) || st.ppid <= 1)
			break;
		pids[n++] = st.ppid;
		cur = st.ppid;
	}
	return n;
}
