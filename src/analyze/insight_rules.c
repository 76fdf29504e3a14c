/*
 * insight_rules.c - the rules of `dyno analyze insights` on the trace but
 * those over the step waterfall (insight_idle.c; the host ones are in
 * insight_host.c), one `const struct insight_rule` each:
 * its name, what it measures, its threshold, its recommendation and its
 * evaluation over the tables of the used analyses and insights' own
 * (insights.h).  The thresholds and why they are where they are:
 * docs/analyze.md, "insights".  Each evaluation is a pass over a few
 * tables; the straggler rule sorts the collectives once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/insights.h"

/* The rows of t whose rank column (0) is rank, into *rows (free it). */
static size_t rank_rows(const struct atable *t, int rank, size_t **rows)
{
	*rows = xmalloc((t && t->nrows ? t->nrows : 1) * sizeof **rows);
	size_t n = 0;
	for (size_t i = 0; t && i < t->nrows; i++)
		if (insight_i(t, i, 0) == rank)
			(*rows)[n++] = i;
	return n;
}

/* The first row of t with rank (column "rank") and, when col2 is given,
 * col2 == v2; -1: none. */
static long find_row(const struct atable *t, int rank, const char *col2, int64_t v2)
{
	int rc = insight_col(t, "rank"), c2 = col2 ? insight_col(t, col2) : -1;
	for (size_t i = 0; t && rc >= 0 && i < t->nrows; i++)
		if (insight_i(t, i, rc) == rank && (!col2 || (c2 >= 0 && insight_i(t, i, c2) == v2)))
			return (long)i;
	return -1;
}

/* "rank 3: " before each rank's part of a multi-rank measured text */
static void sep(struct buf *m, const struct trace_set *v, int rank)
{
	if (m->len)
		buf_puts(m, "; ");
	if (v->nranks > 1)
		buf_printf(m, "rank %d: ", rank);
}

/* why a rank has nothing to say: the used analysis skipped, or no GPU */
static const char *no_gpu_why(const struct insight_eval *e)
{
	const char *why = insight_skipped(e, "temporal");
	return why ? why : "no GPU events on the rank";
}

/* ---- exposed communication ---- */

