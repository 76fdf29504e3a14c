/*
 * load_split.c - the parse of one big .json or .json.gz file by several
 * threads.
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
 * A .json.gz cannot be read from the middle: each helper inflates the
 * file from its start in its own thread, drops the text before a byte
 * `from` and looks for its split point after it, in [from, the next
 * part's from); it publishes the point (or that there is none) before it
 * parses, and a parser that reaches a `from` whose point is not known yet
 * waits for it (it never has to with inflate ~5x faster than the parse).
 * Inflating the text before `from` costs a helper ~1/5 of parsing it, so
 * the parts are cut shorter towards the end (split_gz_froms), every part
 * finishing about together.  In two parts, the helper's inflate of the text
 * before its part is shared with the main parser instead (struct
 * trace_share, below).  The text after the "]" of traceEvents, which the
 * main parser reads again, is kept by the helper that reaches it (up to
 * REST_MAX bytes; more is inflated again).
 *
 * Costs: 64 KiB reads to find each split point, each helper's columns until
 * they are merged (column by column, freed as they go), one pass over each
 * helper's string table to map its ids into the main parser's; for gzip,
 * each helper's inflate of the text before its part, and in two parts the
 * memory that text is kept in until the main parser is done (~70 % of the
 * text: 24 MB for trace_diff/control's 35 MB).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
#define PREFIX_LEN (sizeof SPLIT_PREFIX - 1)
#define REST_MAX (4u << 20) /* gzip: the text after traceEvents a helper keeps */
/* A gzip part's split point before its helper has found it, and none. */
#define S_PENDING (UINT64_MAX - 1)
#define S_NONE UINT64_MAX
/* Inflating a byte of text against parsing it (ISA-L ~5 GB/s, parse ~1):
 * only shapes the gzip parts, never correctness. */
#define GZ_INFLATE_SHARE 0.25

/* How a parser's part ended. */
enum part_end {
	PART_FAILED, /* broke off (errmsg) */
	PART_END,    /* at the "]" closing traceEvents (end_off) */
	PART_NEXT,   /* exactly at the split point of part `next` */
};

struct split_part {
	struct trace_split *sp;
	unsigned k;
	/* the split point: set before the thread starts (plain), or
	 * published by the helper (gzip: S_PENDING until then, S_NONE when
	 * there is none in [from, limit)) */
	_Atomic uint64_t S;
	uint64_t from, limit;
	pthread_t th;
	bool started;
	atomic_bool abort;
	atomic_bool done; /* the helper's parse is over (it may still warm the heap) */
	struct trace_rank *h;
	struct trace_parser hp;
	bool any_float_ts, any_nonint_time;
	uint32_t nevents;
	enum part_end how;
	unsigned next;      /* PART_NEXT: that part */
	uint64_t end_off;   /* PART_END: absolute offset of the "]" */
	struct json_error err; /* PART_FAILED: what, at which byte of the file */
	char *rest;            /* gzip, PART_END: the text from end_off to the end */
	size_t rest_len;
};

struct trace_split {
	const char *path;
	const struct trace_load_opts *opts;
	bool gz;
	pthread_mutex_t mu; /* gzip: a published split point wakes the waiters */
	pthread_cond_t cv;
	unsigned n;         /* parts, this thread's part 0 included */
	unsigned cand;      /* the main parser's next candidate part (n: none) */
	unsigned joined;    /* parts merged into the main parser's rank */
	unsigned end_part;  /* after the join: the part that ended it */
	struct split_part part[SPLIT_MAX_PARTS]; /* [0] unused: the main parser */
	atomic_bool joining;   /* the main parser is at the join: helpers stop warming */
	_Atomic size_t warm;   /* bytes of heap the parsers may still fault in (warm_heap) */
	struct trace_share *share; /* gzip, two parts: the text before part 1 (NULL: none) */
	bool share_taken;          /* the main parser's now (trace_split_take_share) */
};

