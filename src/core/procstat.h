/*
 * procstat.h - the few numeric fields of /proc/PID/stat that the daemon,
 * the Kineto stand-in and the benches read (parent pid, CPU times, start
 * time, memory), and a process's ancestry as Kineto reports it.
 *
 * The command name (field 2) may hold spaces and ')', so the fields are
 * taken after the last ')'.  Cost: one read of at most 4 KiB per call.
 */
#ifndef DYNO_PROCSTAT_H
#define DYNO_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct procstat {
	int ppid;                        /* field 4 */
	unsigned long long utime, stime; /* fields 14, 15: clock ticks */
	unsigned long long starttime;    /* field 22: clock ticks after boot */
	unsigned long long vsize;        /* field 23: bytes */
	unsigned long long rss;          /* field 24: pages */
	int nfields;                     /* how many of fields 4..24 were read (0..21) */
};

/* Parse the text of a stat file.  False when not even the parent pid is
 * there; fields past nfields are left 0. */
bool procstat_parse(const char *text, struct procstat *st);

/* Read and parse /proc/PID/stat.  False when the process is gone. */
bool procstat_read(int pid, struct procstat *st);

/* This process and its ancestors, nearest first, pid 1 left out, at most
 * max (Kineto's `req` datagram carries this list).  Returns the count. */
int procstat_ancestry(int32_t *pids, int max);

#endif
