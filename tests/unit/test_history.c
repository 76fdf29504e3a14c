/*
 * test_history.c - the history (compressed blocks) and the getMetrics RPC body: window,
 * since_s, name globs, absent keys, bounded series, bad requests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/json.h"
#include "daemon/publish/history.h"
#include "test.h"

static void add(struct history *h, int64_t t_ms, const char *k1, double v1, const char *k2, double v2)
{
	struct frame f;
	frame_init(&f);
	frame_reset(&f, t_ms * 1000000);
	if (k1)
		frame_float(&f, k1, v1);
	if (k2)
		frame_uint(&f, k2, (uint64_t)v2);
	frame_str(&f, "proc_job_id.1", "77"); /* strings are not series */
	history_add(h, &f);
	frame_free(&f);
}

static char *rpc(struct history *h, const char *req, int64_t now_ms)
{
	struct json_doc d;
	struct json_error e;
	if (!json_parse(req, strlen(req), &d, &e)) {
		test_fail(__FILE__, __LINE__, "bad test request");
		test_abort();
	}
	struct buf out = BUF_INIT;
	history_rpc(h, d.root, now_ms, &out);
	json_doc_free(&d);
	return buf_detach(&out, NULL);
}

/* names: exact names and prefixes, a prefix covering another (the
 * compiled matcher keeps the shorter), "*" for every key, an empty name */
TEST(history_names_prefixes_nested_and_exact)
{
	struct history *h = history_new(30, 10, 0, 100);
	const char *keys[] = {"a", "abc", "ac", "b", "cpu_u", "cpu_uu", "x", "xa"};
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 1000000 * 1000000ll);
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		frame_uint(&f, keys[i], i + 1);
	history_add(h, &f);
	frame_free(&f);
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"ab*\",\"a*\",\"cpu_u\",\"zz*\",\"\",\"xa\",\"abc*\"]}",
		      1000000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"a\":[[1000000,1]],\"abc\":[[1000000,2]],\"ac\":[[1000000,3]],"
		     "\"cpu_u\":[[1000000,5]],\"xa\":[[1000000,8]]},\"window_s\":30}");
	free(r);
	r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"c*\",\"*\"]}", 1000000);
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		char q[16];
		snprintf(q, sizeof q, "\"%s\":", keys[i]);
		CHECK(strstr(r, q) != NULL);
	}
	free(r);
	r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[]}", 1000000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{},\"window_s\":30}");
	free(r);
	history_free(h);
}

TEST(history_window_and_query)
{
	/* window 30 s at 10 s: 4 slots */
	struct history *h = history_new(30, 10, 0, 100);
	for (int i = 0; i < 6; i++)
		add(h, 1000000 + i * 10000, "cpu_util", i * 1.5, i % 2 ? "rx_bytes.eth0" : NULL, i * 100);
	char *r = rpc(h, "{\"fn\":\"getMetrics\"}", 1050000);
	/* ticks 2..5 are kept (4 slots) */
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_util\":[[1020000,3],[1030000,4.5],[1040000,6],[1050000,7.5]],"
		     "\"rx_bytes.eth0\":[[1030000,300],[1050000,500]]},\"window_s\":30}");
	free(r);
	r = rpc(h, "{\"fn\":\"getMetrics\",\"since_s\":15,\"names\":[\"cpu_*\",\"nope\"]}", 1050000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_util\":[[1040000,6],[1050000,7.5]]},\"window_s\":30}");
	free(r);
	r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"rx_bytes.eth0\"]}", 1050000);
	CHECK(strstr(r, "\"rx_bytes.eth0\":[[1030000,300]") != NULL);
	CHECK(strstr(r, "cpu_util") == NULL);
	CHECK(strstr(r, "proc_job_id") == NULL);
	free(r);
	CHECK_INT(history_series(h), 2);
	history_free(h);
}

