/*
 * trace_compare.h - model equality for the loader's tests and fuzzers (the
 * fast path against the tokenizer path, one thread against two); see
 * trace_compare.c.  Not part of the trace library.
 */
#ifndef DYNO_TESTS_TRACE_COMPARE_H
#define DYNO_TESTS_TRACE_COMPARE_H

#include <stdbool.h>

#include "core/buf.h"
#include "trace/model.h"

/* True when a and b are the same model (every column bit for bit, the
 * string table, flows, counters, stats); else false with the first
 * difference in why (may be NULL). */
bool trace_rank_same(const struct trace_rank *a, const struct trace_rank *b, struct buf *why);

#endif
