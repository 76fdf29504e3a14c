/*
 * kernel.h - the kernel (procfs) collector: uptime, CPU time by mode,
 * memory, network interfaces; upstream Dynolog's "kernel monitor" keys.
 */
#ifndef DYNO_COLLECT_KERNEL_H
#define DYNO_COLLECT_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/frame.h"

struct kernel_collector;

/* procfs_root: "/proc" normally; tests point it at a fixture tree. */
struct kernel_collector *kernel_collector_new(const char *procfs_root);
void kernel_collector_free(struct kernel_collector *k);
/* Read the sources and append this tick's values.  Deltas need two reads:
 * the first tick only has absolute values.  Returns false if nothing at
 * all could be read (the reason is logged once). */
bool kernel_collect(struct kernel_collector *k, struct frame *f);

#endif
