/* clock.c - see clock.h. */
#include "clock.h"

#include <stdio.h>
#include <time.h>

static int64_t read_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

int64_t clock_mono_ns(void) { return read_clock(CLOCK_MONOTONIC); }
int64_t clock_wall_ns(void) { return read_clock(CLOCK_REALTIME); }
int64_t clock_cpu_ns(void) { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }

size_t clock_fmt_iso8601(char *out, size_t cap, int64_t wall_ns)
{
	time_t sec = (time_t)(wall_ns / NS_PER_SEC);
	int ms = (int)((wall_ns % NS_PER_SEC) / NS_PER_MS);
	struct tm tm;
	gmtime_r(&sec, &tm);
	int n = snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
	return n < 0 ? 0 : (size_t)n;
}
