/*
 * wh_db.c - the warehouse database behind its two backends (wh_db.h): the
 * choice by spec, the schema and its migrations, transactions, text
 * answers and their validation.
 *
 * The schema is one list of migrations; migration v brings a database at
 * version v-1 to v, in one transaction with the row that records v in
 * wh_schema.  The statements are the SQL both SQLite and PostgreSQL
 * accept (TEXT, BIGINT, DOUBLE PRECISION, composite primary keys, IF NOT
 * EXISTS), so there is one schema.  A trace is keyed by its content hash
 * (wh_trace.c): that is what makes ingest idempotent.  The layout is
 * described at migration_1.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fleet/wh_db.h"

/* Migration v is migrations[v - 1]: statements run in order.
 *
 * Sizes matter at fleet scale (10,000 traces of 200 kernels are 2 million
 * kernel rows): a trace and a kernel name are referred to by 63-bit ids
 * the client computes (wh_trace.h: from the content hash and the name),
 * not by their text, so a kernel row is a few numbers; its trace's start
 * time is repeated in it, and one covering index (name, time, p50, total,
 * calls) serves the top-kernels and regressions scans without a join or
 * a sort. */
static const char *const migration_1[] = {
	"CREATE TABLE IF NOT EXISTS traces ("
	" id BIGINT PRIMARY KEY,"          /* the content hash's first 63 bits */
	" hash TEXT NOT NULL UNIQUE,"      /* content hash of the file (128 bits, hex) */
	" path TEXT NOT NULL,"
	" job TEXT, host TEXT, rank BIGINT,"
	" start_ns BIGINT,"                /* wall-clock ns of its start (HTA's min_ts) */
	" status TEXT NOT NULL,"           /* 'ok' or 'failed' */
	" error TEXT,"                     /* why it failed */
	" ingested_ns BIGINT NOT NULL,"
	" events BIGINT, gpu_rows BIGINT, span_us DOUBLE PRECISION,"
	" iterations BIGINT, iter_mean_us DOUBLE PRECISION, iter_p50_us DOUBLE PRECISION,"
	" iter_max_us DOUBLE PRECISION,"
	" kernel_us DOUBLE PRECISION, idle_us DOUBLE PRECISION, idle_share DOUBLE PRECISION,"
	" host_wait_us DOUBLE PRECISION, host_wait_share DOUBLE PRECISION)",
	"CREATE INDEX IF NOT EXISTS traces_job ON traces (job, start_ns)",
	"CREATE INDEX IF NOT EXISTS traces_start ON traces (start_ns)",
	"CREATE TABLE IF NOT EXISTS iterations ("
	" trace BIGINT NOT NULL, step BIGINT NOT NULL, dur_us DOUBLE PRECISION NOT NULL,"
	" PRIMARY KEY (trace, step))",
	"CREATE TABLE IF NOT EXISTS kernel_names ("
	" id BIGINT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL)",
	"CREATE TABLE IF NOT EXISTS kernels ("
	" trace BIGINT NOT NULL, kname BIGINT NOT NULL, start_ns BIGINT, calls BIGINT NOT NULL,"
	" total_us DOUBLE PRECISION NOT NULL, mean_us DOUBLE PRECISION NOT NULL,"
	" min_us DOUBLE PRECISION NOT NULL, max_us DOUBLE PRECISION NOT NULL,"
	" p50_us DOUBLE PRECISION NOT NULL, p95_us DOUBLE PRECISION NOT NULL,"
	" PRIMARY KEY (trace, kname))",
	"CREATE INDEX IF NOT EXISTS kernels_by_name ON kernels (kname, start_ns, p50_us, total_us, calls)",
	"CREATE TABLE IF NOT EXISTS kernel_types ("
	" trace BIGINT NOT NULL, type TEXT NOT NULL, total_us DOUBLE PRECISION NOT NULL,"
	" PRIMARY KEY (trace, type))",
	NULL,
};
/* 2: the daemons' per-job and per-user GPU accounting (wh_gpu.c): one row
 * per sample of a getMetrics series, keyed so that a second scrape of
 * the same window adds nothing; a model label per job. */
static const char *const migration_2[] = {
	"CREATE TABLE IF NOT EXISTS gpu_usage ("
	" host TEXT NOT NULL, metric TEXT NOT NULL," /* job_seconds, job_energy_mj, user_seconds, user_energy_mj */
	" key TEXT NOT NULL,"                          /* the job id or the uid */
	" t_ms BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL,"
	" PRIMARY KEY (host, metric, key, t_ms))",
	"CREATE INDEX IF NOT EXISTS gpu_usage_time ON gpu_usage (t_ms)",
	"CREATE TABLE IF NOT EXISTS job_labels (job TEXT PRIMARY KEY, model TEXT NOT NULL)",
	NULL,
};
static const char *const *const migrations[WH_SCHEMA_VERSION] = {migration_1, migration_2};

