/*
 * wh_gpu.c - GPU-hours in the trace warehouse (wh_gpu.h, docs/fleet.md):
 * the daemons' per-job and per-user GPU accounting (collect/gpu_jobs.c:
 * gpu_job_seconds.<job>, gpu_job_energy_mj.<job>, gpu_user_seconds.<uid>,
 * gpu_user_energy_mj.<uid>, each sample the increment of one GPU tick) as
 * `dyno metrics --json` prints the daemons' getMetrics answers, stored one
 * row per sample and rolled up per job, user or model (a label given to
 * jobs) over a time range.
 *
 * A scrape file is a boundary: every line must be one answer ("LABEL
 * {...}" when several daemons answered, "{...}" for one), every sample of
 * the four families [unix_ms, value] with an integral time and a finite,
 * non-negative value; anything else is an error naming the file and line,
 * and nothing of that file is stored (one transaction per file).  Other
 * metrics in the answer are ignored.  Rows are keyed (host, metric, key,
 * time): scraping overlapping windows again adds nothing.
 *
 * Cost: the file is parsed a line at a time (one answer's DOM); rows go in
 * multi-row INSERTs of 200.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/wh_gpu.h"
#include "core/clock.h"
#include "core/json.h"

static const struct {
	const char *prefix, *metric;
} families[] = {
	{"gpu_job_seconds.", "job_seconds"},
	{"gpu_job_energy_mj.", "job_energy_mj"},
	{"gpu_user_seconds.", "user_seconds"},
	{"gpu_user_energy_mj.", "user_energy_mj"},
};

#define BATCH 200
/* the last ms whose ns fit 64 bits (2262-04-11): a sample time past it
 * is not one a daemon gives */
#define MAX_MS (INT64_MAX / 1000000)

struct sink {
	struct wh_db *db;
	struct wh_params p;
	struct buf sql;
	size_t pending, rows;
};

static int flush(struct sink *s, struct buf *err)
{
	if (!s->pending)
		return 0;
	wh_insert_sql(&s->sql, "gpu_usage", "host,metric,key,t_ms,value", 5, s->pending);
	int rc = wh_db_exec(s->db, s->sql.data, wh_params_done(&s->p), s->p.n, NULL, err);
	wh_params_reset(&s->p);
	s->rows += s->pending;
	s->pending = 0;
	return rc;
}

/* One answer's samples of the four families.  0, -1 (err: what). */
static int answer(struct sink *s, const struct json_value *root, const char *host, struct buf *err)
{
	const char *e;
	size_t en;
	if (json_get_str(root, "error", &e, &en)) {
		buf_printf(err, "the daemon answered an error: %.*s", (int)(en > 200 ? 200 : en), e);
		return -1;
	}
	const struct json_value *m = json_get(root, "metrics");
	if (!m || m->type != JV_OBJECT) {
		buf_puts(err, "not a getMetrics answer (no \"metrics\" object)");
		return -1;
	}
	for (uint32_t k = 0; k < m->len; k++) {
		const struct json_member *mb = &m->u.members[k];
		size_t f = 0;
		for (; f < sizeof families / sizeof families[0]; f++)
			if (strncmp(mb->key, families[f].prefix, strlen(families[f].prefix)) == 0)
				break;
		if (f == sizeof families / sizeof families[0])
			continue;
		const char *key = mb->key + strlen(families[f].prefix);
		if (!*key || mb->value.type != JV_ARRAY) {
			buf_printf(err, "%s: not a series of samples", mb->key);
			return -1;
		}
		for (uint32_t i = 0; i < mb->value.len; i++) {
			const struct json_value *smp = &mb->value.u.items[i];
			int64_t ms;
			double v;
			if (smp->type != JV_ARRAY || smp->len != 2 || !json_value_i64(&smp->u.items[0], &ms) ||
			    smp->u.items[1].type != JV_NUMBER || !isfinite(v = json_value_f64(&smp->u.items[1])) ||
			    v < 0 || ms < 0 || ms > MAX_MS) {
				buf_printf(err, "%s: sample %u is not [unix_ms, value >= 0] (a time before 2262)",
					   mb->key, i + 1);
				return -1;
			}
			wh_params_add(&s->p, host);
			wh_params_add(&s->p, families[f].metric);
			wh_params_add(&s->p, key);
			wh_params_i64(&s->p, true, ms);
			wh_params_f64(&s->p, true, v);
			if (++s->pending == BATCH && flush(s, err) != 0)
				return -1;
		}
	}
	return 0;
}

