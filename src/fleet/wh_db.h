/*
 * wh_db.h - the trace warehouse's database (docs/fleet.md): one small
 * interface over two backends, SQLite (a file, the default; wh_sqlite.c)
 * and PostgreSQL (a postgresql:// URL; wh_pg.c), both loaded with dlopen
 * so that dyno runs where neither library is installed.
 *
 * Everything crosses the interface as text: statements use $1..$n
 * placeholders in ascending order of first use (both backends read that
 * form) and bind text; answers come back as text cells (NULL = SQL NULL)
 * in one arena.  Rows read back are a boundary: wh_cell_f64/i64 refuse a
 * cell that is not a complete finite number, naming the query, row and
 * column.  wh_db_open applies the schema's migrations (a wh_schema table
 * holds the version) and refuses a database newer than this dyno.
 * Declarations only.
 */
#ifndef DYNO_CLI_WH_DB_H
#define DYNO_CLI_WH_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* The schema version this dyno writes (the migrations in wh_db.c). */
#define WH_SCHEMA_VERSION 2

/* An answer: nrows x ncols cells, row-major. */
struct wh_rows {
	size_t nrows, ncols;
	size_t *off;       /* each cell's text in arena; SIZE_MAX: NULL */
	struct buf arena;  /* NUL-terminated texts */
	size_t ncells;     /* appended so far */
};
void wh_rows_free(struct wh_rows *r);
/* cell text, NULL for SQL NULL */
static inline const char *wh_cell(const struct wh_rows *r, size_t row, size_t col)
{
	size_t o = r->off[row * r->ncols + col];
	return o == SIZE_MAX ? NULL : r->arena.data + o;
}
/* For backends: start an answer of ncols columns, append one cell. */
void wh_rows_init(struct wh_rows *r, size_t ncols);
void wh_rows_put(struct wh_rows *r, const char *text, size_t len, bool null);

/* A backend: open a target, run one statement, close. */
struct wh_backend {
	const char *name; /* "sqlite", "postgresql" */
	void *(*open)(const char *target, struct buf *err);
	/* 0, or -1 with the database's message in err; rows (may be NULL)
	 * gets the answer of a query */
	int (*exec)(void *h, const char *sql, const char *const *params, size_t nparams, struct wh_rows *rows,
		    struct buf *err);
	void (*close)(void *h);
};
extern const struct wh_backend wh_sqlite, wh_pg;

struct wh_db {
	const struct wh_backend *be;
	void *h;
	char *target; /* the file or URL, for messages (a URL without its password) */
};

/* spec: "postgresql://..." / "postgres://..." (libpq's URL) or a file name
 * (SQLite, created when absent).  Opens it and brings the schema up to
 * WH_SCHEMA_VERSION.  0, or -1 with "warehouse DB <target>: why" in err. */
int wh_db_open(struct wh_db *db, const char *spec, struct buf *err);
/* The same for a command that only reads (report, gpu-hours): a SQLite
 * file that does not exist is "no such warehouse" (a typo must not make an
 * empty database and an empty report); a PostgreSQL URL is opened. */
int wh_db_open_existing(struct wh_db *db, const char *spec, struct buf *err);
void wh_db_close(struct wh_db *db);
/* One statement; params[i] NULL binds NULL.  Errors are prefixed with the
 * target. */
int wh_db_exec(struct wh_db *db, const char *sql, const char *const *params, size_t n, struct wh_rows *rows,
	       struct buf *err);
/* BEGIN / COMMIT / ROLLBACK (ROLLBACK's own failure is ignored: the
 * connection may be gone, and the database undoes the transaction then). */
int wh_db_begin(struct wh_db *db, struct buf *err);
int wh_db_commit(struct wh_db *db, struct buf *err);
void wh_db_rollback(struct wh_db *db);

/* The cell as a number: false, with "what: row R, column C: ..." in err,
 * when it is NULL (null_ok false), not a number or not finite.  A NULL
 * with null_ok gives *out = NAN / 0 and *is_null true. */
bool wh_cell_f64(const struct wh_rows *r, size_t row, size_t col, const char *what, bool null_ok, double *out,
		 struct buf *err);
bool wh_cell_i64(const struct wh_rows *r, size_t row, size_t col, const char *what, bool null_ok, int64_t *out,
		 struct buf *err);

/* A double as the text a statement binds (round-trips exactly). */
void wh_f64_text(char *out, size_t cap, double v);

/* A statement's parameters as texts in one arena; wh_params_done gives
 * the pointers once all are in.  f64/i64 bind NULL when !have (and a
 * non-finite double is NULL too: absent, never a number it is not). */
struct wh_params {
	struct buf text;
	size_t *off; /* SIZE_MAX: NULL */
	size_t n, cap;
	const char **v;
};
void wh_params_add(struct wh_params *p, const char *s);
void wh_params_f64(struct wh_params *p, bool have, double v);
void wh_params_i64(struct wh_params *p, bool have, int64_t v);
const char *const *wh_params_done(struct wh_params *p);
void wh_params_reset(struct wh_params *p);
void wh_params_free(struct wh_params *p);
/* INSERT INTO table (cols) VALUES ($1,...),(...) ON CONFLICT DO NOTHING,
 * for rows rows of ncols: what ingest writes (a second copy of a row
 * adds nothing). */
void wh_insert_sql(struct buf *b, const char *table, const char *cols, size_t ncols, size_t rows);

#endif
