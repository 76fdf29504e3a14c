/*
 * select.c - the row selection every `dyno analyze` analysis sees:
 * --iterations LO-HI (ProfilerStep numbers) and --time-range START:END (µs
 * from the trace start, i.e. on the aligned time base).  It runs once on
 * the loaded set (after HTA's alignment and last-step filter), before any
 * analysis, so the analyses need not know about it.
 *
 *   - iterations: a row is kept when its iteration (HTA's column, model.h)
 *     is in [LO, HI]; rows in no step (-1) or without one (NaN: stream 0,
 *     not a cpu_op) are dropped;
 *   - time range: a row is kept when it starts in [START, END);
 *   - both: a row must pass both;
 *   - flows and counters are kept when their ts lies in the span of the
 *     kept rows (from the first start to the last end).
 * The CPU<->GPU links and the iteration list are recomputed.  A selection
 * that keeps nothing on every rank is an error (with what the trace holds),
 * never an empty analysis.
 *
 * The text forms of both (--iterations N[-M], --time-range START:END) are
 * parsed here too, for the CLI and the library (src/lib/).
 *
 * Costs: one pass over each rank's rows and one gather of every column of
 * the kept ones (set.c's gather), ranks one after another.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/load_internal.h"

static bool row_kept(const struct trace_rank *r, size_t i, const struct trace_select *sel)
{
	if (sel->iterations) {
		int32_t it = r->iteration[i];
		if (it == TRACE_ITER_NONE || it == TRACE_ITER_NAN || it < sel->iter_lo || it > sel->iter_hi)
			return false;
	}
	if (sel->time_range && !(r->ts[i] >= sel->start && r->ts[i] < sel->end))
		return false;
	return true;
}

/* What the set holds, for the message when nothing is kept. */
static void describe_set(const struct trace_set *set, const struct trace_select *sel, struct buf *err)
{
	if (sel->iterations) {
		int32_t lo = INT32_MAX, hi = INT32_MIN;
		for (size_t k = 0; k < set->nranks; k++) {
			const struct trace_rank *r = set->ranks[k];
			if (r->niterations) {
				lo = r->iterations[0] < lo ? r->iterations[0] : lo;
				hi = r->iterations[r->niterations - 1] > hi ? r->iterations[r->niterations - 1] : hi;
			}
		}
		if (lo > hi)
			buf_puts(err, "; the trace has no ProfilerStep#N event");
		else
			buf_printf(err, "; the trace has ProfilerStep#%d..%d%s", lo, hi,
				   set->filtered ? " (the last one dropped like HTA: --keep-last-step keeps it)" : "");
	}
	if (sel->time_range) {
		double end = 0;
		for (size_t k = 0; k < set->nranks; k++) {
			const struct trace_rank *r = set->ranks[k];
			for (size_t i = 0; i < r->n; i++)
				end = fmax(end, r->ts[i] + r->dur[i]);
		}
		buf_printf(err, "; the trace spans 0..%.0f us", end);
	}
}

int trace_set_select(struct trace_set *set, const struct trace_select *sel, struct buf *err)
{
	if (!sel->iterations && !sel->time_range)
		return 0;
	/* first count: nothing is changed when the selection is empty */
	size_t total = 0;
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		for (size_t i = 0; i < r->n; i++)
			total += row_kept(r, i, sel);
	}
	if (total == 0) {
		buf_puts(err, "the selection keeps no event:");
		if (sel->iterations)
			buf_printf(err, " --iterations %d-%d", sel->iter_lo, sel->iter_hi);
		if (sel->time_range)
			buf_printf(err, " --time-range %g:%g", sel->start, sel->end);
		describe_set(set, sel, err);
		return -1;
	}
	for (size_t k = 0; k < set->nranks; k++) {
		struct trace_rank *r = set->ranks[k];
		uint32_t *src = xmalloc((r->n ? r->n : 1) * sizeof *src);
		size_t n = 0;
		double lo = INFINITY, hi = -INFINITY;
		for (size_t i = 0; i < r->n; i++)
			if (row_kept(r, i, sel)) {
				src[n++] = (uint32_t)i;
				lo = fmin(lo, r->ts[i]);
				hi = fmax(hi, r->ts[i] + r->dur[i]);
			}
		size_t nf = 0, nc = 0;
		for (size_t i = 0; i < r->nflows; i++)
			if (r->flows[i].ts >= lo && r->flows[i].ts <= hi)
				r->flows[nf++] = r->flows[i];
		for (size_t i = 0; i < r->ncounters; i++)
			if (r->counters[i].ts >= lo && r->counters[i].ts <= hi)
				r->counters[nc++] = r->counters[i];
		r->nflows = nf;
		r->ncounters = nc;
		trace_rank_keep_rows(r, src, n, 1);
		free(src);
	}
	return 0;
}

int trace_select_parse_iterations(const char *s, struct trace_select *sel)
{
	char *end;
	errno = 0;
	long lo = strtol(s, &end, 10), hi = lo;
	if (end == s || errno || lo < 0 || lo > INT32_MAX)
		return -1;
	if (*end == '-') {
		const char *p = end + 1;
		hi = strtol(p, &end, 10);
		if (end == p || errno || hi < 0 || hi > INT32_MAX)
			return -1;
	}
	if (*end || hi < lo)
		return -1;
	sel->iterations = true;
	sel->iter_lo = (int32_t)lo;
	sel->iter_hi = (int32_t)hi;
	return 0;
}

int trace_select_parse_time_range(const char *s, struct trace_select *sel)
{
	char *end;
	errno = 0;
	double a = strtod(s, &end);
	if (end == s || *end != ':' || errno)
		return -1;
	const char *p = end + 1;
	double b = strtod(p, &end);
	if (end == p || *end || errno || !(a >= 0) || !(b > a) || b > 1e300)
		return -1;
	sel->time_range = true;
	sel->start = a;
	sel->end = b;
	return 0;
}