static int eval_exposed_comm(struct insight_eval *e, struct buf *m)
{
	const struct atable *temporal = insight_table(e, "temporal_breakdown"), *ov = insight_table(e, "comm_comp_overlap"),
			    *streams = e->t[INSIGHT_T_STREAMS], *coll = e->t[INSIGHT_T_COLLECTIVES];
	size_t evaluated = 0;
	struct buf why = BUF_INIT;
	for (size_t k = 0; k < e->view->nranks; k++) {
		int rank = e->view->ranks[k]->rank;
		long tr = find_row(temporal, rank, NULL, 0), orow = find_row(ov, rank, NULL, 0);
		if (tr < 0) {
			buf_printf(&why, "%srank %d: %s", why.len ? "; " : "", rank, no_gpu_why(e));
			continue;
		}
		evaluated++;
		size_t *rows, ns = rank_rows(streams, rank, &rows);
		double comm = 0, most = 0;
		int64_t stream = -1;
		for (size_t i = 0; i < ns; i++) {
			double c = insight_f(streams, rows[i], IS_COMM_TIME);
			comm += c;
			if (c > most) {
				most = c;
				stream = insight_i(streams, rows[i], IS_STREAM);
			}
		}
		free(rows);
		sep(m, e->view, rank);
		if (comm <= 0) {
			buf_puts(m, "no communication kernels");
			continue;
		}
		double overlap = orow >= 0 ? insight_f(ov, (size_t)orow, 1) : NAN;
		if (!isfinite(overlap))
			overlap = 0;
		double span = insight_f(temporal, (size_t)tr, insight_col(temporal, "kernel_time(us)"));
		double exposed = comm * (1 - overlap / 100), share = 100 * exposed / span;
		buf_printf(m, "communication %.1f%% of the GPU span, %.1f%% of it overlapped: %.1f%% exposed",
			   100 * comm / span, overlap, share);
		if (share < 10)
			continue;
		/* the collective with the most time */
		size_t *cr, nc = rank_rows(coll, rank, &cr);
		const char *top = NULL;
		double best = 0;
		for (size_t i = 0; i < nc; i++) {
			const char *nm = insight_s(coll, cr[i], IC_NAME);
			double sum = 0;
			for (size_t j = 0; j < nc; j++)
				if (strcmp(insight_s(coll, cr[j], IC_NAME), nm) == 0)
					sum += insight_f(coll, cr[j], IC_DUR);
			if (sum > best) {
				best = sum;
				top = nm;
			}
			if (i > 64)
				break; /* the first names give the biggest; bounded work */
		}
		free(cr);
		struct buf ev = BUF_INIT;
		buf_puts(&ev, "communication kernels ");
		insight_fmt_us(&ev, comm);
		buf_printf(&ev, " (%.1f%% of the GPU span ", 100 * comm / span);
		insight_fmt_us(&ev, span);
		buf_printf(&ev, "), only %.1f%% overlapped by computation: ", overlap);
		insight_fmt_us(&ev, exposed);
		buf_printf(&ev, " exposed (%.1f%% of the span)", share);
		/* its cost: the exposed part of the step waterfall */
		struct insight_wmean w;
		if (insight_waterfall_mean(e->t[INSIGHT_T_WATERFALL], rank, &w) == 0 && w.part[INSIGHT_C_COMM] > 0) {
			buf_puts(&ev, "; per step: ");
			insight_fmt_us(&ev, w.part[INSIGHT_C_COMM]);
			buf_printf(&ev, " of communication alone on the GPU = %.1f%% of the ", 100 * w.part[INSIGHT_C_COMM] / w.step);
			insight_fmt_us(&ev, w.step);
			buf_printf(&ev, " step (steps from %s)", w.from);
		}
		struct insight_finding f = {share >= 30 ? INSIGHT_HIGH : INSIGHT_MEDIUM, rank, -1, stream, top, share, 10,
					    ev.data};
		if (w.part[INSIGHT_C_COMM] > 0 && w.step > 0) {
			f.cost_us = w.part[INSIGHT_C_COMM];
			f.step_us = w.step;
			f.steps_from = w.from;
		}
		insight_add(e, &f);
		buf_free(&ev);
	}
	if (!evaluated)
		buf_append(m, why.data, why.len);
	buf_free(&why);
	return evaluated ? 0 : -1;
}

const struct insight_rule insight_rule_exposed_comm = {
	"exposed-comm",
	"communication kernel time not overlapped by computation (overlap), as a share of the GPU span (temporal)",
	">= 10% of the GPU span (high: >= 30%)",
	"Hide communication behind computation: DDP bucket size / FSDP prefetch (backward_prefetch, forward_prefetch), "
	"overlap all-reduce with backward, fewer and larger collectives; check the interconnect",
	"exposed_comm_pct",
	eval_exposed_comm,
};

/* ---- load imbalance ---- */

