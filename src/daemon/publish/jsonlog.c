/*
 * jsonlog.c - the JSON metric log sink (see jsonlog.h): rendering a frame
 * into a line, and writing it without ever blocking the loop.
 *
 * The destination (--json_log_file, stdout by default) is non-blocking: a
 * line that would block is dropped whole and counted
 * (dynolog_json_lines_dropped_total), and a line that fails half-way (a
 * full disk) is taken back: the file only ever holds whole lines.  A file
 * is reopened on every reload,
 * so `kill -HUP` after logrotate moved it starts a new one.  Cost: one
 * write() per tick (plus one FIONREAD ioctl when the destination is a pipe).
 */
#include "jsonlog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "daemon/publish/sink.h"

void jsonlog_render(struct frame *f, enum jsonlog_mode mode, struct buf *out)
{
	char ts[40];
	clock_fmt_iso8601(ts, sizeof ts, f->wall_ns);
	frame_sort(f);
	struct jw w;
	jw_init(&w, out);
	if (mode == JSONLOG_UPSTREAM) {
		buf_printf(out, "time = %s data = ", ts);
	} else {
		jw_obj_begin(&w);
		jw_key(&w, "time");
		jw_str(&w, ts);
		jw_key(&w, "data");
	}
	jw_obj_begin(&w);
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		if (frame_key_export_only(frame_key(f, v)))
			continue; /* Prometheus' absolute counters: not upstream's record */
		jw_key(&w, frame_key(f, v));
		switch (v->type) {
		case FV_INT: jw_i64(&w, v->v.i); break;
		case FV_UINT: jw_u64(&w, v->v.u); break;
		case FV_STRING: jw_str(&w, f->names.data + v->sval); break;
		case FV_FLOAT:
			if (mode == JSONLOG_UPSTREAM) {
				char t[64];
				if (isnan(v->v.f))
					snprintf(t, sizeof t, "nan");
				else
					snprintf(t, sizeof t, "%.3f", v->v.f);
				jw_str(&w, t);
			} else {
				jw_f64(&w, v->v.f);
			}
			break;
		}
	}
	jw_obj_end(&w);
	if (mode == JSONLOG_JSONL)
		jw_obj_end(&w);
	buf_putc(out, '\n');
}

/* ---------------- writing ---------------- */

struct jsonlog_sink {
	int fd;
	int pipe_cap; /* capacity when the destination is a pipe, else -1 */
	enum jsonlog_mode mode;
	bool on;      /* --use_JSON: the destination is open either way */
	uint64_t dropped;
	struct buf line;
};

static void drop(struct jsonlog_sink *s)
{
	s->dropped++;
	LOG_ONCE(LOG_LEVEL_WARN, "JSON metric log: output would block; dropping lines (counted in "
				 "dynolog_json_lines_dropped_total)");
}

/* A write failed after off bytes of the line went out (a full disk, a file
 * size limit): take them back, so the file holds whole lines only and the
 * next line does not start in the middle of this one.  The file is opened
 * O_APPEND and we are its only writer, so the partial line is its last off
 * bytes.  Costs nothing until a write fails. */
static void unwrite(struct jsonlog_sink *s, size_t off)
{
	struct stat st;
	if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size >= off &&
	    ftruncate(s->fd, st.st_size - (off_t)off) == 0)
		return;
	/* not a regular file, or it cannot shrink: end the partial line so the
	 * next one starts clean (may fail too on a full disk) */
	(void)!write(s->fd, "\n", 1);
}

static void write_line(struct jsonlog_sink *s)
{
	const struct buf *l = &s->line;
	if (s->pipe_cap > 0 && l->len <= (size_t)s->pipe_cap) {
		/* a pipe: drop the whole line rather than write half of it */
		int unread = 0;
		if (ioctl(s->fd, FIONREAD, &unread) == 0 && unread >= 0 && l->len > (size_t)(s->pipe_cap - unread)) {
			drop(s);
			return;
		}
	}
	size_t off = 0;
	while (off < l->len) {
		ssize_t w = write(s->fd, l->data + off, l->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* the reader is not keeping up: never block collection for it */
			if (off)
				unwrite(s, off);
			drop(s);
			return;
		}
		if (w < 0) {
			int e = errno;
			if (off) /* before logging: stderr may be the same file */
				unwrite(s, off);
			LOG_ONCE(LOG_LEVEL_ERROR, "cannot write the JSON metric log: %s", strerror(e));
			s->dropped++;
			return;
		}
		off += (size_t)w;
	}
}

/* ---------------- the sink table's row (publish/list.h) ---------------- */

struct jsonlog_config {
	bool use;
	const char *format, *file;
};

#define J(field, name, type, mv, help) MOD_OPT(struct jsonlog_config, field, name, type, mv, help, 0, 0)
static const struct arg_opt jsonlog_opts[] = {
	J(use, "use_JSON", ARG_BOOL, NULL, "write metric samples as JSON lines"),
	J(format, "json_format", ARG_STRING, "upstream|jsonl",
	  "JSON line format: upstream's 'time = T data = {...}' or plain JSON objects"),
	J(file, "json_log_file", ARG_STRING, "PATH", "JSON metric log destination ('-': stdout)"),
	{0},
};
#undef J

static const struct jsonlog_config jsonlog_defaults = {true, "upstream", "-"};

static bool jsonlog_validate(const void *cfg, struct buf *err)
{
	const struct jsonlog_config *c = cfg;
	if (strcmp(c->format, "upstream") == 0 || strcmp(c->format, "jsonl") == 0)
		return true;
	buf_puts(err, "--json_format must be 'upstream' or 'jsonl'");
	return false;
}

