/* trigger_store.c - see trigger_store.h. */
#include "trigger_store.h"

#include "daemon/trigger/trigger_peers.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const known[] = {"id", "when", "every_s", "job", "while_job", "config", "min_interval_s",
				    "process_limit", "gpusnoop_s", "gpusnoop_log", "peers", "peers_delay_s"};

/* An integer member in [lo, hi]; absent: def. */
static bool int_field(const struct json_value *v, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out,
		      struct buf *err)
{
	const struct json_value *m = json_get(v, key);
	*out = def;
	if (!m)
		return true;
	if (!json_value_i64(m, out) || *out < lo || *out > hi) {
		buf_printf(err, "%s: an integer from %lld to %lld was expected", key, (long long)lo, (long long)hi);
		return false;
	}
	return true;
}

/* A string member without NUL of at most max bytes; absent: *s NULL. */
static bool str_field(const struct json_value *v, const char *key, size_t max, const char **s, size_t *n,
		      struct buf *err)
{
	const struct json_value *m = json_get(v, key);
	*s = NULL;
	*n = 0;
	if (!m)
		return true;
	if (m->type != JV_STRING || memchr(m->u.str, 0, m->len) || m->len > max) {
		buf_printf(err, "%s: a string of at most %zu bytes without NUL was expected", key, max);
		return false;
	}
	*s = m->u.str;
	*n = m->len;
	return true;
}