static int eval_load_imbalance(struct insight_eval *e, struct buf *m)
{
	const struct atable *temporal = insight_table(e, "temporal_breakdown"),
			    *spread = insight_table(e, "kernel_rank_spread");
	if (e->view->nranks < 2) {
		buf_puts(m, "one rank: nothing to compare");
		return -1;
	}
	if (!temporal || temporal->nrows < 2) {
		buf_printf(m, "fewer than two ranks with GPU events%s%s", insight_skipped(e, "temporal") ? ": " : "",
			   insight_skipped(e, "temporal") ? insight_skipped(e, "temporal") : "");
		return -1;
	}
	int cc = insight_col(temporal, "compute_time(us)");
	size_t lo = 0, hi = 0;
	double sum = 0;
	for (size_t i = 0; i < temporal->nrows; i++) {
		double v = insight_f(temporal, i, cc);
		sum += v;
		if (v < insight_f(temporal, lo, cc))
			lo = i;
		if (v > insight_f(temporal, hi, cc))
			hi = i;
	}
	double vmin = insight_f(temporal, lo, cc), vmax = insight_f(temporal, hi, cc);
	double pct = vmax > 0 ? 100 * (vmax - vmin) / vmax : 0;
	int rlo = (int)insight_i(temporal, lo, 0), rhi = (int)insight_i(temporal, hi, 0);
	buf_printf(m, "compute time per rank %.0f..%.0f us (mean %.0f): spread %.1f%%", vmin, vmax,
		   sum / (double)temporal->nrows, pct);
	if (pct < 10)
		return 0;
	/* the computation kernel slowest on that rank with the biggest spread */
	const char *kname = NULL;
	double kspread = 0;
	int nc = insight_col(spread, "name"), tc = insight_col(spread, "kernel_type"),
	    sc = insight_col(spread, "slowest_rank"), xc = insight_col(spread, "spread");
	for (size_t i = 0; spread && i < spread->nrows && !kname; i++)
		if (insight_i(spread, i, sc) == rhi && strcmp(insight_s(spread, i, tc), "COMPUTATION") == 0) {
			kname = insight_s(spread, i, nc);
			kspread = insight_f(spread, i, xc);
		}
	struct buf ev = BUF_INIT;
	buf_printf(&ev, "rank %d computes ", rhi);
	insight_fmt_us(&ev, vmax);
	buf_printf(&ev, ", rank %d ", rlo);
	insight_fmt_us(&ev, vmin);
	buf_printf(&ev, " (%.1f%% less) over %zu ranks", pct, temporal->nrows);
	if (kname)
		buf_printf(&ev, "; the kernel most slower on rank %d is %.2fx its fastest rank's", rhi, kspread);
	struct insight_finding f = {pct >= 25 ? INSIGHT_HIGH : INSIGHT_MEDIUM, rhi, -1, -1, kname, pct, 10, ev.data};
	/* its cost: the fastest rank waits the difference at the collectives */
	insight_cost_per_step(e, rhi, vmax - vmin, false, &f, &ev);
	f.evidence = ev.data;
	insight_add(e, &f);
	buf_free(&ev);
	return 0;
}

const struct insight_rule insight_rule_load_imbalance = {
	"load-imbalance",
	"spread of the GPU compute time across ranks, (max - min) / max (temporal), and the kernel most slower on "
	"the busiest rank (kernel-distribution)",
	">= 10% (high: >= 25%)",
	"Rebalance the work: shard embedding tables / experts / pipeline stages by measured cost, equalise batch "
	"and sequence lengths per rank",
	"compute_spread_pct",
	eval_load_imbalance,
};

/* ---- stragglers ---- */

struct coll_key {
	const char *name;
	int64_t nth;
	double ts, dur;
	int rank;
};

