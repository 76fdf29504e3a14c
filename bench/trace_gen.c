/*
 * trace_gen.c - bench input generator: scale a real Kineto trace to any
 * size by repeating its events with shifted timestamps.
 *
 *   build/bench/trace_gen INPUT(.json|.json.gz) --mb N [--rank R] > OUT.json
 *
 * Copy k (k = 0, 1, ...) of every event gets ts + k * (span + 1000) us,
 * correlation / External id / flow id + k * (max id + 1), and
 * ProfilerStep#N renamed to N + k * (number of steps), so the result is a
 * valid multi-iteration trace with consistent CPU-GPU links, not just a
 * longer file.  Copies are added until the output reaches N MB.
 *
 * The output keeps the input's exact text (Kineto's indentation and
 * spacing): the base trace is read into memory, each event's byte span and
 * the spans of the numbers to rewrite are recorded with the core JSON
 * reader, and each copy is the original bytes with those spans replaced.
 * ts arithmetic is done on the decimal text, so ns timestamps stay exact.
 * --rank replaces distributedInfo.rank.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "trace/source.h"

enum { P_TS, P_ID, P_STEP, P_RANK };

struct patch {
	size_t off, len; /* absolute offsets in the input text */
	int kind;
	long step;       /* P_STEP: the original N */
};

struct event {
	size_t start, end; /* [start, end) */
	size_t p0, np;     /* its patches */
};

struct gen {
	const char *text;
	size_t len;
	struct json_reader jr;
	struct patch *pv;
	size_t npv, pcap;
	struct event *ev;
	size_t nev, ecap;
	double min_ts, max_end;
	int64_t max_id;
	long min_step, max_step;
	bool have_rank_patch;
	struct patch rank_patch;
	FILE *out;
	uint64_t written;
};

static void die_json(struct gen *g)
{
	fprintf(stderr, "trace_gen: byte %llu: %s\n", (unsigned long long)g->jr.err.offset, g->jr.err.msg);
	exit(1);
}

static enum json_tok next(struct gen *g)
{
	enum json_tok t = json_next(&g->jr);
	if (t == JSON_ERROR)
		die_json(g);
	return t;
}

static void skip(struct gen *g)
{
	if (!json_skip(&g->jr))
		die_json(g);
}

static void add_patch(struct gen *g, int kind, long step)
{
	if (g->npv == g->pcap) {
		g->pcap = g->pcap ? g->pcap * 2 : 4096;
		g->pv = xrealloc(g->pv, g->pcap * sizeof *g->pv);
	}
	g->pv[g->npv++] = (struct patch){(size_t)(g->jr.tstart - g->text), g->jr.tlen, kind, step};
}

static void note_id(struct gen *g)
{
	int64_t v;
	if (json_num_i64(&g->jr.num, &v) && v > g->max_id)
		g->max_id = v;
}

#define KEYIS(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)

/* One element of traceEvents; its OBJ_BEGIN was just read. */
static void scan_event(struct gen *g)
{
	struct event e = {(size_t)(g->jr.tstart - g->text), 0, g->npv, 0};
	double ts = NAN, dur = 0;
	for (;;) {
		enum json_tok t = next(g);
		if (t == JSON_OBJ_END)
			break;
		size_t n;
		const char *k = json_str(&g->jr, &n);
		bool is_ts = KEYIS("ts"), is_dur = KEYIS("dur"), is_id = KEYIS("id"), is_name = KEYIS("name"),
		     is_args = KEYIS("args");
		t = next(g);
		if (t == JSON_NUMBER && is_ts) {
			ts = json_f64(&g->jr);
			add_patch(g, P_TS, 0);
		} else if (t == JSON_NUMBER && is_dur) {
			dur = json_f64(&g->jr);
		} else if (t == JSON_NUMBER && is_id) {
			note_id(g);
			add_patch(g, P_ID, 0);
		} else if (t == JSON_STRING && is_name) {
			const char *s = json_str(&g->jr, &n);
			if (n > 13 && memcmp(s, "ProfilerStep#", 13) == 0) {
				long v = strtol(s + 13, NULL, 10);
				if (v < g->min_step)
					g->min_step = v;
				if (v > g->max_step)
					g->max_step = v;
				add_patch(g, P_STEP, v);
			}
		} else if (t == JSON_OBJ_BEGIN && is_args) {
			for (;;) {
				t = next(g);
				if (t == JSON_OBJ_END)
					break;
				k = json_str(&g->jr, &n);
				bool is_corr = KEYIS("correlation") || KEYIS("External id");
				t = next(g);
				if (t == JSON_NUMBER && is_corr) {
					note_id(g);
					add_patch(g, P_ID, 0);
				} else {
					skip(g);
				}
			}
		} else {
			skip(g);
		}
	}
	e.end = (size_t)(g->jr.tstart - g->text) + 1;
	e.np = g->npv - e.p0;
	if (!isnan(ts)) {
		if (ts < g->min_ts)
			g->min_ts = ts;
		if (ts + dur > g->max_end)
			g->max_end = ts + dur;
	}
	if (g->nev == g->ecap) {
		g->ecap = g->ecap ? g->ecap * 2 : 4096;
		g->ev = xrealloc(g->ev, g->ecap * sizeof *g->ev);
	}
	g->ev[g->nev++] = e;
}

