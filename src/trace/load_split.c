/*
 * load_split.c - the two-thread parse of one big plain .json file.
 *
 * A second thread parses the second half of traceEvents while this one
 * parses the first.  The split point S is found by a text scan: "}" "," "{"
 * with a newline among the whitespace between them.  JSON strings cannot
 * hold a raw newline, so that is an element boundary of *some* array of
 * objects; the main parser confirms it is one of traceEvents when it gets
 * there (an element starting exactly at S).  If not, the helper's work is
 * thrown away and the main parser simply goes on: correctness never depends
 * on the guess.  The helper reads "[" + the file from S, stops at the "]"
 * that closes traceEvents, and the main parser then continues after that
 * "]" with a fresh reader fed "{"_":[" + the rest of the file.
 *
 * Costs: a 4 MiB read to find the split point, the helper's columns until
 * they are merged (column by column, freed as they go), one pass over the
 * helper's string table to map its ids into the main parser's.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/par.h"
#include "trace/columns.h"
#include "trace/load_internal.h"
#include "trace/source.h"

#define SPLIT_MIN_BYTES (8u << 20)
#define SPLIT_SCAN_BYTES (4u << 20)
#define SPLIT_SCAN_CHUNK (64u << 10)
#define SPLIT_PREFIX "{\"_\":["

struct trace_split {
	const char *path;
	const struct trace_load_opts *opts;
	uint64_t S;
	pthread_t th;
	bool started;
	atomic_bool abort;
	struct trace_rank *h;
	struct trace_parser hp;
	bool any_float_ts, any_nonint_time;
	uint32_t nevents;
	bool reached_end;   /* saw the "]" closing traceEvents */
	uint64_t end_off;   /* absolute offset of that "]" */
	bool failed;
	char errmsg[400];   /* "FILE: byte N: what" */
};

static bool split_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* The first "}" "," "{" with a newline in its whitespace at or after the
 * middle of the file, looked for in 64 KiB reads (a boundary is almost
 * always within the first few hundred bytes; the whole scan stops after
 * SPLIT_SCAN_BYTES).  A pattern cut by the end of a read is looked at again
 * from its "}" in the next one.  0: none found. */
uint64_t trace_split_find(const char *path, uint64_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char *b = xmalloc(SPLIT_SCAN_CHUNK);
	uint64_t from = size / 2, pos = from, found = 0;
	while (!found && pos - from < SPLIT_SCAN_BYTES) {
		ssize_t n = pread(fd, b, SPLIT_SCAN_CHUNK, (off_t)pos);
		if (n <= 0)
			break;
		uint64_t next = pos + (uint64_t)n;
		for (ssize_t i = 0; i < n && !found; i++) {
			if (b[i] != '}')
				continue;
			ssize_t j = i + 1;
			bool nl = false, comma = false;
			while (j < n && split_ws(b[j]))
				nl |= b[j++] == '\n';
			if (j < n && b[j] == ',') {
				comma = true;
				j++;
				while (j < n && split_ws(b[j]))
					nl |= b[j++] == '\n';
			}
			if (j >= n) { /* cut by the end of this read */
				if (n == (ssize_t)SPLIT_SCAN_CHUNK && i > 0)
					next = pos + (uint64_t)i;
				break;
			}
			if (comma && nl && b[j] == '{')
				found = pos + (uint64_t)j;
		}
		pos = next;
	}
	free(b);
	close(fd);
	return found;
}

static void *split_worker(void *arg)
{
	struct trace_split *sp = arg;
	char msg[300];
	struct trace_source *src = trace_source_open_range(sp->path, sp->S, "[", msg, sizeof msg);
	if (!src) {
		sp->failed = true;
		snprintf(sp->errmsg, sizeof sp->errmsg, "%s", msg);
		return NULL;
	}
	struct trace_parser *p = &sp->hp;
	struct json_reader *jr = &p->jr;
	/* its errors give the byte offset only: no line counting */
	json_reader_init_stream(jr, trace_source_read, src, 1u << 20, JSON_LENIENT_UTF8 | JSON_NO_LINES);
	enum json_tok t = json_next(jr);
	uint32_t index = 0;
	while (t == JSON_ARR_BEGIN) {
		if ((index & 1023) == 0 && atomic_load(&sp->abort))
			break;
		uint32_t took = trace_parser_fast_batch(p, index, UINT64_MAX);
		if (took) {
			index += took;
			continue;
		}
		t = json_next(jr);
		if (t == JSON_ARR_END) {
			sp->reached_end = true;
			sp->end_off = sp->S + json_tok_offset(jr) - 1;
			break;
		}
		if (t == JSON_ERROR || !trace_parser_event(p, t, index)) {
			if (jr->tok != JSON_ERROR && jr->err.msg[0] == 0)
				json_fail_at(jr, json_tok_offset(jr), "unexpected token in a trace event");
			sp->failed = true;
			snprintf(sp->errmsg, sizeof sp->errmsg, "%s: byte %llu: %s", sp->path,
				 (unsigned long long)(sp->S + jr->err.offset - 1), jr->err.msg);
			break;
		}
		index++;
		t = JSON_ARR_BEGIN;
	}
	sp->nevents = index;
	sp->any_float_ts = p->any_float_ts;
	sp->any_nonint_time = p->any_nonint_time;
	sp->h->stats.replaced_utf8 = jr->replaced;
	sp->h->skipped_min_ts = p->skipped_min_ts;
	trace_parser_free(p);
	trace_source_close(src);
	return NULL;
}