/*
 * gzip in two parts: the helper inflates the text before its part anyway
 * (to get its inflate there), so instead of dropping it, it writes it into
 * a block the main parser reads in place (json_reader_init_borrow) instead
 * of inflating it a second time.  The block is fresh memory on huge pages:
 * faulting it in costs the helper ~0.1 ms a MB (against ~0.2 ms a MB of
 * inflate the main parser no longer spends, trace_diff/control: 3.6 ms);
 * only for a text of at most SHARE_MAX bytes before the part, and only
 * where huge pages are on (on 4 KiB pages the faults cost more than the
 * inflate saved).  The helper publishes the length a step at a time; the
 * main parser waits when it catches up (never for long: inflate is ~5x the
 * parse's speed).  The scan for the split point goes on into the block, so
 * it holds the text to a little past S, which is as far as the main parser
 * reads when its guess is right; when it is not (the main parser passes S
 * inside an element, or the helper stopped early on an error or at the
 * end), the main parser reads on past the block through its own inflate,
 * from the start of the file again.
 */
#define SHARE_MAX ((size_t)64 << 20)
#define SHARE_ROOM ((size_t)1 << 20) /* past `from`, for the scan's text */
#define SHARE_STEP ((size_t)256 << 10)
/* The main parser's share of the text when it does not inflate: shapes the
 * two parts only.  Per MB on trace_diff/control: the main parser's parse
 * ~0.76 ms; the helper's inflate into the share ~0.30 ms (faults
 * included), its inflate and parse of its part ~1.14 ms (GPU and runtime
 * events, later in a Kineto trace, take longer a byte than the CPU
 * operators): 1.14 / (0.76 - 0.30 + 1.14). */
#define GZ_SHARE_FIRST 0.71