int wh_gpu_ingest(struct wh_db *db, const char *text, size_t len, const char *name, const char *host,
		  size_t *rows, struct buf *err)
{
	struct sink s = {.db = db};
	buf_init(&s.p.text);
	if (wh_db_begin(db, err) != 0)
		return -1;
	size_t line = 0, answers = 0;
	int rc = 0;
	for (size_t at = 0; at < len && rc == 0;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, b = at;
		at = end + 1;
		line++;
		while (b < end && (text[b] == ' ' || text[b] == '\r'))
			b++;
		if (b == end)
			continue;
		/* "LABEL {...}" (several daemons) or "{...}" */
		char label[256];
		const char *h = host;
		if (text[b] != '{') {
			const char *sp = memchr(text + b, ' ', end - b);
			if (!sp || (size_t)(sp - text - b) >= sizeof label) {
				buf_printf(err, "%s: line %zu: not \"HOST {answer}\" nor \"{answer}\"", name, line);
				rc = -1;
				break;
			}
			snprintf(label, sizeof label, "%.*s", (int)(sp - text - b), text + b);
			h = label;
			b = (size_t)(sp - text) + 1;
		}
		struct json_doc doc;
		struct json_error je;
		struct buf why = BUF_INIT;
		if (!json_parse(text + b, end - b, &doc, &je)) {
			buf_printf(err, "%s: line %zu: byte %llu of the answer: %s", name, line, (unsigned long long)je.offset,
				   je.msg);
			rc = -1;
		} else {
			if (answer(&s, doc.root, h, &why) != 0) {
				buf_printf(err, "%s: line %zu: %s", name, line, why.data);
				rc = -1;
			}
			json_doc_free(&doc);
			answers++;
		}
		buf_free(&why);
	}
	if (rc == 0 && answers == 0) {
		buf_printf(err, "%s: no getMetrics answer in it (dyno metrics --json output)", name);
		rc = -1;
	}
	if (rc == 0)
		rc = flush(&s, err);
	if (rc == 0)
		rc = wh_db_commit(db, err);
	if (rc != 0)
		wh_db_rollback(db);
	*rows = s.rows;
	wh_params_free(&s.p);
	buf_free(&s.sql);
	return rc;
}

int wh_gpu_label(struct wh_db *db, const char *job, const char *model, struct buf *err)
{
	const char *p[] = {job, model};
	return wh_db_exec(db,
			  "INSERT INTO job_labels (job, model) VALUES ($1, $2)"
			  " ON CONFLICT (job) DO UPDATE SET model = excluded.model",
			  p, 2, NULL, err);
}

struct atable *wh_gpu_report(struct wh_db *db, enum wh_gpu_by by, int64_t from_s, int64_t to_s, struct buf *err)
{
	char from[24], to[24];
	snprintf(from, sizeof from, "%lld", (long long)from_s * 1000);
	snprintf(to, sizeof to, "%lld", (long long)to_s * 1000);
	const char *p[] = {from, to};
	const char *who = by == WH_GPU_BY_USER ? "user" : "job";
	const char *group = by == WH_GPU_BY_MODEL ? "COALESCE(l.model, '(no label)')" : "g.key";
	struct buf sql = BUF_INIT;
	buf_printf(&sql,
		   "SELECT %s, SUM(CASE WHEN g.metric = '%s_seconds' THEN g.value END) / 3600.0,"
		   " SUM(CASE WHEN g.metric = '%s_energy_mj' THEN g.value END) / 3.6e9,"
		   " COUNT(DISTINCT g.key), COUNT(DISTINCT g.host), MIN(g.t_ms), MAX(g.t_ms)"
		   " FROM gpu_usage g%s WHERE g.metric IN ('%s_seconds', '%s_energy_mj')"
		   " AND g.t_ms >= CAST($1 AS BIGINT) AND g.t_ms < CAST($2 AS BIGINT)"
		   " GROUP BY %s ORDER BY 2 DESC NULLS LAST, 1",
		   group, who, who, by == WH_GPU_BY_MODEL ? " LEFT JOIN job_labels l ON l.job = g.key" : "", who, who,
		   group);
	struct wh_rows r;
	int rc = wh_db_exec(db, sql.data, p, 2, &r, err);
	buf_free(&sql);
	if (rc != 0)
		return NULL;
	const char *name = by == WH_GPU_BY_USER ? "user:s" : by == WH_GPU_BY_MODEL ? "model:s" : "job:s";
	const char *cols[] = {name, "gpu_hours:f", "energy_kwh:f", by == WH_GPU_BY_USER ? "users:i" : "jobs:i",
			      "hosts:i", "first:s", "last:s", NULL};
	struct atable *t = atable_new("gpu_hours", "GPU hours from the daemons' accounting", cols);
	for (size_t i = 0; i < r.nrows; i++) {
		double hours, kwh;
		int64_t keys, hosts, first, last;
		const char *k = wh_cell(&r, i, 0);
		if (!k || !wh_cell_f64(&r, i, 1, "gpu hours", true, &hours, err) ||
		    !wh_cell_f64(&r, i, 2, "gpu hours", true, &kwh, err) ||
		    !wh_cell_i64(&r, i, 3, "gpu hours", false, &keys, err) ||
		    !wh_cell_i64(&r, i, 4, "gpu hours", false, &hosts, err) ||
		    !wh_cell_i64(&r, i, 5, "gpu hours", false, &first, err) ||
		    !wh_cell_i64(&r, i, 6, "gpu hours", false, &last, err) || first < 0 || last > MAX_MS) {
			/* a row read back with a time no scrape could give */
			if (!err->len)
				buf_printf(err, "gpu hours: row %zu: NULL %s or a time out of range", i + 1, who);
			atable_free(t);
			wh_rows_free(&r);
			return NULL;
		}
		char a[40], b[40];
		clock_fmt_iso8601(a, sizeof a, first * 1000000);
		clock_fmt_iso8601(b, sizeof b, last * 1000000);
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, k);
		atable_set_f(t, row, 1, hours);
		atable_set_f(t, row, 2, kwh); /* NaN (empty): no energy counter on those GPUs */
		atable_set_i(t, row, 3, keys);
		atable_set_i(t, row, 4, hosts);
		atable_set_s(t, row, 5, a);
		atable_set_s(t, row, 6, b);
	}
	atable_note(t,
		    "GPU-seconds as the daemons charged them (each GPU tick's period shared equally among the jobs "
		    "on the GPU); energy empty where the GPUs have no energy counter");
	wh_rows_free(&r);
	return t;
}