struct trace_split *trace_split_start(const char *path, const struct trace_load_opts *opts, uint64_t size)
{
	if (size < SPLIT_MIN_BYTES)
		return NULL;
	uint64_t S = trace_split_find(path, size);
	if (!S)
		return NULL;
	struct trace_split *sp = xcalloc(1, sizeof *sp);
	sp->path = path;
	sp->opts = opts;
	sp->S = S;
	atomic_init(&sp->abort, false);
	sp->h = trace_rank_new(path);
	trace_parser_init(&sp->hp, sp->h, opts); /* first: it says which optional columns the rank keeps */
	trace_columns_reserve(sp->h, size - S);
	sp->hp.mid_file = true;
	if (pthread_create(&sp->th, NULL, split_worker, sp) != 0) {
		trace_parser_free(&sp->hp);
		trace_rank_free(sp->h);
		free(sp);
		return NULL;
	}
	sp->started = true;
	return sp;
}

static void split_stop(struct trace_split *sp, bool abort)
{
	if (!sp || !sp->started)
		return;
	if (abort)
		atomic_store(&sp->abort, true);
	pthread_join(sp->th, NULL);
	sp->started = false;
}

uint64_t trace_split_offset(const struct trace_split *sp) { return sp->S; }

void trace_split_free(struct trace_split *sp)
{
	if (!sp)
		return;
	split_stop(sp, true);
	trace_rank_free(sp->h);
	free(sp);
}

static int64_t remap_id(int64_t v, const uint32_t *map)
{
	if (trace_id_is_str(v))
		return TRACE_ID_STR_BASE + map[v - TRACE_ID_STR_BASE];
	return v;
}

struct merge_ctx {
	struct trace_rank *r, *h;
	const uint32_t *map;
	uint32_t base;
};

/* Column c of the helper's rows appended to r's (a par_for task: each
 * writes its own column and reads only the helper's and the map).  Ids
 * and event numbers are translated; the columns finish.c computes start
 * from their empty value; the others are copied as they are.  The helper's
 * column is freed at once, so the peak is one column over the rows. */
static void merge_column(void *ctx, size_t c)
{
	const struct merge_ctx *mc = ctx;
	struct trace_rank *r = mc->r, *h = mc->h;
	const uint32_t *map = mc->map;
	size_t n0 = r->n, total = r->n + h->n, size = trace_columns[c].size;
	if (!trace_col_kept(r, c)) /* an optional column this load does not keep */
		return;
	void **dst = trace_col(r, c), **src = trace_col(h, c);
	*dst = xrealloc(*dst, total * size);
#define APPEND(col, expr)                                                                            \
	for (size_t i = 0; i < h->n; i++)                                                            \
		r->col[n0 + i] = (expr)
	switch (c) {
	case TRACE_COL_NAME: APPEND(name, map[h->name[i]]); break;
	case TRACE_COL_CAT: APPEND(cat, map[h->cat[i]]); break;
	case TRACE_COL_KIND: APPEND(kind, 0); break;
	case TRACE_COL_PID: APPEND(pid, remap_id(h->pid[i], map)); break;
	case TRACE_COL_TID: APPEND(tid, remap_id(h->tid[i], map)); break;
	case TRACE_COL_IDX: APPEND(idx, h->idx[i] + mc->base); break;
	case TRACE_COL_LINK: APPEND(link, -1); break;
	case TRACE_COL_ITERATION: APPEND(iteration, TRACE_ITER_NONE); break;
	default:
		if (h->n)
			memcpy((char *)*dst + n0 * size, *src, h->n * size);
	}
#undef APPEND
	free(*src);
	*src = NULL;
}

