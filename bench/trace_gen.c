/*
 * trace_gen.c - bench input generator: scale a real Kineto trace to any
 * size by repeating its events with shifted timestamps.
 *
 *   build/bench/trace_gen INPUT(.json|.json.gz) --mb N [--rank R] > OUT.json
 *
 * Copy k (k = 0, 1, ...) of every event gets ts + k * (span + 1000) us,
 * correlation / External id / flow id + k * (max id + 1), and
 * ProfilerStep#N renamed to N + k * (steps span), so the result is a valid
 * multi-iteration trace with consistent CPU-GPU links, not just a longer
 * file.  Copies are added until the output reaches N MB.  ts arithmetic is
 * done on the decimal text, so ns-resolution timestamps stay exact.
 * The other top-level keys (distributedInfo, deviceProperties, ...) are
 * copied once; --rank replaces distributedInfo.rank.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "trace/source.h"

struct gen {
	struct json_reader jr;
	struct trace_source *src;
	struct buf out;
	struct jw w;
	int64_t ts_shift, id_shift, step_shift;
	int rank;
	bool rank_given;
	/* first pass */
	double min_ts, max_end;
	int64_t max_id;
	long min_step, max_step;
	uint64_t written;
};

static void flush_out(struct gen *g, bool force)
{
	if (g->out.len >= (1u << 20) || (force && g->out.len)) {
		if (fwrite(g->out.data, 1, g->out.len, stdout) != g->out.len) {
			fprintf(stderr, "trace_gen: write: %s\n", strerror(errno));
			exit(1);
		}
		g->written += g->out.len;
		buf_reset(&g->out);
	}
}

static void open_input(struct gen *g, const char *path)
{
	char msg[512];
	g->src = trace_source_open(path, true, msg, sizeof msg);
	if (!g->src) {
		fprintf(stderr, "trace_gen: %s\n", msg);
		exit(1);
	}
	json_reader_init_stream(&g->jr, trace_source_read, g->src, 0, JSON_LENIENT_UTF8);
}

static void close_input(struct gen *g)
{
	json_reader_free(&g->jr);
	trace_source_close(g->src);
}

static void die(struct gen *g)
{
	fprintf(stderr, "trace_gen: byte %" PRIu64 ": %s\n", g->jr.err.offset, g->jr.err.msg);
	exit(1);
}

static enum json_tok next(struct gen *g)
{
	enum json_tok t = json_next(&g->jr);
	if (t == JSON_ERROR)
		die(g);
	return t;
}

/* Write raw number text plus an integer shift, keeping the fraction text. */
static void shifted_number(struct gen *g, int64_t shift)
{
	const char *s = g->jr.tstart;
	size_t n = g->jr.tlen;
	if (shift == 0 || memchr(s, 'e', n) || memchr(s, 'E', n)) {
		jw_raw(&g->w, s, n);
		return;
	}
	const char *dot = memchr(s, '.', n);
	size_t ilen = dot ? (size_t)(dot - s) : n;
	char tmp[32];
	if (ilen >= sizeof tmp) {
		jw_raw(&g->w, s, n);
		return;
	}
	memcpy(tmp, s, ilen);
	tmp[ilen] = 0;
	long long v = strtoll(tmp, NULL, 10);
	char out[64];
	int k = snprintf(out, sizeof out, "%lld", v + (long long)shift);
	struct buf nb = BUF_INIT;
	buf_append(&nb, out, (size_t)k);
	if (dot)
		buf_append(&nb, dot, n - ilen);
	jw_raw(&g->w, nb.data, nb.len);
	buf_free(&nb);
}

static void copy_value(struct gen *g, enum json_tok t, int ctx);

