/*
 * history.c - the history ring (see history.h).
 *
 * All keys of a tick share its timestamp, so there is one ring of tick
 * timestamps and, per key, a ring of doubles with the same slots (NaN where
 * the key was absent that tick): 8 bytes per point.  Keys live in an
 * open-addressing hash table so a tick with thousands of keys (per-CPU
 * metrics on big hosts) stays linear.
 */
#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/publish/sink.h"

struct series {
	char *name;
	double *v; /* cap slots */
	uint64_t last_tick; /* tick number of the newest point */
};

struct history {
	int64_t window_s, interval_s;
	size_t cap;       /* slots per ring */
	int64_t *ts_ms;   /* cap slots: tick time, ms */
	uint64_t ticks;   /* ticks recorded so far; the newest is ticks - 1 */
	struct series *s; /* hash table, nslots entries, name NULL = empty */
	size_t nslots, n, max_series;
	uint64_t dropped;
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
	h->ts_ms = xcalloc(h->cap, sizeof *h->ts_ms);
	h->max_series = max_series ? max_series : 1;
	h->nslots = 64;
	h->s = xcalloc(h->nslots, sizeof *h->s);
	return h;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name) {
			free(h->s[i].name);
			free(h->s[i].v);
		}
	free(h->s);
	free(h->ts_ms);
	free(h);
}

size_t history_series(const struct history *h) { return h->n; }
uint64_t history_dropped_series(const struct history *h) { return h->dropped; }

static struct series *slot_for(struct series *tab, size_t nslots, const char *name)
{
	size_t i = hash(name) & (nslots - 1);
	while (tab[i].name && strcmp(tab[i].name, name) != 0)
		i = (i + 1) & (nslots - 1);
	return &tab[i];
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

/* Drop keys whose newest point left the window (linear probing: rebuild). */
static void expire(struct history *h)
{
	uint64_t now = h->ticks - 1;
	bool any = false;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name && now - h->s[i].last_tick >= h->cap) {
			free(h->s[i].name);
			free(h->s[i].v);
			h->s[i].name = NULL;
			h->n--;
			any = true;
		}
	if (any)
		rehash(h, h->nslots);
}

void history_add(struct history *h, const struct frame *f)
{
	uint64_t tick = h->ticks++;
	size_t slot = (size_t)(tick % h->cap);
	h->ts_ms[slot] = f->wall_ns / 1000000;
	/* this slot is being reused: clear it in every series, then fill */
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name)
			h->s[i].v[slot] = NAN;
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
			s->name = xstrdup(name);
			s->v = xmalloc(h->cap * sizeof *s->v);
			for (size_t j = 0; j < h->cap; j++)
				s->v[j] = NAN;
			h->n++;
		}
		s->v[slot] = x;
		s->last_tick = tick;
		if (h->n * 2 > h->nslots)
			rehash(h, h->nslots * 2);
	}
	expire(h);
}

static bool name_wanted(const char *name, const struct json_value *names)
{
	if (!names)
		return true;
	for (uint32_t i = 0; i < names->len; i++) {
		const struct json_value *p = &names->u.items[i];
		size_t l = p->len;
		if (l && p->u.str[l - 1] == '*') {
			if (strncmp(name, p->u.str, l - 1) == 0)
				return true;
		} else if (strlen(name) == l && memcmp(name, p->u.str, l) == 0) {
			return true;
		}
	}
	return false;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void rpc_error(struct buf *resp, const char *msg)
{
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "error");
	jw_str(&w, msg);
	jw_obj_end(&w);
}

