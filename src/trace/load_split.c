/*
 * load_split.c - the parse of one big plain .json file by several threads.
 *
 * With n parts, n - 1 helper threads each parse from a split point S_k
 * (k = 1 .. n-1, near k/n of the file) while this thread parses from the
 * start.  A split point is found by a text scan: "}" "," "{" with a newline
 * among the whitespace between them.  JSON strings cannot hold a raw
 * newline, so that is an element boundary of *some* array of objects; it is
 * confirmed as one of traceEvents by the parser that gets there: the one
 * before it lands on an element starting exactly at S_k.  Every parser
 * (this one and each helper) stops at the first later split point it lands
 * on exactly, or at the "]" closing traceEvents, or at an error; a split
 * point it passes inside an element is not a boundary, and the part that
 * started there is thrown away.  So the parts joined form a chain from the
 * start: this one, then the part it stopped at, then the part that one
 * stopped at, ... to the one that reached the "]"; correctness never
 * depends on the guesses.  A helper reads "[" + the file from its S; after
 * the chain the main parser continues after the "]" with a fresh reader
 * fed "{"_":[" + the rest of the file.
 *
 * Costs: 64 KiB reads to find each split point, each helper's columns until
 * they are merged (column by column, freed as they go), one pass over each
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

#define SPLIT_MIN_BYTES (8u << 20)   /* a file smaller is parsed by one thread */
#define SPLIT_PART_BYTES (4u << 20)  /* and each part is at least this big */
#define SPLIT_MAX_PARTS 16
#define SPLIT_SCAN_BYTES (4u << 20)
#define SPLIT_SCAN_CHUNK (64u << 10)
#define SPLIT_PREFIX "{\"_\":["

/* How a parser's part ended. */
enum part_end {
	PART_FAILED, /* broke off (errmsg) */
	PART_END,    /* at the "]" closing traceEvents (end_off) */
	PART_NEXT,   /* exactly at the split point of part `next` */
};

struct split_part {
	struct trace_split *sp;
	unsigned k;
	uint64_t S;
	pthread_t th;
	bool started;
	atomic_bool abort;
	struct trace_rank *h;
	struct trace_parser hp;
	bool any_float_ts, any_nonint_time;
	uint32_t nevents;
	enum part_end how;
	unsigned next;      /* PART_NEXT: that part */
	uint64_t end_off;   /* PART_END: absolute offset of the "]" */
	struct json_error err; /* PART_FAILED: what, at which byte of the file */
};

struct trace_split {
	const char *path;
	const struct trace_load_opts *opts;
	unsigned n;         /* parts, this thread's part 0 included */
	unsigned cand;      /* the main parser's next candidate part (n: none) */
	unsigned joined;    /* parts merged into the main parser's rank */
	struct split_part part[SPLIT_MAX_PARTS]; /* [0] unused: the main parser */
};

static bool split_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* The first "}" "," "{" with a newline in its whitespace at or after byte
 * from, looked for in 64 KiB reads (a boundary is almost always within the
 * first few hundred bytes; the whole scan stops after SPLIT_SCAN_BYTES).  A
 * pattern cut by the end of a read is looked at again from its "}" in the
 * next one.  0: none found. */
uint64_t trace_split_find(const char *path, uint64_t from)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char *b = xmalloc(SPLIT_SCAN_CHUNK);
	uint64_t pos = from, found = 0;
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

/* Where a parser at `off` (a byte of the file, the start of a token it just
 * read) stands with respect to the split points of the parts from *cand on:
 * those it has passed are skipped (*cand moves on); returns true when off is
 * exactly the split point of part *cand and the token starts an object,
 * i.e. the parser stops there. */
static bool at_split(const struct trace_split *sp, unsigned *cand, uint64_t off, enum json_tok t)
{
	while (*cand < sp->n && off > sp->part[*cand].S)
		(*cand)++;
	return *cand < sp->n && off == sp->part[*cand].S && t == JSON_OBJ_BEGIN;
}

/* The byte before which a parser's fast path stops: the next split point. */
static uint64_t stop_of(const struct trace_split *sp, unsigned cand)
{
	return cand < sp->n ? sp->part[cand].S : UINT64_MAX;
}

static void *split_worker(void *arg)
{
	struct split_part *pt = arg;
	struct trace_split *sp = pt->sp;
	pt->how = PART_FAILED;
	/* "{"_":[" in front of byte S: the element at S is where the main
	 * parser's would be, at the same depth, so an error's message reads
	 * as the one-thread parse's */
	struct trace_source *src = trace_source_open_range(sp->path, pt->S, SPLIT_PREFIX, pt->err.msg,
							   sizeof pt->err.msg);
	if (!src)
		return NULL;
	struct trace_parser *p = &pt->hp;
	struct json_reader *jr = &p->jr;
	/* no line counting: an error's line is found once, at the join */
	json_reader_init_stream(jr, trace_source_read, src, 1u << 20, JSON_LENIENT_UTF8 | JSON_NO_LINES);
	/* byte x of the file is the reader's x - S + strlen(prefix) */
	const uint64_t shift = pt->S - (sizeof SPLIT_PREFIX - 1);
	unsigned cand = pt->k + 1;
	enum json_tok t = json_next(jr);
	if (t == JSON_OBJ_BEGIN && json_next(jr) == JSON_KEY)
		t = json_next(jr);
	uint32_t index = 0;
	while (t == JSON_ARR_BEGIN) {
		/* once per batch of elements (or one slow-path element): a
		 * dropped part gives its core back at once */
		if (atomic_load_explicit(&pt->abort, memory_order_relaxed))
			break;
		uint64_t stop = stop_of(sp, cand);
		uint32_t took = trace_parser_fast_batch(p, index, stop == UINT64_MAX ? stop : stop - shift);
		if (took) {
			index += took;
			continue;
		}
		t = json_next(jr);
		if (t == JSON_ARR_END) {
			pt->how = PART_END;
			pt->end_off = shift + json_tok_offset(jr);
			break;
		}
		if (t != JSON_ERROR && at_split(sp, &cand, shift + json_tok_offset(jr), t)) {
			pt->how = PART_NEXT;
			pt->next = cand;
			break;
		}
		if (t == JSON_ERROR || !trace_parser_event(p, t, index)) {
			if (jr->tok != JSON_ERROR && jr->err.msg[0] == 0)
				json_fail_at(jr, json_tok_offset(jr), "unexpected token in a trace event");
			pt->err = jr->err;
			pt->err.offset += shift;
			pt->err.line = pt->err.column = 0;
			break;
		}
		index++;
		t = JSON_ARR_BEGIN;
	}
	pt->nevents = index;
	pt->any_float_ts = p->any_float_ts;
	pt->any_nonint_time = p->any_nonint_time;
	pt->h->stats.replaced_utf8 = jr->replaced;
	pt->h->skipped_min_ts = p->skipped_min_ts;
	trace_parser_free(p);
	trace_source_close(src);
	return NULL;
}