static int coll_cmp(const void *a, const void *b)
{
	const struct coll_key *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->nth != y->nth)
		return x->nth < y->nth ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int eval_straggler(struct insight_eval *e, struct buf *m)
{
	const struct atable *c = e->t[INSIGHT_T_COLLECTIVES];
	size_t nr = e->view->nranks;
	if (nr < 2) {
		buf_puts(m, "one rank: nothing to compare");
		return -1;
	}
	if (!c || c->nrows == 0) {
		buf_puts(m, "no collective (communication) kernels");
		return -1;
	}
	struct coll_key *k = xmalloc(c->nrows * sizeof *k);
	for (size_t i = 0; i < c->nrows; i++)
		k[i] = (struct coll_key){insight_s(c, i, IC_NAME), insight_i(c, i, IC_NTH), insight_f(c, i, IC_TS),
					 insight_f(c, i, IC_DUR), (int)insight_i(c, i, IC_RANK)};
	qsort(k, c->nrows, sizeof *k, coll_cmp);
	/* per rank: lateness and duration of each collective every rank ran */
	double **late = xcalloc(nr, sizeof *late), **dur = xcalloc(nr, sizeof *dur);
	for (size_t r = 0; r < nr; r++) {
		late[r] = xmalloc(c->nrows * sizeof **late);
		dur[r] = xmalloc(c->nrows * sizeof **dur);
	}
	size_t matched = 0;
	for (size_t i = 0; i < c->nrows;) {
		size_t j = i;
		while (j < c->nrows && strcmp(k[j].name, k[i].name) == 0 && k[j].nth == k[i].nth)
			j++;
		if (j - i == nr) { /* on every rank (one each: nth is per rank) */
			double first = INFINITY;
			for (size_t q = i; q < j; q++)
				first = fmin(first, k[q].ts);
			for (size_t q = i; q < j; q++) {
				late[q - i][matched] = k[q].ts - first;
				dur[q - i][matched] = k[q].dur;
			}
			matched++;
		}
		i = j;
	}
	int ret = 0;
	if (matched == 0) {
		buf_puts(m, "no collective appears on every rank (name and occurrence)");
		ret = -1;
		goto out;
	}
	/* ranks of the view in order: k[] sorted by rank within a group, so
	 * index q - i is the q-th rank of the view */
	double *ml = xmalloc(nr * sizeof *ml), *md = xmalloc(nr * sizeof *md);
	size_t worst = 0;
	for (size_t r = 0; r < nr; r++) {
		ml[r] = insight_median(late[r], matched);
		md[r] = insight_median(dur[r], matched);
		if (ml[r] > ml[worst])
			worst = r;
	}
	double *others = xmalloc(nr * sizeof *others);
	size_t no = 0;
	for (size_t r = 0; r < nr; r++)
		if (r != worst)
			others[no++] = md[r];
	double other_dur = insight_median(others, no);
	int wrank = e->view->ranks[worst]->rank;
	buf_printf(m, "%zu collectives on all %zu ranks; latest rank %d starts a median %.0f us after the first, "
		      "its collectives last %.0f us, the others' %.0f us",
		   matched, nr, wrank, ml[worst], md[worst], other_dur);
	double waited = other_dur - md[worst];
	if (ml[worst] >= 500 && waited >= 0.5 * ml[worst]) {
		struct buf ev = BUF_INIT;
		buf_printf(&ev, "rank %d starts its collectives a median ", wrank);
		insight_fmt_us(&ev, ml[worst]);
		buf_printf(&ev, " after the first rank (%zu collectives matched by name and occurrence); meanwhile the "
				"other ranks wait in them: their collective kernels last ",
			   matched);
		insight_fmt_us(&ev, other_dur);
		buf_printf(&ev, " against ");
		insight_fmt_us(&ev, md[worst]);
		buf_printf(&ev, " on rank %d", wrank);
		struct insight_finding f = {ml[worst] >= 5000 ? INSIGHT_HIGH : INSIGHT_MEDIUM, wrank, -1, -1, NULL,
					    ml[worst], 500, ev.data};
		/* its cost: the others wait its median lateness at least once a
		 * step (at the step's first collective) */
		struct insight_wmean w;
		if (insight_waterfall_mean(e->t[INSIGHT_T_WATERFALL], wrank, &w) == 0 && w.step > 0) {
			f.cost_us = ml[worst];
			f.step_us = w.step;
			f.steps_from = w.from;
			buf_printf(&ev, "; the others lose at least that once a step = %.1f%% of rank %d's ", 100 * ml[worst] / w.step,
				   wrank);
			insight_fmt_us(&ev, w.step);
			buf_printf(&ev, " step (steps from %s)", w.from);
			f.evidence = ev.data;
		}
		insight_add(e, &f);
		buf_free(&ev);
	}
	free(others);
	free(ml);
	free(md);
out:
	for (size_t r = 0; r < nr; r++) {
		free(late[r]);
		free(dur[r]);
	}
	free(late);
	free(dur);
	free(k);
	return ret;
}

const struct insight_rule insight_rule_straggler = {
	"straggler",
	"per rank, how late its collective kernels start after the earliest rank's (the same collective: name and "
	"occurrence), and whether the other ranks' collectives last longer (waiting for it)",
	"median lateness >= 500 us and the others' collectives longer by >= half of it (high: >= 5 ms)",
	"Find what delays that rank before its collectives (its data loading, a slow host or GPU, thermal throttling, "
	"uneven work): compare its host metrics and kernels with the others'",
	"median_lateness_us",
	eval_straggler,
};

/* ---- iteration-time outliers ---- */

