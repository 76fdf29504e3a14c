/*
 * loop_thread.h - run a core event loop (core/loop.h) on a second thread,
 * the way the tests drive a real server (the daemon's RPC server, the CLI
 * tests' fake daemon) from the test's own thread.
 *
 * loop_thread_start adds a stop pipe to the loop and starts ev_run on a
 * new thread; loop_thread_stop writes to the pipe (the loop stops after
 * the events at hand) and joins.  Until then, the loop and everything it
 * serves belong to the thread.  Costs one thread and one pipe.
 */
#ifndef DYNO_TEST_LOOP_THREAD_H
#define DYNO_TEST_LOOP_THREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "core/loop.h"

struct loop_thread {
	struct ev_loop *loop;
	pthread_t th;
	int stop[2];
	bool running;
};

/* False (nothing started) when the pipe or the thread cannot be made. */
bool loop_thread_start(struct loop_thread *t, struct ev_loop *loop);
/* Stop and join; a no-op when not running.  The loop itself stays. */
void loop_thread_stop(struct loop_thread *t);

#endif
