/*
 * patterns_trace.c - `dyno analyze patterns --patterns-trace OUT`: HTA's
 * overlaid trace of get_frequent_cuda_kernel_sequences.  The rank's trace
 * file is copied byte for byte, except that each event of a top-k pattern
 * (the roots, their descendants and their GPU rows) gets an arg
 * "Patterns": {"<pattern>": count}, searchable in Perfetto / Chrome
 * tracing.  HTA also replaces the names of every other complete event by
 * symbol ids to save memory (compress_other_kernels); we keep them (HTA's
 * compress_other_kernels=False), so the file is the original plus the
 * marks.  OUT is gzip when its name ends in ".gz" (trace_out.c).
 *
 * Cost: the file is read twice as a stream: a pass of the JSON tokenizer
 * that finds where each marked event's args object (or the event) closes,
 * then a byte copy that inserts the marks there; memory is a read window,
 * the marked event ids and one insertion point per marked event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/trace_out.h"
#include "core/json.h"
#include "trace/source.h"

/* A marked event: its id, the pattern, and where the mark goes. */
struct mark {
	uint32_t idx;    /* position in traceEvents */
	int32_t pattern; /* row of the table */
	uint64_t at;     /* offset of the `}` the text goes before; 0: not found */
	uint8_t how;     /* 0: into args (empty), 1: into args (after members), 2: new args */
};

static int cmp_mark(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The members of the object just opened; for an event (args_of false),
 * m->at / m->how name where its mark goes.  false: not valid JSON. */
static bool scan_event(struct json_reader *jr, struct mark *m)
{
	enum json_tok t;
	size_t members = 0;
	bool args_done = false;
	while ((t = json_next(jr)) == JSON_KEY) {
		size_t n;
		const char *k = json_str(jr, &n);
		bool args = n == 4 && memcmp(k, "args", 4) == 0;
		members++;
		t = json_next(jr);
		if (t == JSON_ERROR)
			return false;
		if (!args || t != JSON_OBJ_BEGIN) {
			if (args)
				args_done = true; /* args that is no object: left alone */
			if (!json_skip(jr))
				return false;
			continue;
		}
		size_t am = 0;
		while ((t = json_next(jr)) == JSON_KEY) {
			am++;
			if (json_next(jr) == JSON_ERROR || !json_skip(jr))
				return false;
		}
		if (t != JSON_OBJ_END)
			return false;
		if (!args_done) {
			m->at = json_tok_offset(jr);
			m->how = am ? 1 : 0;
		}
		args_done = true;
	}
	if (t != JSON_OBJ_END)
		return false;
	if (!args_done && members) {
		m->at = json_tok_offset(jr);
		m->how = 2;
	}
	return true;
}

/* Pass 1: where each mark goes (marks sorted by idx). */
static int find_marks(const char *path, struct mark *marks, size_t nm, struct buf *err)
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
		size_t m = 0;
		for (uint64_t idx = 0; (t = json_next(&jr)) != JSON_ARR_END; idx++) {
			if (t == JSON_ERROR)
				goto fail;
			while (m < nm && marks[m].idx < idx)
				m++;
			if (m < nm && marks[m].idx == idx && t == JSON_OBJ_BEGIN) {
				if (!scan_event(&jr, &marks[m]))
					goto fail;
			} else if (!json_skip(&jr)) {
				goto fail;
			}
		}
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

/* the text inserted for mark m */
static void mark_text(const struct mark *m, const struct atable *t, struct buf *b)
{
	struct jw w;
	buf_puts(b, m->how == 1 ? "," : m->how == 2 ? ",\"args\":{" : "");
	buf_puts(b, "\"Patterns\":");
	jw_init(&w, b);
	jw_obj_begin(&w);
	jw_key(&w, atable_cell((struct atable *)t, (size_t)m->pattern, 0)->s);
	jw_i64(&w, atable_cell((struct atable *)t, (size_t)m->pattern, 1)->i);
	jw_obj_end(&w);
	if (m->how == 2)
		buf_putc(b, '}');
}

static int cmp_at(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

int patterns_write_trace(const struct trace_rank *r, const struct atable *t, const int32_t *marks, const char *out,
			 struct buf *err)
{
	size_t nm = 0;
	for (size_t i = 0; i < r->n; i++)
		nm += marks[i] >= 0;
	struct mark *ms = xmalloc((nm ? nm : 1) * sizeof *ms);
	nm = 0;
	for (size_t i = 0; i < r->n; i++)
		if (marks[i] >= 0 && (size_t)marks[i] < t->nrows)
			ms[nm++] = (struct mark){r->idx[i], marks[i], 0, 0};
	qsort(ms, nm, sizeof *ms, cmp_mark);
	if (find_marks(r->path, ms, nm, err) != 0) {
		free(ms);
		return -1;
	}
	/* in file order; a mark not found (the event changed?) is dropped */
	qsort(ms, nm, sizeof *ms, cmp_at);
	size_t m = 0;
	while (m < nm && ms[m].at == 0)
		m++;

	struct trace_out s;
	if (trace_out_open(&s, out, err) != 0) {
		free(ms);
		return -1;
	}
	char eb[256];
	struct trace_source *src = trace_source_open(r->path, false, eb, sizeof eb);
	if (!src) {
		buf_printf(err, "%s", eb);
		trace_out_close(&s, false, err);
		free(ms);
		return -1;
	}
	size_t cap = 1 << 20;
	char *chunk = xmalloc(cap);
	struct buf text = BUF_INIT;
	uint64_t off = 0;
	bool ok = true;
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
		size_t done = 0;
		while (ok && m < nm && ms[m].at < off + (uint64_t)n) {
			size_t cut = (size_t)(ms[m].at - off);
			ok = trace_out_write(&s, chunk + done, cut - done);
			buf_reset(&text);
			mark_text(&ms[m], t, &text);
			ok = ok && trace_out_write(&s, text.data, text.len);
			done = cut;
			m++;
		}
		ok = ok && trace_out_write(&s, chunk + done, (size_t)n - done);
		if (!ok) {
			buf_printf(err, "%s: write failed: %s", out, strerror(errno));
			break;
		}
		off += (uint64_t)n;
	}
	if (ok && m < nm) {
		buf_printf(err, "%s: ended before byte %llu (changed while reading?)", r->path,
			   (unsigned long long)ms[m].at);
		ok = false;
	}
	buf_free(&text);
	free(chunk);
	free(ms);
	trace_source_close(src);
	return trace_out_close(&s, ok, err);
}
