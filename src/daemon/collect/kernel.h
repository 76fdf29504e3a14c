/*
 * kernel.h - the kernel (procfs) collector: uptime, CPU time by mode (total
 * and per CPU), context switches, interrupts, forks, run queue, load,
 * memory and swap, network interfaces, disks; upstream Dynolog's "kernel
 * monitor" keys plus ours (docs/metrics.md lists every key).
 */
#ifndef DYNO_COLLECT_KERNEL_H
#define DYNO_COLLECT_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/frame.h"

struct kernel_options {
	bool per_cpu;             /* emit per-CPU keys ("cpu_u_ms.cpu3") */
	bool filter_nics;         /* upstream --filter_nic_interfaces */
	const char *nic_prefixes; /* comma-separated; not owned, must outlive the collector */
};

struct kernel_collector;

/* procfs_root: "/proc", sysfs_root: "/sys" normally; tests point them at
 * fixture trees.  opt may be NULL (per-CPU on, no NIC filter). */
struct kernel_collector *kernel_collector_new(const char *procfs_root, const char *sysfs_root,
					      const struct kernel_options *opt);
void kernel_collector_set_options(struct kernel_collector *k, const struct kernel_options *opt);
void kernel_collector_free(struct kernel_collector *k);
/* Read the sources and append this tick's values.  Deltas need two reads:
 * the first tick only has absolute values.  Returns false if nothing at
 * all could be read (the reason is logged once). */
bool kernel_collect(struct kernel_collector *k, struct frame *f);

#endif