struct trace_share {
	char *text;
	size_t cap, map_len;
	void *map;
	_Atomic size_t len;  /* bytes written, published */
	atomic_bool closed;  /* len is final */
	atomic_bool waiting; /* the reader sleeps on cv */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static struct trace_share *share_new(size_t cap)
{
	/* a mapping of its own on a 2 MiB boundary, advised huge, untouched:
	 * the helper's writes fault it in, not this thread */
	size_t hp = (size_t)2 << 20, len = (cap + hp - 1) & ~(hp - 1);
	char *m = mmap(NULL, len + hp, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct trace_share *sh = xcalloc(1, sizeof *sh);
	sh->map = m;
	sh->map_len = len + hp;
	sh->text = (char *)(((uintptr_t)m + hp - 1) & ~(uintptr_t)(hp - 1));
	sh->cap = len;
	(void)madvise(sh->text, len, MADV_HUGEPAGE);
	atomic_init(&sh->len, 0);
	atomic_init(&sh->closed, false);
	atomic_init(&sh->waiting, false);
	pthread_mutex_init(&sh->mu, NULL);
	pthread_cond_init(&sh->cv, NULL);
	return sh;
}

void trace_share_free(struct trace_share *sh)
{
	if (!sh)
		return;
	munmap(sh->map, sh->map_len);
	pthread_mutex_destroy(&sh->mu);
	pthread_cond_destroy(&sh->cv);
	free(sh);
}

/* The helper: len bytes are there (and, closed, no more will come). */
static void share_publish(struct trace_share *sh, size_t len, bool closed)
{
	atomic_store(&sh->len, len);
	if (closed)
		atomic_store(&sh->closed, true);
	if (atomic_load(&sh->waiting)) {
		pthread_mutex_lock(&sh->mu);
		pthread_cond_broadcast(&sh->cv);
		pthread_mutex_unlock(&sh->mu);
	}
}

/* Append n bytes read past the inflated prefix (the scan's), while there is
 * room; the share closes where the room ends. */
static void share_append(struct trace_share *sh, const char *b, size_t n)
{
	size_t len = atomic_load_explicit(&sh->len, memory_order_relaxed);
	if (atomic_load_explicit(&sh->closed, memory_order_relaxed))
		return;
	if (n > sh->cap - len) {
		share_publish(sh, len, true);
		return;
	}
	memcpy(sh->text + len, b, n);
	share_publish(sh, len + n, false);
}

const char *trace_share_text(const struct trace_share *sh) { return sh->text; }

size_t trace_share_len(struct trace_share *sh) { return atomic_load(&sh->len); }

size_t trace_share_grow(void *ctx, size_t have)
{
	struct trace_share *sh = ctx;
	size_t n = atomic_load(&sh->len);
	if (n > have)
		return n;
	if (atomic_load(&sh->closed)) { /* len is final once closed is seen */
		n = atomic_load(&sh->len);
		return n > have ? n : have;
	}
	/* seq_cst: either the helper sees waiting after its store of len, or
	 * this thread sees the new len below */
	atomic_store(&sh->waiting, true);
	pthread_mutex_lock(&sh->mu);
	while (atomic_load(&sh->len) <= have && !atomic_load(&sh->closed))
		pthread_cond_wait(&sh->cv, &sh->mu);
	pthread_mutex_unlock(&sh->mu);
	atomic_store(&sh->waiting, false);
	n = atomic_load(&sh->len);
	return n > have ? n : have;
}

struct trace_share *trace_split_take_share(struct trace_split *sp)
{
	if (!sp || !sp->share)
		return NULL;
	sp->share_taken = true;
	return sp->share;
}

/*
 * The steps after the parse (the launch-op step, links, iterations, the
 * filter, the analyses) allocate their scratch arrays from malloc's heap,
 * which grows into fresh 4 KiB pages: ~460 page faults on trace_diff/control,
 * ~2 us each on a VM.  Whichever parser finishes its part first has a core
 * with nothing to do until the other is done: it faults those pages in
 * meanwhile (blocks of the heap touched, then freed: the heap keeps them,
 * M_TRIM_THRESHOLD), in steps of 256 KiB, until *stop, within the shared
 * budget sp->warm (32 bytes per row of the reservation, at most WARM_MAX;
 * none unless xalloc_huge_pages tuned malloc).  Only moves work into a
 * wait; never correctness.  On trace_diff/control the helper, done ~1 ms before the
 * main parser, faults in ~450 pages there, and the steps after the parse
 * take ~5 faults instead of ~460.
 */
#define WARM_STEP ((size_t)256 << 10)
#define WARM_MAX ((size_t)16 << 20) /* what it may add to the peak RSS */
static void warm_heap(struct trace_split *sp, const atomic_bool *stop)
{
	void *blk[64];
	size_t nb = 0;
	while (nb < 64 && !atomic_load_explicit(stop, memory_order_relaxed)) {
		size_t b = atomic_load_explicit(&sp->warm, memory_order_relaxed);
		if (b < WARM_STEP)
			break;
		if (!atomic_compare_exchange_weak(&sp->warm, &b, b - WARM_STEP))
			continue;
		volatile char *p = malloc(WARM_STEP);
		if (!p)
			break;
		for (size_t i = 0; i < WARM_STEP; i += 4096)
			p[i] = 0;
		blk[nb++] = (void *)p;
	}
	while (nb)
		free(blk[--nb]);
}

static bool split_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* The split pattern in b[0, n): "}" "," "{" with a newline in the
 * whitespace between them.  Returns the index of the "{", or -1 with *more
 * the index from which to look again once more bytes follow b[n) (a
 * pattern cut by the end; n when there is none to finish). */
static ssize_t split_scan(const char *b, size_t n, size_t *more)
{
	*more = n;
	for (size_t i = 0; i < n; i++) {
		if (b[i] != '}')
			continue;
		size_t j = i + 1;
		bool nl = false, comma = false;
		while (j < n && split_ws(b[j]))
			nl |= b[j++] == '\n';
		if (j < n && b[j] == ',') {
			comma = true;
			j++;
			while (j < n && split_ws(b[j]))
				nl |= b[j++] == '\n';
		}
		if (j >= n) { /* cut by the end */
			*more = i;
			return -1;
		}
		if (comma && nl && b[j] == '{')
			return (ssize_t)j;
	}
	return -1;
}

/* The first split pattern at or after byte from of a plain file, looked
 * for in 64 KiB reads (a boundary is almost always within the first few
 * hundred bytes; the whole scan stops after SPLIT_SCAN_BYTES).  A pattern
 * cut by the end of a read is looked at again from its "}" in the next
 * one.  0: none found. */
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
		size_t more;
		ssize_t j = split_scan(b, (size_t)n, &more);
		if (j >= 0)
			found = pos + (uint64_t)j;
		else if (more == 0 || n < (ssize_t)SPLIT_SCAN_CHUNK)
			pos += (uint64_t)n; /* (a cut at 0: the next read from past it) */
		else
			pos += more;
	}
	free(b);
	close(fd);
	return found;
}

