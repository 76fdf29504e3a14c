/*
 * history.c - the compressed history (see history.h).
 *
 * A point is (tick number, value): all keys of a tick share its timestamp,
 * so the tick timestamps are kept once, in a tick log, and each key keeps
 * its tick numbers and values.  Both are chains of blocks coded by
 * src/core/tsz.c: tick numbers delta-of-delta (1 bit a point for a key that
 * appears every tick of its collector), values as decimal changes where a
 * block's values are short decimals (integers, W to the mW, ratios to
 * 1e-4: their significant bits) and XORed with the previous one otherwise
 * (1 bit when unchanged either way).  Blocks are allocated as points
 * arrive (64 bytes, grown in place by half up to 1 KiB, then a new one)
 * and freed when their newest point leaves the window, so memory follows
 * what is held, not the window: a live host's keys at 1 s average ~10 bits
 * a point (measured over 47 min, docs/daemon.md) instead of the ring's 64,
 * 8 busy GPUs' 15-20 (bench/history_bench.sh).  A key's newest point waits uncoded (a frame may set a key
 * twice: the later value wins, as in the ring this replaced).
 *
 * Reading decodes the tick log and the chosen keys (~10 ns a point, next
 * to ~100 ns to write the point's JSON); keys live in an open-addressing hash table so a tick with
 * thousands of keys (per-CPU metrics on big hosts) stays linear.  The
 * byte cap counts block bytes: past it the block with the oldest newest
 * point goes first, whatever key it belongs to.
 */
#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/tsz.h"
#include "daemon/publish/sink.h"

#define BLOCK_MIN 64   /* a new block, bytes of coded data */
#define BLOCK_MAX 1024 /* the tail grows by half up to this */

struct block {
	struct block *next;
	uint64_t first_tick, last_tick;
	uint32_t nbits, n, cap;
	int8_t scale; /* the values' coding (tsz.h): TSZ_RAW or a decimal scale */
	uint8_t data[];
};

/* A chain of blocks, oldest first; enc appends to the tail. */
struct chain {
	struct block *head, *tail;
	struct tsz_enc enc;
};

struct series {
	char *name;
	struct chain c;     /* coded points: (tick number, value) */
	uint64_t last_tick; /* the newest point, not yet coded */
	double last;
};