struct trace_split *trace_split_start(const char *path, const struct trace_load_opts *opts, uint64_t size,
				      unsigned threads)
{
	uint64_t min_bytes = opts->split_min_bytes ? opts->split_min_bytes : SPLIT_MIN_BYTES;
	uint64_t part_bytes = opts->split_part_bytes ? opts->split_part_bytes : SPLIT_PART_BYTES;
	if (size < min_bytes || threads < 2)
		return NULL;
	uint64_t n = size / part_bytes;
	if (n > threads)
		n = threads;
	if (n > SPLIT_MAX_PARTS)
		n = SPLIT_MAX_PARTS;
	struct trace_split *sp = xcalloc(1, sizeof *sp);
	sp->path = path;
	sp->opts = opts;
	sp->n = 1;
	/* the split points, ascending and apart (a guess that falls on or
	 * before the previous one is dropped) */
	for (uint64_t k = 1; k < n; k++) {
		uint64_t S = trace_split_find(path, size / n * k);
		if (S && S > sp->part[sp->n - 1].S)
			sp->part[sp->n++].S = S;
	}
	if (sp->n < 2) {
		free(sp);
		return NULL;
	}
	for (unsigned k = 1; k < sp->n; k++) {
		struct split_part *pt = &sp->part[k];
		pt->sp = sp;
		pt->k = k;
		atomic_init(&pt->abort, false);
		pt->h = trace_rank_new(path);
		trace_parser_init(&pt->hp, pt->h, opts); /* first: it says which optional columns the rank keeps */
		trace_columns_reserve(pt->h, (k + 1 < sp->n ? sp->part[k + 1].S : size) - pt->S);
		pt->hp.mid_file = true;
		if (pthread_create(&pt->th, NULL, split_worker, pt) != 0) {
			/* every part is needed (a chain may stop at any of
			 * them): no thread, no split; n stays as the running
			 * helpers read it */
			trace_parser_free(&pt->hp);
			trace_rank_free(pt->h);
			pt->h = NULL;
			trace_split_free(sp);
			return NULL;
		}
		pt->started = true;
	}
	sp->cand = 1;
	return sp;
}

static void part_stop(struct split_part *pt, bool abort)
{
	if (!pt->started)
		return;
	if (abort)
		atomic_store(&pt->abort, true);
	pthread_join(pt->th, NULL);
	pt->started = false;
}

uint64_t trace_split_next_offset(const struct trace_split *sp) { return stop_of(sp, sp->cand); }

bool trace_split_at(struct trace_split *sp, uint64_t off, enum json_tok t)
{
	unsigned before = sp->cand;
	bool at = at_split(sp, &sp->cand, off, t);
	/* parts passed inside an element are thrown away now: their threads
	 * stop early, their cores go to the others */
	for (unsigned k = before; k < sp->cand && k < sp->n; k++)
		part_stop(&sp->part[k], true);
	return at;
}

unsigned trace_split_parts(const struct trace_split *sp) { return sp->joined + 1; }

void trace_split_free(struct trace_split *sp)
{
	if (!sp)
		return;
	for (unsigned k = 1; k < sp->n; k++) {
		part_stop(&sp->part[k], true);
		trace_rank_free(sp->part[k].h);
	}
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

/* Append a helper's rows (event ids shifted by base) to r. */
static void split_merge(struct trace_parser *p, struct split_part *sp, uint32_t base)
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
	uint32_t total = 0;
	for (unsigned k = sp->cand;;) {
		struct split_part *pt = &sp->part[k];
		part_stop(pt, false);
		split_merge(p, pt, base + total);
		total += pt->nevents;
		sp->joined++;
		if (pt->how == PART_NEXT) {
			/* the parts it passed inside an element are not boundaries */
			for (unsigned m = k + 1; m < pt->next; m++)
				part_stop(&sp->part[m], true);
			k = pt->next;
			continue;
		}
		*nevents = total;
		*end_off = pt->end_off;
		if (pt->how == PART_FAILED) {
			/* worded and placed as the one-thread parse's */
			struct buf m = BUF_INIT;
			if (pt->err.offset > 0) {
				trace_error_locate(sp->path, &pt->err);
				trace_error_format(&m, sp->path, &pt->err);
			} else { /* the file could not be opened again */
				buf_puts(&m, pt->err.msg);
			}
			snprintf(p->r->stats.truncated_msg, sizeof p->r->stats.truncated_msg, "%s", m.data);
			buf_free(&m);
		}
		sp->cand = sp->n;
		return pt->how == PART_END;
	}
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
