/*
 * loop.h - the daemon's one event loop: epoll, with timers as timerfds and
 * signals through one signalfd.
 *
 * The loop sleeps in epoll_wait(-1) until a descriptor, a timer or a signal
 * is ready: nothing wakes the process between events.  Handlers may add or
 * remove handlers (their own included) from inside a callback; removed ones
 * are freed after the current batch.  Single-threaded: every callback runs
 * on the thread that called ev_run().  Within a batch, timers and signals
 * run first, then the urgent I/O handlers that are ready (ev_io_urgent),
 * then the other I/O callbacks, which stop after ~10 ms (the
 * level-triggered rest are reported again by the next epoll_wait;
 * edge-triggered events are never skipped), so a busy batch delays a timer
 * or an urgent handler by at most about one callback.  The next batch's
 * I/O starts with the first callback skipped, so descriptors that stay
 * ready take turns.
 */
#ifndef DYNO_LOOP_H
#define DYNO_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct ev_loop;
struct ev_timer;

typedef void (*ev_io_cb)(struct ev_loop *l, int fd, uint32_t events, void *ud);
typedef void (*ev_timer_cb)(struct ev_loop *l, struct ev_timer *t, void *ud);
typedef void (*ev_signal_cb)(struct ev_loop *l, int signo, void *ud);

struct ev_loop *ev_loop_new(void);
void ev_loop_free(struct ev_loop *l);

/* Watch fd (not owned) for events (EPOLLIN, EPOLLOUT, ...). -1 on error. */
int ev_io_add(struct ev_loop *l, int fd, uint32_t events, ev_io_cb cb, void *ud);
int ev_io_mod(struct ev_loop *l, int fd, uint32_t events);
void ev_io_del(struct ev_loop *l, int fd);
/* Make fd's handler urgent: at the top of every batch, right after the
 * timers and signals, the loop asks the kernel whether fd is ready (one
 * poll(2) for all urgent handlers) and runs its callback if so - whether
 * or not epoll_wait returned it this time, before any other I/O callback
 * and outside the batch's budget.  For a descriptor whose clients wait
 * on a short clock (the IPC socket: Kineto gives up after ~90 ms); its
 * callback must bound its own work per call, as it runs in every batch
 * it is ready.  ev_defer is a no-op there.  At most 8 per loop; -1 with
 * ENOENT (fd not watched) or ENOSPC.  Undone by ev_io_del. */
int ev_io_urgent(struct ev_loop *l, int fd);

/* Fire first after first_ns, then every interval_ns (0: once).  Missed
 * expirations are coalesced into one callback.  NULL on error. */
struct ev_timer *ev_timer_add(struct ev_loop *l, int64_t first_ns, int64_t interval_ns, ev_timer_cb cb,
			      void *ud);
int ev_timer_set(struct ev_timer *t, int64_t first_ns, int64_t interval_ns);
/* Stop the timer until the next ev_timer_set (ev_timer_set's 0 means "now"). */
int ev_timer_disarm(struct ev_timer *t);
void ev_timer_del(struct ev_loop *l, struct ev_timer *t);

/* Block signo for the process and deliver it through the loop. */
int ev_signal_add(struct ev_loop *l, int signo, ev_signal_cb cb, void *ud);

/* From an I/O callback that leaves its work for later (its own budget
 * for this batch is spent; the descriptor stays ready, level-triggered):
 * the next batch starts with it, before the callbacks that ran in this
 * one, so work deferred this way takes turns instead of always losing to
 * the descriptors the kernel reports first.  A no-op elsewhere. */
void ev_defer(struct ev_loop *l);

/* Run until ev_stop(); 0 on a clean stop, -1 if epoll fails. */
int ev_run(struct ev_loop *l);
void ev_stop(struct ev_loop *l);
/* Number of times epoll_wait returned (for idle wake-up measurements). */
uint64_t ev_wakeups(const struct ev_loop *l);

#endif
