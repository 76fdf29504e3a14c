/* sampler.c - see sampler.h. */
#include "gpusnoop/sampler.h"

void sampler_init(struct sampler *s, int pct, int64_t period_ns, int64_t now)
{
	*s = (struct sampler){.pct = pct < 1 ? 1 : pct > 100 ? 100 : pct, .start = now};
	s->period_ns = period_ns > 0 ? period_ns : SAMPLER_PERIOD_NS;
	s->window_ns = s->period_ns / 100 * s->pct;
	if (s->window_ns < SAMPLER_MIN_WINDOW_NS)
		s->window_ns = SAMPLER_MIN_WINDOW_NS;
	if (s->window_ns > s->period_ns)
		s->window_ns = s->period_ns;
	/* the first window: now, for its whole length (a run shorter than it
	 * sees every launch) */
	s->next = now;
}

enum sampler_action sampler_due(struct sampler *s, int64_t now)
{
	if (now < s->next)
		return SAMPLER_NONE;
	if (s->pct >= 100) {
		/* on for good: one ON, never an OFF */
		s->next = INT64_MAX;
		s->windows++;
		return SAMPLER_ON;
	}
	int64_t k = (now - s->start) / s->period_ns;
	int64_t open = s->start + k * s->period_ns, close = open + s->window_ns;
	if (!s->on && now < close && s->windows <= (uint64_t)k) {
		/* inside this period's window (late or not), not yet opened */
		s->next = close;
		s->windows++;
		return SAMPLER_ON;
	}
	if (s->on) {
		s->next = now < close ? close : open + s->period_ns;
		if (now < close)
			return SAMPLER_NONE; /* woken early */
		return SAMPLER_OFF;
	}
	/* off, this period's window passed (or opened already): the next one */
	s->next = open + s->period_ns;
	return SAMPLER_NONE;
}

void sampler_mark(struct sampler *s, bool on, int64_t t)
{
	if (on && !s->on) {
		s->on = true;
		s->on_since = t;
	} else if (!on && s->on) {
		s->on = false;
		s->on_ns += t > s->on_since ? t - s->on_since : 0;
	}
}

int64_t sampler_wait_ns(const struct sampler *s, int64_t now)
{
	if (s->next == INT64_MAX)
		return INT64_MAX;
	return s->next > now ? s->next - now : 0;
}

int64_t sampler_on_ns(const struct sampler *s, int64_t now)
{
	return s->on_ns + (s->on && now > s->on_since ? now - s->on_since : 0);
}

bool sampler_partial(const struct sampler *s, int64_t now)
{
	/* a run that ended inside the first window counted every launch */
	return s->pct < 100 && now > s->start + s->window_ns;
}