struct history {
	int64_t window_s, interval_s;
	size_t cap;       /* ticks the window holds */
	uint64_t ticks;   /* ticks recorded so far; the newest is ticks - 1 */
	struct chain log; /* tick timestamps: (unix ms, 0), one a tick */
	struct series *s; /* hash table, nslots entries, name NULL = empty */
	size_t nslots, n, max_series;
	uint64_t dropped, dropped_blocks;
	size_t bytes, max_bytes; /* block bytes held; cap (0: none) */
	size_t max_answer;       /* bound on one getMetrics answer (0: none) */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

struct history *history_new(int64_t window_s, int64_t interval_s, size_t cap_ticks, size_t max_series)
{
	struct history *h = xcalloc(1, sizeof *h);
	if (interval_s < 1)
		interval_s = 1;
	if (window_s < interval_s)
		window_s = interval_s;
	h->window_s = window_s;
	h->interval_s = interval_s;
	h->cap = cap_ticks ? cap_ticks : (size_t)(window_s / interval_s) + 1;
	if (h->cap > 1000000)
		h->cap = 1000000;
	h->max_series = max_series ? max_series : 1;
	h->nslots = 64;
	h->s = xcalloc(h->nslots, sizeof *h->s);
	return h;
}

void history_set_max_bytes(struct history *h, size_t max_bytes) { h->max_bytes = max_bytes; }
void history_set_max_answer(struct history *h, size_t bytes) { h->max_answer = bytes; }

static size_t block_bytes(const struct block *b) { return sizeof *b + b->cap; }

static void drop_head(struct history *h, struct chain *c)
{
	struct block *b = c->head;
	c->head = b->next;
	if (!c->head)
		c->tail = NULL;
	h->bytes -= block_bytes(b);
	free(b);
}

static void chain_free(struct history *h, struct chain *c)
{
	while (c->head)
		drop_head(h, c);
}

/* The tail block reallocated to cap bytes of data: larger while it fills
 * (the stream goes on in place), or cut to what it holds when it takes no
 * more points.  Chains are short (an hour of a key is a few KiB): the
 * block before it is found by walking. */
static void tail_resize(struct history *h, struct chain *c, uint32_t cap)
{
	struct block *b = c->tail, *prev = NULL;
	if (c->head != b)
		for (prev = c->head; prev->next != b; prev = prev->next)
			;
	h->bytes = h->bytes - b->cap + cap;
	b = xrealloc(b, sizeof *b + cap);
	b->cap = cap;
	if (prev)
		prev->next = b;
	else
		c->head = b;
	c->tail = b;
	tsz_enc_move(&c->enc, b->data, cap);
}

/* A new block's value coding: decimal where the value is one (tsz.h: an
 * integer, mW as W, a ratio to 1e-4 cost their significant bits, not a
 * 50-60 bit XOR of mantissas), at the chain's scale or a larger one a
 * value needs; raw once a chain meets a value no scale holds. */
static int block_scale(const struct chain *c, double v)
{
	int have = c->tail ? c->enc.scale : TSZ_RAW;
	if (c->tail && tsz_fits(have, v))
		return have;
	int k = tsz_scale(v);
	if (!c->tail || k == TSZ_RAW || k >= have)
		return k;
	return tsz_fits(have, v) ? have : k;
}

/* Code (t, v) as a point of the given tick at the end of c.  The tail
 * grows by half (64 bytes to BLOCK_MAX) as it fills, so what a key holds
 * beyond its points is at most a third of its tail; a full BLOCK_MAX tail
 * is followed by a new small one. */
static void chain_append(struct history *h, struct chain *c, uint64_t tick, int64_t t, double v)
{
	bool done = c->tail && tsz_put(&c->enc, t, v);
	if (!done && c->tail && c->tail->cap < BLOCK_MAX && tsz_fits(c->enc.scale, v)) {
		uint32_t cap = c->tail->cap + c->tail->cap / 2;
		tail_resize(h, c, cap < BLOCK_MAX ? cap : BLOCK_MAX);
		done = tsz_put(&c->enc, t, v); /* 32 bytes more hold any point (TSZ_MAX_POINT_BITS) */
	}
	if (!done) {
		if (c->tail && !tsz_fits(c->enc.scale, v) && c->tail->cap > (c->tail->nbits + 7) / 8 + 16)
			tail_resize(h, c, (c->tail->nbits + 7) / 8); /* a value its scale cannot hold: sealed */
		int scale = block_scale(c, v);
		struct block *b = xmalloc(sizeof *b + BLOCK_MIN);
		b->next = NULL;
		b->first_tick = tick;
		b->cap = BLOCK_MIN;
		b->scale = (int8_t)scale;
		if (c->tail)
			c->tail->next = b;
		else
			c->head = b;
		c->tail = b;
		h->bytes += block_bytes(b);
		tsz_enc_init(&c->enc, b->data, BLOCK_MIN, scale);
		tsz_put(&c->enc, t, v); /* an empty block holds any one point its scale holds */
	}
	c->tail->nbits = (uint32_t)c->enc.nbits;
	c->tail->n = c->enc.n;
	c->tail->last_tick = tick;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name) {
			free(h->s[i].name);
			chain_free(h, &h->s[i].c);
		}
	chain_free(h, &h->log);
	free(h->s);
	free(h);
}

size_t history_series(const struct history *h) { return h->n; }
uint64_t history_dropped_series(const struct history *h) { return h->dropped; }
size_t history_bytes(const struct history *h) { return h->bytes; }
uint64_t history_dropped_blocks(const struct history *h) { return h->dropped_blocks; }

static struct series *slot_for(struct series *tab, size_t nslots, const char *name)
{
	size_t i = hash(name) & (nslots - 1);
	while (tab[i].name && strcmp(tab[i].name, name) != 0)
		i = (i + 1) & (nslots - 1);
	return &tab[i];
}

size_t history_key_bytes(const struct history *h, const char *name)
{
	const struct series *s = slot_for(h->s, h->nslots, name);
	size_t n = 0;
	for (const struct block *b = s->name ? s->c.head : NULL; b; b = b->next)
		n += block_bytes(b);
	return n;
}

