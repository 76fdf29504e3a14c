/*
 * gpu_worker.h - one worker thread that runs a GPU library's calls, so
 * that a call that hangs (a GPU fallen off the bus) never holds the
 * daemon's loop for more than a bound.
 *
 * The loop thread hands the worker a job (a code the owner's job function
 * understands: collect, pause, ...) and waits for it at most timeout_ms.
 * A job not done by then keeps running; while it is stuck every later
 * request returns at once (GW_STUCK), and the first request after it
 * returns says for how long it was stuck, so the owner can log it.  The
 * job function runs on the worker; the owner's state it touches belongs
 * to the worker while a job runs and to the loop thread otherwise.
 * Cost: one thread, idle between jobs (blocked on a condition variable),
 * every signal blocked.
 */
#ifndef DYNO_COLLECT_GPU_WORKER_H
#define DYNO_COLLECT_GPU_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

struct gpu_worker {
	/* set by the owner before gpu_worker_start */
	void (*job)(void *arg, int what);
	void *arg;
	int64_t timeout_ms; /* may change between requests (reload) */
	/* private */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	int what;
	bool want, busy, quit, hung;
	int64_t hung_since;
};

enum gpu_worker_result {
	GW_DONE,    /* the job ran and returned within the bound */
	GW_TIMEOUT, /* it did not return within the bound: it is stuck now */
	GW_STUCK,   /* an earlier job is still stuck: nothing was asked */
};

/* Start the thread; false with errno's text in *why (a static string). */
bool gpu_worker_start(struct gpu_worker *w, const char **why);

/* Run job(what) and wait at most timeout_ms.  *stuck_ns, when not NULL, is
 * set to how long the previous job was stuck if this is the first request
 * since it returned (0 otherwise). */
enum gpu_worker_result gpu_worker_run(struct gpu_worker *w, int what, int64_t *stuck_ns);

/* Stop the thread.  False when a job is stuck: the thread is detached and
 * still uses the owner's state, which must then be left allocated. */
bool gpu_worker_stop(struct gpu_worker *w);

/* Lines a job leaves for the loop thread to log (a job must not log from
 * the worker: the log's rate limits and order belong to the loop): one
 * line appended to b, then all of b logged at level and emptied. */
void gpu_note(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gpu_log_notes(struct buf *b, int level);

#endif
