/*
 * filter_mtia.h - HTA's last-step filter rule for MTIA ranks (semantics doc
 * 1.3; filter_mtia.c), as set.c uses it; not part of the model API.
 */
#ifndef DYNO_TRACE_FILTER_MTIA_H
#define DYNO_TRACE_FILTER_MTIA_H

#include "trace/model.h"

/* The rows of MTIA rank r that HTA's filter keeps, in trace order, into
 * *src (malloc'd, the caller frees it); returns how many.  Memory rows it
 * keeps are repaired in place first (iteration from their step, stream
 * from their tid).  Changes nothing else: the caller keeps the rows. */
size_t trace_filter_mtia_rows(struct trace_rank *r, uint32_t **src);

#endif
