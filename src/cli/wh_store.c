/*
 * wh_store.c - one trace's rows written to the warehouse (wh_trace.h):
 * BEGIN, its traces row, its iterations, kernel names, kernels and kernel
 * types, COMMIT.
 * Any failure rolls the transaction back, so a trace is in the database
 * whole or not at all, and the database keeps what it had.
 *
 * Rows go in multi-row INSERTs of up to 200 rows (one round trip to
 * PostgreSQL per batch instead of per row; both databases take a few
 * thousand parameters per statement).  Every insert is ON CONFLICT DO
 * NOTHING: a second ingest of the same content, even a concurrent one,
 * changes nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "cli/wh_trace.h"

#define BATCH 200

/* Parameters as texts in one arena (pointers made once all are in). */
struct params {
	struct buf text;
	size_t *off; /* SIZE_MAX: NULL */
	size_t n, cap;
	const char **v;
};

static void p_add(struct params *p, const char *s)
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

static void p_f64(struct params *p, bool have, double v)
{
	char t[40];
	if (!have || !isfinite(v)) {
		p_add(p, NULL);
		return;
	}
	wh_f64_text(t, sizeof t, v);
	p_add(p, t);
}

static void p_i64(struct params *p, bool have, int64_t v)
{
	char t[24];
	snprintf(t, sizeof t, "%lld", (long long)v);
	p_add(p, have ? t : NULL);
}

static const char *const *p_done(struct params *p)
{
	free(p->v);
	p->v = xmalloc((p->n ? p->n : 1) * sizeof *p->v);
	for (size_t i = 0; i < p->n; i++)
		p->v[i] = p->off[i] == SIZE_MAX ? NULL : p->text.data + p->off[i];
	return p->v;
}

static void p_reset(struct params *p)
{
	buf_reset(&p->text);
	p->n = 0;
}

static void p_free(struct params *p)
{
	buf_free(&p->text);
	free(p->off);
	free(p->v);
}

/* INSERT INTO table (cols) VALUES ($1,...),(...) ... for rows rows. */
static void insert_sql(struct buf *b, const char *table, const char *cols, size_t ncols, size_t rows)
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

static int trace_row(struct wh_db *db, const struct wh_trace *t, int64_t ingested_ns, struct params *p,
		     struct buf *sql, struct buf *err)
{
	p_reset(p);
	p_i64(p, true, wh_trace_id(t->hash));
	p_add(p, t->hash);
	p_add(p, t->path);
	p_add(p, t->job);
	p_add(p, t->host);
	p_i64(p, t->has_rank && !t->failed, t->rank);
	p_i64(p, t->has_start && !t->failed, t->start_ns);
	p_add(p, t->failed ? "failed" : "ok");
	p_add(p, t->failed ? t->error : NULL);
	p_i64(p, true, ingested_ns);
	bool ok = !t->failed;
	p_i64(p, ok, (int64_t)t->events);
	p_i64(p, ok, (int64_t)t->gpu_rows);
	p_f64(p, ok, t->span_us);
	/* iteration figures: absent without ProfilerSteps */
	double mean = NAN, p50 = NAN, max = NAN;
	if (t->niters) {
		double *d = xmalloc(t->niters * sizeof *d), s = 0;
		for (size_t i = 0; i < t->niters; i++)
			d[i] = t->iters[i].dur_us, s += d[i];
		struct describe ds;
		describe(d, t->niters, &ds);
		mean = s / (double)t->niters, p50 = ds.q50, max = ds.max;
		free(d);
	}
	p_i64(p, ok, (int64_t)t->niters);
	p_f64(p, ok, mean);
	p_f64(p, ok, p50);
	p_f64(p, ok, max);
	p_f64(p, ok && t->has_gpu, t->kernel_us);
	p_f64(p, ok && t->has_gpu, t->idle_us);
	p_f64(p, ok && t->has_gpu, t->idle_share);
	p_f64(p, ok && t->has_host_wait, t->host_wait_us);
	p_f64(p, ok && t->has_host_wait, t->host_wait_share);
	insert_sql(sql, "traces",
		   "id,hash,path,job,host,rank,start_ns,status,error,ingested_ns,events,gpu_rows,span_us,"
		   "iterations,iter_mean_us,iter_p50_us,iter_max_us,kernel_us,idle_us,idle_share,"
		   "host_wait_us,host_wait_share",
		   22, 1);
	return wh_db_exec(db, sql->data, p_done(p), p->n, NULL, err);
}