/* ---- gzip: a helper's own reader, from its split point ---- */

/* The helper's inflate: what its scan read (the prefix, then the text from
 * S on), then the rest of the stream. */
struct gz_part_src {
	struct trace_source *src;
	char *buf; /* PREFIX_LEN bytes of room, then the scan's text; [pos, len) is to read */
	size_t pos, len;
};

static ssize_t gz_part_read(void *ctx, char *dst, size_t cap, const char **err)
{
	struct gz_part_src *g = ctx;
	if (g->pos < g->len) {
		size_t n = g->len - g->pos < cap ? g->len - g->pos : cap;
		memcpy(dst, g->buf + g->pos, n);
		g->pos += n;
		return (ssize_t)n;
	}
	return trace_source_read(g->src, dst, cap, err);
}

/* Inflate the file to pt->from and look for the split point before
 * pt->limit; publish it (S_NONE: none, or the file could not be read so
 * far) and wake the parsers waiting for it.  On success g reads from it. */
static bool gz_part_open(struct split_part *pt, struct gz_part_src *g)
{
	struct trace_split *sp = pt->sp;
	struct trace_share *sh = pt->k == 1 ? sp->share : NULL;
	uint64_t S = S_NONE;
	const char *emsg = NULL;
	if (sh) {
		/* the text before from into the share, published a step at a
		 * time (an error or the end on the way stays with the source,
		 * for the scan's read to meet; the main parser, past the share,
		 * meets it in its own inflate) */
		g->src = trace_source_open_range(sp->path, 0, "", pt->err.msg, sizeof pt->err.msg);
		size_t len = 0;
		while (g->src && len < pt->from && !atomic_load_explicit(&pt->abort, memory_order_relaxed)) {
			size_t want = pt->from - len < SHARE_STEP ? (size_t)(pt->from - len) : SHARE_STEP;
			ssize_t n = trace_source_read(g->src, sh->text + len, want, &emsg);
			if (n <= 0)
				break;
			len += (size_t)n;
			share_publish(sh, len, false);
		}
		if (len < pt->from) { /* no text at from: no split point */
			share_publish(sh, len, true);
			trace_source_close(g->src);
			g->src = NULL;
		}
	} else {
		g->src = trace_source_open_range(sp->path, pt->from, "", pt->err.msg, sizeof pt->err.msg);
	}
	g->buf = xmalloc(PREFIX_LEN + SPLIT_SCAN_CHUNK);
	char *scan = g->buf + PREFIX_LEN;
	uint64_t pos = pt->from; /* the file offset of scan[0] */
	size_t have = 0;          /* bytes in scan */
	while (g->src && S == S_NONE && pos + have < pt->limit) {
		ssize_t n = trace_source_read(g->src, scan + have, SPLIT_SCAN_CHUNK - have, &emsg);
		if (n <= 0)
			break;
		if (sh)
			share_append(sh, scan + have, (size_t)n);
		have += (size_t)n;
		size_t more;
		ssize_t j = split_scan(scan, have, &more);
		if (j >= 0) {
			if (pos + (uint64_t)j < pt->limit) {
				/* the prefix goes just before S (over text the
				 * scan is done with, or the room in front) */
				S = pos + (uint64_t)j;
				memcpy(scan + j - PREFIX_LEN, SPLIT_PREFIX, PREFIX_LEN);
				g->pos = (size_t)j;
				g->len = PREFIX_LEN + have;
			}
			break;
		}
		/* keep a cut pattern's start; the rest of the buffer goes */
		if (more == 0 && have == SPLIT_SCAN_CHUNK)
			more = have; /* a "}" at 0 and 64 KiB of whitespace: no boundary here */
		memmove(scan, scan + more, have - more);
		pos += more;
		have -= more;
	}
	pthread_mutex_lock(&sp->mu);
	atomic_store_explicit(&pt->S, S, memory_order_release);
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	if (sh) /* the text to a little past S: as far as the main parser reads */
		share_publish(sh, atomic_load(&sh->len), true);
	return S != S_NONE;
}

