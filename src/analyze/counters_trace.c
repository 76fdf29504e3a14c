/*
 * counters_trace.c - `dyno analyze counters --write-trace OUT`: the rank's
 * trace file, unchanged, with HTA's two counter series added at the end of
 * traceEvents as counter events (ph "C"), like HTA's
 * generate_trace_with_counters: "Queue Length" (id = stream, on the GPU's
 * pid) and "Memcpy BW" (one arg per memory type).  Times go back to the
 * file's time base (+ the alignment offset).  OUT is gzip when its name
 * ends in ".gz".
 *
 * Cost: the copy is trace_copy.c's (the file read twice as a stream); the
 * counter events are written in 1 MiB pieces, so memory stays a read
 * window plus the two series.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/counters.h"
#include "analyze/trace_copy.h"
#include "core/json.h"

/* The start of one counter event, up to its "ts" (the caller adds "id"
 * and "args" and closes it), after a separator unless it is the first. */
static void counter_begin(struct jw *w, struct buf *b, bool *comma, const struct trace_rank *r, const char *name,
			  int64_t pid, double ts)
{
	if (*comma)
		buf_puts(b, ",\n");
	*comma = true;
	jw_init(w, b);
	jw_obj_begin(w);
	jw_key(w, "ph");
	jw_str(w, "C");
	jw_key(w, "name");
	jw_str(w, name);
	jw_key(w, "pid");
	if (trace_id_is_str(pid))
		jw_str(w, trace_strtab_get(&r->strs, (uint32_t)(pid - TRACE_ID_STR_BASE)));
	else
		jw_i64(w, pid);
	jw_key(w, "ts");
	jw_f64(w, ts);
}

/* The counter events to the sink, each preceded by a comma when
 * first_comma or not the first; written in 1 MiB pieces, so memory stays
 * the two series. */
static bool counter_events(void *ctx, struct tcopy_sink *s, bool first_comma)
{
	const struct trace_rank *r = ctx;
	struct buf text = BUF_INIT, *b = &text;
	bool ok = true;
	struct jw w;
	bool comma = first_comma;
	struct queue_point *q;
	bool mismatch;
	size_t nq = counters_queue_series(r, &q, &mismatch);
	for (size_t i = 0; i < nq; i++) {
		double ts = q[i].ts + r->min_ts;
		if (!isfinite(ts))
			continue;
		counter_begin(&w, b, &comma, r, "Queue Length", q[i].pid, ts);
		jw_key(&w, "id");
		jw_i64(&w, q[i].stream);
		jw_key(&w, "args");
		jw_obj_begin(&w);
		jw_key(&w, "queue_length");
		jw_i64(&w, q[i].queue_length);
		jw_obj_end(&w);
		jw_obj_end(&w);
		ok = ok && tcopy_flush(s, b, false);
	}
	free(q);
	struct bw_point *p;
	char **types;
	size_t nt;
	size_t np = counters_bw_series(r, &p, &types, &nt);
	for (size_t i = 0; i < np; i++) {
		double ts = p[i].ts + r->min_ts;
		if (!isfinite(ts) || !isfinite(p[i].gbps))
			continue;
		counter_begin(&w, b, &comma, r, "Memcpy BW", p[i].pid, ts);
		jw_key(&w, "args");
		jw_obj_begin(&w);
		jw_key(&w, types[p[i].type]);
		jw_f64(&w, p[i].gbps);
		jw_obj_end(&w);
		jw_obj_end(&w);
		ok = ok && tcopy_flush(s, b, false);
	}
	for (size_t t = 0; t < nt; t++)
		free(types[t]);
	free(types);
	free(p);
	ok = ok && tcopy_flush(s, b, true);
	buf_free(&text);
	return ok;
}

int counters_write_trace(const struct trace_rank *r, const char *out, struct buf *err)
{
	struct tcopy_scan sc;
	if (tcopy_scan(r->path, NULL, 0, &sc, err) != 0)
		return -1;
	int rc = tcopy_write_trace(r->path, out, &sc, NULL, 0, counter_events, (void *)r, err);
	tcopy_scan_free(&sc);
	return rc;
}
