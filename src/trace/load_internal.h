/*
 * load_internal.h - what the files of the trace library share and the
 * model API does not offer; each section names the file that provides it.
 * Not part of the model API (model.h).
 */
#ifndef DYNO_TRACE_LOAD_INTERNAL_H
#define DYNO_TRACE_LOAD_INTERNAL_H

#include <string.h>

#include "core/json.h"
#include "trace/model.h"

struct trace_source;

/* ---- finish.c: HTA's per-file steps (load_rank.c runs them, set.c redoes the
 * links and the iteration list after the last-step filter) ---- */

/* Rounding, kinds, links, iterations, device type, name classification. */
void trace_rank_finish(struct trace_rank *r, const struct trace_load_opts *opts);
/* (Re)compute CPU<->GPU links from the correlation column. */
void trace_rank_link(struct trace_rank *r);
/* Distinct ProfilerStep numbers of the rows, into r->iterations. */
void trace_rank_list_iterations(struct trace_rank *r);
/* set.c: replace the rank's rows by rows src[0..out_n) (a row may repeat),
 * column by column on up to `threads` threads; links and the iteration
 * list are recomputed (the last-step filter, select.c). */
void trace_rank_keep_rows(struct trace_rank *r, const uint32_t *src, size_t out_n, int threads);

/* launch_ops.c: with opts->launch_ops_only, drop the operator rows that
 * trace_launch_ops() cannot choose (trace_rank_finish, after ns rounding
 * and kinds, before the links) and shrink the columns. */
void trace_rank_keep_launch_ops(struct trace_rank *r, const struct trace_load_opts *opts);

/* ---- rules the steps share (finish.c, set.c, filter_mtia.c) ---- */

/* The GPU side of a correlation (the links' and the last-step filter's
 * rule): a stream and a correlation, or an Event/Context Sync row; the
 * sync names as ids (trace_strtab_find, TRACE_NO_STR when absent) so that
 * the per-row test is two compares. */
static inline bool trace_row_corr_gpu(const struct trace_rank *r, size_t i, uint32_t ev_sync, uint32_t ctx_sync)
{
	/* & and |, not && and ||: no branch (CPU and GPU rows alternate) */
	return ((r->stream[i] >= 0) & (r->correlation[i] >= 0)) | (r->name[i] == ev_sync) | (r->name[i] == ctx_sync);
}

/* "ProfilerStep#N" exactly at the start (HTA's ^ProfilerStep#(\d+)): the
 * step rows of the last-step filters. */
static inline bool trace_is_step_name(const char *s)
{
	return strncmp(s, "ProfilerStep#", 13) == 0 && s[13] >= '0' && s[13] <= '9';
}

/* ---- load_rank.c: one file, for set.c ---- */

/* trace_rank_load, saying how many threads one big plain file may be parsed
 * by (set.c gives each file its share of the cores; 1: one thread). */
struct trace_rank *trace_rank_load_ex(const char *path, const struct trace_load_opts *opts, unsigned split_threads,
				      struct buf *err);

/* ---- load_rank.c (init, free) and load.c (events): the parser, for the parse by
 * several threads (load_split.c) ---- */

struct trace_cval {
	uint32_t key;
	double v;
	bool is_int;
};

/* The state of one parse of traceEvents into one rank. */
struct trace_parser {
	struct json_reader jr;
	struct trace_rank *r;
	const struct trace_load_opts *opts;
	struct trace_cval *cv; /* numeric args of the current event (for counters) */
	size_t ncv, cvcap;
	bool any_float_ts;
	bool any_nonint_time; /* an element without an integer ts or dur */
	bool have_rank;
	int64_t dist_rank;
	bool saw_events;
	uint32_t str_trace, str_python; /* cat ids compared per event */
	uint32_t str_cpu_op, str_user_ann;
	uint32_t str_profiler; /* "cuda_profiler_range" with keep_profiler_args, else no cat's id */
	int8_t *is_step;  /* by name id: 1 = ProfilerStep#N, 0 = not, -1 = unknown yet */
	size_t is_step_cap;
	double skipped_min_ts;
	bool mid_file; /* a two-thread helper: its local index 0 is not event 0 */
	struct buf name_tmp;
};

/* A parser filling r (the reader is set up by the caller). */
void trace_parser_init(struct trace_parser *p, struct trace_rank *r, const struct trace_load_opts *opts);
/* Frees the parser and its reader (not the rank). */
void trace_parser_free(struct trace_parser *p);
/* One element of traceEvents through the tokenizer path; t is its first
 * token, just read.  false: the input is broken (error in p->jr). */
