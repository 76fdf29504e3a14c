/*
 * wh_sqlite.c - the warehouse's SQLite backend (wh_db.h): a database
 * file, libsqlite3 loaded with dlopen (Debian libsqlite3-0) the first time
 * a warehouse command opens one.
 *
 * Statements are prepared once and kept (a small cache keyed by their
 * text: ingest runs the same few inserts for every trace).  The file is in
 * WAL mode, so reports read while an ingest writes, and a writer waits up
 * to 30 s for another (busy timeout) instead of failing at once.  Numbers
 * come back as SQLite's text of them (REAL: 15 significant digits, which
 * the reports' arithmetic does not need more of).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/wh_db.h"
#include "core/dl.h"

struct sqlite_api {
	typeof(&sqlite3_open_v2) open_v2;
	typeof(&sqlite3_close_v2) close_v2;
	typeof(&sqlite3_errmsg) errmsg;
	typeof(&sqlite3_prepare_v2) prepare_v2;
	typeof(&sqlite3_bind_text) bind_text;
	typeof(&sqlite3_bind_null) bind_null;
	typeof(&sqlite3_bind_parameter_count) bind_parameter_count;
	typeof(&sqlite3_step) step;
	typeof(&sqlite3_reset) reset;
	typeof(&sqlite3_clear_bindings) clear_bindings;
	typeof(&sqlite3_finalize) finalize;
	typeof(&sqlite3_column_count) column_count;
	typeof(&sqlite3_column_text) column_text;
	typeof(&sqlite3_column_bytes) column_bytes;
	typeof(&sqlite3_column_type) column_type;
	typeof(&sqlite3_busy_timeout) busy_timeout;
	typeof(&sqlite3_exec) exec;
};
static struct sqlite_api sq;
static const char *const sq_sonames[] = {"libsqlite3.so.0", "libsqlite3.so", NULL};
#define S(f, n) DL_SYM(struct sqlite_api, f, n)
static const struct dl_sym sq_syms[] = {
	S(open_v2, "sqlite3_open_v2"),
	S(close_v2, "sqlite3_close_v2"),
	S(errmsg, "sqlite3_errmsg"),
	S(prepare_v2, "sqlite3_prepare_v2"),
	S(bind_text, "sqlite3_bind_text"),
	S(bind_null, "sqlite3_bind_null"),
	S(bind_parameter_count, "sqlite3_bind_parameter_count"),
	S(step, "sqlite3_step"),
	S(reset, "sqlite3_reset"),
	S(clear_bindings, "sqlite3_clear_bindings"),
	S(finalize, "sqlite3_finalize"),
	S(column_count, "sqlite3_column_count"),
	S(column_text, "sqlite3_column_text"),
	S(column_bytes, "sqlite3_column_bytes"),
	S(column_type, "sqlite3_column_type"),
	S(busy_timeout, "sqlite3_busy_timeout"),
	S(exec, "sqlite3_exec"),
};
#undef S
static struct dl_lib sq_lib = {
	.purpose = "the warehouse's SQLite database needs libsqlite3 (Debian: apt install libsqlite3-0)",
	.sonames = sq_sonames,
	.syms = sq_syms,
	.nsyms = sizeof sq_syms / sizeof sq_syms[0],
	.api = &sq,
};

#define SQ_CACHE 32

struct sq_conn {
	sqlite3 *db;
	struct {
		char *sql;
		sqlite3_stmt *st;
	} cache[SQ_CACHE];
	size_t ncache, next; /* next: the slot replaced when full */
};

static void *sq_open(const char *target, struct buf *err)
{
	if (!dl_load(&sq_lib, err))
		return NULL;
	sqlite3 *db = NULL;
	int rc = sq.open_v2(target, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		buf_puts(err, db ? sq.errmsg(db) : "cannot open");
		sq.close_v2(db);
		return NULL;
	}
	sq.busy_timeout(db, 30000);
	/* WAL: readers beside a writer; NORMAL sync is durable at each
	 * checkpoint and never corrupts (a crash loses at most the last
	 * transactions, which a second ingest then adds again); a 64 MiB
	 * page cache (2 MiB by default) keeps the kernels index's pages
	 * in memory while a batch of traces goes in */
	if (sq.exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536", NULL, NULL,
		    NULL) != SQLITE_OK) {
		buf_printf(err, "%s", sq.errmsg(db));
		sq.close_v2(db);
		return NULL;
	}
	struct sq_conn *c = xcalloc(1, sizeof *c);
	c->db = db;
	return c;
}

static sqlite3_stmt *prepared(struct sq_conn *c, const char *sql, struct buf *err)
{
	for (size_t i = 0; i < c->ncache; i++)
		if (strcmp(c->cache[i].sql, sql) == 0)
			return c->cache[i].st;
	sqlite3_stmt *st = NULL;
	if (sq.prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK || !st) {
		buf_puts(err, sq.errmsg(c->db));
		sq.finalize(st);
		return NULL;
	}
	size_t slot = c->ncache < SQ_CACHE ? c->ncache++ : c->next++ % SQ_CACHE;
	if (c->cache[slot].st) {
		sq.finalize(c->cache[slot].st);
		free(c->cache[slot].sql);
	}
	c->cache[slot].sql = xstrdup(sql);
	c->cache[slot].st = st;
	return st;
}

static int sq_exec(void *h, const char *sql, const char *const *params, size_t n, struct wh_rows *rows,
		   struct buf *err)
{
	struct sq_conn *c = h;
	sqlite3_stmt *st = prepared(c, sql, err);
	if (!st)
		return -1;
	if ((size_t)sq.bind_parameter_count(st) != n) {
		buf_printf(err, "statement has %d parameters, %zu given", sq.bind_parameter_count(st), n);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = params[i] ? sq.bind_text(st, (int)i + 1, params[i], -1, SQLITE_TRANSIENT)
				   : sq.bind_null(st, (int)i + 1);
		if (rc != SQLITE_OK) {
			buf_puts(err, sq.errmsg(c->db));
			sq.reset(st);
			return -1;
		}
	}
	int ncols = sq.column_count(st);
	if (rows)
		wh_rows_init(rows, (size_t)ncols);
	int rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		if (!rows)
			continue;
		for (int k = 0; k < ncols; k++) {
			bool null = sq.column_type(st, k) == SQLITE_NULL;
			const unsigned char *t = null ? NULL : sq.column_text(st, k);
			wh_rows_put(rows, (const char *)t, t ? (size_t)sq.column_bytes(st, k) : 0, null || !t);
		}
	}
	if (rc != SQLITE_DONE) {
		buf_puts(err, sq.errmsg(c->db));
		if (rows)
			wh_rows_free(rows);
	}
	sq.reset(st);
	sq.clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void sq_close(void *h)
{
	struct sq_conn *c = h;
	for (size_t i = 0; i < c->ncache; i++) {
		sq.finalize(c->cache[i].st);
		free(c->cache[i].sql);
	}
	sq.close_v2(c->db);
	free(c);
}

const struct wh_backend wh_sqlite = {"sqlite", sq_open, sq_exec, sq_close};
