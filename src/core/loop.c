/* loop.c - see loop.h. */
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"

enum kind { K_IO, K_TIMER, K_SIGNAL };

struct handler {
	enum kind kind;
	int fd;
	bool dead;
	bool urgent; /* ev_io_urgent: polled at the top of every batch */
	uint32_t events; /* as watched (EPOLLET: its events must not be skipped) */
	void *ud;
	union {
		ev_io_cb io;
		ev_timer_cb timer;
	} cb;
	struct handler *next_dead;
	struct handler *next_timer; /* all live timers, so ev_loop_free can release them */
	struct handler *next_urgent; /* the loop's urgent I/O handlers */
};

struct ev_timer {
	struct handler h; /* first member: the handler is the timer */
};

struct ev_loop {
	int epfd;
	bool stop;
	uint64_t wakeups;
	struct handler **byfd; /* io handlers indexed by fd */
	size_t nbyfd;
	struct handler *graveyard;
	struct handler *timers;
	/* the first I/O handler the last batch's budget skipped (or that
	 * deferred its work, ev_defer): the next batch starts there (see
	 * ev_run); the I/O handler running now */
	struct handler *resume, *current;
	/* I/O handlers marked urgent (ev_io_urgent), at most EV_MAX_URGENT */
	struct handler *urgent;
	int nurgent;
	/* signals */
	struct handler *sigh;
	sigset_t sigmask;
	ev_signal_cb sigcb[65];
	void *sigud[65];
};

struct ev_loop *ev_loop_new(void)
{
	struct ev_loop *l = xcalloc(1, sizeof *l);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	sigemptyset(&l->sigmask);
	return l;
}

static void bury(struct ev_loop *l, struct handler *h)
{
	h->dead = true;
	h->next_dead = l->graveyard;
	l->graveyard = h;
}

static void reap(struct ev_loop *l)
{
	while (l->graveyard) {
		struct handler *h = l->graveyard;
		l->graveyard = h->next_dead;
		if (l->resume == h)
			l->resume = NULL;
		if (h->kind != K_IO)
			close(h->fd);
		free(h);
	}
}

void ev_loop_free(struct ev_loop *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nbyfd; i++)
		if (l->byfd[i])
			bury(l, l->byfd[i]);
	while (l->timers) {
		struct handler *t = l->timers;
		l->timers = t->next_timer;
		bury(l, t);
	}
	if (l->sigh) {
		bury(l, l->sigh);
		sigprocmask(SIG_UNBLOCK, &l->sigmask, NULL);
	}
	reap(l);
	free(l->byfd);
	close(l->epfd);
	free(l);
}

static int watch(struct ev_loop *l, struct handler *h, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = h};
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, h->fd, &ev);
}

int ev_io_add(struct ev_loop *l, int fd, uint32_t events, ev_io_cb cb, void *ud)
{
	if (fd < 0)
		return -1;
	if ((size_t)fd >= l->nbyfd) {
		size_t n = l->nbyfd ? l->nbyfd : 64;
		while (n <= (size_t)fd)
			n *= 2;
		l->byfd = xrealloc(l->byfd, n * sizeof *l->byfd);
		memset(l->byfd + l->nbyfd, 0, (n - l->nbyfd) * sizeof *l->byfd);
		l->nbyfd = n;
	}
	if (l->byfd[fd]) {
		errno = EEXIST;
		return -1;
	}
	struct handler *h = xcalloc(1, sizeof *h);
	h->kind = K_IO;
	h->fd = fd;
	h->cb.io = cb;
	h->ud = ud;
	h->events = events;
	if (watch(l, h, events) < 0) {
		free(h);
		return -1;
	}
	l->byfd[fd] = h;
	return 0;
}

int ev_io_mod(struct ev_loop *l, int fd, uint32_t events)
{
	if (fd < 0 || (size_t)fd >= l->nbyfd || !l->byfd[fd]) {
		errno = ENOENT;
		return -1;
	}
	struct epoll_event ev = {.events = events, .data.ptr = l->byfd[fd]};
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return -1;
	l->byfd[fd]->events = events;
	return 0;
}

/* Urgent handlers are few (the daemon has one, the IPC socket): their
 * poll() at the top of every batch is one small system call. */
#define EV_MAX_URGENT 8

int ev_io_urgent(struct ev_loop *l, int fd)
{
	if (fd < 0 || (size_t)fd >= l->nbyfd || !l->byfd[fd]) {
		errno = ENOENT;
		return -1;
	}
	struct handler *h = l->byfd[fd];
	if (h->urgent)
		return 0;
	if (l->nurgent >= EV_MAX_URGENT) {
		errno = ENOSPC;
		return -1;
	}
	h->urgent = true;
	h->next_urgent = l->urgent;
	l->urgent = h;
	l->nurgent++;
	return 0;
}

