/*
 * trace_copy.c - a rank's trace file copied with text added at byte
 * offsets (trace_copy.h): the writer behind every `--write-trace OUT`.
 * The original bytes are kept as they are (every arg, every key order the
 * analyses never read), which re-serialising a parsed model could not do.
 *
 * Cost: the file is read twice as a stream (tcopy_scan: the JSON tokenizer
 * validates it, finds where traceEvents ends and looks at the elements it
 * is asked about; then tcopy_write_trace: a byte copy in 1 MiB pieces), so
 * memory stays a read window plus what the caller adds; a .gz input is
 * inflated twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "analyze/trace_copy.h"
#include "core/json.h"
#include "trace/source.h"

/* One element asked about: its fields (the reader is at its first token). */
static bool scan_event(struct json_reader *jr, enum json_tok t, struct tcopy_event *e, struct buf *text)
{
	if (t != JSON_OBJ_BEGIN)
		return json_skip(jr);
	e->found = true;
	e->args_end = UINT64_MAX;
	e->no_members = true;
	while ((t = json_next(jr)) == JSON_KEY) {
		e->no_members = false;
		size_t n;
		const char *k = json_str(jr, &n);
		int which = n == 2 && memcmp(k, "ts", 2) == 0     ? 1
			    : n == 3 && memcmp(k, "dur", 3) == 0  ? 2
			    : n == 3 && memcmp(k, "pid", 3) == 0  ? 3
			    : n == 3 && memcmp(k, "tid", 3) == 0  ? 4
			    : n == 4 && memcmp(k, "args", 4) == 0 ? 5
								  : 0;
		t = json_next(jr);
		if (t == JSON_ERROR)
			return false;
		if ((which == 1 || which == 2) && t == JSON_NUMBER) {
			*(which == 1 ? &e->ts : &e->dur) = json_f64(jr);
			*(which == 1 ? &e->has_ts : &e->has_dur) = true;
		} else if ((which == 3 || which == 4) && (t == JSON_NUMBER || t == JSON_STRING)) {
			/* the raw token: a number's text or the string literal */
			*(which == 3 ? &e->pid_off : &e->tid_off) = text->len;
			*(which == 3 ? &e->pid_len : &e->tid_len) = jr->tlen;
			buf_append(text, jr->tstart, jr->tlen);
		} else if (which == 5 && t == JSON_OBJ_BEGIN) {
			e->args_empty = true;
			while ((t = json_next(jr)) == JSON_KEY) {
				e->args_empty = false;
				k = json_str(jr, &n);
				bool dev = n == 6 && memcmp(k, "device", 6) == 0;
				t = json_next(jr);
				if (dev && t == JSON_NUMBER)
					e->device = json_f64(jr) >= 0;
				else if (t == JSON_ERROR || !json_skip(jr))
					return false;
			}
			if (t != JSON_OBJ_END)
				return false;
			e->args_end = json_tok_offset(jr);
		} else if (which == 5) {
			e->args_other = true;
			if (!json_skip(jr))
				return false;
		} else if (!json_skip(jr)) {
			return false;
		}
	}
	if (t != JSON_OBJ_END)
		return false;
	e->obj_end = json_tok_offset(jr);
	return true;
}

int tcopy_scan(const char *path, struct tcopy_event *ev, size_t nev, struct tcopy_scan *sc, struct buf *err)
{
	memset(sc, 0, sizeof *sc);
	buf_init(&sc->text);
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
		sc->nonempty = false;
		size_t w = 0;
		for (uint32_t idx = 0; (t = json_next(&jr)) != JSON_ARR_END; idx++) {
			if (t == JSON_ERROR)
				goto fail;
			while (w < nev && ev[w].idx < idx)
				w++;
			bool ok = w < nev && ev[w].idx == idx ? scan_event(&jr, t, &ev[w], &sc->text) : json_skip(&jr);
			if (!ok) {
				if (jr.tok != JSON_ERROR)
					json_fail_at(&jr, json_tok_offset(&jr), "unexpected token in an event");
				goto fail;
			}
			sc->nonempty = true;
		}
		sc->events_end = json_tok_offset(&jr);
	}
	if (t != JSON_OBJ_END || json_next(&jr) != JSON_EOF)
		goto fail;
	json_reader_free(&jr);
	trace_source_close(src);
	if (!found) {
		buf_printf(err, "%s: no traceEvents array", path);
		tcopy_scan_free(sc);
		return -1;
	}
	return 0;
fail:
	buf_printf(err, "%s: byte %llu: %s", path, (unsigned long long)jr.err.offset,
		   jr.err.msg[0] ? jr.err.msg : "not a JSON object");
	json_reader_free(&jr);
	trace_source_close(src);
	tcopy_scan_free(sc);
	return -1;
}

void tcopy_scan_free(struct tcopy_scan *sc) { buf_free(&sc->text); }

struct tcopy_sink {
	FILE *f;
	gzFile gz;
};

