/*
 * stitch.c - `dyno stitch DIR_OR_FILES... -o OUT.json[.gz]`: the per-rank
 * Kineto traces of one collection (and gpusnoop --trace timelines) merged
 * into one trace that Perfetto opens (docs/fleet.md).
 *
 * Each input becomes its own group of processes: every pid of every input
 * gets a new pid of its own (two ranks' "GPU 0" or two hosts' pid 4242
 * never share a track), named "<label>: <its name>" (the input's
 * process_name rewritten, or one added) and sorted input by input
 * (process_sort_index).  Times are put on one clock: Kineto's ts are µs
 * since the file's baseTimeNanoseconds (absent: the wall clock), so each
 * input's ts move by its base minus the smallest base (plus --offset),
 * in exact decimal arithmetic (an ns-resolution wall-clock ts has 19
 * digits, more than a double holds).  Numeric flow ids move by input << 40
 * so that ac2g arrows never join two ranks.  Nothing is dropped: every
 * element of every traceEvents is written (a non-object as it is), and
 * each input's other top-level members (distributedInfo,
 * deviceProperties, ...) go under "dynoStitch" with its pid map.
 *
 * Cost: every input is read twice as a stream with the one JSON reader
 * (pass 1 validates it and learns its pids, rank, base time and top-level
 * members before anything is written; pass 2 rewrites its events token by
 * token), so memory is a read window, one event and the pid tables, and a
 * .gz input is inflated twice.  OUT is written to a temporary file beside
 * it and renamed at the end: a failure leaves no half-written OUT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/trace_copy.h"
#include "core/json.h"
#include "fleet/stitch.h"
#include "trace/model.h"
#include "trace/source.h"

/* One pid of an input. */
struct st_pid {
	char *text;   /* a number's text, or a string's decoded bytes */
	size_t len;
	bool is_str;
	int64_t out;  /* its pid in OUT */
	bool named;   /* the input has a process_name event for it */
	bool sorted;  /* ... and a process_sort_index one */
};

struct st_input {
	char *path;
	const char *base;    /* file name part of path */
	char *label;         /* "rank 3 (file)": the process names' prefix */
	int rank;
	bool has_rank;
	int64_t base_ns;     /* baseTimeNanoseconds; 0: none (wall-clock ts) */
	int64_t offset_ns;   /* --offset */
	int64_t shift_ns;    /* added to every ts */
	uint64_t id_add;     /* added to numeric flow ids */
	uint64_t events;     /* elements of traceEvents */
	struct buf top;      /* the other top-level members, as a JSON object */
	struct st_pid *pids;
	size_t npids, cap, last;
};

/* A flow id this small or less moves by input << 40 (ac2g ids are
 * correlation ids, far smaller). */
#define ST_ID_LIMIT (UINT64_C(1) << 40)
#define ST_MAX_PIDS 65536

/* Copy the value whose first token is t, whatever it is. */
static bool copy_value(struct json_reader *jr, enum json_tok t, struct jw *w)
{
	size_t n;
	const char *s;
	switch (t) {
	case JSON_OBJ_BEGIN:
		jw_obj_begin(w);
		while ((t = json_next(jr)) == JSON_KEY) {
			s = json_str(jr, &n);
			jw_keyn(w, s, n);
			if (!copy_value(jr, json_next(jr), w))
				return false;
		}
		if (t != JSON_OBJ_END)
			return false;
		jw_obj_end(w);
		return true;
	case JSON_ARR_BEGIN:
		jw_arr_begin(w);
		while ((t = json_next(jr)) != JSON_ARR_END)
			if (!copy_value(jr, t, w))
				return false;
		jw_arr_end(w);
		return true;
	case JSON_STRING:
		s = json_str(jr, &n);
		jw_strn(w, s, n);
		return true;
	case JSON_NUMBER:
		jw_raw(w, jr->tstart, jr->tlen);
		return true;
	case JSON_TRUE:
	case JSON_FALSE:
		jw_bool(w, t == JSON_TRUE);
		return true;
	case JSON_NULL:
		jw_null(w);
		return true;
	default:
		return false;
	}
}

static bool key_is(const struct json_reader *jr, const char *lit)
{
	size_t n = strlen(lit);
	return jr->slen == n && memcmp(jr->sval, lit, n) == 0;
}