void ev_io_del(struct ev_loop *l, int fd)
{
	if (fd < 0 || (size_t)fd >= l->nbyfd || !l->byfd[fd])
		return;
	if (l->byfd[fd]->urgent) {
		for (struct handler **pp = &l->urgent; *pp; pp = &(*pp)->next_urgent)
			if (*pp == l->byfd[fd]) {
				*pp = (*pp)->next_urgent;
				break;
			}
		l->nurgent--;
	}
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	bury(l, l->byfd[fd]);
	l->byfd[fd] = NULL;
}

static struct itimerspec spec(int64_t first_ns, int64_t interval_ns)
{
	struct itimerspec its;
	if (first_ns <= 0)
		first_ns = 1; /* 0 would disarm */
	its.it_value.tv_sec = first_ns / NS_PER_SEC;
	its.it_value.tv_nsec = first_ns % NS_PER_SEC;
	its.it_interval.tv_sec = interval_ns / NS_PER_SEC;
	its.it_interval.tv_nsec = interval_ns % NS_PER_SEC;
	return its;
}

struct ev_timer *ev_timer_add(struct ev_loop *l, int64_t first_ns, int64_t interval_ns, ev_timer_cb cb,
			      void *ud)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct ev_timer *t = xcalloc(1, sizeof *t);
	t->h.kind = K_TIMER;
	t->h.fd = fd;
	t->h.cb.timer = cb;
	t->h.ud = ud;
	struct itimerspec its = spec(first_ns, interval_ns);
	if (timerfd_settime(fd, 0, &its, NULL) < 0 || watch(l, &t->h, EPOLLIN) < 0) {
		close(fd);
		free(t);
		return NULL;
	}
	t->h.next_timer = l->timers;
	l->timers = &t->h;
	return t;
}

int ev_timer_set(struct ev_timer *t, int64_t first_ns, int64_t interval_ns)
{
	struct itimerspec its = spec(first_ns, interval_ns);
	return timerfd_settime(t->h.fd, 0, &its, NULL);
}

int ev_timer_disarm(struct ev_timer *t)
{
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	return timerfd_settime(t->h.fd, 0, &its, NULL);
}

void ev_timer_del(struct ev_loop *l, struct ev_timer *t)
{
	if (!t || t->h.dead)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, t->h.fd, NULL);
	for (struct handler **pp = &l->timers; *pp; pp = &(*pp)->next_timer)
		if (*pp == &t->h) {
			*pp = t->h.next_timer;
			break;
		}
	bury(l, &t->h);
}