/* Part k's split point as a parser standing at byte off needs it: known,
 * or (gzip) not yet published: then `from`, a lower bound, while off is
 * before it, else wait for the helper to publish it. */
static uint64_t split_point(struct trace_split *sp, unsigned k, uint64_t off)
{
	struct split_part *pt = &sp->part[k];
	uint64_t S = atomic_load_explicit(&pt->S, memory_order_acquire);
	if (S != S_PENDING)
		return S;
	if (off < pt->from)
		return pt->from;
	pthread_mutex_lock(&sp->mu);
	while ((S = atomic_load_explicit(&pt->S, memory_order_acquire)) == S_PENDING)
		pthread_cond_wait(&sp->cv, &sp->mu);
	pthread_mutex_unlock(&sp->mu);
	return S;
}

/* Where a parser at `off` (a byte of the file, the start of a token it just
 * read) stands with respect to the split points of the parts from *cand on:
 * those it has passed, and those without one, are skipped (*cand moves on);
 * returns true when off is exactly the split point of part *cand and the
 * token starts an object, i.e. the parser stops there. */
static bool at_split(struct trace_split *sp, unsigned *cand, uint64_t off, enum json_tok t)
{
	for (; *cand < sp->n; (*cand)++) {
		uint64_t S = split_point(sp, *cand, off);
		if (S != S_NONE && off <= S)
			return off == S && t == JSON_OBJ_BEGIN;
	}
	return false;
}

/* The byte before which a parser's fast path stops: the next split point
 * (or, not known yet, the byte from which it must be waited for). */
static uint64_t stop_of(const struct trace_split *sp, unsigned cand)
{
	for (; cand < sp->n; cand++) {
		uint64_t S = atomic_load_explicit(&sp->part[cand].S, memory_order_acquire);
		if (S != S_NONE)
			return S == S_PENDING ? sp->part[cand].from : S;
	}
	return UINT64_MAX;
}

/* gzip, at the "]" closing traceEvents (the reader's token): the text from
 * it to the end, for the main parser to read after the join, when it is
 * at most REST_MAX bytes and reads without an error (else pt->rest stays
 * NULL and the main parser inflates the file again to get there). */
static void keep_rest(struct split_part *pt, struct json_reader *jr, struct gz_part_src *g)
{
	size_t cap = (size_t)(jr->end - jr->tstart) + (64u << 10), len = (size_t)(jr->end - jr->tstart);
	if (len > REST_MAX)
		return;
	char *b = xmalloc(cap);
	memcpy(b, jr->tstart, len);
	for (;;) {
		if (cap - len < (64u << 10)) {
			cap *= 2;
			b = xrealloc(b, cap);
		}
		const char *emsg = NULL;
		ssize_t n = gz_part_read(g, b + len, cap - len, &emsg);
		if (n == 0)
			break;
		if (n < 0 || len + (size_t)n > REST_MAX) {
			free(b);
			return;
		}
		len += (size_t)n;
	}
	pt->rest = b;
	pt->rest_len = len;
}