int wh_trace_store(struct wh_db *db, const struct wh_trace *t, int64_t ingested_ns, struct buf *err)
{
	struct params p = {0};
	buf_init(&p.text);
	struct buf sql = BUF_INIT;
	if (wh_db_begin(db, err) != 0)
		goto fail_quiet;
	if (trace_row(db, t, ingested_ns, &p, &sql, err) != 0)
		goto fail;
	int64_t id = wh_trace_id(t->hash);
	for (size_t i = 0; i < t->niters; i += BATCH) {
		size_t n = t->niters - i < BATCH ? t->niters - i : BATCH;
		p_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			p_i64(&p, true, id);
			p_i64(&p, true, t->iters[j].step);
			p_f64(&p, true, t->iters[j].dur_us);
		}
		insert_sql(&sql, "iterations", "trace,step,dur_us", 3, n);
		if (wh_db_exec(db, sql.data, p_done(&p), p.n, NULL, err) != 0)
			goto fail;
	}
	for (size_t i = 0; i < t->nkernels; i += BATCH) {
		size_t n = t->nkernels - i < BATCH ? t->nkernels - i : BATCH;
		p_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			p_i64(&p, true, wh_name_id(t->kernels[j].name));
			p_add(&p, t->kernels[j].name);
			p_add(&p, t->kernels[j].type);
		}
		insert_sql(&sql, "kernel_names", "id,name,type", 3, n);
		if (wh_db_exec(db, sql.data, p_done(&p), p.n, NULL, err) != 0)
			goto fail;
		p_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			const struct wh_kernel *k = &t->kernels[j];
			p_i64(&p, true, id);
			p_i64(&p, true, wh_name_id(k->name));
			p_i64(&p, t->has_start, t->start_ns);
			p_i64(&p, true, (int64_t)k->calls);
			p_f64(&p, true, k->total_us);
			p_f64(&p, true, k->mean_us);
			p_f64(&p, true, k->min_us);
			p_f64(&p, true, k->max_us);
			p_f64(&p, true, k->p50_us);
			p_f64(&p, true, k->p95_us);
		}
		insert_sql(&sql, "kernels", "trace,kname,start_ns,calls,total_us,mean_us,min_us,max_us,p50_us,p95_us", 10,
			   n);
		if (wh_db_exec(db, sql.data, p_done(&p), p.n, NULL, err) != 0)
			goto fail;
	}
	for (size_t i = 0; i < t->ntypes; i += BATCH) {
		size_t n = t->ntypes - i < BATCH ? t->ntypes - i : BATCH;
		p_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			p_i64(&p, true, id);
			p_add(&p, t->types[j].label);
			p_f64(&p, true, t->types[j].total_us);
		}
		insert_sql(&sql, "kernel_types", "trace,type,total_us", 3, n);
		if (wh_db_exec(db, sql.data, p_done(&p), p.n, NULL, err) != 0)
			goto fail;
	}
	if (wh_db_commit(db, err) != 0)
		goto fail;
	p_free(&p);
	buf_free(&sql);
	return 0;
fail:
	wh_db_rollback(db);
fail_quiet:
	p_free(&p);
	buf_free(&sql);
	return -1;
}

int wh_trace_known(struct wh_db *db, const char *hash, struct buf *err)
{
	struct wh_rows r;
	const char *p[] = {hash};
	if (wh_db_exec(db, "SELECT 1 FROM traces WHERE hash = $1", p, 1, &r, err) != 0)
		return -1;
	int known = r.nrows > 0;
	wh_rows_free(&r);
	return known;
}
