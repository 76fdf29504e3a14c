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
#include "fleet/wh_trace.h"

#define BATCH 200

static int trace_row(struct wh_db *db, const struct wh_trace *t, int64_t ingested_ns, struct wh_params *p,
		     struct buf *sql, struct buf *err)
{
	wh_params_reset(p);
	wh_params_i64(p, true, wh_trace_id(t->hash));
	wh_params_add(p, t->hash);
	wh_params_add(p, t->path);
	wh_params_add(p, t->job);
	wh_params_add(p, t->host);
	wh_params_i64(p, t->has_rank && !t->failed, t->rank);
	wh_params_i64(p, t->has_start && !t->failed, t->start_ns);
	wh_params_add(p, t->failed ? "failed" : "ok");
	wh_params_add(p, t->failed ? t->error : NULL);
	wh_params_i64(p, true, ingested_ns);
	bool ok = !t->failed;
	wh_params_i64(p, ok, (int64_t)t->events);
	wh_params_i64(p, ok, (int64_t)t->gpu_rows);
	wh_params_f64(p, ok, t->span_us);
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
	wh_params_i64(p, ok, (int64_t)t->niters);
	wh_params_f64(p, ok, mean);
	wh_params_f64(p, ok, p50);
	wh_params_f64(p, ok, max);
	wh_params_f64(p, ok && t->has_gpu, t->kernel_us);
	wh_params_f64(p, ok && t->has_gpu, t->idle_us);
	wh_params_f64(p, ok && t->has_gpu, t->idle_share);
	wh_params_f64(p, ok && t->has_host_wait, t->host_wait_us);
	wh_params_f64(p, ok && t->has_host_wait, t->host_wait_share);
	wh_insert_sql(sql, "traces",
		   "id,hash,path,job,host,rank,start_ns,status,error,ingested_ns,events,gpu_rows,span_us,"
		   "iterations,iter_mean_us,iter_p50_us,iter_max_us,kernel_us,idle_us,idle_share,"
		   "host_wait_us,host_wait_share",
		   22, 1);
	return wh_db_exec(db, sql->data, wh_params_done(p), p->n, NULL, err);
}

int wh_trace_store(struct wh_db *db, const struct wh_trace *t, int64_t ingested_ns, struct buf *err)
{
	struct wh_params p = {0};
	buf_init(&p.text);
	struct buf sql = BUF_INIT;
	if (wh_db_begin(db, err) != 0)
		goto fail_quiet;
	if (trace_row(db, t, ingested_ns, &p, &sql, err) != 0)
		goto fail;
	int64_t id = wh_trace_id(t->hash);
	for (size_t i = 0; i < t->niters; i += BATCH) {
		size_t n = t->niters - i < BATCH ? t->niters - i : BATCH;
		wh_params_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			wh_params_i64(&p, true, id);
			wh_params_i64(&p, true, t->iters[j].step);
			wh_params_f64(&p, true, t->iters[j].dur_us);
		}
		wh_insert_sql(&sql, "iterations", "trace,step,dur_us", 3, n);
		if (wh_db_exec(db, sql.data, wh_params_done(&p), p.n, NULL, err) != 0)
			goto fail;
	}
	for (size_t i = 0; i < t->nkernels; i += BATCH) {
		size_t n = t->nkernels - i < BATCH ? t->nkernels - i : BATCH;
		wh_params_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			wh_params_i64(&p, true, wh_name_id(t->kernels[j].name));
			wh_params_add(&p, t->kernels[j].name);
			wh_params_add(&p, t->kernels[j].type);
		}
		wh_insert_sql(&sql, "kernel_names", "id,name,type", 3, n);
		if (wh_db_exec(db, sql.data, wh_params_done(&p), p.n, NULL, err) != 0)
			goto fail;
		wh_params_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			const struct wh_kernel *k = &t->kernels[j];
			wh_params_i64(&p, true, id);
			wh_params_i64(&p, true, wh_name_id(k->name));
			wh_params_i64(&p, t->has_start, t->start_ns);
			wh_params_i64(&p, true, (int64_t)k->calls);
			wh_params_f64(&p, true, k->total_us);
			wh_params_f64(&p, true, k->mean_us);
			wh_params_f64(&p, true, k->min_us);
			wh_params_f64(&p, true, k->max_us);
			wh_params_f64(&p, true, k->p50_us);
			wh_params_f64(&p, true, k->p95_us);
		}
		wh_insert_sql(&sql, "kernels", "trace,kname,start_ns,calls,total_us,mean_us,min_us,max_us,p50_us,p95_us", 10,
			   n);
		if (wh_db_exec(db, sql.data, wh_params_done(&p), p.n, NULL, err) != 0)
			goto fail;
	}
	for (size_t i = 0; i < t->ntypes; i += BATCH) {
		size_t n = t->ntypes - i < BATCH ? t->ntypes - i : BATCH;
		wh_params_reset(&p);
		for (size_t j = i; j < i + n; j++) {
			wh_params_i64(&p, true, id);
			wh_params_add(&p, t->types[j].label);
			wh_params_f64(&p, true, t->types[j].total_us);
		}
		wh_insert_sql(&sql, "kernel_types", "trace,type,total_us", 3, n);
		if (wh_db_exec(db, sql.data, wh_params_done(&p), p.n, NULL, err) != 0)
			goto fail;
	}
	if (wh_db_commit(db, err) != 0)
		goto fail;
	wh_params_free(&p);
	buf_free(&sql);
	return 0;
fail:
	wh_db_rollback(db);
fail_quiet:
	wh_params_free(&p);
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
