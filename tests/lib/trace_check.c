/*
 * trace_check.c - the Perfetto-rules checker of written traces (see
 * trace_check.h).  The file is read whole and parsed with the DOM (test
 * traces are small); the nesting rule sorts the complete events by
 * (pid, tid, start, longest first) and walks each thread with a stack of
 * open ends: O(n log n).
 */
#include "trace_check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "trace/source.h"

struct xev {
	const char *pid, *tid; /* the raw text of the value (number or string) */
	uint32_t pidlen, tidlen;
	bool pidstr, tidstr;
	int64_t start, end; /* ns */
	size_t pos;         /* in traceEvents */
};

/* a pid/tid as comparable text: numbers by their raw text, strings quoted
 * apart from numbers by the flag */
static void id_of(const struct json_value *v, const char **s, uint32_t *len, bool *str)
{
	*s = "";
	*len = 0;
	*str = false;
	if (!v)
		return;
	if (v->type == JV_NUMBER) {
		*s = v->u.num.raw;
		*len = (uint32_t)strlen(v->u.num.raw);
	} else if (v->type == JV_STRING) {
		*s = v->u.str;
		*len = v->len;
		*str = true;
	}
}

static int idcmp(const char *a, uint32_t al, bool as, const char *b, uint32_t bl, bool bs)
{
	if (as != bs)
		return as ? 1 : -1;
	if (al != bl)
		return al < bl ? -1 : 1;
	return memcmp(a, b, al);
}

static int xev_cmp(const void *pa, const void *pb)
{
	const struct xev *a = pa, *b = pb;
	int c = idcmp(a->pid, a->pidlen, a->pidstr, b->pid, b->pidlen, b->pidstr);
	if (!c)
		c = idcmp(a->tid, a->tidlen, a->tidstr, b->tid, b->tidlen, b->tidstr);
	if (c)
		return c;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end) /* the longer first: it is the parent */
		return a->end > b->end ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static bool same_thread(const struct xev *a, const struct xev *b)
{
	return idcmp(a->pid, a->pidlen, a->pidstr, b->pid, b->pidlen, b->pidstr) == 0 &&
	       idcmp(a->tid, a->tidlen, a->tidstr, b->tid, b->tidlen, b->tidstr) == 0;
}

static bool num(const struct json_value *v, double *out)
{
	if (!v || v->type != JV_NUMBER)
		return false;
	*out = json_value_f64(v);
	return isfinite(*out);
}

static bool fail(struct buf *why, const char *fmt, size_t pos, const char *what)
{
	if (why)
		buf_printf(why, fmt, pos, what);
	return false;
}

bool trace_check_mem(const char *text, size_t len, struct trace_check_stats *st, struct buf *why)
{
	struct trace_check_stats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	struct json_doc doc;
	struct json_error err;
	if (!json_parse(text, len, &doc, &err)) {
		if (why)
			buf_printf(why, "not valid JSON: byte %llu: %s", (unsigned long long)err.offset, err.msg);
		return false;
	}
	const struct json_value *evs = doc.root->type == JV_ARRAY ? doc.root : json_get(doc.root, "traceEvents");
	if (!evs || evs->type != JV_ARRAY) {
		json_doc_free(&doc);
		return fail(why, "%zu: %s", 0, "no traceEvents array");
	}
	struct xev *x = malloc((evs->len ? evs->len : 1) * sizeof *x);
	size_t nx = 0;
	bool ok = true;
	for (size_t i = 0; i < evs->len && ok; i++) {
		const struct json_value *e = &evs->u.items[i];
		st->events++;
		const char *ph;
		size_t phl;
		if (e->type != JV_OBJECT) {
			ok = fail(why, "event %zu: %s", i, "not an object");
			break;
		}
		if (!json_get_str(e, "ph", &ph, &phl)) {
			ok = fail(why, "event %zu: %s", i, "no string \"ph\"");
			break;
		}
		double ts, dur;
		if (phl == 1 && ph[0] == 'X') {
			st->complete++;
			if (!num(json_get(e, "ts"), &ts) || !num(json_get(e, "dur"), &dur) || dur < 0) {
				ok = fail(why, "event %zu: %s", i, "complete event without numeric ts and dur >= 0");
				break;
			}
			struct xev *v = &x[nx++];
			id_of(json_get(e, "pid"), &v->pid, &v->pidlen, &v->pidstr);
			id_of(json_get(e, "tid"), &v->tid, &v->tidlen, &v->tidstr);
			v->start = llround(ts * 1000);
			v->end = llround((ts + dur) * 1000);
			v->pos = i;
		} else if (phl == 1 && ph[0] == 'C') {
			st->counters++;
			const char *name;
			size_t nl;
			const struct json_value *args = json_get(e, "args");
			if (!json_get_str(e, "name", &name, &nl) || !num(json_get(e, "ts"), &ts)) {
				ok = fail(why, "event %zu: %s", i, "counter event without a name and a numeric ts");
				break;
			}
			if (!args || args->type != JV_OBJECT || args->len == 0) {
				ok = fail(why, "event %zu: %s", i, "counter event without args");
				break;
			}
			for (uint32_t k = 0; k < args->len; k++) {
				double v;
				if (!num(&args->u.members[k].value, &v)) {
					ok = fail(why, "event %zu: %s", i, "counter value that is not a number");
					break;
				}
			}
		}
	}
	if (ok) {
		qsort(x, nx, sizeof *x, xev_cmp);
		/* per thread: a stack of the open events' ends */
		int64_t *stack = malloc((nx ? nx : 1) * sizeof *stack);
		size_t *spos = malloc((nx ? nx : 1) * sizeof *spos);
		size_t sp = 0;
		for (size_t i = 0; i < nx && ok; i++) {
			if (i == 0 || !same_thread(&x[i - 1], &x[i]))
				sp = 0;
			while (sp && stack[sp - 1] <= x[i].start)
				sp--;
			if (sp && x[i].end > stack[sp - 1]) {
				if (why)
					buf_printf(why, "event %zu overlaps event %zu on its (pid, tid) without nesting",
						   x[i].pos, spos[sp - 1]);
				ok = false;
				break;
			}
			stack[sp] = x[i].end;
			spos[sp++] = x[i].pos;
		}
		free(stack);
		free(spos);
	}
	free(x);
	json_doc_free(&doc);
	return ok;
}

bool trace_check_file(const char *path, struct trace_check_stats *st, struct buf *why)
{
	char eb[256];
	struct trace_source *s = trace_source_open(path, false, eb, sizeof eb);
	if (!s) {
		if (why)
			buf_puts(why, eb);
		return false;
	}
	struct buf text = BUF_INIT;
	char chunk[65536];
	const char *rerr = NULL;
	ssize_t n;
	while ((n = trace_source_read(s, chunk, sizeof chunk, &rerr)) > 0)
		buf_append(&text, chunk, (size_t)n);
	trace_source_close(s);
	bool ok = false;
	if (n < 0) {
		if (why)
			buf_printf(why, "%s: %s", path, rerr ? rerr : "read error");
	} else {
		ok = trace_check_mem(text.data ? text.data : "", text.len, st, why);
	}
	buf_free(&text);
	return ok;
}