TEST(history_vanished_series_expire)
{
	struct history *h = history_new(20, 10, 0, 100);
	add(h, 0, "gone.eth9", 1, NULL, 0);
	for (int i = 1; i < 5; i++)
		add(h, i * 10000, "cpu_util", 1, NULL, 0);
	CHECK_INT(history_series(h), 1); /* gone.eth9 aged out of all 3 slots and was freed */
	history_free(h);
}

TEST(history_series_bound)
{
	struct history *h = history_new(60, 10, 0, 3);
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 0);
	char k[32];
	for (int i = 0; i < 10; i++) {
		snprintf(k, sizeof k, "m%d", i);
		frame_int(&f, k, i);
	}
	history_add(h, &f);
	CHECK_INT(history_series(h), 3);
	CHECK_INT(history_dropped_series(h), 7);
	frame_free(&f);
	history_free(h);
}

TEST(history_many_series_rehash)
{
	struct history *h = history_new(60, 10, 0, 100000);
	struct frame f;
	frame_init(&f);
	for (int t = 0; t < 3; t++) {
		frame_reset(&f, (int64_t)t * 10 * 1000000000ll);
		char k[32];
		for (int i = 0; i < 5000; i++) {
			snprintf(k, sizeof k, "cpu_u_ms.cpu%d", i);
			frame_int(&f, k, i + t);
		}
		history_add(h, &f);
	}
	CHECK_INT(history_series(h), 5000);
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"cpu_u_ms.cpu4999\"]}", 20000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_u_ms.cpu4999\":[[0,4999],[10000,5000],[20000,5001]]},"
		     "\"window_s\":60}");
	free(r);
	frame_free(&f);
	history_free(h);
}

TEST(history_rpc_errors)
{
	struct history *h = history_new(60, 10, 0, 10);
	const char *bad[] = {"{\"fn\":\"getMetrics\",\"since_s\":\"x\"}", "{\"fn\":\"getMetrics\",\"since_s\":-1}",
			     "{\"fn\":\"getMetrics\",\"since_s\":1.5}", "{\"fn\":\"getMetrics\",\"names\":\"cpu\"}",
			     "{\"fn\":\"getMetrics\",\"names\":[1]}", "[1]"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *r = rpc(h, bad[i], 0);
		CHECK(strncmp(r, "{\"error\":\"getMetrics: ", 21) == 0);
		free(r);
	}
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"since_s\":99999999999999}", 0);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{},\"window_s\":60}");
	free(r);
	history_free(h);
}

/* ---- the compressed store: answers as a plain table gives them, blocks
 * that grow and are freed, the byte cap, keys that come late ---- */

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

enum { REF_T = 600, REF_K = 50 };
static double ref_v[REF_T][REF_K]; /* NAN: absent that tick */
static int64_t ref_ms[REF_T];

/* The getMetrics body the plain (tick x key) table gives: every point of
 * the last cap ticks at or after now - since. */
static char *expected(int ticks, int cap, int64_t now_ms, int64_t since_s, int window_s, int interval_s)
{
	struct buf b = BUF_INIT;
	struct jw w;
	jw_init(&w, &b);
	jw_obj_begin(&w);
	jw_key(&w, "interval_s");
	jw_i64(&w, interval_s);
	jw_key(&w, "metrics");
	jw_obj_begin(&w);
	int first = ticks > cap ? ticks - cap : 0;
	for (int k = 0; k < REF_K; k++) {
		bool opened = false;
		for (int t = first; t < ticks; t++) {
			if (isnan(ref_v[t][k]) || ref_ms[t] < now_ms - since_s * 1000)
				continue;
			if (!opened) {
				char name[32];
				snprintf(name, sizeof name, "k%02d", k);
				jw_key(&w, name);
				jw_arr_begin(&w);
				opened = true;
			}
			jw_arr_begin(&w);
			jw_i64(&w, ref_ms[t]);
			jw_f64(&w, ref_v[t][k]);
			jw_arr_end(&w);
		}
		if (opened)
			jw_arr_end(&w);
	}
	jw_obj_end(&w);
	jw_key(&w, "window_s");
	jw_i64(&w, window_s);
	jw_obj_end(&w);
	return buf_detach(&b, NULL);
}

