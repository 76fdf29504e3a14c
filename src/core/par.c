/*
 * par.c - fork-join over a task counter (see par.h).  The only shared
 * state is the counter, taken with an atomic fetch-add; results go to
 * per-task slots owned by the caller.
 */
#include "core/par.h"

#include <pthread.h>
#include <stdlib.h>
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

int par_threads(int threads)
{
	if (threads > 0)
		return threads;
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c < 1 ? 1 : c > 1024 ? 1024 : (int)c;
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
		if (pthread_create(&th[t], NULL, par_worker, &j) != 0)
			break;
		started = t;
	}
	par_worker(&j);
	for (size_t t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
}