bool trace_parser_event(struct trace_parser *p, enum json_tok t, uint32_t index);
/* The fast path over the next elements of traceEvents that the reader's
 * window holds, numbered from index, none at or past byte stop_at; returns
 * how many it took (0: json_next() must read the next element). */
uint32_t trace_parser_fast_batch(struct trace_parser *p, uint32_t index, uint64_t stop_at);

/* ---- load_split.c: the parse of one big file by several threads ---- */

struct trace_split;
/* When the file path with `size` bytes of text is big enough and threads
 * >= 2: up to threads - 1 helper threads start parsing from split points
 * found in the text (load_split.c); gz: the file is gzip (size is then the
 * text size its trailer gives), each helper inflates it from the start.
 * Else NULL. */
struct trace_split *trace_split_start(const char *path, const struct trace_load_opts *opts, uint64_t size,
				      unsigned threads, bool gz);
/* The split point the main parser looks for next (UINT64_MAX: none left):
 * its fast path stops before it. */
uint64_t trace_split_next_offset(const struct trace_split *sp);
/* The main parser read token t starting at byte off, at or past the next
 * split point: true when off is exactly a split point and t starts an
 * object (the guess was right: join there); split points passed inside an
 * element are dropped, their helpers stopped. */
bool trace_split_at(struct trace_split *sp, uint64_t off, enum json_tok t);
/* The guess the main parser stands on was right, with `base` elements
 * read: wait for that part's helper and append its rows, flows, counters
 * and counts to p's rank, then those of the part it stopped at, and so on;
 * *nevents = the elements they read.  Returns true when the last one reached
 * the "]" closing traceEvents (at byte *end_off), false when the input broke
 * off first (its message in p->r->stats.truncated_msg). */
bool trace_split_join(struct trace_parser *p, struct trace_split *sp, uint32_t base, uint32_t *nevents,
		      uint64_t *end_off);
/* How many parts the rank was parsed in: 1 + the helpers joined. */
unsigned trace_split_parts(const struct trace_split *sp);
/* The guess itself: the offset of the first "{" after "}" "," with a
 * newline among the whitespace, at or after byte from (0: none in 4 MiB).
 * Exposed for the tests. */
uint64_t trace_split_find(const char *path, uint64_t from);
/* Stops the helpers that still run, and frees them (NULL is fine). */
void trace_split_free(struct trace_split *sp);
/* gzip in two parts: the text before the helper's part, which the helper
 * inflates into a block the main parser reads in place (load_split.c);
 * NULL when there is none.  The caller owns it from here (it outlives the
 * split: trace_share_free after the reader), the helper writes it. */
struct trace_share;
struct trace_share *trace_split_take_share(struct trace_split *sp);
const char *trace_share_text(const struct trace_share *sh);
/* a json_grow_fn over the share */
size_t trace_share_grow(void *share, size_t have);
/* its length (final once trace_share_grow gave no more) */
size_t trace_share_len(struct trace_share *sh);
void trace_share_free(struct trace_share *sh);
/* After a join that reached end_off (before trace_split_free): the rest of
 * the text for a fresh reader, behind a prefix that trace_split_resume()
 * reads back into the top-level object; *adjust turns the new reader's
 * offsets into the file's.  NULL with a message in errbuf on failure. */
struct trace_source *trace_split_rest(struct trace_split *sp, uint64_t end_off, uint64_t *adjust, char *errbuf,
				      size_t errlen);
bool trace_split_resume(struct json_reader *jr);

/* ---- load_error.c: the loader's error messages ---- */

/* Line and column of je's offset in the file path (plain or gzip), found
 * by reading it again (the parse of a file opened by path does not count
 * lines). */
void trace_error_locate(const char *path, struct json_error *je);
/* "NAME: byte N (line L, column C): what" (without line and column when
 * they are not known) into err. */
void trace_error_format(struct buf *err, const char *name, const struct json_error *je);

/* ---- load_fast.c: the fast path ---- */

/* One traceEvents element as the fast path decoded it: the fields the
 * loader keeps, names and categories as text in the reader's window (valid
 * until the reader moves on). */
struct fast_event {
	char ph;
	bool has_ts, has_dur, has_cat, has_name, has_id;
	bool ts_float, dur_float;
	bool name_first; /* "name" came before "cat" */
	bool args_before_cat; /* an "args" object came before any "cat" */
	bool has_occ;         /* a numeric "est. achieved occupancy %" arg: occ */
	double bw, occ;
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