bool tcopy_write(struct tcopy_sink *s, const void *p, size_t n)
{
	if (!n)
		return true;
	if (s->gz)
		return gzwrite(s->gz, p, (unsigned)n) == (int)n;
	return fwrite(p, 1, n, s->f) == n;
}

bool tcopy_flush(struct tcopy_sink *s, struct buf *b, bool force)
{
	if (!force && b->len < (1u << 20))
		return true;
	bool ok = tcopy_write(s, b->data, b->len);
	buf_reset(b);
	return ok;
}

bool tcopy_out_gz(const char *out)
{
	size_t len = strlen(out);
	return len > 3 && strcmp(out + len - 3, ".gz") == 0;
}

struct tcopy_sink *tcopy_sink_open(const char *path, bool gz, struct buf *err)
{
	struct tcopy_sink *s = xcalloc(1, sizeof *s);
	if (gz)
		s->gz = gzopen(path, "wb");
	else
		s->f = fopen(path, "wb");
	if (!s->gz && !s->f) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		free(s);
		return NULL;
	}
	return s;
}

int tcopy_sink_close(struct tcopy_sink *s, bool ok, const char *path, struct buf *err)
{
	if (!s)
		return ok ? 0 : -1;
	int rc = s->gz ? gzclose(s->gz) : fclose(s->f);
	free(s);
	if (ok && rc != 0) {
		buf_printf(err, "%s: write failed: %s", path, strerror(errno));
		ok = false;
	}
	return ok ? 0 : -1;
}

int tcopy_write_trace(const char *in, const char *out, const struct tcopy_scan *sc, const struct tcopy_insert *ins,
		      size_t nins, tcopy_tail_fn tail, void *ctx, struct buf *err)
{
	/* what failed is removed, unless OUT was there and no regular file
	 * (a FIFO, a device: /dev/full must stay a device) */
	struct stat ost;
	bool keep = stat(out, &ost) == 0 && !S_ISREG(ost.st_mode);
	struct tcopy_sink *sp = tcopy_sink_open(out, tcopy_out_gz(out), err);
	if (!sp)
		return -1;
	char eb[256];
	struct trace_source *src = trace_source_open(in, false, eb, sizeof eb);
	if (!src) {
		buf_printf(err, "%s", eb);
		tcopy_sink_close(sp, false, out, err);
		if (!keep)
			remove(out);
		return -1;
	}
	size_t cap = 1 << 20;
	char *chunk = xmalloc(cap);
	uint64_t off = 0;
	size_t next = 0; /* the next insertion */
	bool ok = true, tail_done = false;
	const char *rerr = NULL;
	for (;;) {
		ssize_t n = trace_source_read(src, chunk, cap, &rerr);
		if (n < 0) {
			buf_printf(err, "%s: %s", in, rerr ? rerr : "read error");
			ok = false;
			break;
		}
		if (n == 0)
			break;
		/* the chunk in pieces, cut at each insertion point inside it */
		size_t at = 0;
		while (ok) {
			uint64_t cut = off + (uint64_t)n;
			bool is_tail = false;
			if (next < nins && ins[next].off < cut)
				cut = ins[next].off;
			if (!tail_done && sc->events_end < cut)
				cut = sc->events_end, is_tail = true;
			if (cut >= off + (uint64_t)n) {
				ok = tcopy_write(sp, chunk + at, (size_t)n - at);
				break;
			}
			ok = tcopy_write(sp, chunk + at, (size_t)(cut - off) - at);
			at = (size_t)(cut - off);
			if (!ok)
				break;
			if (is_tail) {
				ok = tail ? tail(ctx, sp, sc->nonempty) : true;
				tail_done = true;
			} else {
				ok = tcopy_write(sp, ins[next].text, ins[next].len);
				next++;
			}
		}
		if (!ok) {
			if (!err->len)
				buf_printf(err, "%s: write failed: %s", out, strerror(errno));
			break;
		}
		off += (uint64_t)n;
	}
	if (ok && !tail_done) {
		buf_printf(err, "%s: ended before byte %llu (changed while reading?)", in,
			   (unsigned long long)sc->events_end);
		ok = false;
	}
	free(chunk);
	trace_source_close(src);
	if (tcopy_sink_close(sp, ok, out, err) != 0)
		ok = false;
	if (!ok && !keep)
		remove(out);
	return ok ? 0 : -1;
}

int tcopy_check_out(const char *out, struct buf *err)
{
	if (!*out) {
		buf_puts(err, "--write-trace: empty file name");
		return -1;
	}
	const char *slash = strrchr(out, '/');
	struct buf dir = BUF_INIT;
	if (!slash)
		buf_puts(&dir, ".");
	else if (slash == out)
		buf_puts(&dir, "/");
	else
		buf_printf(&dir, "%.*s", (int)(slash - out), out);
	int rc = 0;
	if (access(dir.data, W_OK | X_OK) != 0) {
		buf_printf(err, "--write-trace %s: directory %s: %s", out, dir.data, strerror(errno));
		rc = -1;
	}
	buf_free(&dir);
	return rc;
}
