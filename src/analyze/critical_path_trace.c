/*
 * critical_path_trace.c - `dyno analyze critical-path --write-trace OUT`:
 * the rank's trace file with the critical path marked, as HTA's
 * overlay_critical_path_analysis writes it: every event with a node on the
 * path gets args "critical": 1, and each path edge of the types HTA shows
 * (dependency, kernel launch delay, sync dependency) becomes a flow (ph
 * "s" / "f" with "bp": "e", cat and name "critical_path", args weight,
 * critical, type) at the end of traceEvents.  A flow point is at its
 * event's start or end in the file's own time base; the end of a GPU event
 * (args.device >= 0) moves 1 us back (at most its duration) so that the
 * arrow binds to the kernel and not to the next one.  Weights are whole µs
 * as HTA's int() makes them; times are the file's own (HTA truncates them
 * too, which on a ns-resolution trace puts a point before its event's
 * start, where Perfetto binds it to nothing: docs/analyze.md).  OUT is
 * gzip when its name ends in ".gz".  Flows come in path order (HTA's
 * follow a Python set's order).
 *
 * Cost: trace_copy.c's two streaming reads of the file; memory is one
 * entry per event on the path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/critical_path.h"
#include "analyze/trace_copy.h"
#include "core/json.h"

static int ev_cmp(const void *a, const void *b)
{
	const struct tcopy_event *x = a, *y = b;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const struct tcopy_event *ev_find(const struct tcopy_event *ev, size_t n, uint32_t idx)
{
	struct tcopy_event key = {.idx = idx};
	return bsearch(&key, ev, n, sizeof *ev, ev_cmp);
}

struct flows_ctx {
	const struct trace_rank *r;
	const struct cp_result *res;
	const struct tcopy_event *ev;
	size_t nev;
	const struct tcopy_scan *sc;
	size_t written;
};

/* One flow point of edge e at event x (a start or an end node). */
static void flow_point(struct buf *b, const struct flows_ctx *c, const struct tcopy_event *x, bool at_start,
		       const struct cp_path_edge *e, size_t id, bool start)
{
	double end = x->ts + x->dur;
	if (x->device)
		end -= x->dur < 1 ? x->dur : 1;
	struct jw w;
	jw_init(&w, b);
	jw_obj_begin(&w);
	jw_key(&w, "ph");
	jw_str(&w, start ? "s" : "f");
	jw_key(&w, "id");
	jw_u64(&w, id);
	jw_key(&w, "pid");
	jw_raw(&w, c->sc->text.data + x->pid_off, x->pid_len);
	jw_key(&w, "tid");
	jw_raw(&w, c->sc->text.data + x->tid_off, x->tid_len);
	jw_key(&w, "ts");
	double ts = at_start ? x->ts : end;
	if (ts == (double)(int64_t)ts)
		jw_i64(&w, (int64_t)ts);
	else
		jw_f64(&w, ts);
	jw_key(&w, "cat");
	jw_str(&w, "critical_path");
	jw_key(&w, "name");
	jw_str(&w, "critical_path");
	jw_key(&w, "args");
	jw_obj_begin(&w);
	jw_key(&w, "weight");
	jw_i64(&w, (int64_t)e->weight);
	jw_key(&w, "critical");
	jw_bool(&w, true);
	jw_key(&w, "type");
	jw_str(&w, cp_edge_type_name((enum cp_edge_type)e->type));
	jw_obj_end(&w);
	if (!start) {
		jw_key(&w, "bp");
		jw_str(&w, "e");
	}
	jw_obj_end(&w);
}

/* usable as a flow point: found, with times, pid and tid */
static bool point_ok(const struct tcopy_event *x)
{
	return x && x->found && x->has_ts && x->has_dur && x->pid_len && x->tid_len;
}

static bool write_flows(void *ctx, struct tcopy_sink *s, bool first_comma)
{
	struct flows_ctx *c = ctx;
	struct buf text = BUF_INIT;
	bool ok = true, comma = first_comma;
	for (size_t k = 0; k < c->res->path_edges && ok; k++) {
		const struct cp_path_edge *e = &c->res->path[k];
		if (e->type != CP_DEPENDENCY && e->type != CP_LAUNCH && e->type != CP_SYNC)
			continue;
		const struct tcopy_event *a = ev_find(c->ev, c->nev, c->r->idx[e->src_row]),
					 *b = ev_find(c->ev, c->nev, c->r->idx[e->dst_row]);
		if (!point_ok(a) || !point_ok(b))
			continue;
		buf_puts(&text, comma ? ",\n" : "\n");
		comma = true;
		flow_point(&text, c, a, e->src_start, e, c->written, true);
		buf_puts(&text, ",\n");
		flow_point(&text, c, b, e->dst_start, e, c->written, false);
		c->written++;
		ok = tcopy_flush(s, &text, false);
	}
	ok = ok && tcopy_flush(s, &text, true);
	buf_free(&text);
	return ok;
}

int critical_path_write_trace(const struct trace_rank *r, const struct cp_result *res, const char *out,
			      size_t *marked, size_t *flows, struct buf *err)
{
	/* the events with a node on the path, by event id */
	struct tcopy_event *ev = xmalloc((2 * res->path_edges + 1) * sizeof *ev);
	size_t n = 0;
	for (size_t k = 0; k < res->path_edges; k++) {
		ev[n++] = (struct tcopy_event){.idx = r->idx[res->path[k].src_row]};
		ev[n++] = (struct tcopy_event){.idx = r->idx[res->path[k].dst_row]};
	}
	qsort(ev, n, sizeof *ev, ev_cmp);
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if (m == 0 || ev[m - 1].idx != ev[k].idx)
			ev[m++] = ev[k];
	n = m;
	struct tcopy_scan sc;
	if (tcopy_scan(r->path, ev, n, &sc, err) != 0) {
		free(ev);
		return -1;
	}
	/* "critical": 1 as the last arg (HTA adds the key to its args dict) */
	static const char first[] = "\"critical\": 1", more[] = ", \"critical\": 1",
			  none[] = ", \"args\": {\"critical\": 1}";
	struct tcopy_insert *ins = xmalloc((n ? n : 1) * sizeof *ins);
	size_t ni = 0;
	for (size_t k = 0; k < n; k++) {
		if (!ev[k].found || ev[k].args_other)
			continue;
		if (ev[k].args_end != UINT64_MAX)
			ins[ni++] = ev[k].args_empty ? (struct tcopy_insert){ev[k].args_end, first, sizeof first - 1}
						     : (struct tcopy_insert){ev[k].args_end, more, sizeof more - 1};
		else if (ev[k].no_members)
			ins[ni++] = (struct tcopy_insert){ev[k].obj_end, none + 2, sizeof none - 3};
		else
			ins[ni++] = (struct tcopy_insert){ev[k].obj_end, none, sizeof none - 1};
	}
	struct flows_ctx c = {r, res, ev, n, &sc, 0};
	int rc = tcopy_write_trace(r->path, out, &sc, ins, ni, write_flows, &c, err);
	if (marked)
		*marked = ni;
	if (flows)
		*flows = c.written;
	free(ins);
	tcopy_scan_free(&sc);
	free(ev);
	return rc;
}
