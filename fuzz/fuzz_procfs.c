/*
 * fuzz_procfs.c - libFuzzer target for every procfs/sysfs parser of the
 * daemon's collectors.  The input is split at lines "@@" into the files of
 * two ticks of a procfs tree (stat, meminfo, net/dev, diskstats, loadavg,
 * uptime, cpu/online, and a process's stat, io, cgroup, environ), written
 * to a scratch directory; the kernel and process collectors then read both
 * ticks, so deltas, wrap and reset paths run on hostile data.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "daemon/collect/kernel.h"
#include "daemon/collect/proc.h"

static char root[64];

static const char *files[] = {"proc/stat",          "proc/meminfo",        "proc/net/dev",
			      "proc/diskstats",     "proc/loadavg",        "proc/uptime",
			      "sys/devices/system/cpu/online", "proc/77/stat", "proc/77/io",
			      "proc/77/cgroup",     "proc/77/environ"};
#define NFILES (sizeof files / sizeof files[0])

static void put(const char *rel, const uint8_t *p, size_t n)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (n)
		(void)!write(fd, p, n);
	close(fd);
}

static void setup(void)
{
	if (root[0])
		return;
	snprintf(root, sizeof root, "/tmp/fuzz-procfs-XXXXXX");
	if (!mkdtemp(root))
		abort();
	const char *dirs[] = {"proc", "proc/net", "proc/77", "sys", "sys/devices", "sys/devices/system",
			      "sys/devices/system/cpu"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		mkdir(p, 0755);
	}
}

/* Write sections [first, first + NFILES) of the input; missing ones empty. */
static size_t write_tick(const uint8_t *d, size_t n, size_t off)
{
	for (size_t i = 0; i < NFILES; i++) {
		size_t start = off, end = off;
		while (end < n && !(end + 3 <= n && memcmp(d + end, "@@\n", 3) == 0 && (end == 0 || d[end - 1] == '\n')))
			end++;
		put(files[i], d + start, end - start);
		off = end < n ? end + 3 : n;
	}
	return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	setup();
	log_set_level(LOG_LEVEL_ERROR); /* "process gone" info lines would dominate the run time */
	struct proc_stat st;
	proc_parse_stat((const char *)d, n, &st);
	char proot[128], sroot[128];
	snprintf(proot, sizeof proot, "%s/proc", root);
	snprintf(sroot, sizeof sroot, "%s/sys", root);
	struct kernel_options o = {true, true, "eth,en"};
	struct kernel_collector *k = kernel_collector_new(proot, sroot, n % 2 ? &o : NULL);
	struct proc_collector *pc = proc_collector_new(proot);
	proc_track(pc, 77);
	struct frame f;
	frame_init(&f);
	size_t off = write_tick(d, n, 0);
	kernel_collect(k, &f);
	proc_collect(pc, &f);
	frame_reset(&f, 1);
	write_tick(d, n, off);
	kernel_collect(k, &f);
	proc_collect(pc, &f);
	frame_free(&f);
	proc_collector_free(pc);
	kernel_collector_free(k);
	return 0;
}
