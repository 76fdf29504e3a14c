/*
 * hostmetrics.c - parse the host metrics file of `dyno analyze insights
 * --metrics` (hostmetrics.h): `dyno metrics --json` output or the daemon's
 * JSON log, line by line with the one JSON reader (core/json.h).  Each line
 * is one document parsed on its own, so a damaged line costs that line only
 * (the log of a daemon killed mid-write ends with half a line).  Cost: one
 * DOM per line, 16 bytes a point kept, one interned name per series.
 */
#include "analyze/hostmetrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"

/* The series of (host, key), made on first use. */
static struct host_series *series_of(struct host_metrics *m, const char *host, size_t hlen, const char *key,
				     size_t klen)
{
	struct buf k = BUF_INIT;
	buf_append(&k, host, hlen);
	buf_putc(&k, '\x1f');
	buf_append(&k, key, klen);
	uint32_t id = trace_strtab_intern(&m->names, k.data, k.len);
	buf_free(&k);
	if (id >= m->by_id_cap) {
		size_t cap = m->by_id_cap ? m->by_id_cap : 256;
		while (cap <= id)
			cap *= 2;
		m->by_id = xrealloc(m->by_id, cap * sizeof *m->by_id);
		memset(m->by_id + m->by_id_cap, 0, (cap - m->by_id_cap) * sizeof *m->by_id);
		m->by_id_cap = cap;
	}
	if (m->by_id[id])
		return &m->s[m->by_id[id] - 1];
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->s = xrealloc(m->s, m->cap * sizeof *m->s);
	}
	struct host_series *s = &m->s[m->n++];
	memset(s, 0, sizeof *s);
	s->host = trace_strtab_intern(&m->names, host, hlen);
	s->key = trace_strtab_intern(&m->names, key, klen);
	m->by_id[id] = (uint32_t)m->n; /* id < by_id_cap: ids only grow after it */
	return s;
}

static void add_point(struct host_metrics *m, struct host_series *s, int64_t ms, double v)
{
	if (m->points >= HOST_METRICS_MAX_POINTS) {
		m->capped = true;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->ms = xrealloc(s->ms, s->cap * sizeof *s->ms);
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->ms[s->n] = ms;
	s->v[s->n++] = v;
	m->points++;
	if (m->points == 1 || ms < m->min_ms)
		m->min_ms = ms;
	if (m->points == 1 || ms > m->max_ms)
		m->max_ms = ms;
}

/* A number, or a string holding one (upstream's log writes floats as
 * "0.250"); false for anything else (a label like gpu_job_kind, "nan"). */
static bool value_of(const struct json_value *v, double *out)
{
	if (v->type == JV_NUMBER) {
		*out = json_value_f64(v);
		return isfinite(*out);
	}
	if (v->type != JV_STRING || v->len == 0 || v->len > 64)
		return false;
	char t[72], *end;
	memcpy(t, v->u.str, v->len);
	t[v->len] = 0;
	errno = 0;
	*out = strtod(t, &end);
	return !errno && *end == 0 && isfinite(*out) && t[0] != ' ';
}

static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* "2026-11-22T01:31:49.776Z" (UTC, what the daemon writes; the fraction
 * optional) into unix ms; false when it is not that. */
static bool parse_iso8601(const char *s, size_t n, int64_t *ms)
{
	int Y, M, D, h, mi, sec;
	if (n < 20 || !digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
	    !digits(s + 8, 2, &D) || s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
	    !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
		return false;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60 || Y < 1970)
		return false;
	size_t i = 19;
	int frac = 0, scale = 1000;
	if (i < n && s[i] == '.') {
		i++;
		size_t f0 = i;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (scale > 1) {
				scale /= 10;
				frac += (s[i] - '0') * scale;
			}
			i++;
		}
		if (i == f0)
			return false;
	}
	if (i + 1 != n || s[i] != 'Z')
		return false;
	struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = mi,
			.tm_sec = sec};
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*ms = (int64_t)t * 1000 + frac;
	return true;
}

/* One record of the JSON log: the values of data at time ms. */
static void add_record(struct host_metrics *m, const char *host, size_t hlen, int64_t ms,
		       const struct json_value *data)
{
	for (uint32_t k = 0; k < data->len; k++) {
		const struct json_member *mb = &data->u.members[k];
		double v;
		if (mb->key_len && value_of(&mb->value, &v)) /* a value needs a name */
			add_point(m, series_of(m, host, hlen, mb->key, mb->key_len), ms, v);
	}
}

/* One getMetrics answer: {"metrics":{"key":[[ms, v], ...]}}. */
static bool add_answer(struct host_metrics *m, const char *host, size_t hlen, const struct json_value *metrics,
		       const char **why)
{
	for (uint32_t k = 0; k < metrics->len; k++) {
		const struct json_member *mb = &metrics->u.members[k];
		if (mb->value.type != JV_ARRAY || mb->key_len == 0) {
			*why = "a series of \"metrics\" is not an array with a name";
			return false;
		}
		struct host_series *s = NULL;
		for (uint32_t i = 0; i < mb->value.len; i++) {
			const struct json_value *pt = &mb->value.u.items[i];
			int64_t ms;
			double v;
			if (pt->type != JV_ARRAY || pt->len != 2 || !json_value_i64(&pt->u.items[0], &ms) ||
			    !value_of(&pt->u.items[1], &v) || ms < 0) {
				*why = "a point of \"metrics\" is not [unix ms, number]";
				return false;
			}
			if (!s)
				s = series_of(m, host, hlen, mb->key, mb->key_len);
			add_point(m, s, ms, v);
		}
	}
	return true;
}

/* One line: 0, or -1 with why (static text, or jmsg: the JSON reader's
 * message) and where in the line (*at). */
