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

/*
 * The pool: worker threads started by the first par_for that needs them and
 * kept, asleep on a condition variable, for the next.  Starting a thread and
 * joining it cost ~55 us per par_for on a 2-core VM (measured with two
 * empty tasks), against ~15 us to wake a sleeping one; `dyno analyze`
 * makes five or six such calls after the parse of one trace (the merge,
 * the compaction, the links, the gather, the analyses), more with more
 * cores.  One par_for at a time has the pool: a call made while another
 * holds it (a task's own par_for, or a second thread's) starts threads of
 * its own as before.  A worker joins a job only while the caller has not
 * closed it, and the caller returns only when every worker that joined is
 * done, so no worker touches the job (on the caller's stack) afterwards.
 * A child process after fork() gets an empty pool (its threads are not
 * copied).
 */
#define POOL_MAX 256
static struct {
	pthread_mutex_t mu;
	pthread_cond_t work; /* workers wait for a job */
	pthread_cond_t idle; /* the caller waits for its workers */
	bool busy;           /* a par_for has the pool */
	size_t workers;      /* started */
	struct par_job *job; /* the open job, NULL: none */
	size_t want;         /* workers the open job may still take */
	size_t running;      /* workers inside the job */
	unsigned long gen;   /* jobs opened */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_child(void)
{
	pthread_mutex_init(&pool.mu, NULL);
	pthread_cond_init(&pool.work, NULL);
	pthread_cond_init(&pool.idle, NULL);
	pool.busy = false;
	pool.workers = pool.want = pool.running = 0;
	pool.job = NULL;
}

static void pool_init(void) { (void)pthread_atfork(NULL, NULL, pool_child); }

static void *pool_worker(void *arg)
{
	(void)arg;
	unsigned long seen = 0;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		while (!pool.job || pool.gen == seen || pool.want == 0)
			pthread_cond_wait(&pool.work, &pool.mu);
		seen = pool.gen;
		struct par_job *j = pool.job;
		pool.want--;
		pool.running++;
		pthread_mutex_unlock(&pool.mu);
		par_worker(j);
		pthread_mutex_lock(&pool.mu);
		if (--pool.running == 0)
			pthread_cond_signal(&pool.idle);
	}
	return NULL;
}

/* Take the pool and have at least `need` workers; false: it is taken. */
static bool pool_take(size_t need)
{
	pthread_once(&pool_once, pool_init);
	pthread_mutex_lock(&pool.mu);
	bool mine = !pool.busy;
	pool.busy = true;
	pthread_mutex_unlock(&pool.mu);
	if (!mine)
		return false;
	/* started outside the lock: a new worker takes it first thing */
	while (pool.workers < need && pool.workers < POOL_MAX) {
		pthread_t th;
		if (par_thread_start(&th, pool_worker, NULL) != 0)
			break;
		pthread_detach(th);
		pthread_mutex_lock(&pool.mu);
		pool.workers++;
		pthread_mutex_unlock(&pool.mu);
	}
	return true;
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
	if (pool_take(nt - 1)) {
		pthread_mutex_lock(&pool.mu);
		pool.job = &j;
		pool.want = nt - 1;
		pool.gen++;
		pthread_cond_broadcast(&pool.work);
		pthread_mutex_unlock(&pool.mu);
		par_worker(&j);
		/* closed: a worker that wakes from now on stays asleep */
		pthread_mutex_lock(&pool.mu);
		pool.job = NULL;
		pool.want = 0;
		while (pool.running > 0)
			pthread_cond_wait(&pool.idle, &pool.mu);
		pool.busy = false;
		pthread_mutex_unlock(&pool.mu);
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
