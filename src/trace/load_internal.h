/*
 * load_internal.h - helpers shared by the loader files (load.c, finish.c,
 * set.c); not part of the model API.
 */
#ifndef DYNO_TRACE_LOAD_INTERNAL_H
#define DYNO_TRACE_LOAD_INTERNAL_H

#include <string.h>

#include "core/json.h"
#include "trace/model.h"

/* HTA's per-file steps after parsing: rounding, kinds, links, iterations,
 * device type, name classification. */
void trace_rank_finish(struct trace_rank *r, const struct trace_load_opts *opts);
/* (Re)compute CPU<->GPU links from the correlation column. */
void trace_rank_link(struct trace_rank *r);
/* Distinct ProfilerStep numbers of the rows, into r->iterations. */
void trace_rank_list_iterations(struct trace_rank *r);
void trace_rank_columns_free(struct trace_rank *r);

/* The GPU side of a correlation (the links' and the last-step filter's
 * rule): a stream and a correlation, or an Event/Context Sync row; the
 * sync names as ids (trace_strtab_find, TRACE_NO_STR when absent) so that
 * the per-row test is two compares. */
static inline bool trace_row_corr_gpu(const struct trace_rank *r, size_t i, uint32_t ev_sync, uint32_t ctx_sync)
{
	return (r->stream[i] >= 0 && r->correlation[i] >= 0) || r->name[i] == ev_sync || r->name[i] == ctx_sync;
}

/* "ProfilerStep#N" exactly at the start (HTA's ^ProfilerStep#(\d+)): the
 * step rows of the last-step filters. */
static inline bool trace_is_step_name(const char *s)
{
	return strncmp(s, "ProfilerStep#", 13) == 0 && s[13] >= '0' && s[13] <= '9';
}

/* trace_rank_load, choosing whether one big plain file may be parsed by two
 * threads (set.c forbids it when every core already loads a rank). */
struct trace_rank *trace_rank_load_ex(const char *path, const struct trace_load_opts *opts, bool allow_split,
				      struct buf *err);

/* One traceEvents element as the fast path decoded it (load_fast.c): the
 * fields the loader keeps, names and categories as text in the reader's
 * window (valid until the reader moves on). */
struct fast_event {
	char ph;
	bool has_ts, has_dur, has_cat, has_name, has_id;
	bool ts_float, dur_float;
	bool name_first; /* "name" came before "cat" */
	double bw;
	/* ts and dur as decoded numbers: converted to double only when the
	 * event needs them (flows that are not kept, metadata: never) */
	struct json_num ts_num, dur_num;
	const char *ts_raw, *dur_raw;
	uint32_t ts_len, dur_len;
	int64_t pid, tid, stream, corr, ext, bytes, id;
	const char *name, *cat;
	uint32_t name_len, cat_len;
};
/* Decode the element at p ('{') if it lies in [p, end) and needs nothing
 * unusual; returns the byte after it, or NULL: then the tokenizer path
 * must parse it (and reports any error). */
const char *trace_fast_event(const char *p, const char *end, struct fast_event *ev);
/* After an element ending at q: the next element's '{' when a ',' and
 * only whitespace come first, else NULL (the array ends, or something the
 * tokenizer must see). */
const char *trace_fast_next(const char *q, const char *end);
/* An integer from a number as every integer field is read: exact when it is
 * one, else the truncated double, else dflt. */
int64_t trace_int_of_num(const struct json_num *n, const char *raw, size_t rawlen, int64_t dflt);

#endif
