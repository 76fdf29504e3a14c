/*
 * sampler.h - the launch probes' duty cycle (--launch-sample PCT).
 *
 * Why: every probed call costs a trap whatever the BPF program does with
 * it, and a training loop launches tens of thousands of kernels a second
 * (the H200 run in docs/gpusnoop.md: launches took the loop from +10% to
 * +22%).  Launches are only counted (per function; the rate), so a share
 * of the time is enough to know them: the probes are attached for a
 * window at the start of each period and detached for the rest, and the
 * counts are scaled by the time they were on.  Memory and synchronisation
 * probes are never sampled: a leak report needs every allocation and free.
 *
 * This is the schedule and its accounting only (no BPF; the unit tests
 * drive it with made-up clocks).  main.c does what it says: on SAMPLER_ON
 * attach, then count (a flag the BPF program reads); on SAMPLER_OFF stop
 * counting at once, then detach (slow: each detach waits for the kernel's
 * grace period, ~0.1 s, so it is done off the main thread), and tells the
 * sampler when counting really started and stopped.
 */
#ifndef DYNO_GPUSNOOP_SAMPLER_H
#define DYNO_GPUSNOOP_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

/* the duty cycle's default period (--launch-period); a window is PCT% of
 * the period, at least SAMPLER_MIN_WINDOW_NS (each window costs an attach,
 * ~8 ms a probe, and a detach whose traps last ~0.1 s: a long period keeps
 * that small against the window) */
#define SAMPLER_PERIOD_NS (10 * 1000000000LL)
#define SAMPLER_MIN_WINDOW_NS (100 * 1000000LL)

enum sampler_action { SAMPLER_NONE, SAMPLER_ON, SAMPLER_OFF };

struct sampler {
	int pct;               /* 1..100; 100: always on */
	int64_t start;         /* the first window's start */
	int64_t period_ns, window_ns;
	bool on;               /* counting now */
	int64_t on_since;      /* when counting started */
	int64_t on_ns;         /* counting time of the windows closed */
	int64_t next;          /* the next toggle (INT64_MAX: none) */
	uint64_t windows;      /* windows opened */
};

/* The schedule from now; the first window opens now (the caller attaches
 * and then calls sampler_mark(s, true, t)). */
void sampler_init(struct sampler *s, int pct, int64_t period_ns, int64_t now);
/* What is due at now: SAMPLER_ON (a window opens), SAMPLER_OFF (it
 * closes), or SAMPLER_NONE.  The next toggle moves on the schedule, not
 * on when the caller gets round to it. */
enum sampler_action sampler_due(struct sampler *s, int64_t now);
/* Counting really started (on) or stopped (!on) at t. */
void sampler_mark(struct sampler *s, bool on, int64_t t);
/* ns until the next toggle (0 if due; INT64_MAX if none) */
int64_t sampler_wait_ns(const struct sampler *s, int64_t now);
/* the counting time so far, the open window's included */
int64_t sampler_on_ns(const struct sampler *s, int64_t now);
/* Was time left out by the schedule before now (counts are estimates)? */
bool sampler_partial(const struct sampler *s, int64_t now);

#endif
