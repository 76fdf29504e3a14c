/*
 * trace_compare.c - are two loaded ranks the same model?  Test code, not
 * part of the library: linked into the unit tests and the fuzzers only.
 *
 * The loader has two ways to decode an event (the fast path in load_fast.c
 * and the tokenizer path in load.c) and one or two threads per file, which
 * must give identical models; the tests and the fuzzer load the same bytes
 * both ways and ask this file.  Equality is exact: doubles compare by bit
 * pattern, strings by bytes, the string table by content and order (ids are
 * part of the model).  Cost: one pass over every column of both ranks.
 */
#include "trace_compare.h"

#include <string.h>

#include "trace/columns.h"

#define DIFF(...)                                                                                   \
	do {                                                                                        \
		if (why)                                                                            \
			buf_printf(why, __VA_ARGS__);                                               \
		return false;                                                                       \
	} while (0)

static bool same_bits(const void *a, const void *b, size_t n)
{
	return n == 0 || memcmp(a, b, n) == 0;
}

/* First differing row of a column, or n. */
static size_t first_diff(const void *a, const void *b, size_t elem, size_t n)
{
	const char *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (memcmp(x + i * elem, y + i * elem, elem) != 0)
			return i;
	return n;
}

bool trace_rank_same(const struct trace_rank *a, const struct trace_rank *b, struct buf *why)
{
	if (a->n != b->n)
		DIFF("rows: %zu vs %zu", a->n, b->n);
	for (size_t c = 0; c < TRACE_NCOLS && a->n; c++) {
		if (trace_col_kept(a, c) != trace_col_kept(b, c))
			DIFF("column %s kept by one rank only", trace_columns[c].name);
		if (!trace_col_kept(a, c))
			continue;
		size_t i = first_diff(trace_col_data(a, c), trace_col_data(b, c), trace_columns[c].size, a->n);
		if (i < a->n)
			DIFF("column %s differs at row %zu (event %u)", trace_columns[c].name, i, a->idx ? a->idx[i] : 0);
	}
	if (a->strs.n != b->strs.n)
		DIFF("string table: %u vs %u strings", a->strs.n, b->strs.n);
	for (uint32_t i = 0; i < a->strs.n; i++)
		if (a->strs.len[i] != b->strs.len[i] || !same_bits(a->strs.s[i], b->strs.s[i], a->strs.len[i]))
			DIFF("string %u: \"%s\" vs \"%s\"", i, a->strs.s[i], b->strs.s[i]);
	if (a->nflows != b->nflows)
		DIFF("flows: %zu vs %zu", a->nflows, b->nflows);
	for (size_t i = 0; i < a->nflows; i++) { /* field by field: the struct has padding */
		const struct trace_flow *x = &a->flows[i], *y = &b->flows[i];
		if (x->id != y->id || !same_bits(&x->ts, &y->ts, sizeof x->ts) || x->pid != y->pid ||
		    x->tid != y->tid || x->cat != y->cat || x->idx != y->idx || x->phase != y->phase)
			DIFF("flow %zu differs", i);
	}
	if (a->nwaits != b->nwaits)
		DIFF("event waits: %zu vs %zu", a->nwaits, b->nwaits);
	for (size_t i = 0; i < a->nwaits; i++)
		if (a->waits[i].idx != b->waits[i].idx || a->waits[i].stream != b->waits[i].stream ||
		    a->waits[i].record_corr != b->waits[i].record_corr)
			DIFF("event wait %zu differs", i);
	if (a->ncounters != b->ncounters || !same_bits(a->counters, b->counters, a->ncounters * sizeof *a->counters))
		DIFF("counters differ (%zu vs %zu)", a->ncounters, b->ncounters);
	if (a->nrange_args != b->nrange_args)
		DIFF("profiler args: %zu vs %zu", a->nrange_args, b->nrange_args);
	for (size_t i = 0; i < a->nrange_args; i++) {
		const struct trace_range_arg *x = &a->range_args[i], *y = &b->range_args[i];
		if (x->idx != y->idx || x->key != y->key || !same_bits(&x->value, &y->value, sizeof x->value) ||
		    x->is_int != y->is_int)
			DIFF("profiler arg %zu differs", i);
	}
	if (a->niterations != b->niterations ||
	    !same_bits(a->iterations, b->iterations, a->niterations * sizeof *a->iterations))
		DIFF("iterations differ");
	if (a->rank != b->rank || a->rank_rule != b->rank_rule)
		DIFF("rank %d (%d) vs %d (%d)", a->rank, (int)a->rank_rule, b->rank, (int)b->rank_rule);
	if (a->float_ts != b->float_ts || a->int_times != b->int_times || a->gpu_device_mtia != b->gpu_device_mtia)
		DIFF("float_ts/int_times/mtia flags differ");
	if (!same_bits(&a->min_ts, &b->min_ts, sizeof a->min_ts) ||
	    !same_bits(&a->skipped_min_ts, &b->skipped_min_ts, sizeof a->skipped_min_ts))
		DIFF("min_ts/skipped_min_ts differ");
	if (strcmp(a->device_type ? a->device_type : "", b->device_type ? b->device_type : "") != 0)
		DIFF("device_type differs");
	if (strcmp(a->distributed_info ? a->distributed_info : "", b->distributed_info ? b->distributed_info : "") != 0)
		DIFF("distributedInfo differs");
	const struct trace_load_stats *s = &a->stats, *t = &b->stats;
#define ST(f)                                                                                       \
	if (s->f != t->f)                                                                           \
		DIFF("stats." #f ": %llu vs %llu", (unsigned long long)s->f, (unsigned long long)t->f)
	ST(events);
	ST(complete);
	ST(kept);
	ST(dropped_trace_cat);
	ST(dropped_python);
	ST(bad_not_object);
	ST(bad_missing);
	ST(bad_negative_dur);
	ST(bad_huge_dur);
	ST(flows);
	ST(counters);
	ST(instants);
	ST(metadata);
	ST(neg_dur_after_rounding);
	ST(stream_overlaps);
	ST(dropped_last_step);
	ST(replaced_utf8);
	ST(skipped_cpu_ops);
	ST(parse_threads);
	ST(dup_correlation_capped);
	ST(truncated);
#undef ST
	if (strcmp(s->truncated_msg, t->truncated_msg) != 0)
		DIFF("truncated_msg: \"%s\" vs \"%s\"", s->truncated_msg, t->truncated_msg);
	return true;
}