static int eval_iteration_outliers(struct insight_eval *e, struct buf *m)
{
	const struct atable *it = e->t[INSIGHT_T_ITERATIONS];
	size_t evaluated = 0;
	struct buf why = BUF_INIT;
	for (size_t k = 0; k < e->view->nranks; k++) {
		int rank = e->view->ranks[k]->rank;
		size_t *rows, n = rank_rows(it, rank, &rows);
		if (n < 3 || insight_i(it, rows[0], IT_ITER) < 0) {
			buf_printf(&why, "%srank %d: %s", why.len ? "; " : "", rank,
				   n && insight_i(it, rows[0], IT_ITER) < 0 ? "no ProfilerStep#N"
									     : "fewer than 3 iterations");
			free(rows);
			continue;
		}
		evaluated++;
		double *d = xmalloc(n * sizeof *d);
		for (size_t i = 0; i < n; i++)
			d[i] = insight_f(it, rows[i], IT_DUR);
		double med = insight_median(d, n);
		free(d);
		size_t out = 0;
		double worst = 0;
		for (size_t i = 0; i < n; i++)
			worst = fmax(worst, insight_f(it, rows[i], IT_DUR) / med);
		sep(m, e->view, rank);
		buf_printf(m, "%zu iterations, median %.0f us, slowest %.2fx", n, med, worst);
		for (size_t i = 0; i < n; i++) {
			size_t r = rows[i];
			double dd = insight_f(it, r, IT_DUR), ratio = dd / med;
			if (!(ratio >= 1.5) || dd - med < 1000 || out >= 3)
				continue;
			out++;
			struct buf ev = BUF_INIT;
			buf_printf(&ev, "iteration %lld took ", (long long)insight_i(it, r, IT_ITER));
			insight_fmt_us(&ev, dd);
			buf_printf(&ev, ", %.2fx the median ", ratio);
			insight_fmt_us(&ev, med);
			buf_printf(&ev, " of %zu; in it: GPU busy ", n);
			insight_fmt_us(&ev, insight_f(it, r, IT_GPU_BUSY));
			buf_puts(&ev, ", GPU idle at start ");
			insight_fmt_us(&ev, insight_f(it, r, IT_IDLE_START));
			buf_puts(&ev, ", data loader ");
			insight_fmt_us(&ev, insight_f(it, r, IT_LOADER));
			buf_puts(&ev, ", syncs ");
			insight_fmt_us(&ev, insight_f(it, r, IT_SYNC));
			if (i == 0)
				buf_puts(&ev, " (the first iteration of the trace: warm-up?)");
			struct insight_finding f = {ratio >= 2 ? INSIGHT_HIGH : INSIGHT_MEDIUM, rank,
						    insight_i(it, r, IT_ITER), -1, NULL, ratio, 1.5, ev.data};
			/* its cost: the time over the median, over all the steps */
			insight_cost_per_step(e, rank, dd - med, false, &f, &ev);
			f.evidence = ev.data;
			insight_add(e, &f);
			buf_free(&ev);
		}
		free(rows);
	}
	if (!evaluated)
		buf_append(m, why.data, why.len);
	buf_free(&why);
	return evaluated ? 0 : -1;
}

const struct insight_rule insight_rule_iteration_outliers = {
	"iteration-outliers",
	"each ProfilerStep's duration against the median of the rank's steps, with what the slow one spent its "
	"time on",
	">= 1.5x the median and >= 1 ms longer, at least 3 iterations (high: >= 2x)",
	"Look at what differs in the slow iteration (GC pauses, checkpointing, evaluation, data-loader stalls, "
	"recompilation): profile it with --iterations N",
	"ratio_to_median",
	eval_iteration_outliers,
};

/* ---- kernels worth optimising ---- */

/* The time-weighted occupancy of kernel name on rank (insight_facts'
 * table): NaN when none of its launches records one; *launches its
 * launches, *covered the share of its time that has a value. */