int ev_signal_add(struct ev_loop *l, int signo, ev_signal_cb cb, void *ud)
{
	if (signo <= 0 || signo > 64)
		return -1;
	sigaddset(&l->sigmask, signo);
	if (sigprocmask(SIG_BLOCK, &l->sigmask, NULL) < 0)
		return -1;
	l->sigcb[signo] = cb;
	l->sigud[signo] = ud;
	if (l->sigh)
		return signalfd(l->sigh->fd, &l->sigmask, SFD_NONBLOCK | SFD_CLOEXEC) < 0 ? -1 : 0;
	int fd = signalfd(-1, &l->sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -1;
	struct handler *h = xcalloc(1, sizeof *h);
	h->kind = K_SIGNAL;
	h->fd = fd;
	if (watch(l, h, EPOLLIN) < 0) {
		close(fd);
		free(h);
		return -1;
	}
	l->sigh = h;
	return 0;
}

static void dispatch(struct ev_loop *l, struct handler *h, uint32_t events)
{
	switch (h->kind) {
	case K_IO: h->cb.io(l, h->fd, events, h->ud); break;
	case K_TIMER: {
		uint64_t n;
		if (read(h->fd, &n, sizeof n) == (ssize_t)sizeof n && n > 0)
			h->cb.timer(l, (struct ev_timer *)h, h->ud);
		break;
	}
	case K_SIGNAL: {
		struct signalfd_siginfo si;
		while (read(h->fd, &si, sizeof si) == (ssize_t)sizeof si) {
			int s = (int)si.ssi_signo;
			if (s > 0 && s <= 64 && l->sigcb[s])
				l->sigcb[s](l, s, l->sigud[s]);
			if (h->dead)
				break;
		}
		break;
	}
	}
}

/* How long one batch of I/O callbacks may run before the loop looks at its
 * timers again.  Every handler bounds its own work per wake-up (64
 * datagrams, 64 accepts, one answer per connection...), but 64 ready
 * connections each asking for a big answer add up: under the abuse soak
 * (bench/soak.sh) batches of pipelined getMetrics answers made the 1 s
 * collection tick skip a beat.  10 ms costs nothing on a quiet daemon (a
 * batch there takes microseconds) and is a small share of any interval. */
#define EV_BATCH_BUDGET_NS (10 * NS_PER_MS)

/* The urgent handlers' turn, at the top of a batch (after its timers and
 * signals): each one whose descriptor is ready now, whether or not this
 * epoll_wait returned it.  epoll_wait returns at most 64 events, and a
 * descriptor that becomes ready queues behind every one already ready
 * (the kernel's ready list): under the abuse soak (bench/soak.sh) a Kineto
 * poll waited there, and behind batches of the RPC server's callbacks, for
 * longer than the ~90 ms Kineto waits for its answer.  poll(2) asks the
 * kernel for just these descriptors; its POLLIN, POLLPRI, POLLOUT,
 * POLLRDHUP, POLLERR and POLLHUP have the values of the EPOLL flags of the
 * same names, so its revents are handed to the callback as they are. */
static void run_urgent(struct ev_loop *l)
{
	struct pollfd pf[EV_MAX_URGENT];
	struct handler *uh[EV_MAX_URGENT];
	int k = 0;
	for (struct handler *h = l->urgent; h && k < EV_MAX_URGENT; h = h->next_urgent) {
		pf[k] = (struct pollfd){.fd = h->fd,
					.events = (short)(h->events & (EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLRDHUP))};
		uh[k++] = h;
	}
	if (poll(pf, (nfds_t)k, 0) <= 0)
		return;
	/* A callback may delete another urgent handler (it is then dead, not
	 * freed, until the batch ends) or stop the loop. */
	for (int i = 0; i < k && !l->stop; i++)
		if (pf[i].revents && !uh[i]->dead)
			dispatch(l, uh[i], (uint32_t)(uint16_t)pf[i].revents);
}

int ev_run(struct ev_loop *l)
{
	struct epoll_event evs[64];
	l->stop = false;
	while (!l->stop) {
		int n = epoll_wait(l->epfd, evs, 64, -1);
		l->wakeups++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		/* Timers and signals first: a collection tick must not wait
		 * behind a batch of busy clients. */
		for (int i = 0; i < n && !l->stop; i++) {
			struct handler *h = evs[i].data.ptr;
			if (h->kind != K_IO) {
				if (!h->dead)
					dispatch(l, h, evs[i].events);
				evs[i].data.ptr = NULL;
			} else if (h->urgent) {
				evs[i].data.ptr = NULL; /* run_urgent's */
			}
		}
		/* Then the urgent handlers, never behind other I/O nor skipped
		 * by the budget; the budget counts from after them. */
		if (l->nurgent && !l->stop)
			run_urgent(l);
		/* Then I/O, until the batch has used its time: the
		 * level-triggered rest are reported again by the next
		 * epoll_wait (behind what it has not returned yet), with any
		 * timer that fell due meanwhile.  An edge-triggered event is
		 * reported once, so it is never skipped (such handlers only
		 * take a quick look: prom_accept's peek).  The kernel reports
		 * ready descriptors in a stable order (the ones it returned go
		 * back to the end of its ready list in the order returned), so
		 * a batch starts with the first handler the previous one
		 * skipped and wraps around: always starting at the top, one
		 * descriptor that is always ready and uses the whole budget
		 * (a keep-alive client pipelining big requests and reading its
		 * answers) would starve every one after it. */
		int first = 0;
		while (l->resume && first < n && evs[first].data.ptr != l->resume)
			first++;
		if (first == n)
			first = 0;
		l->resume = NULL;
		int64_t start = clock_mono_ns();
		bool over = false;
		for (int k = 0; k < n && !l->stop; k++) {
			int i = (first + k) % n;
			struct handler *h = evs[i].data.ptr;
			if (!h || h->dead)
				continue;
			if (over && !(h->events & EPOLLET)) {
				if (!l->resume)
					l->resume = h;
				continue;
			}
			l->current = h;
			dispatch(l, h, evs[i].events);
			l->current = NULL;
			over = over || clock_mono_ns() - start > EV_BATCH_BUDGET_NS;
		}
		reap(l);
	}
	return 0;
}

void ev_defer(struct ev_loop *l)
{
	if (l->current && !l->resume)
		l->resume = l->current;
}

void ev_stop(struct ev_loop *l) { l->stop = true; }
uint64_t ev_wakeups(const struct ev_loop *l) { return l->wakeups; }