/* The pid of the current token (a number or a string), added when add. */
static struct st_pid *pid_of(struct st_input *in, const struct json_reader *jr, bool add)
{
	bool is_str = jr->tok == JSON_STRING;
	const char *t = is_str ? jr->sval : jr->tstart;
	size_t len = is_str ? jr->slen : jr->tlen;
	/* a trace uses a handful of pids, one after the other: the last one
	 * found first, then a scan */
	for (size_t k = 0; k < in->npids; k++) {
		size_t i = (in->last + k) % in->npids;
		struct st_pid *p = &in->pids[i];
		if (p->is_str == is_str && p->len == len && memcmp(p->text, t, len) == 0) {
			in->last = i;
			return p;
		}
	}
	if (!add || in->npids >= ST_MAX_PIDS)
		return NULL;
	if (in->npids == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 16;
		in->pids = xrealloc(in->pids, in->cap * sizeof *in->pids);
	}
	struct st_pid *p = &in->pids[in->npids];
	*p = (struct st_pid){.text = xstrndup(t, len), .len = len, .is_str = is_str};
	in->last = in->npids++;
	return p;
}

static void read_error(struct buf *err, const char *path, struct json_reader *jr, const char *what)
{
	if (jr->tok != JSON_ERROR && !jr->err.msg[0])
		json_fail_at(jr, json_tok_offset(jr), "%s", what);
	buf_printf(err, "%s: byte %llu: %s", path, (unsigned long long)jr->err.offset, jr->err.msg);
}

/* The input as a stream of tokens (plain or gzip, inflated on a thread);
 * NULL with the message in err. */
static struct trace_source *open_input(const char *path, struct json_reader *jr, struct buf *err)
{
	char eb[300];
	struct trace_source *src = trace_source_open(path, true, eb, sizeof eb);
	if (!src) {
		buf_puts(err, eb);
		return NULL;
	}
	json_reader_init_stream(jr, trace_source_read, src, 0, JSON_LENIENT_UTF8);
	return src;
}

/* Pass 1: validate the input and learn what pass 2 needs.  0, or -1. */
static int scan_input(struct st_input *in, struct buf *err)
{
	struct json_reader jr;
	struct trace_source *src = open_input(in->path, &jr, err);
	if (!src)
		return -1;
	struct jw w;
	jw_init(&w, &in->top);
	jw_obj_begin(&w);
	bool events = false;
	enum json_tok t = json_next(&jr);
	if (t != JSON_OBJ_BEGIN)
		goto fail;
	while ((t = json_next(&jr)) == JSON_KEY) {
		if (!key_is(&jr, "traceEvents") || events) {
			bool base = key_is(&jr, "baseTimeNanoseconds");
			jw_keyn(&w, jr.sval, jr.slen);
			t = json_next(&jr);
			int64_t v;
			if (base && t == JSON_NUMBER && json_num_i64(&jr.num, &v) && v > 0)
				in->base_ns = v;
			if (!copy_value(&jr, t, &w))
				goto fail;
			continue;
		}
		events = true;
		if ((t = json_next(&jr)) != JSON_ARR_BEGIN) {
			if (t != JSON_ERROR)
				json_fail_at(&jr, json_tok_offset(&jr), "traceEvents is not an array");
			goto fail;
		}
		while ((t = json_next(&jr)) != JSON_ARR_END) {
			in->events++;
			if (t != JSON_OBJ_BEGIN) {
				if (t == JSON_ERROR || !json_skip(&jr))
					goto fail;
				continue;
			}
			bool meta = false, name = false, sort = false;
			struct st_pid *p = NULL;
			while ((t = json_next(&jr)) == JSON_KEY) {
				int which = key_is(&jr, "pid") ? 1 : key_is(&jr, "ph") ? 2 : key_is(&jr, "name") ? 3 : 0;
				t = json_next(&jr);
				if (which == 1 && (t == JSON_NUMBER || t == JSON_STRING)) {
					if (!(p = pid_of(in, &jr, true))) {
						json_fail_at(&jr, json_tok_offset(&jr), "more than %d distinct pids",
							     ST_MAX_PIDS);
						goto fail;
					}
				} else if (which == 2 && t == JSON_STRING) {
					meta = jr.slen == 1 && jr.sval[0] == 'M';
				} else if (which == 3 && t == JSON_STRING) {
					name = key_is(&jr, "process_name");
					sort = key_is(&jr, "process_sort_index");
				} else if (t == JSON_ERROR || !json_skip(&jr)) {
					goto fail;
				}
			}
			if (t != JSON_OBJ_END)
				goto fail;
			if (p && meta)
				p->named |= name, p->sorted |= sort;
		}
	}
	if (t != JSON_OBJ_END || json_next(&jr) != JSON_EOF)
		goto fail;
	jw_obj_end(&w);
	json_reader_free(&jr);
	trace_source_close(src);
	if (!events) {
		buf_printf(err, "%s: no traceEvents array: not a Kineto trace or gpusnoop timeline", in->path);
		return -1;
	}
	/* the rank: distributedInfo.rank, else rank-N in the file name */
	struct json_doc doc;
	struct json_error je;
	int64_t rank;
	if (json_parse(in->top.data, in->top.len, &doc, &je)) {
		if (json_get_i64(json_get(doc.root, "distributedInfo"), "rank", &rank) && rank >= 0 && rank < INT32_MAX)
			in->rank = (int)rank, in->has_rank = true;
		json_doc_free(&doc);
	}
	if (!in->has_rank)
		in->has_rank = trace_rank_from_name(in->path, &in->rank);
	return 0;
fail:
	read_error(err, in->path, &jr, t == JSON_ERROR ? "" : "a trace must be a JSON object with a traceEvents array");
	json_reader_free(&jr);
	trace_source_close(src);
	return -1;
}