static void part_parse(struct split_part *pt)
{
	struct trace_split *sp = pt->sp;
	pt->how = PART_FAILED;
	/* "{"_":[" in front of byte S: the element at S is where the main
	 * parser's would be, at the same depth, so an error's message reads
	 * as the one-thread parse's */
	struct trace_source *src = NULL;
	struct gz_part_src g = {0};
	json_read_fn read = trace_source_read;
	void *rctx;
	if (sp->gz) {
		if (!gz_part_open(pt, &g)) {
			trace_source_close(g.src);
			free(g.buf);
			return; /* no split point: the part is never joined */
		}
		read = gz_part_read;
		rctx = &g;
	} else {
		src = trace_source_open_range(sp->path, pt->S, SPLIT_PREFIX, pt->err.msg, sizeof pt->err.msg);
		if (!src)
			return;
		rctx = src;
	}
	struct trace_parser *p = &pt->hp;
	struct json_reader *jr = &p->jr;
	/* no line counting: an error's line is found once, at the join */
	json_reader_init_stream(jr, read, rctx, 1u << 20, JSON_LENIENT_UTF8 | JSON_NO_LINES);
	/* byte x of the file is the reader's x - S + strlen(prefix) */
	const uint64_t shift = atomic_load(&pt->S) - PREFIX_LEN;
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
			if (sp->gz)
				keep_rest(pt, jr, &g);
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
	trace_source_close(g.src);
	free(g.buf);
}

static void *split_worker(void *arg)
{
	struct split_part *pt = arg;
	part_parse(pt);
	/* the share is closed by now, whichever way part_parse ended (a main
	 * parser must never wait for text that will not come) */
	if (pt->k == 1 && pt->sp->share)
		share_publish(pt->sp->share, atomic_load(&pt->sp->share->len), true);
	/* done, whichever way: a main parser at the join stops warming */
	atomic_store(&pt->done, true);
	warm_heap(pt->sp, &pt->sp->joining);
	return NULL;
}

/* gzip: the first byte of each part k >= 1 (from[k]), for n parts of a
 * text of about size bytes.  Every parser inflates in its own thread
 * (GZ_INFLATE_SHARE r of a parse), the helpers also everything before
 * their part first: part k ends at T = r from[k] + (1 + r) len[k], the
 * same T for all, which gives from[k] = size (1 - a^k) / (1 - a^n) with
 * a = 1 / (1 + r): shorter parts towards the end. */
static void split_gz_froms(uint64_t size, unsigned n, uint64_t *from)
{
	const double a = 1 / (1 + GZ_INFLATE_SHARE);
	double an = 1, ak = 1;
	for (unsigned k = 0; k < n; k++)
		an *= a;
	for (unsigned k = 1; k < n; k++) {
		ak *= a;
		from[k] = (uint64_t)((double)size * (1 - ak) / (1 - an));
	}
}

