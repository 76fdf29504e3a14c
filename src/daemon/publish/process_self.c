/*
 * process_self.c - dynolog's own process_* metrics (see process_self.h).
 *
 * Read from <procfs>/self/stat (start time in clock ticks since boot, the
 * virtual size, the resident pages), <procfs>/stat (btime, so the start
 * time is seconds since the epoch as the clients' convention has it),
 * <procfs>/self/fd (open descriptors) and RLIMIT_NOFILE.  CPU time comes
 * from the caller (the process CPU clock, finer than the tick counts).
 */
#include "process_self.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "core/procstat.h"

static const char *const help_cpu = "Total user and system CPU time spent in seconds.";

static bool read_text(const char *procfs, const char *rel, char *out, size_t cap)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", procfs, rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(out, 1, cap - 1, f);
	fclose(f);
	out[n] = 0;
	return n > 0;
}

/* btime from /proc/stat: the boot time in seconds since the epoch */
static bool boot_time(const char *procfs, double *out)
{
	static char text[65536];
	if (!read_text(procfs, "stat", text, sizeof text))
		return false;
	const char *p = strstr(text, "\nbtime ");
	if (!p)
		return false;
	char *end;
	unsigned long long b = strtoull(p + 7, &end, 10);
	if (end == p + 7)
		return false;
	*out = (double)b;
	return true;
}

void process_self_metrics(struct self_metrics *s, const char *procfs, double cpu_seconds)
{
	if (!procfs || !*procfs)
		procfs = "/proc";
	self_add(s, "process_cpu_seconds_total", help_cpu, "counter", NULL, NULL, cpu_seconds);
	char st[4096];
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct procstat ps;
	if (read_text(procfs, "self/stat", st, sizeof st) && procstat_parse(st, &ps)) {
		double btime;
		if (ps.nfields > 18 && tick > 0 && boot_time(procfs, &btime))
			self_add(s, "process_start_time_seconds",
				 "Start time of the process since unix epoch in seconds.", "gauge", NULL, NULL,
				 btime + (double)ps.starttime / (double)tick);
		if (ps.nfields > 20 && page > 0) {
			self_add(s, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", NULL,
				 NULL, (double)ps.vsize);
			self_add(s, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", NULL,
				 NULL, (double)ps.rss * (double)page);
		}
	}
	char dpath[4096];
	snprintf(dpath, sizeof dpath, "%s/self/fd", procfs);
	DIR *d = opendir(dpath);
	if (d) {
		long nfd = 0;
		struct dirent *e;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				nfd++;
		closedir(d);
		/* in the live /proc the directory stream's own descriptor is
		 * listed too, and is not one the daemon keeps open */
		if (strcmp(procfs, "/proc") == 0 && nfd > 0)
			nfd--;
		self_add(s, "process_open_fds", "Number of open file descriptors.", "gauge", NULL, NULL, (double)nfd);
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		self_add(s, "process_max_fds", "Maximum number of open file descriptors.", "gauge", NULL, NULL,
			 (double)rl.rlim_cur);
}
