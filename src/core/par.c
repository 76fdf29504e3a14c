/*
 * par.c - fork-join over a task counter (see par.h).  The only shared
 * state is the counter, taken with an atomic fetch-add; results go to
 * per-task slots owned by the caller.
 */
#include "core/par.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"

struct par_job {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t n;
	size_t next; /* atomic */
};

static void *par_worker(void *arg)
{
	struct par_job *j = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->n)
			return NULL;
		j->fn(j->ctx, i);
	}
}

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	cpu_set_t all; /* the creator's affinity, restored first */
	bool reset;
};

static void *thread_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;
	free(p);
	if (s.reset)
		(void)sched_setaffinity(0, sizeof s.all, &s.all); /* this thread only */
	return s.fn(s.arg);
}

int par_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	struct thread_start *s = xmalloc(sizeof *s);
	s->fn = fn;
	s->arg = arg;
	s->reset = false;
	pthread_attr_t at, *pa = NULL;
	int cpu = sched_getcpu();
	if (cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof s->all, &s->all) == 0 &&
	    CPU_ISSET(cpu, &s->all) && CPU_COUNT(&s->all) > 1 && pthread_attr_init(&at) == 0) {
		cpu_set_t away = s->all;
		CPU_CLR(cpu, &away);
		if (pthread_attr_setaffinity_np(&at, sizeof away, &away) == 0) {
			pa = &at;
			s->reset = true;
		} else {
			pthread_attr_destroy(&at);
		}
	}
	int rc = pthread_create(th, pa, thread_trampoline, s);
	if (pa)
		pthread_attr_destroy(pa);
	if (rc != 0)
		free(s);
	return rc;
}

int par_cgroup_quota_cores(const char *cgroup_file, const char *root)
{
	FILE *f = fopen(cgroup_file, "r");
	if (!f)
		return 0;
	char line[4096], path[4096] = "";
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "0::", 3) == 0) { /* the cgroup v2 line */
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof path, "%s", line + 3);
			break;
		}
	fclose(f);
	if (path[0] != '/')
		return 0;
	/* A quota may be set on any ancestor (a pod's, a slice's): the smallest
	 * counts.  Inside a cgroup namespace the path is "/" and only what the
	 * namespace shows can be read. */
	int best = 0;
	for (;;) {
		char file[8300];
		snprintf(file, sizeof file, "%s%s/cpu.max", root, strcmp(path, "/") == 0 ? "" : path);
		FILE *m = fopen(file, "r");
		if (m) {
			char q[32] = "";
			unsigned long long quota, period;
			/* "max 100000" (no quota) or "QUOTA PERIOD" in microseconds */
			if (fscanf(m, "%31s %llu", q, &period) == 2 && strcmp(q, "max") != 0 &&
			    sscanf(q, "%llu", &quota) == 1 && quota > 0 && period > 0) {
				unsigned long long c = (quota + period - 1) / period;
				if (c > 1024)
					c = 1024;
				if (best == 0 || (int)c < best)
					best = (int)c;
			}
			fclose(m);
		}
		char *slash = strrchr(path, '/');
		if (!slash || strcmp(path, "/") == 0)
			break;
		if (slash == path)
			path[1] = 0; /* up to the root */
		else
			*slash = 0;
	}
	return best;
}

static int cores_once(void)
{
	int c = 0;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		c = CPU_COUNT(&set);
	if (c < 1) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c = n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
	}
	int q = par_cgroup_quota_cores("/proc/self/cgroup", "/sys/fs/cgroup");
	return q > 0 && q < c ? q : c;
}

int par_cores(void)
{
	static int cores; /* atomic: every thread computes the same value */
	int c = __atomic_load_n(&cores, __ATOMIC_RELAXED);
	if (c == 0) {
		c = cores_once();
		__atomic_store_n(&cores, c, __ATOMIC_RELAXED);
	}
	return c;
}

int par_threads(int threads)
{
	return threads > 0 ? threads : par_cores();
}

void par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct par_job j = {fn, ctx, n, 0};
	size_t nt = (size_t)par_threads(threads);
	if (nt > n)
		nt = n;
	if (nt <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, i);
		return;
	}
	pthread_t *th = xcalloc(nt, sizeof *th);
	size_t started = 0;
	for (size_t t = 1; t < nt; t++) {
		if (par_thread_start(&th[t], par_worker, &j) != 0)
			break;
		started = t;
	}
	par_worker(&j);
	for (size_t t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
}