/* s[0..n) (a JSON number) plus shift_ns/1000, exactly, into out: a plain
 * decimal of up to 20 integer and 9 fraction digits; false for others
 * (exponents), which take the double path. */
static bool shift_decimal(const char *s, size_t n, int64_t shift_ns, struct buf *out)
{
	size_t i = 0;
	bool neg = n > 0 && s[0] == '-';
	i += neg;
	__int128 v = 0;
	int idig = 0, fdig = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9' && idig <= 20; i++, idig++)
		v = v * 10 + (s[i] - '0');
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9' && fdig <= 9; i++, fdig++)
			v = v * 10 + (s[i] - '0');
	}
	if (i != n || idig == 0 || idig > 20 || fdig > 9)
		return false;
	int digits = fdig > 3 ? fdig : 3; /* ns at least */
	__int128 scale = 1, p10 = 1;
	for (int k = fdig; k < digits; k++)
		v *= 10;
	for (int k = 3; k < digits; k++)
		scale *= 10;
	for (int k = 0; k < digits; k++)
		p10 *= 10;
	v = (neg ? -v : v) + (__int128)shift_ns * scale;
	if (v < 0)
		buf_putc(out, '-'), v = -v;
	char tmp[48];
	int len = 0;
	__int128 ip = v / p10, fp = v % p10;
	do
		tmp[len++] = (char)('0' + (int)(ip % 10)), ip /= 10;
	while (ip);
	while (len)
		buf_putc(out, tmp[--len]);
	for (int k = digits - 1; k >= 0; k--, fp /= 10)
		tmp[k] = (char)('0' + (int)(fp % 10));
	int keep = digits;
	while (keep > fdig && tmp[keep - 1] == '0')
		keep--;
	if (keep) {
		buf_putc(out, '.');
		buf_append(out, tmp, (size_t)keep);
	}
	return true;
}

static void write_ts(struct jw *w, const struct json_reader *jr, int64_t shift_ns, struct buf *scratch)
{
	if (shift_ns == 0) {
		jw_raw(w, jr->tstart, jr->tlen);
		return;
	}
	buf_reset(scratch);
	if (shift_decimal(jr->tstart, jr->tlen, shift_ns, scratch))
		jw_raw(w, scratch->data, scratch->len);
	else
		jw_f64(w, json_f64(jr) + (double)shift_ns / 1e3);
}

/* b[at, at+len) replaced by text. */
static void splice(struct buf *b, size_t at, size_t len, const char *text, size_t n, struct buf *tmp)
{
	buf_reset(tmp);
	buf_append(tmp, b->data, at);
	buf_append(tmp, text, n);
	buf_append(tmp, b->data + at + len, b->len - at - len);
	buf_reset(b);
	buf_append(b, tmp->data, tmp->len);
}

struct st_out {
	struct tcopy_sink *sink;
	struct buf out;     /* flushed to sink each MiB */
	struct buf ev, tmp, tmp2, name;
	bool first;         /* no element written yet */
	uint64_t written;
	uint64_t ids_kept;  /* flow ids too big or not integers: left as they are */
};