static double kernel_occupancy(const struct insight_eval *e, int rank, const char *name, int64_t *launches,
			       double *covered)
{
	const struct atable *t = e->t[INSIGHT_T_OCCUPANCY];
	*launches = 0;
	*covered = 0;
	for (size_t i = 0; t && i < t->nrows; i++)
		if (insight_i(t, i, IO_RANK) == rank && strcmp(insight_s(t, i, IO_NAME), name) == 0) {
			double time = insight_f(t, i, IO_TIME);
			*launches = insight_i(t, i, IO_KERNELS);
			*covered = time > 0 ? insight_f(t, i, IO_OCC_TIME) / time : 0;
			return insight_f(t, i, IO_OCC);
		}
	return NAN;
}

/* A rank's computation kernels by time (kernels' kernel_metrics, without
 * its "others" row), the biggest first, and their total. */
struct top_kernel {
	const char *name;
	double time;
};

static int top_cmp(const void *a, const void *b)
{
	const struct top_kernel *x = a, *y = b;
	return (x->time < y->time) - (x->time > y->time);
}

static size_t top_kernels(const struct atable *km, int rank, struct top_kernel **out, double *total)
{
	int nc = insight_col(km, "name"), sc = insight_col(km, "sum (us)"), tc = insight_col(km, "kernel_type"),
	    rc = insight_col(km, "rank");
	*out = xmalloc((km->nrows ? km->nrows : 1) * sizeof **out);
	*total = 0;
	size_t n = 0;
	for (size_t i = 0; i < km->nrows; i++) {
		if (insight_i(km, i, rc) != rank || strcmp(insight_s(km, i, tc), "COMPUTATION") != 0)
			continue;
		double t = insight_f(km, i, sc);
		*total += t;
		if (strcmp(insight_s(km, i, nc), "others") != 0)
			(*out)[n++] = (struct top_kernel){insight_s(km, i, nc), t};
	}
	qsort(*out, n, sizeof **out, top_cmp);
	return n;
}

/* "a trace without occupancy" said once, the same way by both rules */
static const char *no_occupancy_why(const struct trace_rank *r)
{
	return r->occupancy_kept ? "the trace does not record kernel occupancy (no \"est. achieved occupancy %\" "
				   "arg with a value on its top kernels)"
				 : "kernel occupancy was not loaded";
}

static int eval_top_kernels(struct insight_eval *e, struct buf *m)
{
	const struct atable *km = insight_table(e, "kernel_metrics");
	if (!km) {
		const char *why = insight_skipped(e, "kernels");
		buf_printf(m, "%s", why ? why : "no kernel table");
		return -1;
	}
	size_t evaluated = 0;
	for (size_t k = 0; k < e->view->nranks; k++) {
		const struct trace_rank *r = e->view->ranks[k];
		int rank = r->rank;
		struct top_kernel *top;
		double total;
		size_t nt = top_kernels(km, rank, &top, &total);
		if (!(total > 0)) {
			free(top);
			continue;
		}
		evaluated++;
		double best = nt ? top[0].time : 0, share = 100 * best / total;
		int64_t launches;
		double covered, occ = nt ? kernel_occupancy(e, rank, top[0].name, &launches, &covered) : NAN;
		sep(m, e->view, rank);
		buf_printf(m, "top computation kernel %.1f%% of the computation time", share);
		if (nt && isfinite(occ))
			buf_printf(m, ", estimated occupancy %.1f%%", occ);
		if (share < 20 || !nt) {
			free(top);
			continue;
		}
		struct buf ev = BUF_INIT;
		buf_puts(&ev, "one kernel takes ");
		insight_fmt_us(&ev, best);
		buf_printf(&ev, " = %.1f%% of the rank's computation kernel time ", share);
		insight_fmt_us(&ev, total);
		if (isfinite(occ))
			buf_printf(&ev, "; its estimated achieved occupancy is %.1f%% (time-weighted over its launches)", occ);
		else
			buf_printf(&ev, "; its occupancy is unknown: %s", no_occupancy_why(r));
		struct insight_finding f = {INSIGHT_INFO, rank, -1, -1, top[0].name, share, 20, ev.data};
		insight_cost_per_step(e, rank, best, true, &f, &ev);
		f.evidence = ev.data;
		insight_add(e, &f);
		buf_free(&ev);
		free(top);
	}
	if (!evaluated) {
		buf_truncate(m, 0);
		buf_puts(m, "no computation kernels on the selected ranks");
	}
	return evaluated ? 0 : -1;
}

