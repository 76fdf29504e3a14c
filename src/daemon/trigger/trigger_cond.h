/*
 * trigger_cond.h - the metric condition of a trigger ("cpu_util > 90 for
 * 60s") and its evaluation over the samples the daemon publishes, tick by
 * tick.  Pure: no clock, no I/O, so every rule is unit-tested.
 *
 * Time is counted in ticks, not read from a clock: each sample of a key
 * stands for its collector's interval (the values are per-interval rates
 * and ratios), so "for 60s" at a 1 s interval is 60 consecutive samples
 * that satisfy the comparison, at 60 s it is one.  A tick of the key's
 * collector without the key (the metric is unavailable) breaks the run:
 * an absent value is never taken as true or as zero.
 */
#ifndef DYNO_TRIGGER_COND_H
#define DYNO_TRIGGER_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define TRIG_KEY_MAX 128 /* longest metric key */
#define TRIG_FOR_MAX_S (7 * 86400)

enum trig_op { TRIG_LT, TRIG_LE, TRIG_GT, TRIG_GE, TRIG_EQ, TRIG_NE };

struct trig_cond {
	char key[TRIG_KEY_MAX + 1];
	enum trig_op op;
	double value;
	int64_t for_s; /* 0: the first sample that satisfies it */
};

/* "KEY OP NUMBER [for DURATION]": KEY a metric key (letters, digits and
 * "_.-:/@"), OP one of < <= > >= == !=, DURATION as trig_duration_parse.
 * False with the reason (and its column) in err. */
bool trig_cond_parse(const char *s, size_t n, struct trig_cond *c, struct buf *err);
/* The canonical text (what parse reads back to the same condition). */
void trig_cond_format(const struct trig_cond *c, struct buf *out);
bool trig_cond_true(const struct trig_cond *c, double v);
const char *trig_op_str(enum trig_op op);

/* "90", "90s", "5m", "2h", "1d": whole seconds, 0..max.  False when not. */
bool trig_duration_parse(const char *s, size_t n, int64_t max, int64_t *out);

/* The run of a condition over the ticks. */
struct trig_window {
	int64_t held_s;  /* seconds (sample intervals) the condition has held, up to now */
	int src;         /* the collector whose frames carry the key; -1: not seen yet */
	double last;     /* the last sample's value (valid when have_last) */
	bool have_last;
};

#define TRIG_WINDOW_INIT {0, -1, 0, false}

/* One tick of collector src (period interval_s): present/value is the
 * key's sample in that tick's frame, gate false when the trigger's other
 * requirement (a registered job) fails.  True when the condition has now
 * held for its whole window.  Ticks of other collectors are ignored once
 * the key was seen on src. */
bool trig_window_step(const struct trig_cond *c, struct trig_window *w, int src, int64_t interval_s, bool present,
		      double value, bool gate);

#endif