/* ctx: 0 plain, 1 event object, 2 args object, 3 distributedInfo */
static void copy_object(struct gen *g, int ctx)
{
	jw_obj_begin(&g->w);
	for (;;) {
		enum json_tok t = next(g);
		if (t == JSON_OBJ_END)
			break;
		size_t kl;
		const char *k = json_str(&g->jr, &kl);
		char key[32];
		size_t cl = kl < sizeof key - 1 ? kl : sizeof key - 1;
		memcpy(key, k, cl);
		key[cl] = 0;
		jw_keyn(&g->w, k, kl);
		t = next(g);
		if (t == JSON_NUMBER && ctx == 1 && strcmp(key, "ts") == 0) {
			shifted_number(g, g->ts_shift);
		} else if (t == JSON_NUMBER && ctx == 1 && strcmp(key, "id") == 0) {
			shifted_number(g, g->id_shift);
		} else if (t == JSON_NUMBER && ctx == 2 &&
			   (strcmp(key, "correlation") == 0 || strcmp(key, "External id") == 0)) {
			shifted_number(g, g->id_shift);
		} else if (t == JSON_NUMBER && ctx == 3 && strcmp(key, "rank") == 0 && g->rank_given) {
			jw_i64(&g->w, g->rank);
		} else if (t == JSON_STRING && ctx == 1 && strcmp(key, "name") == 0 &&
			   kl > 13 && memcmp(k, "ProfilerStep#", 13) == 0) {
			size_t sl;
			const char *s = json_str(&g->jr, &sl);
			char nm[64];
			snprintf(nm, sizeof nm, "ProfilerStep#%ld", strtol(s + 13, NULL, 10) + (long)g->step_shift);
			jw_str(&g->w, nm);
		} else {
			int sub = ctx == 1 && strcmp(key, "args") == 0 ? 2
				  : ctx == -1 && strcmp(key, "distributedInfo") == 0 ? 3
										       : 0;
			copy_value(g, t, sub);
		}
	}
	jw_obj_end(&g->w);
}

static void copy_value(struct gen *g, enum json_tok t, int ctx)
{
	switch (t) {
	case JSON_OBJ_BEGIN: copy_object(g, ctx); break;
	case JSON_ARR_BEGIN:
		jw_arr_begin(&g->w);
		while ((t = next(g)) != JSON_ARR_END)
			copy_value(g, t, 0);
		jw_arr_end(&g->w);
		break;
	case JSON_STRING: {
		size_t n;
		const char *s = json_str(&g->jr, &n);
		jw_strn(&g->w, s, n);
		break;
	}
	case JSON_NUMBER: jw_raw(&g->w, g->jr.tstart, g->jr.tlen); break;
	case JSON_TRUE: jw_bool(&g->w, true); break;
	case JSON_FALSE: jw_bool(&g->w, false); break;
	case JSON_NULL: jw_null(&g->w); break;
	default: die(g);
	}
	flush_out(g, false);
}

/* Pass 1: time span, largest id, step numbers. */
static void scan(struct gen *g, const char *path)
{
	open_input(g, path);
	g->min_ts = INFINITY;
	g->max_end = -INFINITY;
	g->min_step = LONG_MAX;
	g->max_step = -1;
	int depth_ev = 0;
	bool in_ev = false;
	double ts = NAN, dur = 0;
	enum json_tok t;
	char lastkey[32] = "";
	while ((t = next(g)) != JSON_EOF) {
		uint32_t d = json_depth(&g->jr);
		if (t == JSON_KEY) {
			size_t n;
			const char *k = json_str(&g->jr, &n);
			if (d == 1 && n == 11 && memcmp(k, "traceEvents", 11) == 0)
				in_ev = true;
			else if (d == 1)
				in_ev = false;
			size_t cl = n < sizeof lastkey - 1 ? n : sizeof lastkey - 1;
			memcpy(lastkey, k, cl);
			lastkey[cl] = 0;
			continue;
		}
		if (!in_ev)
			continue;
		if (t == JSON_OBJ_BEGIN && d == 3) {
			depth_ev = 3;
			ts = NAN;
			dur = 0;
		} else if (t == JSON_OBJ_END && d == 2 && depth_ev) {
			if (!isnan(ts)) {
				if (ts < g->min_ts)
					g->min_ts = ts;
				if (ts + dur > g->max_end)
					g->max_end = ts + dur;
			}
			depth_ev = 0;
		} else if (t == JSON_NUMBER && d == 3) {
			if (strcmp(lastkey, "ts") == 0)
				ts = json_f64(&g->jr);
			else if (strcmp(lastkey, "dur") == 0)
				dur = json_f64(&g->jr);
			else if (strcmp(lastkey, "id") == 0) {
				int64_t v;
				if (json_num_i64(&g->jr.num, &v) && v > g->max_id)
					g->max_id = v;
			}
		} else if (t == JSON_NUMBER && d == 4 &&
			   (strcmp(lastkey, "correlation") == 0 || strcmp(lastkey, "External id") == 0)) {
			int64_t v;
			if (json_num_i64(&g->jr.num, &v) && v > g->max_id)
				g->max_id = v;
		} else if (t == JSON_STRING && d == 3 && strcmp(lastkey, "name") == 0) {
			size_t n;
			const char *s = json_str(&g->jr, &n);
			if (n > 13 && memcmp(s, "ProfilerStep#", 13) == 0) {
				long v = strtol(s + 13, NULL, 10);
				if (v < g->min_step)
					g->min_step = v;
				if (v > g->max_step)
					g->max_step = v;
			}
		}
	}
	close_input(g);
}