static void rehash(struct history *h, size_t nslots)
{
	struct series *t = xcalloc(nslots, sizeof *t);
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name)
			*slot_for(t, nslots, h->s[i].name) = h->s[i];
	free(h->s);
	h->s = t;
	h->nslots = nslots;
}

/* Free the blocks whose newest point left the window, and keys whose
 * newest point did (linear probing: rebuild). */
static void expire(struct history *h)
{
	uint64_t now = h->ticks - 1;
	bool any = false;
	for (size_t i = 0; i < h->nslots; i++) {
		struct series *s = &h->s[i];
		if (!s->name)
			continue;
		if (now - s->last_tick >= h->cap) {
			free(s->name);
			chain_free(h, &s->c);
			s->name = NULL;
			h->n--;
			any = true;
			continue;
		}
		while (s->c.head && now - s->c.head->last_tick >= h->cap)
			drop_head(h, &s->c);
	}
	while (h->log.head && now - h->log.head->last_tick >= h->cap)
		drop_head(h, &h->log);
	if (any)
		rehash(h, h->nslots);
}

/* Over the byte cap: free the block whose newest point is oldest, of any
 * key or of the tick log (never the log's newest block: it dates the
 * points still uncoded). */
static void enforce_cap(struct history *h)
{
	while (h->max_bytes && h->bytes > h->max_bytes) {
		struct chain *oldest = NULL;
		if (h->log.head && h->log.head != h->log.tail)
			oldest = &h->log;
		for (size_t i = 0; i < h->nslots; i++) {
			struct chain *c = &h->s[i].c;
			if (h->s[i].name && c->head && (!oldest || c->head->last_tick < oldest->head->last_tick))
				oldest = c;
		}
		if (!oldest)
			return;
		LOG_ONCE(LOG_LEVEL_WARN,
			 "history: %zu bytes held reach --history_max_mb; the oldest points are dropped first",
			 h->bytes);
		drop_head(h, oldest);
		h->dropped_blocks++;
	}
}

void history_add(struct history *h, const struct frame *f)
{
	uint64_t tick = h->ticks++;
	chain_append(h, &h->log, tick, f->wall_ns / 1000000, 0.0);
	for (size_t k = 0; k < f->n; k++) {
		const struct frame_value *fv = &f->vals[k];
		double x;
		switch (fv->type) {
		case FV_INT: x = (double)fv->v.i; break;
		case FV_UINT: x = (double)fv->v.u; break;
		case FV_FLOAT: x = fv->v.f; break;
		default: continue; /* strings are not series */
		}
		if (!isfinite(x))
			continue;
		const char *name = frame_key(f, fv);
		if (frame_key_export_only(name))
			continue; /* Prometheus' absolute counters: getMetrics keeps upstream's keys */
		struct series *s = slot_for(h->s, h->nslots, name);
		if (!s->name) {
			if (h->n >= h->max_series) {
				h->dropped++;
				LOG_ONCE(LOG_LEVEL_WARN, "history: more than %zu metric keys; extra keys are not kept",
					 h->max_series);
				continue;
			}
			memset(s, 0, sizeof *s);
			s->name = xstrdup(name);
			h->n++;
		} else if (s->last_tick != tick) {
			chain_append(h, &s->c, s->last_tick, (int64_t)s->last_tick, s->last);
		}
		s->last = x;
		s->last_tick = tick;
		/* grown at 3/4 full, not 1/2: at --history_max_series 20000 the
		 * table stays at 32,768 slots of 112 bytes (3.5 MiB; 5.25 MiB
		 * while the last growth copies) instead of 65,536 (7 MiB; 10.5
		 * MiB), docs/daemon.md "Memory at the caps" */
		if (h->n * 4 > h->nslots * 3)
			rehash(h, h->nslots * 2);
	}
	expire(h);
	enforce_cap(h);
}

/* The request's "names" compiled once (issue #35 item 3): matching every
 * key against every name cost keys x names (2,095 keys x 208k names: 1.9 s
 * a request, the loop's ticks 2 s late).  Exact names sorted, and the
 * prefixes ("x*") sorted with those another prefix covers dropped, so a
 * key needs two binary searches: the prefix set is then prefix-free, and
 * a key starts with one of them exactly when it starts with the greatest
 * one not above it.  The RPC server caps a request's values at 16,384
 * (RPC_MAX_VALUES), so compiling is bounded too. */
