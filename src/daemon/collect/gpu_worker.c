/*
 * gpu_worker.c - the bounded-wait worker thread of the GPU backends (see
 * gpu_worker.h).  Cost: one thread per backend that is on.
 */
#include "daemon/collect/gpu_worker.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"

static void *loop(void *arg)
{
	struct gpu_worker *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->want && !w->quit)
			pthread_cond_wait(&w->work, &w->mu);
		if (w->quit)
			break;
		w->want = false;
		int what = w->what;
		pthread_mutex_unlock(&w->mu);
		w->job(w->arg, what);
		pthread_mutex_lock(&w->mu);
		w->busy = false;
		pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

bool gpu_worker_start(struct gpu_worker *w, const char **why)
{
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->done, &ca);
	pthread_condattr_destroy(&ca);
	w->want = w->busy = w->quit = w->hung = false;
	/* the worker takes no signal: the loop reads them from a signalfd,
	 * which needs them blocked in every thread (the mask is inherited) */
	sigset_t all, prev;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &prev);
	int e = pthread_create(&w->th, NULL, loop, w);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	if (e) {
		*why = strerror(e);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->done);
		return false;
	}
	return true;
}

enum gpu_worker_result gpu_worker_run(struct gpu_worker *w, int what, int64_t *stuck_ns)
{
	if (stuck_ns)
		*stuck_ns = 0;
	pthread_mutex_lock(&w->mu);
	if (w->busy) {
		pthread_mutex_unlock(&w->mu);
		return GW_STUCK;
	}
	if (w->hung) {
		w->hung = false;
		if (stuck_ns)
			*stuck_ns = clock_mono_ns() - w->hung_since;
	}
	w->what = what;
	w->busy = w->want = true;
	pthread_cond_signal(&w->work);
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	int64_t ns = dl.tv_nsec + (w->timeout_ms % 1000) * 1000000;
	dl.tv_sec += w->timeout_ms / 1000 + ns / 1000000000;
	dl.tv_nsec = ns % 1000000000;
	while (w->busy)
		if (pthread_cond_timedwait(&w->done, &w->mu, &dl) == ETIMEDOUT)
			break;
	enum gpu_worker_result r = GW_DONE;
	if (w->busy) {
		w->hung = true;
		w->hung_since = clock_mono_ns();
		r = GW_TIMEOUT;
	}
	pthread_mutex_unlock(&w->mu);
	return r;
}

bool gpu_worker_stop(struct gpu_worker *w)
{
	pthread_mutex_lock(&w->mu);
	bool stuck = w->busy;
	w->quit = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	if (stuck) {
		/* inside a hung library call: it cannot be joined */
		pthread_detach(w->th);
		return false;
	}
	pthread_join(w->th, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	return true;
}

void gpu_note(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	buf_printf(b, "%s\n", line);
}

void gpu_log_notes(struct buf *b, int level)
{
	char *line = b->data;
	for (size_t i = 0; i < b->len; i++)
		if (b->data[i] == '\n') {
			b->data[i] = 0;
			log_msg(level, "%s", line);
			line = b->data + i + 1;
		}
	buf_reset(b);
}