static void sort_index(struct buf *b, size_t k, size_t j)
{
	buf_printf(b, "%zu", k * 1000 + (j < 999 ? j : 999));
}

/* One traceEvents element of input k (first token t) rewritten into o->ev. */
static bool rewrite_event(struct st_out *o, struct st_input *in, size_t k, struct json_reader *jr, enum json_tok t)
{
	struct jw w;
	buf_reset(&o->ev);
	jw_init(&w, &o->ev);
	if (t != JSON_OBJ_BEGIN)
		return copy_value(jr, t, &w);
	bool meta = false, name = false, sort = false;
	struct st_pid *p = NULL;
	size_t name_at = 0, name_len = 0, sort_at = 0, sort_len = 0;
	buf_reset(&o->name);
	jw_obj_begin(&w);
	while ((t = json_next(jr)) == JSON_KEY) {
		int which = key_is(jr, "pid")	       ? 1
			    : key_is(jr, "ts")	       ? 2
			    : key_is(jr, "id")	       ? 3
			    : key_is(jr, "bind_id")    ? 3
			    : key_is(jr, "ph")	       ? 4
			    : key_is(jr, "name")       ? 5
			    : key_is(jr, "args")       ? 6
						       : 0;
		jw_keyn(&w, jr->sval, jr->slen);
		t = json_next(jr);
		uint64_t id;
		if (which == 1 && (t == JSON_NUMBER || t == JSON_STRING) && (p = pid_of(in, jr, false))) {
			jw_i64(&w, p->out);
			continue;
		}
		if (which == 2 && t == JSON_NUMBER) {
			write_ts(&w, jr, in->shift_ns, &o->tmp);
			continue;
		}
		if (which == 3 && t == JSON_NUMBER) {
			if (json_num_u64(&jr->num, &id) && id < ST_ID_LIMIT)
				jw_u64(&w, id + in->id_add);
			else
				jw_raw(&w, jr->tstart, jr->tlen), o->ids_kept++;
			continue;
		}
		if (which == 4 && t == JSON_STRING)
			meta = jr->slen == 1 && jr->sval[0] == 'M';
		if (which == 5 && t == JSON_STRING)
			name = key_is(jr, "process_name"), sort = key_is(jr, "process_sort_index");
		if (which == 6 && t == JSON_OBJ_BEGIN) {
			/* the args of a process_name / process_sort_index event:
			 * where its value is, to be rewritten once the event's
			 * name and ph are known (they may come after) */
			jw_obj_begin(&w);
			while ((t = json_next(jr)) == JSON_KEY) {
				int a = key_is(jr, "name") ? 1 : key_is(jr, "sort_index") ? 2 : 0;
				jw_keyn(&w, jr->sval, jr->slen);
				t = json_next(jr);
				size_t at = o->ev.len;
				if (a == 1 && t == JSON_STRING)
					buf_reset(&o->name), buf_append(&o->name, jr->sval, jr->slen);
				if (!copy_value(jr, t, &w))
					return false;
				if (a == 1 && t == JSON_STRING)
					name_at = at, name_len = o->ev.len - at;
				else if (a == 2 && t == JSON_NUMBER)
					sort_at = at, sort_len = o->ev.len - at;
			}
			if (t != JSON_OBJ_END)
				return false;
			jw_obj_end(&w);
			continue;
		}
		if (!copy_value(jr, t, &w))
			return false;
	}
	if (t != JSON_OBJ_END)
		return false;
	jw_obj_end(&w);
	if (!meta || !p)
		return true;
	if (name && name_len) {
		struct jw nw;
		buf_reset(&o->tmp2);
		jw_init(&nw, &o->tmp2);
		buf_reset(&o->tmp);
		buf_printf(&o->tmp, "%s: %.*s", in->label, (int)o->name.len, o->name.data);
		jw_strn(&nw, o->tmp.data, o->tmp.len);
		splice(&o->ev, name_at, name_len, o->tmp2.data, o->tmp2.len, &o->tmp);
	} else if (sort && sort_len) {
		/* the input's own order is kept beside ours */
		buf_reset(&o->tmp2);
		sort_index(&o->tmp2, k, (size_t)(p - in->pids));
		buf_puts(&o->tmp2, ",\"dyno_orig_sort_index\":");
		buf_append(&o->tmp2, o->ev.data + sort_at, sort_len);
		splice(&o->ev, sort_at, sort_len, o->tmp2.data, o->tmp2.len, &o->tmp);
	}
	return true;
}

