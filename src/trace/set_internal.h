/*
 * set_internal.h - what set.c shares with filter_mtia.c (HTA's last-step
 * filter for MTIA ranks); not part of the model API.
 */
#ifndef DYNO_TRACE_SET_INTERNAL_H
#define DYNO_TRACE_SET_INTERNAL_H

#include "trace/model.h"

/* Replace the rank's rows by rows src[0..n) of the current table (a row
 * may repeat), column by column on up to `threads` threads; links and the
 * iteration list are recomputed. */
void trace_rank_keep_rows(struct trace_rank *r, const uint32_t *src, size_t n, int threads);

/* HTA's last-step filter of an MTIA rank (semantics doc 1.3; filter_mtia.c). */
void trace_rank_filter_mtia(struct trace_rank *r, int threads);

#endif
