/*
 * trace-gen.c - `build/trace-gen IN OUT [options]`: a new Kineto trace
 * made from a real one, for the warehouse's tests and benches
 * (tests/integration/warehouse*.sh, bench/warehouse.sh): the same events
 * with their durations scaled per event name by a deterministic jitter
 * (--seed, --jitter F: a factor in [1-F, 1+F] per name and seed), one
 * name made slower (--slow NAME=FACTOR: a planted regression), the clock
 * moved (--shift-ns N: added to baseTimeNanoseconds, which is created when
 * absent).  OUT is gzip when it ends in ".gz".  (A bigger trace:
 * bench/trace_gen scales one, this edits it.)
 *
 * The input is read whole (plain or gzip) into the DOM of the one JSON
 * reader and written back with the one writer: test sizes, not multi-GB.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/json.h"

struct gen {
	uint64_t seed;
	double jitter;
	const char *slow;
	size_t slow_len;
	double slow_factor;
	int64_t shift_ns;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static double factor(const struct gen *g, const char *name, size_t n)
{
	uint64_t h = g->seed * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
	double u = (double)(mix(h) >> 11) / 9007199254740992.0; /* [0, 1) */
	double f = 1 + g->jitter * (2 * u - 1);
	if (g->slow && n == g->slow_len && memcmp(name, g->slow, n) == 0)
		f *= g->slow_factor;
	return f;
}

static const struct json_value *member(const struct json_value *o, const char *k)
{
	return json_get(o, k);
}

/* One event, its dur scaled. */
static void put_event(struct jw *w, const struct gen *g, const struct json_value *e)
{
	if (e->type != JV_OBJECT) {
		jw_value(w, e);
		return;
	}
	const struct json_value *name = member(e, "name");
	double f = name && name->type == JV_STRING ? factor(g, name->u.str, name->len) : 1;
	jw_obj_begin(w);
	for (uint32_t i = 0; i < e->len; i++) {
		const struct json_member *m = &e->u.members[i];
		jw_keyn(w, m->key, m->key_len);
		bool dur = m->key_len == 3 && memcmp(m->key, "dur", 3) == 0;
		if (m->value.type == JV_NUMBER && dur)
			jw_f64(w, round(json_value_f64(&m->value) * f * 1000) / 1000);
		else
			jw_value(w, &m->value);
	}
	jw_obj_end(w);
}

static int read_all(const char *path, struct buf *out)
{
	gzFile f = gzopen(path, "rb");
	if (!f)
		return -1;
	char tmp[1 << 16];
	int n;
	while ((n = gzread(f, tmp, sizeof tmp)) > 0)
		buf_append(out, tmp, (size_t)n);
	gzclose(f);
	return n < 0 ? -1 : 0;
}

static int write_all(const char *path, const struct buf *b)
{
	size_t n = strlen(path);
	if (n > 3 && strcmp(path + n - 3, ".gz") == 0) {
		gzFile f = gzopen(path, "wb1");
		if (!f)
			return -1;
		int ok = gzwrite(f, b->data, (unsigned)b->len) == (int)b->len;
		return gzclose(f) == Z_OK && ok ? 0 : -1;
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(b->data, 1, b->len, f) == b->len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: trace-gen IN OUT [--seed S] [--jitter F] [--slow NAME=FACTOR] [--shift-ns N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct gen g = {.seed = 1};
	const char *in = NULL, *out = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			if (!in)
				in = a;
			else if (!out)
				out = a;
			else
				usage();
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (strcmp(a, "--seed") == 0) {
			g.seed = strtoull(v, NULL, 10);
		} else if (strcmp(a, "--jitter") == 0) {
			g.jitter = strtod(v, NULL);
		} else if (strcmp(a, "--shift-ns") == 0) {
			g.shift_ns = strtoll(v, NULL, 10);
		} else if (strcmp(a, "--slow") == 0) {
			const char *eq = strrchr(v, '=');
			if (!eq)
				usage();
			g.slow = v, g.slow_len = (size_t)(eq - v), g.slow_factor = strtod(eq + 1, NULL);
		} else {
			usage();
		}
	}
	if (!in || !out || g.jitter < 0 || g.jitter >= 1)
		usage();
	struct buf text = BUF_INIT, o = BUF_INIT;
	if (read_all(in, &text) != 0) {
		fprintf(stderr, "trace-gen: %s: cannot read\n", in);
		return 1;
	}
	struct json_doc doc;
	struct json_error je;
	if (!json_parse(text.data, text.len, &doc, &je) || doc.root->type != JV_OBJECT) {
		fprintf(stderr, "trace-gen: %s: byte %llu: %s\n", in, (unsigned long long)je.offset, je.msg);
		return 1;
	}
	const struct json_value *ev = member(doc.root, "traceEvents");
	if (!ev || ev->type != JV_ARRAY) {
		fprintf(stderr, "trace-gen: %s: no traceEvents array\n", in);
		return 1;
	}
	int64_t base = 0;
	bool has_base = json_get_i64(doc.root, "baseTimeNanoseconds", &base);
	struct jw w;
	jw_init(&w, &o);
	jw_obj_begin(&w);
	for (uint32_t i = 0; i < doc.root->len; i++) {
		const struct json_member *m = &doc.root->u.members[i];
		if (m->key_len == 19 && memcmp(m->key, "baseTimeNanoseconds", 19) == 0)
			continue;
		jw_keyn(&w, m->key, m->key_len);
		if (&m->value != ev) {
			jw_value(&w, &m->value);
			continue;
		}
		jw_arr_begin(&w);
		for (uint32_t k = 0; k < ev->len; k++)
			put_event(&w, &g, &ev->u.items[k]);
		jw_arr_end(&w);
	}
	if (has_base || g.shift_ns) {
		jw_key(&w, "baseTimeNanoseconds");
		jw_i64(&w, base + g.shift_ns);
	}
	jw_obj_end(&w);
	json_doc_free(&doc);
	int rc = write_all(out, &o);
	if (rc != 0)
		fprintf(stderr, "trace-gen: %s: cannot write\n", out);
	buf_free(&text);
	buf_free(&o);
	return rc ? 1 : 0;
}