static double ref_value(int t, int k)
{
	double x;
	switch (k % 5) {
	case 0: return 42.5;                           /* constant */
	case 1: return (double)((uint64_t)t * 65536 + 7); /* counter */
	case 2: return (double)(rnd() % 101);           /* a percentage */
	case 3: return -0.0;
	default:
		do { /* any finite double */
			uint64_t bits = rnd();
			memcpy(&x, &bits, sizeof x);
		} while (!isfinite(x));
		return x;
	}
}

TEST(history_compressed_answers_as_a_table)
{
	/* window 100 s at 1 s: 101 ticks; keys present at random, k20..29 come
	 * late (tick 200), k30..39 stop at tick 300, k40..49 are set twice a
	 * frame (the later wins); timestamps jitter and jump */
	const int window = 100, cap = 101;
	struct history *h = history_new(window, 1, 0, 1000);
	struct frame f;
	frame_init(&f);
	int64_t ms = 1764000000000;
	int checked = 0;
	for (int t = 0; t < REF_T; t++) {
		ms += 1000 + (int64_t)(rnd() % 40) - 20 + (t % 97 == 0 ? 3600000 : 0);
		ref_ms[t] = ms;
		frame_reset(&f, ms * 1000000);
		for (int k = 0; k < REF_K; k++) {
			ref_v[t][k] = NAN;
			if ((k >= 20 && k < 30 && t < 200) || (k >= 30 && k < 40 && t >= 300) || rnd() % 4 == 0)
				continue;
			char name[32];
			snprintf(name, sizeof name, "k%02d", k);
			if (k >= 40)
				frame_float(&f, name, 1e300); /* overwritten below */
			ref_v[t][k] = ref_value(t, k);
			frame_float(&f, name, ref_v[t][k]);
		}
		history_add(h, &f);
		if (t == 0 || t == 50 || t == 150 || t == 250 || t == 350 || t == 420 || t == REF_T - 1) {
			const int64_t since[] = {window, 30, 0};
			for (size_t i = 0; i < 3; i++) {
				char req[96];
				snprintf(req, sizeof req, "{\"fn\":\"getMetrics\",\"since_s\":%lld}", (long long)since[i]);
				char *got = rpc(h, req, ms);
				char *want = expected(t + 1, cap, ms, since[i], window, 1);
				CHECK_STR(got, want);
				checked++;
				free(got);
				free(want);
			}
		}
	}
	CHECK_INT(checked, 21);
	CHECK_INT(history_series(h), 40); /* k30..39 left the window */
	frame_free(&f);
	history_free(h);
}

static void add_key(struct history *h, int64_t t_ms, const char *key, double v)
{
	struct frame f;
	frame_init(&f);
	frame_reset(&f, t_ms * 1000000);
	frame_float(&f, key, v);
	history_add(h, &f);
	frame_free(&f);
}