struct trace_split *trace_split_start(const char *path, const struct trace_load_opts *opts, uint64_t size,
				      unsigned threads, bool gz)
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
	if (n < 2)
		return NULL;
	struct trace_split *sp = xcalloc(1, sizeof *sp);
	sp->path = path;
	sp->opts = opts;
	sp->gz = gz;
	sp->n = 1;
	uint64_t end[SPLIT_MAX_PARTS]; /* the text each part's columns are sized for ends about here */
	if (gz) {
		/* the split points are found by the helpers (a byte from is
		 * known at once; S is published later) */
		uint64_t from[SPLIT_MAX_PARTS];
		split_gz_froms(size, (unsigned)n, from);
		if (n == 2 && (xalloc_huge_pages_on() || opts->gz_share_always)) {
			/* the main parser does not inflate its part: a longer one */
			uint64_t f1 = (uint64_t)((double)size * GZ_SHARE_FIRST);
			if (f1 > 0 && f1 < size && f1 + SHARE_ROOM <= SHARE_MAX && (sp->share = share_new(f1 + SHARE_ROOM)))
				from[1] = f1;
		}
		for (unsigned k = 1; k < n; k++) {
			struct split_part *pt = &sp->part[k];
			pt->from = from[k];
			pt->limit = k + 1 < n ? from[k + 1] : from[k] + SPLIT_SCAN_BYTES;
			atomic_init(&pt->S, S_PENDING);
			end[k] = k + 1 < n ? from[k + 1] : size;
		}
		sp->n = (unsigned)n;
		pthread_mutex_init(&sp->mu, NULL);
		pthread_cond_init(&sp->cv, NULL);
	} else {
		/* the split points, ascending and apart (a guess that falls on
		 * or before the previous one is dropped) */
		for (uint64_t k = 1; k < n; k++) {
			uint64_t S = trace_split_find(path, size / n * k);
			if (S && S > atomic_load(&sp->part[sp->n - 1].S)) {
				atomic_init(&sp->part[sp->n].S, S);
				sp->part[sp->n].from = S;
				sp->n++;
			}
		}
		if (sp->n < 2) {
			free(sp);
			return NULL;
		}
		for (unsigned k = 1; k < sp->n; k++)
			end[k] = k + 1 < sp->n ? sp->part[k + 1].from : size;
	}
	for (unsigned k = 1; k < sp->n; k++) {
		struct split_part *pt = &sp->part[k];
		pt->sp = sp;
		pt->k = k;
		atomic_init(&pt->abort, false);
		atomic_init(&pt->done, false);
		pt->h = trace_rank_new(path);
		trace_parser_init(&pt->hp, pt->h, opts); /* first: it says which optional columns the rank keeps */
		trace_columns_reserve(pt->h, end[k] - pt->from);
		pt->hp.mid_file = true;
		if (par_thread_start(&pt->th, split_worker, pt) != 0) {
			/* every part is needed (a chain may stop at any of
			 * them): no thread, no split; n stays as the running
			 * helpers read it, and a gzip part that will never be
			 * looked for has no split point, so that none of them
			 * waits for it */
			trace_parser_free(&pt->hp);
			trace_rank_free(pt->h);
			pt->h = NULL;
			if (gz) {
				pthread_mutex_lock(&sp->mu);
				for (unsigned m = k; m < sp->n; m++)
					atomic_store(&sp->part[m].S, S_NONE);
				pthread_cond_broadcast(&sp->cv);
				pthread_mutex_unlock(&sp->mu);
			}
			trace_split_free(sp);
			return NULL;
		}
		pt->started = true;
	}
	sp->cand = 1;
	atomic_init(&sp->joining, false);
	/* only with malloc tuned by xalloc_huge_pages (dyno analyze): blocks
	 * this size on the heap, and the heap kept when they are freed */
	size_t warm = (size_t)(size / 512) * 32;
	atomic_init(&sp->warm, !xalloc_huge_pages_on() ? 0 : warm < WARM_MAX ? warm : WARM_MAX);
	return sp;
}

static void part_stop(struct split_part *pt, bool abort)
{
	if (!pt->started)
		return;
	if (abort)
		atomic_store(&pt->abort, true);
	atomic_store(&pt->sp->joining, true); /* the caller waits: no more warming */
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
		free(sp->part[k].rest);
	}
	if (sp->gz) {
		pthread_mutex_destroy(&sp->mu);
		pthread_cond_destroy(&sp->cv);
	}
	if (!sp->share_taken)
		trace_share_free(sp->share);
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
	trace_col_resize(r, c, total);
	void **dst = trace_col(r, c), **src = trace_col(h, c);
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
	trace_col_release(h, c);
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
	/* here first: warm the heap while the helper parses on */
	if (sp->cand < sp->n && sp->part[sp->cand].started)
		warm_heap(sp, &sp->part[sp->cand].done);
	atomic_store(&sp->joining, true);
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
		sp->end_part = k;
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

struct trace_source *trace_split_rest(struct trace_split *sp, uint64_t end_off, uint64_t *adjust, char *errbuf,
				      size_t errlen)
{
	/* the new reader counts the prefix, which stands in front of the
	 * "]": its error offsets move back by the prefix to be the file's */
	*adjust = end_off - PREFIX_LEN;
	struct split_part *pt = &sp->part[sp->end_part];
	if (pt->rest) { /* gzip: kept by the helper that got there */
		struct trace_source *s = trace_source_mem_prefix(pt->rest, pt->rest_len, SPLIT_PREFIX);
		pt->rest = NULL;
		return s;
	}
	return trace_source_open_range(sp->path, end_off, SPLIT_PREFIX, errbuf, errlen);
}

bool trace_split_resume(struct json_reader *jr)
{
	/* {"_":[ ] : back inside the top-level object */
	return json_next(jr) == JSON_OBJ_BEGIN && json_next(jr) == JSON_KEY && json_next(jr) == JSON_ARR_BEGIN &&
	       json_next(jr) == JSON_ARR_END;
}