static void scan(struct gen *g)
{
	json_reader_init_mem(&g->jr, g->text, g->len, JSON_LENIENT_UTF8);
	if (next(g) != JSON_OBJ_BEGIN) {
		fprintf(stderr, "trace_gen: not a JSON object\n");
		exit(1);
	}
	for (;;) {
		enum json_tok t = next(g);
		if (t == JSON_OBJ_END)
			break;
		size_t n;
		const char *k = json_str(&g->jr, &n);
		bool events = KEYIS("traceEvents"), dist = KEYIS("distributedInfo");
		t = next(g);
		if (events && t == JSON_ARR_BEGIN) {
			while ((t = next(g)) != JSON_ARR_END) {
				if (t == JSON_OBJ_BEGIN)
					scan_event(g);
				else
					skip(g);
			}
		} else if (dist && t == JSON_OBJ_BEGIN) {
			for (;;) {
				t = next(g);
				if (t == JSON_OBJ_END)
					break;
				k = json_str(&g->jr, &n);
				bool is_rank = KEYIS("rank");
				t = next(g);
				if (is_rank && t == JSON_NUMBER) {
					g->rank_patch = (struct patch){(size_t)(g->jr.tstart - g->text), g->jr.tlen, P_RANK, 0};
					g->have_rank_patch = true;
				} else {
					skip(g);
				}
			}
		} else {
			skip(g);
		}
	}
	json_reader_free(&g->jr);
}

static void put(struct gen *g, const char *s, size_t n)
{
	if (n && fwrite(s, 1, n, g->out) != n) {
		fprintf(stderr, "trace_gen: write: %s\n", strerror(errno));
		exit(1);
	}
	g->written += n;
}

/* The number text at p (len bytes) plus an integer shift, fraction kept. */
static void put_shifted(struct gen *g, const char *p, size_t len, int64_t shift)
{
	const char *dot = memchr(p, '.', len);
	size_t ilen = dot ? (size_t)(dot - p) : len;
	char tmp[32];
	if (shift == 0 || ilen >= sizeof tmp || memchr(p, 'e', len) || memchr(p, 'E', len)) {
		put(g, p, len);
		return;
	}
	memcpy(tmp, p, ilen);
	tmp[ilen] = 0;
	char out[48];
	int k = snprintf(out, sizeof out, "%lld", strtoll(tmp, NULL, 10) + (long long)shift);
	put(g, out, (size_t)k);
	if (dot)
		put(g, dot, len - ilen);
}