/* Append the helper's rows (event ids shifted by base) to r. */
static void split_merge(struct trace_parser *p, struct trace_split *sp, uint32_t base)
{
	struct trace_rank *r = p->r, *h = sp->h;
	uint32_t *map = xmalloc((h->strs.n ? h->strs.n : 1) * sizeof *map);
	for (uint32_t id = 0; id < h->strs.n; id++)
		map[id] = trace_strtab_intern(&r->strs, h->strs.s[id], h->strs.len[id]);
	/* column by column, freeing each helper column at once (the peak is
	 * one column over the rows, not a second copy), the columns shared out
	 * between two threads: the helper's core is idle by now */
	size_t total = r->n + h->n;
	if (total > 0) {
		struct merge_ctx mc = {r, h, map, base};
		par_for(TRACE_NCOLS, p->opts->threads, merge_column, &mc);
		r->n = r->cap = total;
	}
	for (size_t i = 0; i < h->nflows; i++) {
		if (r->nflows == r->flows_cap) {
			r->flows_cap = r->flows_cap ? r->flows_cap * 2 : 1024;
			r->flows = xrealloc(r->flows, r->flows_cap * sizeof *r->flows);
		}
		struct trace_flow f = h->flows[i];
		f.pid = remap_id(f.pid, map);
		f.tid = remap_id(f.tid, map);
		f.cat = f.cat == TRACE_NO_STR ? f.cat : map[f.cat];
		f.idx += base;
		r->flows[r->nflows++] = f;
	}
	for (size_t i = 0; i < h->ncounters; i++) {
		if (r->ncounters == r->counters_cap) {
			r->counters_cap = r->counters_cap ? r->counters_cap * 2 : 1024;
			r->counters = xrealloc(r->counters, r->counters_cap * sizeof *r->counters);
		}
		struct trace_counter c = h->counters[i];
		c.pid = remap_id(c.pid, map);
		c.name = map[c.name];
		c.key = map[c.key];
		r->counters[r->ncounters++] = c;
	}
	for (size_t i = 0; i < h->nwaits; i++) {
		if (r->nwaits == r->waits_cap) {
			r->waits_cap = r->waits_cap ? r->waits_cap * 2 : 64;
			r->waits = xrealloc(r->waits, r->waits_cap * sizeof *r->waits);
		}
		struct trace_event_wait w = h->waits[i];
		w.idx += base; /* after the main parser's ids: the table stays ascending */
		r->waits[r->nwaits++] = w;
	}
	for (size_t i = 0; i < h->nrange_args; i++) {
		if (r->nrange_args == r->range_args_cap) {
			r->range_args_cap = r->range_args_cap ? r->range_args_cap * 2 : 256;
			r->range_args = xrealloc(r->range_args, r->range_args_cap * sizeof *r->range_args);
		}
		struct trace_range_arg a = h->range_args[i];
		a.key = map[a.key];
		a.idx += base;
		r->range_args[r->nrange_args++] = a;
	}
	struct trace_load_stats *a = &r->stats, *b = &h->stats;
#define ADD(f) a->f += b->f
	ADD(events);
	ADD(complete);
	ADD(dropped_trace_cat);
	ADD(dropped_python);
	ADD(bad_not_object);
	ADD(bad_missing);
	ADD(bad_negative_dur);
	ADD(bad_huge_dur);
	ADD(flows);
	ADD(counters);
	ADD(instants);
	ADD(metadata);
	ADD(replaced_utf8);
	ADD(skipped_cpu_ops);
	ADD(fast_path_events);
#undef ADD
	p->any_float_ts |= sp->any_float_ts;
	p->any_nonint_time |= sp->any_nonint_time;
	if (h->skipped_min_ts < p->skipped_min_ts)
		p->skipped_min_ts = h->skipped_min_ts;
	free(map);
}

bool trace_split_join(struct trace_parser *p, struct trace_split *sp, uint32_t base, uint32_t *nevents,
		      uint64_t *end_off)
{
	split_stop(sp, false);
	split_merge(p, sp, base);
	*nevents = sp->nevents;
	*end_off = sp->end_off;
	if (!sp->reached_end)
		snprintf(p->r->stats.truncated_msg, sizeof p->r->stats.truncated_msg, "%.199s", sp->errmsg);
	return sp->reached_end;
}

struct trace_source *trace_split_rest(const char *path, uint64_t end_off, uint64_t *adjust, char *errbuf,
				      size_t errlen)
{
	/* the new reader counts the prefix, which stands in front of the
	 * "]": its error offsets move back by the prefix to be the file's */
	*adjust = end_off - (sizeof SPLIT_PREFIX - 2);
	return trace_source_open_range(path, end_off, SPLIT_PREFIX, errbuf, errlen);
}

bool trace_split_resume(struct json_reader *jr)
{
	/* {"_":[ ] : back inside the top-level object */
	return json_next(jr) == JSON_OBJ_BEGIN && json_next(jr) == JSON_KEY && json_next(jr) == JSON_ARR_BEGIN &&
	       json_next(jr) == JSON_ARR_END;
}
