/*
 * counter.h - turning two readings of a kernel counter into a delta.
 *
 * Kernel counters only go up, but they can wrap (32-bit fields in some
 * drivers' net statistics and on 32-bit kernels' diskstats) or restart
 * from zero (an interface re-created, a device re-attached).  A wrap gives
 * the true small delta; a reset gives no delta at all for that interval,
 * because any number we made up would be a lie.  The rule: a reading below
 * the previous one is a 32-bit wrap when the previous value fits in 32 bits
 * and the wrapped distance is under 2^31 (a counter does not run half of
 * its range in one interval); otherwise it is a reset.
 */
#ifndef DYNO_COLLECT_COUNTER_H
#define DYNO_COLLECT_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

static inline bool counter_delta(uint64_t prev, uint64_t cur, uint64_t *delta)
{
	if (cur >= prev) {
		*delta = cur - prev;
		return true;
	}
	if (prev <= UINT32_MAX) {
		uint64_t d = (UINT64_C(1) << 32) - prev + cur;
		if (d < (UINT64_C(1) << 31)) {
			*delta = d;
			return true;
		}
	}
	return false;
}

#endif