/* A log that ends inside a line (the daemon was killed mid-write, before
 * unwrite could run, or another writer) would have the first record
 * appended to the partial one, both lost to a reader (issue #35 item 6):
 * cut the file back to its last newline.  Only the last 1 MiB is looked
 * at; a file without a newline there (not ours) gets a newline instead. */
static void heal_tail_with(int fd, int rd, const char *file);

static void heal_tail(int fd, const char *file)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return;
	/* fd is write-only (O_RDWR would make a FIFO destination its own
	 * reader): the same file opened again for reading, through /proc */
	char self[40];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	int rd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rd < 0)
		return;
	heal_tail_with(fd, rd, file);
	close(rd);
}

static void heal_tail_with(int fd, int rd, const char *file)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return;
	char b[4096];
	off_t end = st.st_size, limit = end > (1 << 20) ? end - (1 << 20) : 0;
	if (pread(rd, b, 1, end - 1) == 1 && b[0] == '\n')
		return;
	for (off_t at = end; at > limit;) {
		size_t n = at - limit > (off_t)sizeof b ? sizeof b : (size_t)(at - limit);
		if (pread(rd, b, n, at - (off_t)n) != (ssize_t)n)
			break;
		for (size_t i = n; i-- > 0;)
			if (b[i] == '\n') {
				off_t keep = at - (off_t)n + (off_t)i + 1;
				if (ftruncate(fd, keep) == 0) {
					log_warn("--json_log_file '%s' ended inside a line: its last %lld bytes (a cut record) "
						 "removed", file, (long long)(end - keep));
					return;
				}
				goto newline;
			}
		at -= (off_t)n;
	}
	if (limit == 0 && ftruncate(fd, 0) == 0) { /* one partial line and nothing else */
		log_warn("--json_log_file '%s' held only a cut record (%lld bytes): emptied", file, (long long)end);
		return;
	}
newline:
	log_warn("--json_log_file '%s' ends inside a line: starting a new one", file);
	(void)!write(fd, "\n", 1);
}

/* stdout, or the file opened for appending; -1 with err */
static int open_dest(const char *file, struct buf *err)
{
	if (strcmp(file, "-") != 0) {
		int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
		if (fd < 0)
			buf_printf(err, "cannot open --json_log_file '%s': %s", file, strerror(errno));
		else
			heal_tail(fd, file);
		return fd;
	}
	/* a pipe or socket whose reader stalls must not stall the loop: make it
	 * non-blocking.  Not a terminal: the flag would be shared with the
	 * shell that owns it. */
	struct stat st;
	int fl = fcntl(STDOUT_FILENO, F_GETFL);
	if (fl >= 0 && fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		fcntl(STDOUT_FILENO, F_SETFL, fl | O_NONBLOCK);
	return STDOUT_FILENO;
}

static bool jsonlog_apply(void **state, const void *old, const void *cfg, const struct sink_env *env,
			  struct buf *err)
{
	(void)env;
	const struct jsonlog_config *o = old, *n = cfg;
	struct jsonlog_sink *s = *state;
	/* a file is reopened on every reload (logrotate); stdout only once */
	if (!s || strcmp(o->file, n->file) != 0 || strcmp(n->file, "-") != 0) {
		int fd = open_dest(n->file, err);
		if (fd < 0)
			return false;
		if (!s) {
			s = xcalloc(1, sizeof *s);
			buf_init(&s->line);
			*state = s;
		} else if (s->fd != STDOUT_FILENO) {
			close(s->fd);
		}
		s->fd = fd;
		struct stat st;
		s->pipe_cap = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) ? fcntl(fd, F_GETPIPE_SZ) : -1;
	}
	s->mode = strcmp(n->format, "jsonl") == 0 ? JSONLOG_JSONL : JSONLOG_UPSTREAM;
	s->on = n->use;
	return true;
}

static void jsonlog_publish(void *state, size_t src, struct frame *f, const struct self_metrics *self)
{
	(void)src;
	(void)self;
	struct jsonlog_sink *s = state;
	if (!s->on || !f->n)
		return;
	buf_reset(&s->line);
	jsonlog_render(f, s->mode, &s->line);
	write_line(s);
}

static void jsonlog_stats(void *state, struct self_metrics *out)
{
	const struct jsonlog_sink *s = state;
	self_add(out, "dynolog_json_lines_dropped_total", "JSON log lines dropped because the output would block.",
		 "counter", NULL, NULL, (double)s->dropped);
}

static void jsonlog_close(void *state)
{
	struct jsonlog_sink *s = state;
	if (!s)
		return;
	if (s->fd != STDOUT_FILENO)
		close(s->fd);
	buf_free(&s->line);
	free(s);
}

static void jsonlog_describe(const void *cfg, struct buf *out)
{
	if (((const struct jsonlog_config *)cfg)->use)
		buf_puts(out, ", JSON log");
}

const struct sink sink_jsonlog = {
	.name = "jsonlog",
	.config = {jsonlog_opts, sizeof(struct jsonlog_config), &jsonlog_defaults},
	.validate = jsonlog_validate,
	/* always open, even with --use_JSON=false: the destination is created
	 * and its drop counter shown, as before the sink table */
	.apply = jsonlog_apply,
	.publish = jsonlog_publish,
	.stats = jsonlog_stats,
	.close = jsonlog_close,
	.describe = jsonlog_describe,
};