TEST(history_blocks_grow_and_are_freed)
{
	/* an hour at 1 s: the ring this replaced took 2 x 3601 x 8 = 57.6 kB
	 * for one key; a steady key takes ~2 bits a tick, blocks as it goes */
	struct history *h = history_new(3600, 1, 0, 100);
	CHECK_INT(history_bytes(h), 0);
	size_t prev = 0;
	int grew = 0;
	for (int t = 0; t < 3601; t++) {
		add_key(h, 1764000000000 + t * 1000ll, "cpu_util", 12.5);
		CHECK(history_bytes(h) >= prev);
		grew += history_bytes(h) > prev;
		prev = history_bytes(h);
	}
	CHECK(grew >= 4);         /* it grew block by block */
	CHECK(prev < 2 * 3601 * 8 / 8); /* < 1/8 of the ring (key + timestamps) */
	/* random values in a short window: blocks are freed as they age out */
	struct history *s = history_new(60, 1, 0, 100);
	size_t most = 0;
	for (int t = 0; t < 5000; t++) {
		double x = (double)rnd() / 3.0;
		add_key(s, t * 1000ll, "noise", x);
		if (t > 100 && history_bytes(s) > most)
			most = history_bytes(s);
	}
	/* 61 points of ~9 bytes: two 1 KiB blocks at most, and the tick log's
	 * two; not growing with the 5000 ticks */
	CHECK(most > 0 && most < 5 * 1024);
	/* a key that stops: its blocks go with its last point */
	size_t with = history_key_bytes(h, "cpu_util");
	CHECK(with > 0 && with < prev);
	for (int t = 3601; t < 3601 + 3601; t++)
		add_key(h, 1764000000000 + t * 1000ll, "other", 1);
	CHECK_INT(history_series(h), 1);
	CHECK_INT(history_key_bytes(h, "cpu_util"), 0);
	CHECK(history_key_bytes(h, "other") <= with); /* the same hour of a steady key */
	CHECK(history_bytes(h) <= 2 * with + 1100);     /* and the tick log's, a block older at most */
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"cpu_util\"]}", 1764000000000 + 7202 * 1000ll);
	CHECK_STR(r, "{\"interval_s\":1,\"metrics\":{},\"window_s\":3600}");
	free(r);
	history_free(h);
	history_free(s);
}

TEST(history_byte_cap_drops_oldest_first)
{
	struct history *h = history_new(3600, 1, 0, 100);
	/* three keys' newest (1 KiB) blocks and the tick log's fit 8 KiB */
	history_set_max_bytes(h, 8192);
	struct frame f;
	frame_init(&f);
	for (int t = 0; t < 2000; t++) {
		frame_reset(&f, t * 1000ll * 1000000);
		for (int k = 0; k < 3; k++) {
			char name[32];
			snprintf(name, sizeof name, "noise%d", k);
			frame_float(&f, name, (double)rnd() / 7.0);
		}
		history_add(h, &f);
		CHECK(history_bytes(h) <= 8192);
	}
	CHECK(history_dropped_blocks(h) > 0);
	CHECK_INT(history_series(h), 3);
	/* every key keeps its newest points, none its first */
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"noise1\"]}", 1999000);
	CHECK(strstr(r, "[1999000,") != NULL);
	CHECK(strstr(r, "[1998000,") != NULL);
	CHECK(strstr(r, "[0,") == NULL);
	CHECK(strstr(r, "[1000,") == NULL);
	free(r);
	/* said once */
	const char *err = test_stderr();
	const char *p = strstr(err, "reach --history_max_mb");
	CHECK(p != NULL);
	CHECK(p && strstr(p + 1, "reach --history_max_mb") == NULL);
	frame_free(&f);
	history_free(h);
}

TEST(history_many_series_added_late)
{
	/* host keys from the start, then 8 x 40 GPU-like keys appear at run time */
	struct history *h = history_new(3600, 1, 0, 20000);
	struct frame f;
	frame_init(&f);
	for (int t = 0; t < 400; t++) {
		frame_reset(&f, (1764000000000 + t * 1000ll) * 1000000);
		frame_uint(&f, "cpu_u_ms", (uint64_t)t * 13);
		if (t >= 100)
			for (int g = 0; g < 8; g++)
				for (int m = 0; m < 40; m++) {
					char name[48];
					snprintf(name, sizeof name, "gpu_m%02d.gpu%d", m, g);
					frame_float(&f, name, (double)((t * (m + 1) + g) % 100));
				}
		history_add(h, &f);
	}
	CHECK_INT(history_series(h), 1 + 8 * 40);
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"gpu_m07.gpu3\"]}", 1764000399000);
	/* first point at tick 100, last at 399, 300 in all */
	CHECK(strstr(r, "\"gpu_m07.gpu3\":[[1764000100000,3],[1764000101000,11],") != NULL);
	CHECK(strstr(r, "[1764000399000,") != NULL);
	size_t n = 0;
	for (const char *p = r; (p = strstr(p, "[17640")) != NULL; p++)
		n++;
	CHECK_INT(n, 300);
	free(r);
	frame_free(&f);
	history_free(h);
}