struct name_str {
	const char *s;
	size_t n;
};

struct names {
	bool all; /* no "names": every key */
	struct name_str *exact, *prefix;
	size_t nexact, nprefix;
};

static int name_cmp(const void *a, const void *b)
{
	const struct name_str *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

static void names_compile(const struct json_value *v, struct names *m)
{
	memset(m, 0, sizeof *m);
	m->all = !v;
	if (!v)
		return;
	m->exact = xmalloc((v->len ? v->len : 1) * sizeof *m->exact);
	m->prefix = xmalloc((v->len ? v->len : 1) * sizeof *m->prefix);
	for (uint32_t i = 0; i < v->len; i++) {
		const struct json_value *p = &v->u.items[i];
		if (p->len && p->u.str[p->len - 1] == '*')
			m->prefix[m->nprefix++] = (struct name_str){p->u.str, p->len - 1};
		else
			m->exact[m->nexact++] = (struct name_str){p->u.str, p->len};
	}
	qsort(m->exact, m->nexact, sizeof *m->exact, name_cmp);
	qsort(m->prefix, m->nprefix, sizeof *m->prefix, name_cmp);
	/* sorted, a prefix comes right before the names it covers: keep only
	 * those the last one kept does not cover */
	size_t k = 0;
	for (size_t i = 0; i < m->nprefix; i++)
		if (!k || m->prefix[i].n < m->prefix[k - 1].n ||
		    memcmp(m->prefix[i].s, m->prefix[k - 1].s, m->prefix[k - 1].n) != 0)
			m->prefix[k++] = m->prefix[i];
	m->nprefix = k;
}

static void names_free(struct names *m)
{
	free(m->exact);
	free(m->prefix);
}

static bool name_wanted(const char *name, const struct names *m)
{
	if (m->all)
		return true;
	struct name_str key = {name, strlen(name)};
	if (m->nexact && bsearch(&key, m->exact, m->nexact, sizeof *m->exact, name_cmp))
		return true;
	size_t lo = 0, hi = m->nprefix; /* the first prefix above the key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (name_cmp(&m->prefix[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && m->prefix[lo - 1].n <= key.n && memcmp(m->prefix[lo - 1].s, name, m->prefix[lo - 1].n) == 0;
}

/* The selected keys as a binary min-heap by name: an answer takes them in
 * ascending byte order, and a page stops after a few hundred keys of tens
 * of thousands, so it pays O(n) to build and O(log n) a key taken, not a
 * whole sort per page. */
static bool name_less(const struct series *a, const struct series *b) { return strcmp(a->name, b->name) < 0; }

static void heap_down(struct series **a, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && name_less(a[l], a[m]))
			m = l;
		if (l + 1 < n && name_less(a[l + 1], a[m]))
			m = l + 1;
		if (m == i)
			return;
		struct series *t = a[i];
		a[i] = a[m];
		a[m] = t;
		i = m;
	}
}

static struct series *heap_pop(struct series **a, size_t *n)
{
	struct series *top = a[0];
	a[0] = a[--*n];
	heap_down(a, *n, 0);
	return top;
}

static void rpc_error(struct buf *resp, const char *msg)
{
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "error");
	jw_str(&w, msg);
	jw_obj_end(&w);
}

/* Where a page starts: the series `key` from tick number `tick` on, then
 * every later series (byte order); the points of ticks before until_tick
 * stamped at or after from_ms.  The first page is {NULL, 0, h->ticks,
 * now - since_s}; a truncated answer hands back the rest as "next". */
struct cursor {
	const char *key;
	uint64_t tick, until_tick;
	int64_t from_ms;
};

