/*
 * process_self.h - Prometheus' standard process_* metrics for dynolog
 * itself (process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_start_time_seconds,
 * process_open_fds, process_max_fds), the names every Prometheus client
 * library exports, so dashboards and alerts written for them work as is.
 */
#ifndef DYNO_PUBLISH_PROCESS_SELF_H
#define DYNO_PUBLISH_PROCESS_SELF_H

#include "daemon/module.h"

/* Appends the metrics this process can read about itself; one that cannot
 * be read (no /proc) is left out, never reported as 0.  procfs is normally
 * "/proc" (tests point it at a fixture). */
void process_self_metrics(struct self_metrics *s, const char *procfs, double cpu_seconds);

#endif