void wh_rows_init(struct wh_rows *r, size_t ncols)
{
	memset(r, 0, sizeof *r);
	r->ncols = ncols;
	buf_init(&r->arena);
}

void wh_rows_put(struct wh_rows *r, const char *text, size_t len, bool null)
{
	/* cells arrive row by row; the offsets grow 1024 at a time */
	if (r->ncells % 1024 == 0)
		r->off = xrealloc(r->off, (r->ncells + 1024) * sizeof *r->off);
	if (null) {
		r->off[r->ncells] = SIZE_MAX;
	} else {
		r->off[r->ncells] = r->arena.len;
		buf_append(&r->arena, text, len);
		buf_putc(&r->arena, 0);
	}
	r->ncells++;
	if (r->ncols)
		r->nrows = r->ncells / r->ncols;
}

void wh_rows_free(struct wh_rows *r)
{
	free(r->off);
	buf_free(&r->arena);
	memset(r, 0, sizeof *r);
}

static bool is_pg(const char *spec)
{
	return strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0;
}

/* The URL for messages: user:password@ becomes user@. */
static char *redact(const char *spec)
{
	const char *at = strchr(spec, '@'), *scheme = strstr(spec, "://");
	if (!is_pg(spec) || !at || !scheme)
		return xstrdup(spec);
	const char *colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3));
	if (!colon)
		return xstrdup(spec);
	struct buf b = BUF_INIT;
	buf_append(&b, spec, (size_t)(colon - spec));
	buf_puts(&b, at);
	return buf_detach(&b, NULL);
}

int wh_db_exec(struct wh_db *db, const char *sql, const char *const *params, size_t n, struct wh_rows *rows,
	       struct buf *err)
{
	struct buf e = BUF_INIT;
	int rc = db->be->exec(db->h, sql, params, n, rows, &e);
	if (rc != 0)
		buf_printf(err, "warehouse DB %s: %s", db->target, e.data);
	buf_free(&e);
	return rc;
}

int wh_db_begin(struct wh_db *db, struct buf *err) { return wh_db_exec(db, "BEGIN", NULL, 0, NULL, err); }
int wh_db_commit(struct wh_db *db, struct buf *err) { return wh_db_exec(db, "COMMIT", NULL, 0, NULL, err); }
void wh_db_rollback(struct wh_db *db)
{
	struct buf e = BUF_INIT;
	db->be->exec(db->h, "ROLLBACK", NULL, 0, NULL, &e);
	buf_free(&e);
}

/* The version recorded, 0 for a new database; -1 on error. */
static int64_t schema_version(struct wh_db *db, struct buf *err)
{
	struct wh_rows r;
	if (wh_db_exec(db, "CREATE TABLE IF NOT EXISTS wh_schema (version BIGINT NOT NULL)", NULL, 0, NULL, err) != 0 ||
	    wh_db_exec(db, "SELECT MAX(version) FROM wh_schema", NULL, 0, &r, err) != 0)
		return -1;
	int64_t v = 0;
	bool ok = r.nrows == 1 && wh_cell_i64(&r, 0, 0, "wh_schema", true, &v, err);
	wh_rows_free(&r);
	if (!ok && !err->len)
		buf_puts(err, "wh_schema: no answer");
	return ok ? v : -1;
}

static int migrate(struct wh_db *db, struct buf *err)
{
	int64_t v = schema_version(db, err);
	if (v < 0)
		return -1;
	if (v > WH_SCHEMA_VERSION) {
		buf_printf(err, "warehouse DB %s: schema version %lld is newer than this dyno's (%d): use a newer dyno",
			   db->target, (long long)v, WH_SCHEMA_VERSION);
		return -1;
	}
	for (int64_t m = v + 1; m <= WH_SCHEMA_VERSION; m++) {
		if (wh_db_begin(db, err) != 0)
			return -1;
		for (const char *const *s = migrations[m - 1]; *s; s++)
			if (wh_db_exec(db, *s, NULL, 0, NULL, err) != 0)
				goto fail;
		char ver[24];
		snprintf(ver, sizeof ver, "%lld", (long long)m);
		const char *p[] = {ver};
		if (wh_db_exec(db, "INSERT INTO wh_schema (version) VALUES ($1)", p, 1, NULL, err) != 0 ||
		    wh_db_commit(db, err) != 0)
			goto fail;
	}
	return 0;
fail:
	wh_db_rollback(db);
	return -1;
}

