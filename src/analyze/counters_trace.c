/*
 * counters_trace.c - `dyno analyze counters --write-trace OUT`: the rank's
 * trace file, unchanged, with HTA's two counter series added at the end of
 * traceEvents as counter events (ph "C"), like HTA's
 * generate_trace_with_counters: "Queue Length" (id = stream, on the GPU's
 * pid) and "Memcpy BW" (one arg per memory type).  Times go back to the
 * file's time base (+ the alignment offset).  OUT is gzip when its name
 * ends in ".gz".
 *
 * Cost: the file is read twice as a stream (a pass of the JSON tokenizer
 * that validates it and finds where traceEvents ends, then a byte copy), and
 * the counter events are written in 1 MiB pieces (trace_out.c), so memory stays a read
 * window plus the two series; a .gz input is inflated twice.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/counters.h"
#include "analyze/trace_out.h"
#include "core/json.h"
#include "trace/source.h"

/* Offset of the `]` that closes the top-level "traceEvents" array and
 * whether the array has elements; the whole document is read, so a file
 * that is not valid JSON is refused here. */
static int find_events_end(const char *path, uint64_t *end, bool *nonempty, struct buf *err)
{
	char eb[256];
	struct trace_source *src = trace_source_open(path, false, eb, sizeof eb);
	if (!src) {
		buf_printf(err, "%s", eb);
		return -1;
	}
	struct json_reader jr;
	json_reader_init_stream(&jr, trace_source_read, src, 0, 0);
	bool found = false;
	enum json_tok t = json_next(&jr);
	if (t != JSON_OBJ_BEGIN) {
		if (t != JSON_ERROR)
			json_fail_at(&jr, json_tok_offset(&jr), "expected a JSON object");
		goto fail;
	}
	while ((t = json_next(&jr)) == JSON_KEY) {
		size_t n;
		const char *k = json_str(&jr, &n);
		bool events = !found && n == 11 && memcmp(k, "traceEvents", 11) == 0;
		t = json_next(&jr);
		if (t == JSON_ERROR)
			goto fail;
		if (!events || t != JSON_ARR_BEGIN) {
			if (!json_skip(&jr))
				goto fail;
			continue;
		}
		found = true;
		*nonempty = false;
		while ((t = json_next(&jr)) != JSON_ARR_END) {
			if (t == JSON_ERROR || !json_skip(&jr))
				goto fail;
			*nonempty = true;
		}
		*end = json_tok_offset(&jr);
	}
	if (t != JSON_OBJ_END || json_next(&jr) != JSON_EOF)
		goto fail;
	json_reader_free(&jr);
	trace_source_close(src);
	if (!found) {
		buf_printf(err, "%s: no traceEvents array", path);
		return -1;
	}
	return 0;
fail:
	buf_printf(err, "%s: byte %llu: %s", path, (unsigned long long)jr.err.offset,
		   jr.err.msg[0] ? jr.err.msg : "not a JSON object");
	json_reader_free(&jr);
	trace_source_close(src);
	return -1;
}

/* The counter events to the sink, each preceded by a comma when
 * first_comma or not the first; written in 1 MiB pieces, so memory stays
 * the two series. */
/* The start of one counter event, up to its "ts" (the caller adds "id"
 * and "args" and closes it), after a separator unless it is the first. */
static void counter_begin(struct jw *w, struct buf *b, bool *comma, const struct trace_rank *r, const char *name,
			  int64_t pid, double ts)
{
	if (*comma)
		buf_puts(b, ",\n");
	*comma = true;
	jw_init(w, b);
	jw_obj_begin(w);
	jw_key(w, "ph");
	jw_str(w, "C");
	jw_key(w, "name");
	jw_str(w, name);
	jw_key(w, "pid");
	if (trace_id_is_str(pid))
		jw_str(w, trace_strtab_get(&r->strs, (uint32_t)(pid - TRACE_ID_STR_BASE)));
	else
		jw_i64(w, pid);
	jw_key(w, "ts");
	jw_f64(w, ts);
}

static bool counter_events(const struct trace_rank *r, bool first_comma, struct trace_out *s)
{
	struct buf text = BUF_INIT, *b = &text;
	bool ok = true;
	struct jw w;
	bool comma = first_comma;
	struct queue_point *q;
	bool mismatch;
	size_t nq = counters_queue_series(r, &q, &mismatch);
	for (size_t i = 0; i < nq; i++) {
		double ts = q[i].ts + r->min_ts;
		if (!isfinite(ts))
			continue;
		counter_begin(&w, b, &comma, r, "Queue Length", q[i].pid, ts);
		jw_key(&w, "id");
		jw_i64(&w, q[i].stream);
		jw_key(&w, "args");
		jw_obj_begin(&w);
		jw_key(&w, "queue_length");
		jw_i64(&w, q[i].queue_length);
		jw_obj_end(&w);
		jw_obj_end(&w);
		ok = ok && trace_out_flush(s, b, false);
	}
	free(q);
	struct bw_point *p;
	char **types;
	size_t nt;
	size_t np = counters_bw_series(r, &p, &types, &nt);
	for (size_t i = 0; i < np; i++) {
		double ts = p[i].ts + r->min_ts;
		if (!isfinite(ts) || !isfinite(p[i].gbps))
			continue;
		counter_begin(&w, b, &comma, r, "Memcpy BW", p[i].pid, ts);
		jw_key(&w, "args");
		jw_obj_begin(&w);
		jw_key(&w, types[p[i].type]);
		jw_f64(&w, p[i].gbps);
		jw_obj_end(&w);
		jw_obj_end(&w);
		ok = ok && trace_out_flush(s, b, false);
	}
	for (size_t t = 0; t < nt; t++)
		free(types[t]);
	free(types);
	free(p);
	ok = ok && trace_out_flush(s, b, true);
	buf_free(&text);
	return ok;
}

int counters_write_trace(const struct trace_rank *r, const char *out, struct buf *err)
{
	uint64_t end = 0;
	bool nonempty = false;
	if (find_events_end(r->path, &end, &nonempty, err) != 0)
		return -1;
	struct trace_out s;
	if (trace_out_open(&s, out, err) != 0)
		return -1;
	char eb[256];
	struct trace_source *src = trace_source_open(r->path, false, eb, sizeof eb);
	if (!src) {
		buf_printf(err, "%s", eb);
		trace_out_close(&s, false, err);
		return -1;
	}
	size_t cap = 1 << 20;
	char *chunk = xmalloc(cap);
	uint64_t off = 0;
	bool ok = true, injected = false;
	const char *rerr = NULL;
	for (;;) {
		ssize_t n = trace_source_read(src, chunk, cap, &rerr);
		if (n < 0) {
			buf_printf(err, "%s: %s", r->path, rerr ? rerr : "read error");
			ok = false;
			break;
		}
		if (n == 0)
			break;
		size_t cut = (size_t)n;
		if (!injected && end < off + (uint64_t)n)
			cut = (size_t)(end - off);
		ok = trace_out_write(&s, chunk, cut);
		if (ok && cut < (size_t)n) {
			ok = counter_events(r, nonempty, &s) && trace_out_write(&s, chunk + cut, (size_t)n - cut);
			injected = true;
		}
		if (!ok) {
			buf_printf(err, "%s: write failed: %s", out, strerror(errno));
			break;
		}
		off += (uint64_t)n;
	}
	if (ok && !injected) {
		buf_printf(err, "%s: ended before byte %llu (changed while reading?)", r->path,
			   (unsigned long long)end);
		ok = false;
	}
	free(chunk);
	trace_source_close(src);
	return trace_out_close(&s, ok, err);
}
