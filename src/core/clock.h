/*
 * clock.h - monotonic and wall clocks in nanoseconds, and timestamp text.
 * Intervals and timeouts use the monotonic clock; only published sample
 * timestamps use the wall clock.
 */
#ifndef DYNO_CLOCK_H
#define DYNO_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#define NS_PER_SEC 1000000000ll
#define NS_PER_MS 1000000ll

int64_t clock_mono_ns(void);
int64_t clock_wall_ns(void);
/* CPU time consumed by this process, ns. */
int64_t clock_cpu_ns(void);
/* "2026-11-22T01:25:00.123Z" (UTC) into out (>= 32 bytes). */
size_t clock_fmt_iso8601(char *out, size_t cap, int64_t wall_ns);

#endif