void history_rpc(struct history *h, const struct json_value *req, int64_t now_ms, struct buf *resp)
{
	if (!req || req->type != JV_OBJECT)
		return rpc_error(resp, "getMetrics: the request must be a JSON object");
	int64_t since_s = h->window_s;
	const struct json_value *v = json_get(req, "since_s");
	if (v && (!json_value_i64(v, &since_s) || since_s < 0))
		return rpc_error(resp, "getMetrics: since_s must be a non-negative integer");
	const struct json_value *names = json_get(req, "names");
	if (names) {
		if (names->type != JV_ARRAY)
			return rpc_error(resp, "getMetrics: names must be an array of strings");
		for (uint32_t i = 0; i < names->len; i++)
			if (names->u.items[i].type != JV_STRING)
				return rpc_error(resp, "getMetrics: names must be an array of strings");
	}
	int64_t from_ms = since_s > INT64_MAX / 1000 ? INT64_MIN : now_ms - since_s * 1000;

	/* the ticks in range, oldest first */
	size_t nt = h->ticks < h->cap ? (size_t)h->ticks : h->cap;
	uint64_t first = h->ticks - nt;

	char **sel = xmalloc((h->n ? h->n : 1) * sizeof *sel);
	size_t ns = 0;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->s[i].name && name_wanted(h->s[i].name, names))
			sel[ns++] = h->s[i].name;
	qsort(sel, ns, sizeof *sel, cmp_str); /* response keys in ascending byte order */

	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "interval_s");
	jw_i64(&w, h->interval_s);
	jw_key(&w, "metrics");
	jw_obj_begin(&w);
	for (size_t k = 0; k < ns; k++) {
		const struct series *s = slot_for(h->s, h->nslots, sel[k]);
		bool opened = false;
		for (uint64_t t = first; t < h->ticks; t++) {
			size_t slot = (size_t)(t % h->cap);
			if (isnan(s->v[slot]) || h->ts_ms[slot] < from_ms)
				continue;
			if (!opened) {
				jw_key(&w, s->name);
				jw_arr_begin(&w);
				opened = true;
			}
			jw_arr_begin(&w);
			jw_i64(&w, h->ts_ms[slot]);
			jw_f64(&w, s->v[slot]);
			jw_arr_end(&w);
		}
		if (opened)
			jw_arr_end(&w);
	}
	jw_obj_end(&w);
	jw_key(&w, "window_s");
	jw_i64(&w, h->window_s);
	jw_obj_end(&w);
	free(sel);
}

/* ---------------- the sink table's row (publish/list.h) ---------------- */

struct history_config {
	int64_t window_s, max_series, max_mb;
};

#define H(field, name, mv, help, lo, hi) MOD_OPT(struct history_config, field, name, ARG_INT, mv, help, lo, hi)
static const struct arg_opt history_opts[] = {
	H(window_s, "history_window_s", "SECONDS", "how far back getMetrics can look", 1, 30 * 86400),
	H(max_series, "history_max_series", "N", "most metric keys kept in history", 1, 10000000),
	H(max_mb, "history_max_mb", "MB",
	  "memory cap of the history ring; fewer keys are kept when window/interval needs more", 1, 65536),
	{0},
};
#undef H

static const struct history_config history_defaults = {3600, 20000, 16};

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
	/* the ring holds window / interval ticks of every collector that ticks */
	int64_t per_window = 0;
	for (size_t i = 0; i < env->nintervals; i++)
		per_window += c->window_s / env->intervals_s[i] + 1;
	if (per_window < 1)
		per_window = 1;
	/* 8 bytes per key per tick: cap the keys so the ring fits --history_max_mb */
	size_t max_series = (size_t)c->max_series;
	size_t by_mem = (size_t)((c->max_mb << 20) / (per_window * 8));
	if (by_mem < max_series) {
		max_series = by_mem ? by_mem : 1;
		log_info("history: %lld ticks per window fit %zu keys in %lld MB (--history_max_mb)",
			 (long long)per_window, max_series, (long long)c->max_mb);
	}
	if (s && s->window_s == c->window_s && s->ticks == per_window && s->max_series == max_series)
		return true;
	if (!s)
		*state = s = xcalloc(1, sizeof *s);
	history_free(s->h);
	/* getMetrics reports the main tick's period */
	s->h = history_new(c->window_s, env->nintervals ? env->intervals_s[0] : 0, (size_t)per_window, max_series);
	s->window_s = c->window_s;
	s->ticks = per_window;
	s->max_series = max_series;
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
	self_add(out, "dynolog_history_series", "Metric keys held in the history ring.", "gauge", NULL, NULL,
		 (double)history_series(((struct history_sink *)state)->h));
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