const struct insight_rule insight_rule_top_kernels = {
	"top-kernels",
	"the computation kernel with the most GPU time per rank, as a share of the rank's computation time (kernels), "
	"with its estimated occupancy where the trace records it",
	">= 20% (info: where optimisation pays most)",
	"Optimise this kernel first: check its shapes and dtype (tensor cores: bf16/fp16, dimensions multiple of 8), "
	"a fused or better implementation (cuDNN/cuBLAS heuristics, FlashAttention, torch.compile)",
	"share_pct",
	eval_top_kernels,
};

/* ---- low occupancy of the top kernels ---- */

/* A top kernel: among the rank's OCC_TOP_N computation kernels with the
 * most time, and at least OCC_MIN_SHARE % of its computation time. */
#define OCC_TOP_N 5
#define OCC_MIN_SHARE 10.0
/* Under this estimated occupancy (% of the SMs' thread slots) a top kernel
 * is reported: GEMM and convolution kernels that trade occupancy for
 * registers and tiles sit at 12-25% by design (simple_add's sgemm 25%,
 * its scudnn 19%), so the bar is below them; under a tenth the grid is
 * usually smaller than the GPU or the blocks tiny. */
#define OCC_LOW 10.0

static int eval_low_occupancy(struct insight_eval *e, struct buf *m)
{
	const struct atable *km = insight_table(e, "kernel_metrics");
	if (!km) {
		const char *why = insight_skipped(e, "kernels");
		buf_printf(m, "%s", why ? why : "no kernel table");
		return -1;
	}
	size_t evaluated = 0;
	struct buf why = BUF_INIT;
	for (size_t k = 0; k < e->view->nranks; k++) {
		const struct trace_rank *r = e->view->ranks[k];
		int rank = r->rank;
		struct top_kernel *top;
		double total;
		size_t nt = top_kernels(km, rank, &top, &total);
		/* the top kernels and what is known of their occupancy */
		double occ[OCC_TOP_N], cov[OCC_TOP_N], wsum = 0, wtime = 0, ttime = 0;
		int64_t launches[OCC_TOP_N];
		size_t n = 0, known = 0;
		for (size_t j = 0; j < nt && n < OCC_TOP_N && total > 0 && 100 * top[j].time / total >= OCC_MIN_SHARE;
		     j++, n++) {
			occ[n] = kernel_occupancy(e, rank, top[j].name, &launches[n], &cov[n]);
			ttime += top[j].time;
			if (isfinite(occ[n])) {
				known++;
				wsum += occ[n] * top[j].time * cov[n];
				wtime += top[j].time * cov[n];
			}
		}
		if (!known) {
			buf_printf(&why, "%srank %d: %s", why.len ? "; " : "", rank,
				   !(total > 0) ? "no computation kernels"
				   : !n         ? "no computation kernel takes 10% of the computation time"
						: no_occupancy_why(r));
			free(top);
			continue;
		}
		evaluated++;
		sep(m, e->view, rank);
		buf_printf(m, "top %zu kernel%s (%.1f%% of the computation time): estimated occupancy", n, n == 1 ? "" : "s",
			   100 * ttime / total);
		for (size_t j = 0; j < n; j++) {
			if (isfinite(occ[j]))
				buf_printf(m, "%s %.1f%%", j ? "," : "", occ[j]);
			else
				buf_printf(m, "%s unknown", j ? "," : "");
		}
		buf_printf(m, " (time-weighted %.1f%%)", wsum / wtime);
		for (size_t j = 0; j < n; j++) {
			if (!(occ[j] < OCC_LOW))
				continue;
			double share = 100 * top[j].time / total;
			struct buf ev = BUF_INIT;
			buf_puts(&ev, "a top kernel (");
			insight_fmt_us(&ev, top[j].time);
			buf_printf(&ev, " = %.1f%% of the rank's computation time, %lld launches) runs at an estimated "
					"achieved occupancy of %.1f%% (weighted by each launch's duration",
				   share, (long long)launches[j], occ[j]);
			if (cov[j] < 0.999)
				buf_printf(&ev, "; %.0f%% of its time has a value", 100 * cov[j]);
			buf_puts(&ev, "): its blocks fill under a tenth of the SMs' thread slots");
			struct insight_finding f = {share >= 30 ? INSIGHT_HIGH : INSIGHT_MEDIUM, rank, -1, -1, top[j].name,
						    occ[j], OCC_LOW, ev.data};
			insight_cost_per_step(e, rank, top[j].time, true, &f, &ev);
			f.evidence = ev.data;
			insight_add(e, &f);
			buf_free(&ev);
		}
		free(top);
	}
	if (!evaluated)
		buf_append(m, why.data, why.len);
	buf_free(&why);
	return evaluated ? 0 : -1;
}