int wh_db_open(struct wh_db *db, const char *spec, struct buf *err)
{
	memset(db, 0, sizeof *db);
	if (!spec || !*spec) {
		buf_puts(err, "warehouse: no database given (--db FILE or --db postgresql://...)");
		return -1;
	}
	db->be = is_pg(spec) ? &wh_pg : &wh_sqlite;
	db->target = redact(spec);
	struct buf e = BUF_INIT;
	db->h = db->be->open(spec, &e);
	if (!db->h) {
		buf_printf(err, "warehouse DB %s: %s", db->target, e.data);
		buf_free(&e);
		free(db->target);
		db->target = NULL;
		return -1;
	}
	buf_free(&e);
	if (migrate(db, err) != 0) {
		wh_db_close(db);
		return -1;
	}
	return 0;
}

int wh_db_open_existing(struct wh_db *db, const char *spec, struct buf *err)
{
	struct stat st;
	if (spec && *spec && !is_pg(spec) && stat(spec, &st) != 0) {
		memset(db, 0, sizeof *db);
		buf_printf(err, "warehouse DB %s: no such warehouse (%s; `dyno warehouse ingest --db %s` creates it)",
			   spec, strerror(errno), spec);
		return -1;
	}
	return wh_db_open(db, spec, err);
}

void wh_db_close(struct wh_db *db)
{
	if (db->h)
		db->be->close(db->h);
	free(db->target);
	memset(db, 0, sizeof *db);
}

static bool cell_fail(const struct wh_rows *r, size_t row, size_t col, const char *what, const char *why,
		      struct buf *err)
{
	const char *c = wh_cell(r, row, col);
	buf_printf(err, "%s: row %zu, column %zu: %s%s%.40s%s", what, row + 1, col + 1, why, c ? " '" : "",
		   c ? c : "", c ? "'" : "");
	return false;
}

bool wh_cell_f64(const struct wh_rows *r, size_t row, size_t col, const char *what, bool null_ok, double *out,
		 struct buf *err)
{
	const char *c = wh_cell(r, row, col);
	if (!c) {
		*out = NAN;
		return null_ok ? true : cell_fail(r, row, col, what, "NULL where a number must be", err);
	}
	char *end;
	errno = 0;
	double v = strtod(c, &end);
	if (end == c || *end || errno == ERANGE || !isfinite(v))
		return cell_fail(r, row, col, what, "not a finite number:", err);
	*out = v;
	return true;
}

bool wh_cell_i64(const struct wh_rows *r, size_t row, size_t col, const char *what, bool null_ok, int64_t *out,
		 struct buf *err)
{
	const char *c = wh_cell(r, row, col);
	if (!c) {
		*out = 0;
		return null_ok ? true : cell_fail(r, row, col, what, "NULL where an integer must be", err);
	}
	char *end;
	errno = 0;
	long long v = strtoll(c, &end, 10);
	if (end == c || *end || errno == ERANGE)
		return cell_fail(r, row, col, what, "not an integer:", err);
	*out = v;
	return true;
}

void wh_f64_text(char *out, size_t cap, double v)
{
	snprintf(out, cap, "%.17g", v);
}

void wh_params_add(struct wh_params *p, const char *s)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->off = xrealloc(p->off, p->cap * sizeof *p->off);
	}
	if (!s) {
		p->off[p->n++] = SIZE_MAX;
		return;
	}
	p->off[p->n++] = p->text.len;
	buf_puts(&p->text, s);
	buf_putc(&p->text, 0);
}

void wh_params_f64(struct wh_params *p, bool have, double v)
{
	char t[40];
	if (!have || !isfinite(v)) {
		wh_params_add(p, NULL);
		return;
	}
	wh_f64_text(t, sizeof t, v);
	wh_params_add(p, t);
}

void wh_params_i64(struct wh_params *p, bool have, int64_t v)
{
	char t[24];
	snprintf(t, sizeof t, "%lld", (long long)v);
	wh_params_add(p, have ? t : NULL);
}

const char *const *wh_params_done(struct wh_params *p)
{
	free(p->v);
	p->v = xmalloc((p->n ? p->n : 1) * sizeof *p->v);
	for (size_t i = 0; i < p->n; i++)
		p->v[i] = p->off[i] == SIZE_MAX ? NULL : p->text.data + p->off[i];
	return p->v;
}

void wh_params_reset(struct wh_params *p)
{
	buf_reset(&p->text);
	p->n = 0;
}

void wh_params_free(struct wh_params *p)
{
	buf_free(&p->text);
	free(p->off);
	free(p->v);
}

/* INSERT INTO table (cols) VALUES ($1,...),(...) ... for rows rows. */
void wh_insert_sql(struct buf *b, const char *table, const char *cols, size_t ncols, size_t rows)
{
	buf_reset(b);
	buf_printf(b, "INSERT INTO %s (%s) VALUES ", table, cols);
	size_t k = 1;
	for (size_t r = 0; r < rows; r++) {
		buf_puts(b, r ? ",(" : "(");
		for (size_t c = 0; c < ncols; c++)
			buf_printf(b, "%s$%zu", c ? "," : "", k++);
		buf_putc(b, ')');
	}
	buf_puts(b, " ON CONFLICT DO NOTHING");
}