/* ---- paging: a bounded answer and its "next" cursor ---- */

/* Every point of a getMetrics answer as "key ms value" lines, in order
 * (the numbers as the daemon wrote them), appended to out; *next gets the
 * answer's cursor as JSON text (empty when it was the last page). */
static void points_of(const char *answer, struct buf *out, struct buf *next)
{
	struct json_doc d;
	struct json_error e;
	buf_reset(next);
	if (!json_parse(answer, strlen(answer), &d, &e)) {
		test_fail(__FILE__, __LINE__, "answer is not JSON: %s", answer);
		test_abort();
	}
	const struct json_value *m = json_get(d.root, "metrics");
	CHECK(m && m->type == JV_OBJECT);
	for (uint32_t i = 0; m && i < m->len; i++) {
		const struct json_value *a = &m->u.members[i].value;
		CHECK(a->type == JV_ARRAY && a->len > 0); /* a page never lists a key without points */
		for (uint32_t k = 0; k < a->len; k++)
			buf_printf(out, "%s %s %s\n", m->u.members[i].key, a->u.items[k].u.items[0].u.num.raw,
				   a->u.items[k].u.items[1].u.num.raw);
	}
	bool tr = false;
	const struct json_value *n = json_get(d.root, "next");
	CHECK(json_get_bool(d.root, "truncated", &tr) == (n != NULL));
	if (n) {
		struct jw w;
		jw_init(&w, next);
		jw_obj_begin(&w);
		for (uint32_t i = 0; i < n->len; i++) {
			const struct json_member *mb = &n->u.members[i];
			jw_key(&w, mb->key);
			if (mb->value.type == JV_STRING)
				jw_str(&w, mb->value.u.str);
			else
				jw_raw(&w, mb->value.u.num.raw, strlen(mb->value.u.num.raw));
		}
		jw_obj_end(&w);
	}
	json_doc_free(&d);
}

/* Page through `fields` (the request's members after "fn") with the bound
 * set; after page `tick_after` (1-based), one more tick is recorded by
 * more().  Returns the pages taken; every point goes to out. */
static int page_all(struct history *h, size_t bound, const char *fields, int64_t now_ms, int tick_after,
		    void (*more)(struct history *), struct buf *out, int *spanning)
{
	struct buf next = BUF_INIT, req = BUF_INIT, prev_last = BUF_INIT;
	int pages = 0;
	history_set_max_answer(h, bound);
	do {
		buf_reset(&req);
		buf_printf(&req, "{\"fn\":\"getMetrics\"%s%s%s%s}", *fields ? "," : "", fields, next.len ? ",\"next\":" : "",
			   next.len ? next.data : "");
		char *r = rpc(h, req.data, now_ms);
		size_t at = out->len;
		points_of(r, out, &next);
		/* within the bound, or a single point: a bound too small for one
		 * point is passed by one point, so that every page moves on */
		size_t lines = 0;
		for (size_t k = at; k < out->len; k++)
			lines += out->data[k] == '\n';
		CHECK(strlen(r) <= bound || lines == 1);
		CHECK(lines >= 1);
		/* a key split between two pages: the last key of one page is the first of the next */
		if (prev_last.len && out->len > at && strncmp(out->data + at, prev_last.data, prev_last.len) == 0)
			(*spanning)++;
		buf_reset(&prev_last);
		if (out->len > at) {
			const char *last = out->data + out->len - 1;
			while (last > out->data + at && last[-1] != '\n')
				last--;
			buf_append(&prev_last, last, strcspn(last, " ") + 1);
		}
		free(r);
		if (++pages == tick_after && more)
			more(h);
	} while (next.len && pages < 10000);
	history_set_max_answer(h, 0);
	buf_free(&next);
	buf_free(&req);
	buf_free(&prev_last);
	return pages;
}

static int64_t page_ms;
static void one_more_tick(struct history *h)
{
	page_ms += 1000;
	struct frame f;
	frame_init(&f);
	frame_reset(&f, page_ms * 1000000);
	for (int k = 0; k < 30; k++) {
		char name[32];
		snprintf(name, sizeof name, "k%02d", k);
		frame_float(&f, name, 0.5 + k);
	}
	history_add(h, &f);
	frame_free(&f);
}