/* The request's "next": false with resp holding the error. */
static bool parse_cursor(const struct history *h, const struct json_value *v, const struct names *names,
			 struct cursor *c, struct buf *resp)
{
	const char *key;
	size_t klen;
	int64_t tick, until;
	if (v->type != JV_OBJECT || !json_get_str(v, "key", &key, &klen) || !json_get_i64(v, "tick", &tick) ||
	    !json_get_i64(v, "until_tick", &until) || !json_get_i64(v, "from_ms", &c->from_ms)) {
		rpc_error(resp, "getMetrics: next must be the object a truncated answer gave "
				"({\"from_ms\":int,\"key\":string,\"tick\":int,\"until_tick\":int})");
		return false;
	}
	if (tick < 0 || until < 0 || tick > until) {
		rpc_error(resp, "getMetrics: next.tick and next.until_tick must be integers with 0 <= tick <= until_tick");
		return false;
	}
	if ((uint64_t)until > h->ticks) {
		rpc_error(resp, "getMetrics: next is from before the history restarted; ask again without next");
		return false;
	}
	const struct series *s = strlen(key) == klen ? slot_for(h->s, h->nslots, key) : NULL;
	if (!s || !s->name || !name_wanted(key, names)) {
		rpc_error(resp, "getMetrics: next.key is not a series held (it left the window, or names does not "
				"select it); ask again without next");
		return false;
	}
	c->key = s->name;
	c->tick = (uint64_t)tick;
	c->until_tick = (uint64_t)until;
	return true;
}

struct out {
	struct jw *w;
	const struct series *s;
	bool opened;
	size_t start, max, points; /* where the answer began in the buffer; its bound (0: none); points written */
	size_t key_max; /* JSON bytes of the longest selected key at most (6 a byte escaped): "next"
			 * may name the key after the last one written */
};

/* JSON bytes of one point at most: ,[-9223372036854775808,-2.2250738585072014e-308];
 * and of an answer's end past the key in "next": ]},"next":{"from_ms":-9223372036854775808,
 * "key":KEY,"tick":18446744073709551615,"until_tick":18446744073709551615},"truncated":true,
 * "window_s":9223372036854775807} */
#define POINT_MAX 56
#define END_MAX 200

/* Room for one more point (and its key, in a new series), and then for the
 * answer's end with any selected key as "next" (closing brackets, the
 * cursor, "truncated", window_s).  The first point of a page always fits,
 * so every page moves on. */
static bool fits(const struct out *o)
{
	if (!o->max || !o->points)
		return true;
	size_t need = POINT_MAX + (o->opened ? 0 : o->key_max) + o->key_max + END_MAX;
	return o->w->b->len - o->start + need <= o->max;
}

static void emit(struct out *o, int64_t ms, double v)
{
	if (!o->opened) {
		jw_key(o->w, o->s->name);
		jw_arr_begin(o->w);
		o->opened = true;
	}
	jw_arr_begin(o->w);
	jw_i64(o->w, ms);
	jw_f64(o->w, v);
	jw_arr_end(o->w);
	o->points++;
}

/* Write the points of o->s from tick `from` (ticks before until, timestamps
 * in ts from tick `first`, at or after from_ms); false when the bound
 * stopped it, with *stop the first tick not written. */
static bool emit_series(struct out *o, uint64_t from, uint64_t first, uint64_t until, const int64_t *ts,
			int64_t from_ms, uint64_t *stop)
{
	struct tsz_dec d;
	int64_t t;
	double x;
	if (from < first)
		from = first;
	for (const struct block *b = o->s->c.head; b; b = b->next) {
		if (b->last_tick < from)
			continue;
		tsz_dec_init(&d, b->data, b->nbits, b->n, b->scale);
		while (tsz_next(&d, &t, &x) == 1) {
			uint64_t tick = (uint64_t)t;
			if (tick < from || tick >= until || ts[tick - first] < from_ms)
				continue;
			if (!fits(o)) {
				*stop = tick;
				return false;
			}
			emit(o, ts[tick - first], x);
		}
	}
	uint64_t lt = o->s->last_tick;
	if (lt >= from && lt < until && ts[lt - first] >= from_ms) {
		if (!fits(o)) {
			*stop = lt;
			return false;
		}
		emit(o, ts[lt - first], o->s->last);
	}
	return true;
}