static bool put_event(struct st_out *o, const char *text, size_t n)
{
	if (!o->first)
		buf_putc(&o->out, ',');
	o->first = false;
	buf_append(&o->out, text, n);
	o->written++;
	return tcopy_flush(o->sink, &o->out, false);
}

/* Pass 2: input k's events into OUT.  0, or -1 with the message in err. */
static int write_input(struct st_out *o, struct st_input *in, size_t k, const char *out, struct buf *err)
{
	struct json_reader jr;
	struct trace_source *src = open_input(in->path, &jr, err);
	if (!src)
		return -1;
	uint64_t n = 0;
	bool done = false;
	enum json_tok t = json_next(&jr);
	if (t != JSON_OBJ_BEGIN)
		goto fail;
	while (!done && (t = json_next(&jr)) == JSON_KEY) {
		if (!key_is(&jr, "traceEvents")) { /* kept from pass 1 */
			if (json_next(&jr) == JSON_ERROR || !json_skip(&jr))
				goto fail;
			continue;
		}
		if (json_next(&jr) != JSON_ARR_BEGIN)
			goto fail;
		while ((t = json_next(&jr)) != JSON_ARR_END) {
			if (t == JSON_ERROR || !rewrite_event(o, in, k, &jr, t))
				goto fail;
			if (!put_event(o, o->ev.data, o->ev.len)) {
				buf_printf(err, "%s: write failed: %s", out, strerror(errno));
				goto fail_quiet;
			}
			n++;
		}
		done = true; /* the rest of the file was validated by pass 1 */
	}
	json_reader_free(&jr);
	trace_source_close(src);
	if (n != in->events) {
		buf_printf(err, "%s: changed while stitching (%llu events, then %llu)", in->path,
			   (unsigned long long)in->events, (unsigned long long)n);
		return -1;
	}
	return 0;
fail:
	read_error(err, in->path, &jr, "changed while stitching");
fail_quiet:
	json_reader_free(&jr);
	trace_source_close(src);
	return -1;
}

/* The metadata events an input lacks: a name and a place for each pid. */
static bool put_metadata(struct st_out *o, const struct st_input *in, size_t k)
{
	for (size_t j = 0; j < in->npids; j++) {
		const struct st_pid *p = &in->pids[j];
		for (int which = 0; which < 2; which++) {
			if (which == 0 ? p->named : p->sorted)
				continue;
			struct jw w;
			buf_reset(&o->ev);
			jw_init(&w, &o->ev);
			jw_obj_begin(&w);
			jw_key(&w, "name");
			jw_str(&w, which == 0 ? "process_name" : "process_sort_index");
			jw_key(&w, "ph");
			jw_str(&w, "M");
			jw_key(&w, "pid");
			jw_i64(&w, p->out);
			jw_key(&w, "tid");
			jw_i64(&w, 0);
			jw_key(&w, "args");
			jw_obj_begin(&w);
			buf_reset(&o->tmp);
			if (which == 0) {
				buf_printf(&o->tmp, "%s: pid %.*s", in->label, (int)p->len, p->text);
				jw_key(&w, "name");
				jw_strn(&w, o->tmp.data, o->tmp.len);
			} else {
				sort_index(&o->tmp, k, j);
				jw_key(&w, "sort_index");
				jw_raw(&w, o->tmp.data, o->tmp.len);
			}
			jw_obj_end(&w);
			jw_obj_end(&w);
			if (!put_event(o, o->ev.data, o->ev.len))
				return false;
		}
	}
	return true;
}

