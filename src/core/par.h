/*
 * par.h - the one small fork-join helper: run n independent tasks on a few
 * threads.  Used by the trace library (ranks loaded and filtered in
 * parallel, column merges and gathers) and src/analyze/run.c (each
 * analysis of each rank).  Tasks must not share mutable data; each writes
 * only its own result slot, which the caller reads after par_for() returns
 * (the joins order those writes before the reads).  Cost: the threads are
 * a pool kept between calls (started by the first call that needs them):
 * waking them costs ~5-15 us a call where starting them cost ~55 us; a
 * call made while another holds the pool (a task's own par_for) starts
 * threads of its own.  Give it tasks of a tenth of a millisecond or more.
 */
#ifndef DYNO_CORE_PAR_H
#define DYNO_CORE_PAR_H

#include <pthread.h>
#include <stddef.h>

/* Call fn(ctx, i) once for every i in [0, n), on min(n, threads) threads
 * (threads <= 0: par_cores()), the calling thread included.
 * Tasks are taken in ascending i, so put the longest first.  If a thread
 * cannot be started, the others (at least the caller) do its share. */
void par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx);

/* pthread_create(th, NULL, fn, arg) for a worker meant to run beside the
 * calling thread at once: created with an affinity that leaves out the
 * core the caller is on, and given the caller's full affinity back as its
 * first step.  Without the hint Linux often queues a new thread on its
 * creator's core, and it starts only when the load balancer moves it: on
 * a 2-core VM, 1-5 ms after pthread_create in ~3 of 4 loads measured (the
 * creator parses on meanwhile, so the whole split waited for it).  Where
 * the caller's core or affinity cannot be read, or it has one core, a
 * plain pthread_create. */
int par_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

/* threads <= 0 -> par_cores(). */
int par_threads(int threads);

/* The cores this process may use, at least 1: its CPU affinity (taskset,
 * a cpuset), lowered to a cgroup v2 CPU quota (cpu.max, rounded up) of its
 * cgroup or an ancestor where one is set, as `nproc` and container-aware
 * runtimes count them.  The online count only where the affinity cannot be
 * read.  Read once per process. */
int par_cores(void);

/* The quota part of par_cores(), for tests: the cgroup v2 path in
 * CGROUP_FILE (a /proc/PID/cgroup), looked up under ROOT (the cgroup2
 * mount); the smallest ceil(quota / period) of that cgroup and its
 * ancestors, or 0 where none sets a quota or nothing can be read. */
int par_cgroup_quota_cores(const char *cgroup_file, const char *root);

#endif