static bool id_ok(const char *s, size_t n)
{
	if (n == 0 || n > TRIG_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

static bool job_ok(const char *s, size_t n)
{
	size_t i = n && s[0] == '-';
	if (n == i || n > 20)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

bool trig_def_parse(const struct json_value *v, struct trig_def *d, struct buf *err)
{
	memset(d, 0, sizeof *d);
	if (!v || v->type != JV_OBJECT) {
		buf_puts(err, "a trigger must be a JSON object");
		return false;
	}
	for (uint32_t i = 0; i < v->len; i++) {
		const struct json_member *m = &v->u.members[i];
		bool ok = false;
		for (size_t k = 0; k < sizeof known / sizeof known[0] && !ok; k++)
			ok = strlen(known[k]) == m->key_len && memcmp(known[k], m->key, m->key_len) == 0;
		if (!ok) {
			buf_puts(err, "unknown member ");
			json_escape(err, m->key, m->key_len > 64 ? 64 : m->key_len);
			return false;
		}
	}
	const char *s;
	size_t n;
	if (!str_field(v, "id", TRIG_ID_MAX, &s, &n, err))
		return false;
	if (!s || !id_ok(s, n)) {
		buf_printf(err, "id: 1 to %d letters, digits, '_', '-' or '.' are required", TRIG_ID_MAX);
		return false;
	}
	memcpy(d->id, s, n);
	const char *when;
	size_t wn;
	if (!str_field(v, "when", 512, &when, &wn, err))
		return false;
	if (!int_field(v, "every_s", 1, TRIG_MAX_INTERVAL_S, 0, &d->every_s, err))
		return false;
	if (when && d->every_s) {
		buf_puts(err, "when and every_s: a trigger is a condition or a cadence, not both");
		return false;
	}
	d->kind = when ? TRIG_METRIC : d->every_s ? TRIG_CADENCE : TRIG_MANUAL;
	if (when) {
		struct buf why = BUF_INIT;
		if (!trig_cond_parse(when, wn, &d->cond, &why)) {
			buf_printf(err, "when: %s", why.data);
			buf_free(&why);
			return false;
		}
		buf_free(&why);
	}
	if (!str_field(v, "job", TRIG_JOB_MAX, &s, &n, err))
		return false;
	if (s && !job_ok(s, n)) {
		buf_puts(err, "job: a decimal job id was expected");
		return false;
	}
	if (s)
		memcpy(d->job, s, n);
	const struct json_value *b = json_get(v, "while_job");
	if (b && b->type != JV_BOOL) {
		buf_puts(err, "while_job: true or false was expected");
		return false;
	}
	d->while_job = b && b->u.b;
	if (d->while_job && d->kind != TRIG_METRIC) {
		buf_puts(err, "while_job: only a condition (when) can require a running job");
		return false;
	}
	if (!str_field(v, "config", TRIG_CONFIG_MAX, &s, &n, err))
		return false;
	if (!s || !n) {
		buf_puts(err, "config: the Kineto on-demand config text is required");
		return false;
	}
	/* KEY=VALUE lines: other control characters would only grow the
	 * answers six-fold in JSON escapes (\u00XX) */
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] == 0x7f) {
			buf_printf(err, "config: control character at byte %zu (lines of KEY=VALUE expected)", i);
			return false;
		}
	d->config = xstrndup(s, n);
	if (!int_field(v, "min_interval_s", 0, TRIG_MAX_INTERVAL_S, TRIG_DEFAULT_MIN_INTERVAL_S, &d->min_interval_s,
		       err) ||
	    !int_field(v, "process_limit", 1, 1000000, TRIG_DEFAULT_PROCESS_LIMIT, &d->process_limit, err) ||
	    !int_field(v, "gpusnoop_s", 0, 86400, 0, &d->gpusnoop_s, err))
		return false;
	if (!str_field(v, "gpusnoop_log", TRIG_PATH_MAX, &s, &n, err))
		return false;
	if (s)
		memcpy(d->gpusnoop_log, s, n);
	if (d->gpusnoop_s && d->gpusnoop_log[0] != '/') {
		buf_puts(err, "gpusnoop_log: an absolute path prefix is required with gpusnoop_s");
		return false;
	}
	if (!d->gpusnoop_s && s) {
		buf_puts(err, "gpusnoop_log: given without gpusnoop_s");
		return false;
	}
	if (!str_field(v, "peers", TRIG_PEERS_TEXT_MAX, &s, &n, err))
		return false;
	if (s && !trig_peers_check(s, n, err))
		return false;
	if (s)
		d->peers = xstrndup(s, n);
	if (!int_field(v, "peers_delay_s", 1, 300, TRIG_DEFAULT_PEERS_DELAY_S, &d->peers_delay_s, err))
		return false;
	if (!d->peers && json_get(v, "peers_delay_s")) {
		buf_puts(err, "peers_delay_s: given without peers");
		return false;
	}
	return true;
}

void trig_def_free(struct trig_def *d)
{
	free(d->config);
	free(d->peers);
	d->config = NULL;
	d->peers = NULL;
}

void trig_def_write(const struct trig_def *d, struct jw *w)
{
	jw_obj_begin(w);
	jw_key(w, "id"), jw_str(w, d->id);
	if (d->kind == TRIG_METRIC) {
		struct buf c = BUF_INIT;
		trig_cond_format(&d->cond, &c);
		jw_key(w, "when"), jw_strn(w, c.data, c.len);
		buf_free(&c);
	}
	if (d->kind == TRIG_CADENCE)
		jw_key(w, "every_s"), jw_i64(w, d->every_s);
	if (d->job[0])
		jw_key(w, "job"), jw_str(w, d->job);
	if (d->while_job)
		jw_key(w, "while_job"), jw_bool(w, true);
	jw_key(w, "config"), jw_str(w, d->config);
	jw_key(w, "min_interval_s"), jw_i64(w, d->min_interval_s);
	jw_key(w, "process_limit"), jw_i64(w, d->process_limit);
	if (d->gpusnoop_s) {
		jw_key(w, "gpusnoop_s"), jw_i64(w, d->gpusnoop_s);
		jw_key(w, "gpusnoop_log"), jw_str(w, d->gpusnoop_log);
	}
	if (d->peers) {
		jw_key(w, "peers"), jw_str(w, d->peers);
		jw_key(w, "peers_delay_s"), jw_i64(w, d->peers_delay_s);
	}
	jw_obj_end(w);
}

void trig_file_free(struct trig_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		trig_def_free(&f->defs[i]);
	free(f->defs);
	free(f->last);
	memset(f, 0, sizeof *f);
}

/* "last_fired": its entries into f (after the definitions); false with the
 * reason in err.  An entry of a trigger not in the file is dropped (the
 * file is ours; a hand edit that removed a trigger leaves its state). */
static bool parse_last(const char *name, const struct json_value *a, struct trig_file *f, struct buf *err)
{
	if (a->type != JV_ARRAY) {
		buf_printf(err, "trigger file %s: \"last_fired\": an array was expected", name);
		return false;
	}
	if (a->len > (f->n ? f->n : 1) * TRIG_JOBS_KEPT) {
		buf_printf(err, "trigger file %s: \"last_fired\": %u entries, more than %d per trigger", name, a->len,
			   TRIG_JOBS_KEPT);
		return false;
	}
	f->last = xcalloc(a->len ? a->len : 1, sizeof *f->last);
	for (uint32_t i = 0; i < a->len; i++) {
		const struct json_value *e = &a->u.items[i];
		const char *id = NULL, *job = NULL;
		size_t idn = 0, jobn = 0;
		int64_t ms = -1;
		if (e->type != JV_OBJECT || e->len != 3 || !json_get_str(e, "id", &id, &idn) ||
		    !json_get_str(e, "job", &job, &jobn) || !json_get_i64(e, "time_ms", &ms) || ms < 0 ||
		    idn > TRIG_ID_MAX || jobn > TRIG_JOB_MAX || memchr(id, 0, idn) || memchr(job, 0, jobn)) {
			buf_printf(err,
				   "trigger file %s: \"last_fired\" entry %u: {\"id\":NAME,\"job\":ID,\"time_ms\":N >= 0} "
				   "was expected",
				   name, i);
			return false;
		}
		bool ours = false;
		for (size_t k = 0; k < f->n && !ours; k++)
			ours = strlen(f->defs[k].id) == idn && memcmp(f->defs[k].id, id, idn) == 0;
		if (!ours)
			continue;
		struct trig_last *l = &f->last[f->nlast++];
		memcpy(l->id, id, idn);
		memcpy(l->job, job, jobn);
		l->time_ms = ms;
	}
	return true;
}

bool trig_file_parse(const char *name, const char *text, size_t len, size_t max, struct trig_file *f,
		     struct buf *err)
{
	memset(f, 0, sizeof *f);
	struct json_doc doc;
	struct json_error je;
	if (!json_parse(text, len, &doc, &je)) {
		buf_printf(err, "trigger file %s: byte %llu (line %llu, column %llu): %s", name,
			   (unsigned long long)je.offset, (unsigned long long)je.line, (unsigned long long)je.column,
			   je.msg);
		return false;
	}
	bool ok = false;
	const struct json_value *root = doc.root, *ts = json_get(root, "triggers");
	int64_t version = 0, next = 0;
	if (root->type != JV_OBJECT)
		buf_printf(err, "trigger file %s: a JSON object was expected", name);
	else if (!json_get_i64(root, "version", &version) || version != 1)
		buf_printf(err, "trigger file %s: \"version\": 1 was expected", name);
	else if (json_get(root, "next_fire") && (!json_get_i64(root, "next_fire", &next) || next < 0))
		buf_printf(err, "trigger file %s: \"next_fire\": a non-negative integer was expected", name);
	else if (!ts || ts->type != JV_ARRAY)
		buf_printf(err, "trigger file %s: \"triggers\": an array was expected", name);
	else if (ts->len > max)
		buf_printf(err, "trigger file %s: %u triggers, more than --trigger_max (%zu)", name, ts->len, max);
	else {
		ok = true;
		f->next_fire = (uint64_t)next;
		f->defs = xcalloc(ts->len ? ts->len : 1, sizeof *f->defs);
		for (uint32_t i = 0; i < ts->len && ok; i++) {
			struct buf why = BUF_INIT;
			ok = trig_def_parse(&ts->u.items[i], &f->defs[i], &why);
			f->n = i + 1;
			for (size_t j = 0; ok && j < i; j++)
				if (strcmp(f->defs[j].id, f->defs[i].id) == 0) {
					buf_puts(&why, "id: the same id as an earlier trigger");
					ok = false;
				}
			if (!ok)
				buf_printf(err, "trigger file %s: trigger %u%s%s%s: %s", name, i,
					   f->defs[i].id[0] ? " (\"" : "", f->defs[i].id, f->defs[i].id[0] ? "\")" : "",
					   why.data);
			buf_free(&why);
		}
	}
	const struct json_value *last = root->type == JV_OBJECT ? json_get(root, "last_fired") : NULL;
	if (ok && last)
		ok = parse_last(name, last, f, err);
	json_doc_free(&doc);
	if (!ok)
		trig_file_free(f);
	return ok;
}

bool trig_file_load(const char *path, size_t max, struct trig_file *f, struct buf *err)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return true;
	if (fd < 0) {
		buf_printf(err, "trigger file %s: %s", path, strerror(errno));
		return false;
	}
	struct stat st;
	struct buf text = BUF_INIT;
	bool ok = false;
	if (fstat(fd, &st) < 0)
		buf_printf(err, "trigger file %s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		buf_printf(err, "trigger file %s: not a regular file", path);
	else {
		int r = buf_read_fd(&text, fd, TRIG_FILE_MAX_BYTES);
		if (r < 0)
			buf_printf(err, "trigger file %s: %s", path, strerror(errno));
		else if (r > 0)
			buf_printf(err, "trigger file %s: larger than %u bytes", path, TRIG_FILE_MAX_BYTES);
		else
			ok = trig_file_parse(path, text.data ? text.data : "", text.len, max, f, err);
	}
	close(fd);
	buf_free(&text);
	return ok;
}

void trig_file_text(const struct trig_file *f, struct buf *out)
{
	struct jw w;
	jw_init(&w, out);
	jw_obj_begin(&w);
	jw_key(&w, "version"), jw_i64(&w, 1);
	jw_key(&w, "next_fire"), jw_u64(&w, f->next_fire);
	jw_key(&w, "triggers");
	jw_arr_begin(&w);
	for (size_t i = 0; i < f->n; i++)
		trig_def_write(&f->defs[i], &w);
	jw_arr_end(&w);
	if (f->nlast) {
		jw_key(&w, "last_fired");
		jw_arr_begin(&w);
		for (size_t i = 0; i < f->nlast; i++) {
			jw_obj_begin(&w);
			jw_key(&w, "id"), jw_str(&w, f->last[i].id);
			jw_key(&w, "job"), jw_str(&w, f->last[i].job);
			jw_key(&w, "time_ms"), jw_i64(&w, f->last[i].time_ms);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
	}
	jw_obj_end(&w);
	buf_putc(out, '\n');
}

bool trig_file_save(const char *path, const struct buf *text, struct buf *err)
{
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
		buf_printf(err, "trigger file %s: path too long", path);
		return false;
	}
	unlink(tmp); /* a leftover of a crash */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		buf_printf(err, "trigger file %s: cannot create %s: %s", path, tmp, strerror(errno));
		return false;
	}
	size_t off = 0;
	while (off < text->len) {
		ssize_t w = write(fd, text->data + off, text->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			buf_printf(err, "trigger file %s: cannot write %s: %s", path, tmp, w < 0 ? strerror(errno) : "no progress");
			close(fd);
			unlink(tmp);
			return false;
		}
		off += (size_t)w;
	}
	int rs = fsync(fd), e = errno;
	if (close(fd) < 0 && rs == 0)
		rs = -1, e = errno;
	if (rs < 0) {
		buf_printf(err, "trigger file %s: cannot sync %s: %s", path, tmp, strerror(e));
		unlink(tmp);
		return false;
	}
	if (rename(tmp, path) < 0) {
		buf_printf(err, "trigger file %s: cannot rename %s over it: %s", path, tmp, strerror(errno));
		unlink(tmp);
		return false;
	}
	/* the rename itself survives a crash once the directory is synced */
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return true;
}