/* The closing part of OUT: the common base time and what each input was. */
static void put_tail(struct st_out *o, const struct st_input *in, size_t n, int64_t base_ns)
{
	struct jw w;
	jw_init(&w, &o->out);
	w.depth = 1, w.need_comma = true; /* inside the top-level object */
	if (base_ns > 0) {
		jw_key(&w, "baseTimeNanoseconds");
		jw_i64(&w, base_ns);
	}
	jw_key(&w, "dynoStitch");
	jw_obj_begin(&w);
	jw_key(&w, "inputs");
	jw_arr_begin(&w);
	for (size_t k = 0; k < n; k++) {
		jw_obj_begin(&w);
		jw_key(&w, "file");
		jw_str(&w, in[k].path);
		jw_key(&w, "label");
		jw_str(&w, in[k].label);
		jw_key(&w, "rank");
		if (in[k].has_rank)
			jw_i64(&w, in[k].rank);
		else
			jw_null(&w);
		jw_key(&w, "events");
		jw_u64(&w, in[k].events);
		jw_key(&w, "shift_ns");
		jw_i64(&w, in[k].shift_ns);
		jw_key(&w, "flow_id_offset");
		jw_u64(&w, in[k].id_add);
		jw_key(&w, "pids");
		jw_arr_begin(&w);
		for (size_t j = 0; j < in[k].npids; j++) {
			const struct st_pid *p = &in[k].pids[j];
			jw_obj_begin(&w);
			jw_key(&w, "pid");
			jw_i64(&w, p->out);
			jw_key(&w, "orig");
			if (p->is_str)
				jw_strn(&w, p->text, p->len);
			else
				jw_raw(&w, p->text, p->len);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_key(&w, "top");
		jw_raw(&w, in[k].top.data, in[k].top.len);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	buf_putc(&o->out, '}');
}

static int input_cmp(const void *a, const void *b)
{
	const struct st_input *x = a, *y = b;
	if (x->has_rank != y->has_rank)
		return x->has_rank ? -1 : 1;
	if (x->has_rank && x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* --offset FILE=US,...: each FILE (a path as given, or a file name) must
 * name an input.  0, or -1 with the message in err. */
static int apply_offsets(const char *spec, struct st_input *in, size_t n, struct buf *err)
{
	char *copy = xstrdup(spec), *save = NULL;
	int rc = 0;
	for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(item, '='), *end;
		double us = eq ? strtod(eq + 1, &end) : 0;
		if (!eq || eq == item || end == eq + 1 || *end || us != us || us > 9e12 || us < -9e12) {
			buf_printf(err, "--offset: '%s' is not FILE=MICROSECONDS", item);
			rc = -1;
			break;
		}
		*eq = 0;
		bool found = false;
		for (size_t k = 0; k < n; k++)
			if (strcmp(in[k].path, item) == 0 || strcmp(in[k].base, item) == 0)
				in[k].offset_ns = (int64_t)(us * 1e3 + (us < 0 ? -0.5 : 0.5)), found = true;
		if (!found) {
			buf_printf(err, "--offset: no input is '%s'", item);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

static void inputs_free(struct st_input *in, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		free(in[k].path);
		free(in[k].label);
		buf_free(&in[k].top);
		for (size_t j = 0; j < in[k].npids; j++)
			free(in[k].pids[j].text);
		free(in[k].pids);
	}
	free(in);
}

/* Labels, pids, shifts, once the inputs are scanned and sorted. */
static int64_t plan(struct st_input *in, size_t n)
{
	int64_t base = INT64_MAX;
	for (size_t k = 0; k < n; k++)
		if (in[k].base_ns < base)
			base = in[k].base_ns;
	int64_t next_pid = 1;
	for (size_t k = 0; k < n; k++) {
		struct buf l = BUF_INIT;
		if (in[k].has_rank)
			buf_printf(&l, "rank %d (%s)", in[k].rank, in[k].base);
		else
			buf_puts(&l, in[k].base);
		for (size_t j = 0; j < k; j++) /* the same file name in two directories */
			if (strcmp(in[j].label, l.data) == 0) {
				buf_printf(&l, " #%zu", k);
				break;
			}
		in[k].label = buf_detach(&l, NULL);
		in[k].shift_ns = in[k].base_ns - base + in[k].offset_ns;
		in[k].id_add = (uint64_t)k << 40;
		for (size_t j = 0; j < in[k].npids; j++)
			in[k].pids[j].out = next_pid++;
	}
	return base;
}

static bool same_file(const char *a, const struct stat *b)
{
	struct stat st;
	return stat(a, &st) == 0 && st.st_dev == b->st_dev && st.st_ino == b->st_ino;
}

int stitch_run(char *const *pos, int npos, const char *out, const char *offsets, bool quiet)
{
	int rc;
	struct buf err = BUF_INIT, tmpname = BUF_INIT;
	char **paths = NULL;
	size_t np = 0, cap = 0;
	struct st_input *in = NULL;
	size_t n = 0;
	struct st_out o = {.first = true};
	rc = 1;
	if (!out || !*out) {
		fprintf(stderr, "dyno stitch: -o OUT is required\n");
		rc = 2;
		goto done;
	}
	for (int i = 0; i < npos; i++) {
		if (strcmp(pos[i], "-") == 0) {
			fprintf(stderr, "dyno stitch: each input is read twice: '-' (stdin) is not accepted\n");
			rc = 2;
			goto done;
		}
		if (trace_list_path(pos[i], &paths, &np, &cap, &err) != 0)
			goto done;
	}
	/* a directory holding OUT from an earlier run: never its own input */
	struct stat ost;
	bool out_exists = stat(out, &ost) == 0;
	in = xcalloc(np ? np : 1, sizeof *in);
	for (size_t i = 0; i < np; i++) {
		if (out_exists && same_file(paths[i], &ost))
			continue;
		struct st_input *x = &in[n++];
		x->path = paths[i];
		paths[i] = NULL;
		const char *slash = strrchr(x->path, '/');
		x->base = slash ? slash + 1 : x->path;
		buf_init(&x->top);
		if (scan_input(x, &err) != 0)
			goto done;
	}
	if (n == 0) {
		fprintf(stderr, "dyno stitch: no input besides %s\n", out);
		goto done;
	}
	qsort(in, n, sizeof *in, input_cmp);
	if (offsets && apply_offsets(offsets, in, n, &err) != 0) {
		rc = 2;
		goto done;
	}
	int64_t base = plan(in, n);
	/* OUT that exists and is no regular file (a FIFO, /dev/stdout, a
	 * device): written in place; a temporary file renamed onto it would
	 * replace the device with a file */
	bool in_place = out_exists && !S_ISREG(ost.st_mode);
	if (in_place)
		buf_puts(&tmpname, out);
	else
		buf_printf(&tmpname, "%s.tmp-%ld", out, (long)getpid());
	if (!(o.sink = tcopy_sink_open(tmpname.data, tcopy_out_gz(out), &err)))
		goto done;
	buf_puts(&o.out, "{\"traceEvents\":[");
	bool ok = true;
	for (size_t k = 0; k < n && ok; k++)
		ok = write_input(&o, &in[k], k, out, &err) == 0;
	for (size_t k = 0; k < n && ok; k++)
		if (!(ok = put_metadata(&o, &in[k], k)))
			buf_printf(&err, "%s: write failed: %s", out, strerror(errno));
	if (ok) {
		buf_putc(&o.out, ']');
		put_tail(&o, in, n, base);
		if (!(ok = tcopy_flush(o.sink, &o.out, true)))
			buf_printf(&err, "%s: write failed: %s", out, strerror(errno));
	}
	if (tcopy_sink_close(o.sink, ok, tmpname.data, &err) != 0 || !ok) {
		if (!in_place)
			remove(tmpname.data);
		goto done;
	}
	if (!in_place && rename(tmpname.data, out) != 0) {
		buf_printf(&err, "%s: %s", out, strerror(errno));
		remove(tmpname.data);
		goto done;
	}
	rc = 0;
	if (!quiet) {
		printf("%-5s %-40s %10s %5s %18s\n", "rank", "file", "events", "pids", "shift_us");
		for (size_t k = 0; k < n; k++) {
			char r[16] = "-";
			if (in[k].has_rank)
				snprintf(r, sizeof r, "%d", in[k].rank);
			printf("%-5s %-40s %10llu %5zu %18.3f\n", r, in[k].path, (unsigned long long)in[k].events,
			       in[k].npids, (double)in[k].shift_ns / 1e3);
		}
		uint64_t kept = 0;
		for (size_t k = 0; k < n; k++)
			kept += in[k].events;
		printf("%s: %llu events of %zu inputs, %llu process metadata events added\n", out,
		       (unsigned long long)kept, n, (unsigned long long)(o.written - kept));
	}
	if (o.ids_kept)
		fprintf(stderr, "dyno stitch: note: %llu flow ids were not integers below 2^40 and were left as they are\n",
			(unsigned long long)o.ids_kept);
done:
	if (err.len)
		fprintf(stderr, "dyno stitch: %s\n", err.data);
	buf_free(&err);
	buf_free(&tmpname);
	buf_free(&o.out);
	buf_free(&o.ev);
	buf_free(&o.tmp);
	buf_free(&o.tmp2);
	buf_free(&o.name);
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	if (in)
		inputs_free(in, n);
	return rc;
}