TEST(history_pages_cover_every_point_once)
{
	/* 30 keys, present at random, over 200 ticks in a window of 1000 s (no
	 * point leaves it while paging); values of every kind */
	struct history *h = history_new(1000, 1, 0, 1000);
	struct frame f;
	frame_init(&f);
	page_ms = 1764000000000;
	for (int t = 0; t < 200; t++) {
		page_ms += 1000 + (int64_t)(rnd() % 40) - 20;
		frame_reset(&f, page_ms * 1000000);
		for (int k = 0; k < 30; k++) {
			if (rnd() % 3 == 0)
				continue;
			char name[32];
			snprintf(name, sizeof name, "k%02d", k);
			frame_float(&f, name, ref_value(t, k));
		}
		history_add(h, &f);
	}
	frame_free(&f);
	const char *reqs[] = {"", "\"since_s\":60", "\"names\":[\"k1*\",\"k25\"]", "\"names\":[\"k2*\"],\"since_s\":100"};
	const size_t bounds[] = {4096, 700, 100};
	for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++)
		for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
			/* the whole answer, then the same request in pages with a
			 * tick landing after the second page: the pages hold exactly
			 * the whole answer's points (the cursor ends where the first
			 * page did), in its order */
			struct buf whole = BUF_INIT, paged = BUF_INIT, none = BUF_INIT;
			char req[128];
			snprintf(req, sizeof req, "{\"fn\":\"getMetrics\"%s%s}", *reqs[i] ? "," : "", reqs[i]);
			char *r = rpc(h, req, page_ms);
			points_of(r, &whole, &none);
			CHECK_INT(none.len, 0);
			free(r);
			int spanning = 0;
			int pages = page_all(h, bounds[b], reqs[i], page_ms, 2, one_more_tick, &paged, &spanning);
			CHECK(pages > 2);
			CHECK(spanning > 0);
			CHECK_STR(paged.data, whole.data);
			buf_free(&whole);
			buf_free(&paged);
			buf_free(&none);
		}
	/* the bound alone does not change an answer that fits */
	history_set_max_answer(h, 1 << 20);
	char *small = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"k05\"]}", page_ms);
	history_set_max_answer(h, 0);
	char *plain = rpc(h, "{\"fn\":\"getMetrics\",\"names\":[\"k05\"]}", page_ms);
	CHECK_STR(small, plain);
	CHECK(strstr(small, "truncated") == NULL);
	free(small);
	free(plain);
	history_free(h);
}

TEST(history_bad_cursors)
{
	struct history *h = history_new(60, 10, 0, 10);
	for (int t = 0; t < 5; t++)
		add(h, t * 10000, "cpu_util", t, "rx_bytes.eth0", t);
	const char *bad[] = {
		"\"next\":5",
		"\"next\":\"cpu_util\"",
		"\"next\":{}",
		"\"next\":{\"from_ms\":0,\"key\":1,\"tick\":0,\"until_tick\":5}",
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":\"0\",\"until_tick\":5}",
		"\"next\":{\"from_ms\":0.5,\"key\":\"cpu_util\",\"tick\":0,\"until_tick\":5}",
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":-1,\"until_tick\":5}",
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":0,\"until_tick\":-5}",
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":3,\"until_tick\":2}",
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":0,\"until_tick\":99999999999999999999}",
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":0,\"until_tick\":6}", /* beyond the newest tick */
		"\"next\":{\"from_ms\":0,\"key\":\"nosuch\",\"tick\":0,\"until_tick\":5}",   /* unknown series */
		"\"next\":{\"from_ms\":0,\"key\":\"cpu_util\\u0000x\",\"tick\":0,\"until_tick\":5}",
		"\"names\":[\"rx*\"],\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":0,\"until_tick\":5}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char req[256];
		snprintf(req, sizeof req, "{\"fn\":\"getMetrics\",%s}", bad[i]);
		char *r = rpc(h, req, 40000);
		if (strncmp(r, "{\"error\":\"getMetrics: next", 26) != 0)
			test_fail(__FILE__, __LINE__, "%s -> %s", req, r);
		free(r);
	}
	/* a good one: cpu_util from tick 3 on, then rx_bytes.eth0 */
	char *r = rpc(h, "{\"fn\":\"getMetrics\",\"next\":{\"from_ms\":0,\"key\":\"cpu_util\",\"tick\":3,\"until_tick\":5}}",
		      40000);
	CHECK_STR(r, "{\"interval_s\":10,\"metrics\":{\"cpu_util\":[[30000,3],[40000,4]],\"rx_bytes.eth0\":[[0,0.0],"
		     "[10000,1],[20000,2],[30000,3],[40000,4]]},\"window_s\":60}");
	free(r);
	history_free(h);
}

