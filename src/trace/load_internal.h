/*
 * load_internal.h - helpers shared by the loader files (load.c, finish.c,
 * set.c); not part of the model API.
 */
#ifndef DYNO_TRACE_LOAD_INTERNAL_H
#define DYNO_TRACE_LOAD_INTERNAL_H

#include "trace/model.h"

/* HTA's per-file steps after parsing: rounding, kinds, links, iterations,
 * device type, name classification. */
void trace_rank_finish(struct trace_rank *r, const struct trace_load_opts *opts);
/* (Re)compute CPU<->GPU links from the correlation column. */
void trace_rank_link(struct trace_rank *r);
/* Distinct ProfilerStep numbers of the rows, into r->iterations. */
void trace_rank_list_iterations(struct trace_rank *r);
void trace_rank_columns_free(struct trace_rank *r);
/* N of a "ProfilerStep#N" name (HTA's ProfilerStep\s*#\s*(\d+)); -1 if none. */
long trace_step_number(const char *name);

/* trace_rank_load, choosing whether one big plain file may be parsed by two
 * threads (set.c forbids it when every core already loads a rank). */
struct trace_rank *trace_rank_load_ex(const char *path, const struct trace_load_opts *opts, bool allow_split,
				      struct buf *err);

#endif