void history_rpc(struct history *h, const struct json_value *req, int64_t now_ms, struct buf *resp)
{
	if (!req || req->type != JV_OBJECT)
		return rpc_error(resp, "getMetrics: the request must be a JSON object");
	int64_t since_s = h->window_s;
	const struct json_value *v = json_get(req, "since_s");
	if (v && (!json_value_i64(v, &since_s) || since_s < 0))
		return rpc_error(resp, "getMetrics: since_s must be a non-negative integer");
	const struct json_value *namesv = json_get(req, "names");
	if (namesv) {
		if (namesv->type != JV_ARRAY)
			return rpc_error(resp, "getMetrics: names must be an array of strings");
		for (uint32_t i = 0; i < namesv->len; i++)
			if (namesv->u.items[i].type != JV_STRING)
				return rpc_error(resp, "getMetrics: names must be an array of strings");
	}
	struct names names;
	names_compile(namesv, &names);
	struct cursor cur = {NULL, 0, h->ticks, since_s > INT64_MAX / 1000 ? INT64_MIN : now_ms - since_s * 1000};
	v = json_get(req, "next");
	if (v && !parse_cursor(h, v, &names, &cur, resp)) {
		names_free(&names);
		return;
	}

	/* the ticks in the window whose timestamps are held (the cap may have
	 * dropped the oldest), oldest first, and their timestamps */
	size_t nt = h->ticks < h->cap ? (size_t)h->ticks : h->cap;
	uint64_t first = h->ticks - nt;
	if (h->log.head && h->log.head->first_tick > first)
		first = h->log.head->first_tick;
	size_t nts = (size_t)(h->ticks - first);
	int64_t *ts = xmalloc((nts ? nts : 1) * sizeof *ts);
	struct tsz_dec d;
	int64_t t;
	double x;
	for (const struct block *b = h->log.head; b; b = b->next) {
		if (b->last_tick < first)
			continue;
		tsz_dec_init(&d, b->data, b->nbits, b->n, b->scale);
		for (uint64_t tick = b->first_tick; tsz_next(&d, &t, &x) == 1; tick++)
			if (tick >= first)
				ts[tick - first] = t;
	}

	struct series **sel = xmalloc((h->n ? h->n : 1) * sizeof *sel);
	size_t ns = 0, longest = 0;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name && name_wanted(h->s[i].name, &names) && (!cur.key || strcmp(h->s[i].name, cur.key) >= 0)) {
			sel[ns++] = &h->s[i];
			size_t l = strlen(h->s[i].name);
			longest = l > longest ? l : longest;
		}
	for (size_t i = ns / 2; i-- > 0;)
		heap_down(sel, ns, i); /* response keys in ascending byte order */

	struct jw w;
	size_t start = resp->len;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "interval_s");
	jw_i64(&w, h->interval_s);
	jw_key(&w, "metrics");
	jw_obj_begin(&w);
	struct out o = {.w = &w, .start = start, .max = h->max_answer, .key_max = 6 * longest + 4};
	const char *stop_key = NULL;
	uint64_t stop_tick = 0;
	while (ns && !stop_key) {
		o.s = heap_pop(sel, &ns);
		o.opened = false;
		uint64_t from = cur.key && strcmp(o.s->name, cur.key) == 0 ? cur.tick : 0;
		if (!emit_series(&o, from, first, cur.until_tick, ts, cur.from_ms, &stop_tick))
			stop_key = o.s->name;
		if (o.opened)
			jw_arr_end(&w);
	}
	jw_obj_end(&w);
	if (stop_key) {
		jw_key(&w, "next");
		jw_obj_begin(&w);
		jw_key(&w, "from_ms");
		jw_i64(&w, cur.from_ms);
		jw_key(&w, "key");
		jw_str(&w, stop_key);
		jw_key(&w, "tick");
		jw_u64(&w, stop_tick);
		jw_key(&w, "until_tick");
		jw_u64(&w, cur.until_tick);
		jw_obj_end(&w);
		jw_key(&w, "truncated");
		jw_bool(&w, true);
	}
	jw_key(&w, "window_s");
	jw_i64(&w, h->window_s);
	jw_obj_end(&w);
	free(sel);
	free(ts);
	names_free(&names);
}

/* ---------------- the sink table's row (publish/list.h) ---------------- */

struct history_config {
	int64_t window_s, max_series, max_mb, max_answer;
};