int main(int argc, char **argv)
{
	const char *in = NULL;
	double mb = 100;
	struct gen g = {0};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc)
			mb = atof(argv[++i]);
		else if (strcmp(argv[i], "--rank") == 0 && i + 1 < argc) {
			g.rank = atoi(argv[++i]);
			g.rank_given = true;
		} else if (!in)
			in = argv[i];
		else {
			fprintf(stderr, "usage: trace_gen INPUT --mb N [--rank R] > OUT.json\n");
			return 2;
		}
	}
	if (!in || mb <= 0) {
		fprintf(stderr, "usage: trace_gen INPUT --mb N [--rank R] > OUT.json\n");
		return 2;
	}
	scan(&g, in);
	if (!isfinite(g.min_ts)) {
		fprintf(stderr, "trace_gen: %s has no timed events\n", in);
		return 1;
	}
	int64_t span = (int64_t)ceil(g.max_end - g.min_ts) + 1000;
	int64_t idspan = g.max_id + 1;
	long stepspan = g.max_step >= 0 ? g.max_step - g.min_step + 1 : 0;
	buf_init(&g.out);
	jw_init(&g.w, &g.out);
	buf_puts(&g.out, "{\"traceEvents\":[");
	bool first = true;
	uint64_t target = (uint64_t)(mb * 1e6);
	int copies = 0;
	for (int k = 0; g.written + g.out.len < target; k++) {
		g.ts_shift = span * k;
		g.id_shift = idspan * k;
		g.step_shift = stepspan * k;
		open_input(&g, in);
		enum json_tok t = next(&g);
		bool in_ev = false;
		while ((t = next(&g)) != JSON_OBJ_END) {
			size_t n;
			const char *key = json_str(&g.jr, &n);
			in_ev = n == 11 && memcmp(key, "traceEvents", 11) == 0;
			t = next(&g);
			if (!in_ev || t != JSON_ARR_BEGIN) {
				json_skip(&g.jr);
				continue;
			}
			while ((t = next(&g)) != JSON_ARR_END) {
				if (!first)
					buf_putc(&g.out, ',');
				first = false;
				buf_putc(&g.out, '\n');
				/* jw keeps comma state per writer: reset for each event */
				jw_init(&g.w, &g.out);
				copy_value(&g, t, 1);
			}
		}
		close_input(&g);
		copies++;
	}
	buf_puts(&g.out, "\n]");
	/* the other top-level keys, once */
	g.ts_shift = g.id_shift = g.step_shift = 0;
	open_input(&g, in);
	next(&g);
	enum json_tok t;
	while ((t = next(&g)) != JSON_OBJ_END) {
		size_t n;
		const char *key = json_str(&g.jr, &n);
		bool skip = n == 11 && memcmp(key, "traceEvents", 11) == 0;
		if (skip) {
			next(&g);
			json_skip(&g.jr);
			continue;
		}
		buf_putc(&g.out, ',');
		json_escape(&g.out, key, n);
		buf_putc(&g.out, ':');
		jw_init(&g.w, &g.out);
		t = next(&g);
		if (t == JSON_OBJ_BEGIN)
			copy_object(&g, n == 15 && memcmp(key, "distributedInfo", 15) == 0 ? 3 : 0);
		else
			copy_value(&g, t, 0);
	}
	close_input(&g);
	buf_puts(&g.out, "}\n");
	flush_out(&g, true);
	buf_free(&g.out);
	fprintf(stderr, "trace_gen: %d copies, %.1f MB\n", copies, (double)g.written / 1e6);
	return 0;
}