/* Values that switch a key's coding (tsz.h: decimal scales, raw doubles)
 * come back bit for bit: every point of the answer, read back with strtod
 * (the writer's shortest round-trip form), is the value that went in; and
 * a key of decimal readings takes a fraction of a raw key's bytes. */
TEST(history_decimal_coding_is_exact_and_small)
{
	enum { N = 3000 };
	static const double odd[] = {0.0, 1, 5, 2.5, 312.456, 1.0 / 3, 7, 0.1234, -0.0, 85899345920.0, 1.234e14,
				     9.876e13, 1e-9, 4503599627370497.0, 9007199254740993.0, 1e300, -1e-300, 12.5};
	enum { NODD = sizeof odd / sizeof odd[0] };
	static double in[3][N];
	static const char *const keys[3] = {"mix", "ratio", "same_ratio_raw"};
	struct history *h = history_new(N + 10, 1, 0, 100);
	struct frame f;
	frame_init(&f);
	for (int t = 0; t < N; t++) {
		in[0][t] = t % 7 == 3 ? (double)rnd() / 7.0 : odd[(t * 5 + t / NODD) % NODD];
		in[1][t] = (double)(8000 + (int64_t)(rnd() % 1001)) / 1e4; /* a GPM ratio to 1e-4 */
		in[2][t] = in[1][t] + 1e-12 * (double)(rnd() % 1000 + 1);   /* the same with noise digits */
		frame_reset(&f, (1764000000000 + t * 1000ll) * 1000000);
		for (int k = 0; k < 3; k++)
			frame_float(&f, keys[k], in[k][t]);
		history_add(h, &f);
	}
	frame_free(&f);
	char *r = rpc(h, "{\"fn\":\"getMetrics\"}", 1764000000000 + N * 1000ll);
	struct json_doc d;
	struct json_error e;
	REQUIRE(json_parse(r, strlen(r), &d, &e));
	const struct json_value *m = json_get(d.root, "metrics");
	REQUIRE(m && m->type == JV_OBJECT);
	for (int k = 0; k < 3; k++) {
		const struct json_value *a = json_get(m, keys[k]);
		REQUIRE(a && a->type == JV_ARRAY);
		CHECK_INT(a->len, N);
		for (uint32_t i = 0; i < a->len && i < N; i++) {
			double got = strtod(a->u.items[i].u.items[1].u.num.raw, NULL);
			if (memcmp(&got, &in[k][i], sizeof got) != 0) {
				test_fail(__FILE__, __LINE__, "%s point %u: got %s, want %.17g", keys[k], i,
					  a->u.items[i].u.items[1].u.num.raw, in[k][i]);
				break;
			}
		}
	}
	json_doc_free(&d);
	free(r);
	/* +-500 at 1e-4: ~14 bits a point against ~60 for the same readings with noise digits */
	size_t dec = history_key_bytes(h, "ratio"), raw = history_key_bytes(h, "same_ratio_raw");
	CHECK(dec > 0 && dec * 8 < (size_t)N * 16);
	CHECK(raw > 3 * dec);
	history_free(h);
}
