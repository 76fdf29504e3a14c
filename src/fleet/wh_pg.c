/*
 * wh_pg.c - the warehouse's PostgreSQL backend (wh_db.h): a
 * postgresql://user:password@host:port/db URL (libpq's connection URL,
 * its options and environment variables: PGPASSWORD, sslmode=...), libpq
 * loaded with dlopen (Debian libpq5) the first time one is opened.
 *
 * One statement per round trip (PQexecParams, text parameters whose types
 * the server infers from where they go); the server's notices ("relation
 * already exists, skipping") are dropped rather than printed.  A
 * connection that breaks is reported as such, with libpq's reason; the
 * open transaction is then undone by the server.
 */
#include <postgresql/libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/wh_db.h"
#include "core/dl.h"

struct pg_api {
	typeof(&PQconnectdb) connectdb;
	typeof(&PQstatus) status;
	typeof(&PQerrorMessage) error_message;
	typeof(&PQfinish) finish;
	typeof(&PQexecParams) exec_params;
	typeof(&PQresultStatus) result_status;
	typeof(&PQresultErrorMessage) result_error_message;
	typeof(&PQntuples) ntuples;
	typeof(&PQnfields) nfields;
	typeof(&PQgetvalue) getvalue;
	typeof(&PQgetlength) getlength;
	typeof(&PQgetisnull) getisnull;
	typeof(&PQclear) clear;
	typeof(&PQsetNoticeProcessor) set_notice_processor;
};
static struct pg_api pg;
static const char *const pg_sonames[] = {"libpq.so.5", "libpq.so", NULL};
#define S(f, n) DL_SYM(struct pg_api, f, n)
static const struct dl_sym pg_syms[] = {
	S(connectdb, "PQconnectdb"),
	S(status, "PQstatus"),
	S(error_message, "PQerrorMessage"),
	S(finish, "PQfinish"),
	S(exec_params, "PQexecParams"),
	S(result_status, "PQresultStatus"),
	S(result_error_message, "PQresultErrorMessage"),
	S(ntuples, "PQntuples"),
	S(nfields, "PQnfields"),
	S(getvalue, "PQgetvalue"),
	S(getlength, "PQgetlength"),
	S(getisnull, "PQgetisnull"),
	S(clear, "PQclear"),
	S(set_notice_processor, "PQsetNoticeProcessor"),
};
#undef S
static struct dl_lib pg_lib = {
	.purpose = "a postgresql:// warehouse needs libpq (Debian: apt install libpq5)",
	.sonames = pg_sonames,
	.syms = pg_syms,
	.nsyms = sizeof pg_syms / sizeof pg_syms[0],
	.api = &pg,
};

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* libpq's messages end in a newline (sometimes two lines): one line. */
static void put_msg(struct buf *err, const char *m)
{
	size_t n = m ? strlen(m) : 0;
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		n--;
	if (!n) {
		buf_puts(err, "no message from the server");
		return;
	}
	for (size_t i = 0; i < n; i++)
		buf_putc(err, m[i] == '\n' ? ' ' : m[i]);
}

static void *pg_open(const char *target, struct buf *err)
{
	if (!dl_load(&pg_lib, err))
		return NULL;
	PGconn *c = pg.connectdb(target);
	if (!c) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	if (pg.status(c) != CONNECTION_OK) {
		put_msg(err, pg.error_message(c));
		pg.finish(c);
		return NULL;
	}
	pg.set_notice_processor(c, quiet, NULL);
	return c;
}

static int pg_exec(void *h, const char *sql, const char *const *params, size_t n, struct wh_rows *rows,
		   struct buf *err)
{
	PGconn *c = h;
	PGresult *res = pg.exec_params(c, sql, (int)n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = res ? pg.result_status(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		if (pg.status(c) != CONNECTION_OK)
			buf_puts(err, "connection lost: ");
		put_msg(err, res ? pg.result_error_message(res) : pg.error_message(c));
		pg.clear(res);
		return -1;
	}
	if (rows) {
		int nt = pg.ntuples(res), nf = pg.nfields(res);
		wh_rows_init(rows, (size_t)nf);
		for (int i = 0; i < nt; i++)
			for (int k = 0; k < nf; k++) {
				bool null = pg.getisnull(res, i, k);
				wh_rows_put(rows, pg.getvalue(res, i, k), (size_t)pg.getlength(res, i, k), null);
			}
	}
	pg.clear(res);
	return 0;
}

static void pg_close(void *h) { pg.finish(h); }

const struct wh_backend wh_pg = {"postgresql", pg_open, pg_exec, pg_close};