/* Copy text [from, to) applying the patches pv[0..np) that fall inside. */
static void put_span(struct gen *g, size_t from, size_t to, const struct patch *pv, size_t np, int64_t ts_shift,
		     int64_t id_shift, long step_shift, int rank, bool rank_given)
{
	size_t at = from;
	for (size_t i = 0; i < np; i++) {
		const struct patch *p = &pv[i];
		if (p->off < at || p->off + p->len > to)
			continue;
		put(g, g->text + at, p->off - at);
		const char *s = g->text + p->off;
		char buf[64];
		switch (p->kind) {
		case P_TS: put_shifted(g, s, p->len, ts_shift); break;
		case P_ID: put_shifted(g, s, p->len, id_shift); break;
		case P_STEP:
			snprintf(buf, sizeof buf, "\"ProfilerStep#%ld\"", p->step + step_shift);
			put(g, buf, strlen(buf));
			break;
		case P_RANK:
			if (rank_given) {
				snprintf(buf, sizeof buf, "%d", rank);
				put(g, buf, strlen(buf));
			} else {
				put(g, s, p->len);
			}
			break;
		}
		at = p->off + p->len;
	}
	put(g, g->text + at, to - at);
}

int main(int argc, char **argv)
{
	const char *in = NULL;
	double mb = 100;
	int rank = 0;
	bool rank_given = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
			mb = atof(argv[++i]);
		} else if (strcmp(argv[i], "--rank") == 0 && i + 1 < argc) {
			rank = atoi(argv[++i]);
			rank_given = true;
		} else if (!in) {
			in = argv[i];
		} else {
			in = NULL;
			break;
		}
	}
	if (!in || mb <= 0) {
		fprintf(stderr, "usage: trace_gen INPUT --mb N [--rank R] > OUT.json\n");
		return 2;
	}
	/* the base trace, decompressed, in memory (bench inputs are small) */
	char msg[512];
	struct trace_source *src = trace_source_open(in, true, msg, sizeof msg);
	if (!src) {
		fprintf(stderr, "trace_gen: %s\n", msg);
		return 1;
	}
	struct buf text = BUF_INIT;
	for (;;) {
		buf_reserve(&text, 1 << 20);
		const char *err = NULL;
		ssize_t n = trace_source_read(src, text.data + text.len, 1 << 20, &err);
		if (n < 0) {
			fprintf(stderr, "trace_gen: %s: %s\n", in, err ? err : strerror(errno));
			return 1;
		}
		if (n == 0)
			break;
		text.len += (size_t)n;
	}
	text.data[text.len] = 0;
	trace_source_close(src);

	struct gen g = {.text = text.data, .len = text.len, .min_ts = INFINITY, .max_end = -INFINITY,
			.min_step = LONG_MAX, .max_step = -1, .out = stdout};
	scan(&g);
	if (g.nev == 0 || !isfinite(g.min_ts)) {
		fprintf(stderr, "trace_gen: %s has no timed events\n", in);
		return 1;
	}
	int64_t span = (int64_t)ceil(g.max_end - g.min_ts) + 1000;
	int64_t idspan = g.max_id + 1;
	long stepspan = g.max_step >= 0 ? g.max_step - g.min_step + 1 : 0;
	const struct patch *rp = g.have_rank_patch ? &g.rank_patch : NULL;
	size_t nrp = rp ? 1 : 0;
	size_t first = g.ev[0].start, last = g.ev[g.nev - 1].end;
	/* text between two events (",\n  "), reused between copies */
	size_t sep_from = g.nev > 1 ? g.ev[0].end : 0, sep_to = g.nev > 1 ? g.ev[1].start : 0;
	put_span(&g, 0, first, rp, nrp, 0, 0, 0, rank, rank_given);
	uint64_t target = (uint64_t)(mb * 1e6);
	int copies = 0;
	for (int k = 0; k == 0 || g.written < target; k++, copies++) {
		for (size_t i = 0; i < g.nev; i++) {
			const struct event *e = &g.ev[i];
			if (k > 0 || i > 0) {
				if (sep_to > sep_from)
					put(&g, g.text + sep_from, sep_to - sep_from);
				else
					put(&g, ",\n", 2);
			}
			put_span(&g, e->start, e->end, g.pv + e->p0, e->np, span * k, idspan * k, stepspan * k, rank,
				 rank_given);
		}
	}
	put_span(&g, last, g.len, rp, nrp, 0, 0, 0, rank, rank_given);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "trace_gen: write: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "trace_gen: %d copies, %.1f MB\n", copies, (double)g.written / 1e6);
	free(g.pv);
	free(g.ev);
	buf_free(&text);
	return 0;
}