static int parse_line(struct host_metrics *m, const char *p, size_t n, const char **why, size_t *at, char *jmsg)
{
	*at = 0;
	const char *host = "";
	size_t hlen = 0;
	int64_t ms = 0;
	bool upstream = false;
	static const char tpre[] = "time = ", dsep[] = " data = ";
	if (n >= sizeof tpre - 1 && memcmp(p, tpre, sizeof tpre - 1) == 0) {
		/* upstream's log line: time = ISO data = {...} */
		const char *t = p + sizeof tpre - 1, *d = memmem(t, n - (size_t)(t - p), dsep, sizeof dsep - 1);
		if (!d || !parse_iso8601(t, (size_t)(d - t), &ms)) {
			*why = "not 'time = YYYY-MM-DDTHH:MM:SS.mmmZ data = {...}'";
			*at = (size_t)(t - p);
			return -1;
		}
		upstream = true;
		*at = (size_t)(d - p) + sizeof dsep - 1;
	} else if (p[0] != '{') {
		/* "HOST {...}": dyno metrics --json for several daemons */
		const char *sp = memchr(p, ' ', n);
		if (!sp || sp == p || (size_t)(sp - p) > 255 || sp + 1 >= p + n || sp[1] != '{') {
			*why = "neither a JSON object, 'HOST {...}' nor 'time = ... data = {...}'";
			return -1;
		}
		host = p;
		hlen = (size_t)(sp - p);
		*at = hlen + 1;
	}
	struct json_doc doc;
	struct json_error jerr;
	if (!json_parse(p + *at, n - *at, &doc, &jerr)) {
		snprintf(jmsg, sizeof jerr.msg, "%s", jerr.msg);
		*why = jmsg;
		*at += jerr.offset;
		return -1;
	}
	int rc = 0;
	const struct json_value *root = doc.root, *metrics, *data;
	const char *ts;
	size_t tslen;
	if (root->type != JV_OBJECT) {
		*why = "not a JSON object";
		rc = -1;
	} else if (upstream) {
		add_record(m, host, hlen, ms, root);
	} else if ((metrics = json_get(root, "metrics")) != NULL) {
		if (metrics->type != JV_OBJECT) {
			*why = "\"metrics\" is not an object";
			rc = -1;
		} else if (!add_answer(m, host, hlen, metrics, why)) {
			rc = -1;
		}
	} else if (json_get_str(root, "error", &ts, &tslen)) {
		*why = "a daemon's error answer";
		rc = -1;
	} else if (json_get_str(root, "time", &ts, &tslen) && (data = json_get(root, "data")) != NULL &&
		   data->type == JV_OBJECT) {
		if (!parse_iso8601(ts, tslen, &ms)) {
			*why = "\"time\" is not YYYY-MM-DDTHH:MM:SS.mmmZ";
			rc = -1;
		} else {
			add_record(m, host, hlen, ms, data);
		}
	} else {
		*why = "no \"metrics\" (dyno metrics --json) nor \"time\" and \"data\" (JSON log)";
		rc = -1;
	}
	json_doc_free(&doc);
	return rc;
}

int host_metrics_parse(const char *name, const char *data, size_t len, struct host_metrics *m, struct buf *err)
{
	memset(m, 0, sizeof *m);
	trace_strtab_init(&m->names);
	size_t off = 0, lineno = 0;
	while (off < len && !m->capped) {
		const char *p = data + off, *nl = memchr(p, '\n', len - off);
		size_t n = nl ? (size_t)(nl - p) : len - off;
		lineno++;
		size_t lead = 0;
		while (lead < n && (p[lead] == ' ' || p[lead] == '\t' || p[lead] == '\r'))
			lead++;
		size_t tail = n;
		while (tail > lead && (p[tail - 1] == ' ' || p[tail - 1] == '\t' || p[tail - 1] == '\r'))
			tail--;
		if (tail > lead) {
			m->lines++;
			const char *why = NULL;
			char jmsg[sizeof(((struct json_error *)0)->msg)];
			size_t at;
			if (parse_line(m, p + lead, tail - lead, &why, &at, jmsg) != 0) {
				if (m->bad_lines++ == 0)
					snprintf(m->first_bad, sizeof m->first_bad, "line %zu (byte %zu): %s", lineno,
						 off + lead + at, why);
			}
		}
		off += n + (nl != NULL);
	}
	if (m->points == 0) {
		if (m->bad_lines)
			buf_printf(err, "%s: no metrics read: %s%s", name, m->first_bad,
				   m->bad_lines > 1 ? " (and every other line)" : "");
		else if (m->lines)
			buf_printf(err, "%s: no numeric metric in %zu line(s)", name, m->lines);
		else
			buf_printf(err, "%s: empty: no metrics", name);
		return -1;
	}
	return 0;
}

int host_metrics_load(const char *path, struct host_metrics *m, struct buf *err)
{
	memset(m, 0, sizeof *m);
	trace_strtab_init(&m->names);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct buf b = BUF_INIT;
	int rc = buf_read_fd(&b, fd, HOST_METRICS_MAX_BYTES);
	int e = errno;
	close(fd);
	if (rc != 0) {
		if (rc > 0)
			buf_printf(err, "%s: larger than %zu MiB", path, HOST_METRICS_MAX_BYTES >> 20);
		else
			buf_printf(err, "%s: %s", path, strerror(e));
		buf_free(&b);
		return -1;
	}
	host_metrics_free(m);
	rc = host_metrics_parse(path, b.data, b.len, m, err);
	buf_free(&b);
	return rc;
}

void host_metrics_free(struct host_metrics *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->s[i].ms);
		free(m->s[i].v);
	}
	free(m->s);
	free(m->by_id);
	trace_strtab_free(&m->names);
	memset(m, 0, sizeof *m);
}