#define H(field, name, mv, help, lo, hi) MOD_OPT(struct history_config, field, name, ARG_INT, mv, help, lo, hi)
static const struct arg_opt history_opts[] = {
	H(window_s, "history_window_s", "SECONDS", "how far back getMetrics can look", 1, 30 * 86400),
	H(max_series, "history_max_series", "N", "most metric keys kept in history", 1, 10000000),
	H(max_mb, "history_max_mb", "MB",
	  "memory cap of the history's compressed blocks; past it the oldest points go first", 1, 65536),
	H(max_answer, "history_max_answer_bytes", "BYTES",
	  "largest getMetrics answer; a longer one comes in pages (\"truncated\", \"next\")", 4096, 1 << 30),
	{0},
};
#undef H

/* 1 MiB a getMetrics answer: half of --rpc_max_queued_bytes' default, so a
 * client that reads is never dropped for its answer's size (an hour of a
 * host's keys at 1 s is ~7 MB of JSON), and the daemon builds at most that
 * much at once. */
/* 8 MB of blocks: an hour at 1 s of a host and 8 busy GPUs takes ~2.3
 * MB; 16 took the caps' sum past the unit's MemoryMax=64M once the key
 * table and a request's tree were counted (docs/daemon.md). */
static const struct history_config history_defaults = {3600, 20000, 8, 1 << 20};

struct history_sink {
	struct history *h;
	int64_t window_s, ticks;
	size_t max_series;
};

static bool history_apply(void **state, const void *old, const void *cfg, const struct sink_env *env,
			  struct buf *err)
{
	(void)old;
	(void)err;
	const struct history_config *c = cfg;
	struct history_sink *s = *state;
	/* the window holds window / interval ticks of every collector that ticks */
	int64_t per_window = 0;
	for (size_t i = 0; i < env->nintervals; i++)
		per_window += c->window_s / env->intervals_s[i] + 1;
	if (per_window < 1)
		per_window = 1;
	size_t max_bytes = (size_t)c->max_mb << 20;
	if (!s || s->window_s != c->window_s || s->ticks != per_window || s->max_series != (size_t)c->max_series) {
		if (!s)
			*state = s = xcalloc(1, sizeof *s);
		history_free(s->h);
		/* getMetrics reports the main tick's period */
		s->h = history_new(c->window_s, env->nintervals ? env->intervals_s[0] : 0, (size_t)per_window,
				   (size_t)c->max_series);
		s->window_s = c->window_s;
		s->ticks = per_window;
		s->max_series = (size_t)c->max_series;
		log_info("history: %lld ticks per window; compressed blocks of all keys in %lld MB (--history_max_mb)",
			 (long long)per_window, (long long)c->max_mb);
	}
	/* a new cap applies to what is held (oldest blocks go first) */
	history_set_max_bytes(s->h, max_bytes);
	history_set_max_answer(s->h, (size_t)c->max_answer);
	return true;
}

static void history_publish(void *state, size_t src, struct frame *f, const struct self_metrics *self)
{
	(void)src;
	(void)self;
	history_add(((struct history_sink *)state)->h, f);
}

static void history_stats(void *state, struct self_metrics *out)
{
	const struct history *h = ((struct history_sink *)state)->h;
	self_add(out, "dynolog_history_series", "Metric keys held in the history.", "gauge", NULL, NULL,
		 (double)history_series(h));
	self_add(out, "dynolog_history_bytes", "Bytes of compressed history blocks held.", "gauge", NULL, NULL,
		 (double)history_bytes(h));
}

static void history_close(void *state)
{
	struct history_sink *s = state;
	if (s)
		history_free(s->h);
	free(s);
}

static void history_getmetrics(void *state, const struct json_value *req, struct buf *resp)
{
	history_rpc(((struct history_sink *)state)->h, req, clock_wall_ns() / 1000000, resp);
}

static void history_describe(const void *cfg, struct buf *out)
{
	buf_printf(out, ", history %llds", (long long)((const struct history_config *)cfg)->window_s);
}

const struct sink sink_history = {
	.name = "history",
	.config = {history_opts, sizeof(struct history_config), &history_defaults},
	.apply = history_apply,
	.publish = history_publish,
	.stats = history_stats,
	.close = history_close,
	.rpc_name = "getMetrics",
	.rpc = history_getmetrics,
	.describe = history_describe,
};