const struct insight_rule insight_rule_low_occupancy = {
	"low-occupancy",
	"Kineto's estimated achieved occupancy (\"est. achieved occupancy %\", weighted by each launch's duration) of "
	"the top computation kernels: up to 5 with the most time, each >= 10% of the rank's computation time",
	"< 10% on a top kernel (high: the kernel is >= 30% of the computation time)",
	"Fill the GPU: a grid of at least a few blocks per SM (larger batches, split-K or smaller tiles), larger "
	"blocks, fewer registers per thread (__launch_bounds__) or less shared memory per block; for library kernels "
	"another algorithm (torch.backends.cudnn.benchmark, cuBLAS/cuDNN heuristics)",
	"occupancy_pct",
	eval_low_occupancy,
};

/* ---- memcpy bandwidth ---- */

static int eval_memcpy_bandwidth(struct insight_eval *e, struct buf *m)
{
	const struct atable *t = e->t[INSIGHT_T_MEMCPY];
	double limit = 0.25 * e->opts->link_gbps;
	size_t evaluated = 0;
	for (size_t i = 0; t && i < t->nrows; i++) {
		int64_t big = insight_i(t, i, IM_BIG);
		int rank = (int)insight_i(t, i, IM_RANK);
		const char *dir = insight_s(t, i, IM_DIR);
		if (big == 0)
			continue;
		evaluated++;
		double gbps = insight_f(t, i, IM_GBPS), time = insight_f(t, i, IM_TIME);
		sep(m, e->view, rank);
		buf_printf(m, "%s %.2f GB/s over %lld copies >= 1 MiB", dir, gbps, (long long)big);
		if (!(gbps < limit) || time < 1000)
			continue;
		struct buf ev = BUF_INIT;
		buf_printf(&ev, "%lld %s copies of >= 1 MiB moved %.1f MB in ", (long long)big, dir,
			   (double)insight_i(t, i, IM_BYTES) / 1e6);
		insight_fmt_us(&ev, time);
		buf_printf(&ev, ": %.2f GB/s, %.0f%% of the link's %.0f GB/s (--link-gbps)", gbps,
			   100 * gbps / e->opts->link_gbps, e->opts->link_gbps);
		if (insight_i(t, i, IM_PAGEABLE))
			buf_printf(&ev, "; %lld from/to pageable memory", (long long)insight_i(t, i, IM_PAGEABLE));
		struct insight_finding f = {time >= 10000 ? INSIGHT_HIGH : INSIGHT_MEDIUM, rank, -1, -1, dir, gbps, limit,
					    ev.data};
		insight_cost_per_step(e, rank, time, true, &f, &ev);
		f.evidence = ev.data;
		insight_add(e, &f);
		buf_free(&ev);
	}
	if (!evaluated)
		buf_puts(m, "no host<->device copy of 1 MiB or more");
	return evaluated ? 0 : -1;
}

const struct insight_rule insight_rule_memcpy_bandwidth = {
	"memcpy-bandwidth",
	"achieved bandwidth of host<->device copies of 1 MiB or more (bytes / duration), per direction, against the "
	"link's (--link-gbps)",
	"< 25% of the link and >= 1 ms of such copies (high: >= 10 ms)",
	"Copy from pinned memory (pin_memory=True, tensor.pin_memory()), batch small copies into large ones, use "
	"non_blocking=True on a side stream",
	"gbps",
	eval_memcpy_bandwidth,
};
