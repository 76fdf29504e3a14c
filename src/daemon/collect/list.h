/*
 * list.h - every collector, one row each (no include guard: expanded with
 * a different COLLECTOR() each time, see collector.c).  Order matters: a
 * collector that rides on another's tick comes after it, and the first
 * row's tick is the daemon's main one.
 */
COLLECTOR(kernel)
COLLECTOR(process)
COLLECTOR(perf)
COLLECTOR(nvml)
COLLECTOR(dcgm)
COLLECTOR(gpu_jobs)
COLLECTOR(ipcbudget)
