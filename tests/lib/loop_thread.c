/* loop_thread.c - see loop_thread.h. */
#include "loop_thread.h"

#include <fcntl.h>
#include <unistd.h>

static void on_stop(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)fd;
	(void)events;
	(void)ud;
	ev_stop(l);
}

static void *run(void *arg)
{
	struct loop_thread *t = arg;
	ev_run(t->loop);
	return NULL;
}

bool loop_thread_start(struct loop_thread *t, struct ev_loop *loop)
{
	t->loop = loop;
	t->running = false;
	if (pipe2(t->stop, O_CLOEXEC) < 0)
		return false;
	if (ev_io_add(loop, t->stop[0], EPOLLIN, on_stop, t) < 0)
		goto fail;
	if (pthread_create(&t->th, NULL, run, t) != 0) {
		ev_io_del(loop, t->stop[0]);
		goto fail;
	}
	t->running = true;
	return true;
fail:
	close(t->stop[0]);
	close(t->stop[1]);
	return false;
}

void loop_thread_stop(struct loop_thread *t)
{
	if (!t->running)
		return;
	t->running = false;
	while (write(t->stop[1], "x", 1) < 0)
		;
	pthread_join(t->th, NULL);
	ev_io_del(t->loop, t->stop[0]);
	close(t->stop[0]);
	close(t->stop[1]);
}
