/*
 * insight_idle.c - the rules over the attribution of GPU idle time
 * (insight_attrib.c): each part of the step waterfall that costs time is a
 * finding with its cost in ms per step and % of the step, where it is
 * (operators, sync calls, the place of a host gap, threads), and the change
 * that removes it:
 *
 *   host-gap          idle while the launching thread runs outside every
 *                     PyTorch operator (input pipeline, preprocessing, Python)
 *   cpu-bound-launch  idle while it is inside operators (launch overhead)
 *   sync-points       idle while it waits in a blocking sync
 *   pageable-copy     copies from/to pageable host memory
 *   gpu-bound         the GPU is busy through the step (info, top kernels)
 *
 * The cost of a part is its mean over the rank's typical steps: with four
 * steps or more, those within 25% of the median step duration (a warm-up
 * step or a stall is the iteration-outliers rule's finding, and would skew
 * the mean); with fewer, all.  The places
 * are shares of the part over all steps.  Cost: a pass over the two
 * attribution tables per rule and rank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/insights.h"

/* typical step: within this fraction of the median step duration */
#define TYPICAL_STEP 0.25

static const size_t part_col[INSIGHT_NCAUSES] = {IW_BUSY, IW_COMM, IW_HOST_GAP, IW_LAUNCH, IW_SYNC, IW_COPY, IW_OTHER};

int insight_waterfall_mean(const struct atable *wf, int rank, struct insight_wmean *w)
{
	memset(w, 0, sizeof *w);
	w->from = "";
	size_t n = 0;
	for (size_t i = 0; wf && i < wf->nrows; i++)
		n += insight_i(wf, i, IW_RANK) == rank;
	if (!n)
		return -1;
	double *d = xmalloc(n * sizeof *d);
	size_t k = 0;
	for (size_t i = 0; i < wf->nrows; i++)
		if (insight_i(wf, i, IW_RANK) == rank) {
			d[k++] = insight_f(wf, i, IW_DUR);
			w->from = insight_s(wf, i, IW_FROM);
		}
	double med = insight_median(d, n);
	free(d);
	w->nsteps = n;
	w->median = med;
	for (size_t i = 0; i < wf->nrows; i++) {
		if (insight_i(wf, i, IW_RANK) != rank)
			continue;
		double dur = insight_f(wf, i, IW_DUR);
		if (n >= 4 && fabs(dur - med) > TYPICAL_STEP * med)
			continue;
		w->ntypical++;
		w->step += dur;
		for (int c = 0; c < INSIGHT_NCAUSES; c++)
			w->part[c] += insight_f(wf, i, part_col[c]);
	}
	if (!w->ntypical)
		return -1;
	w->step /= (double)w->ntypical;
	for (int c = 0; c < INSIGHT_NCAUSES; c++)
		w->part[c] /= (double)w->ntypical;
	return 0;
}

void insight_cost_per_step(const struct insight_eval *e, int rank, double total_us, bool busy,
			   struct insight_finding *f, struct buf *ev)
{
	struct insight_wmean w;
	if (insight_waterfall_mean(e->t[INSIGHT_T_WATERFALL], rank, &w) != 0 || !(w.step > 0) || !(total_us > 0))
		return;
	f->cost_us = total_us / (double)w.nsteps;
	f->step_us = w.step;
	f->steps_from = w.from;
	f->busy_cost = busy;
	buf_puts(ev, "; per step: ");
	insight_fmt_us(ev, f->cost_us);
	buf_printf(ev, " = %.1f%% of the ", 100 * f->cost_us / w.step);
	insight_fmt_us(ev, w.step);
	buf_printf(ev, " step (the trace's total over its %zu step%s, from %s)", w.nsteps, w.nsteps == 1 ? "" : "s",
		   w.from);
}

/* "rank 3: " before each rank's part of a multi-rank measured text */
static void sep(struct buf *m, const struct trace_set *v, int rank)
{
	if (m->len)
		buf_puts(m, "; ");
	if (v->nranks > 1)
		buf_printf(m, "rank %d: ", rank);
}

struct place {
	const char *where, *detail, *py;
	int64_t tid;
	double t;
};

static int place_cmp(const void *a, const void *b)
{
	const struct place *x = a, *y = b;
	return (x->t < y->t) - (x->t > y->t);
}

/* The places of a cause on a rank, the largest first (*out: free it);
 * *total: their time over all steps. */
static size_t places(const struct atable *ca, int rank, enum insight_cause c, struct place **out, double *total)
{
	const char *name = insight_cause_name(c);
	size_t n = 0;
	*out = xmalloc((ca && ca->nrows ? ca->nrows : 1) * sizeof **out);
	*total = 0;
	for (size_t i = 0; ca && i < ca->nrows; i++) {
		if (insight_i(ca, i, ICA_RANK) != rank || strcmp(insight_s(ca, i, ICA_CAUSE), name) != 0)
			continue;
		(*out)[n++] = (struct place){insight_s(ca, i, ICA_WHERE), insight_s(ca, i, ICA_DETAIL),
					     insight_s(ca, i, ICA_PY), insight_i(ca, i, ICA_TID),
					     insight_f(ca, i, ICA_TIME)};
		*total += insight_f(ca, i, ICA_TIME);
	}
	qsort(*out, n, sizeof **out, place_cmp);
	return n;
}

/* one place in words */
static void place_text(struct buf *b, enum insight_cause c, const struct place *p)
{
	switch (c) {
	case INSIGHT_C_HOST_GAP:
		if (*p->where)
			buf_printf(b, "inside %s", p->where);
		else if (*p->detail)
			buf_puts(b, p->detail);
		else
			buf_puts(b, "outside every range");
		break;
	case INSIGHT_C_SYNC:
		buf_printf(b, "%s", *p->where ? p->where : "a sync call");
		if (*p->detail)
			buf_printf(b, " under %s", p->detail);
		break;
	case INSIGHT_C_COPY:
		if (*p->where)
			buf_printf(b, "%s", p->where);
		else
			buf_puts(b, "the copy on the GPU");
		if (*p->detail)
			buf_printf(b, " (%s)", p->detail);
		break;
	default:
		buf_puts(b, *p->where ? p->where : "-");
	}
	if (*p->py)
		buf_printf(b, " in %s", p->py);
	if (p->tid >= 0)
		buf_printf(b, " [thread %lld]", (long long)p->tid);
}

/* "the largest places: A 43%, B 20%, C 9%" */
static void places_text(struct buf *b, enum insight_cause c, const struct place *p, size_t n, double total, size_t max)
{
	for (size_t k = 0; k < n && k < max; k++) {
		buf_puts(b, k ? ", " : "");
		place_text(b, c, &p[k]);
		buf_printf(b, " %.0f%%", total > 0 ? 100 * p[k].t / total : 0);
	}
	if (n > max)
		buf_printf(b, " and %zu more", n - max);
}

/* the part's cost in words: "12.3 ms per step = 21.0% of the 58.6 ms step (4 of 5 steps, optimizer ranges)" */
static void cost_text(struct buf *b, const struct insight_wmean *w, double part)
{
	insight_fmt_us(b, part);
	buf_printf(b, " per step = %.1f%% of the ", w->step > 0 ? 100 * part / w->step : 0);
	insight_fmt_us(b, w->step);
	buf_printf(b, " step (mean of %zu typical step%s of %zu, steps from %s)", w->ntypical, w->ntypical == 1 ? "" : "s",
		   w->nsteps, w->from);
}

/* The rule body shared by the four idle parts: per rank, the part's cost;
 * fires at share >= min_pct (medium >= 5%, high >= 25%). */
typedef void (*extra_fn)(struct insight_eval *e, int rank, struct buf *ev, const struct insight_wmean *w);

static int eval_part(struct insight_eval *e, struct buf *m, enum insight_cause c, double min_pct, extra_fn extra,
		     const char *what)
{
	const struct atable *wf = e->t[INSIGHT_T_WATERFALL], *ca = e->t[INSIGHT_T_CAUSES];
	size_t evaluated = 0;
	for (size_t k = 0; k < e->view->nranks; k++) {
		int rank = e->view->ranks[k]->rank;
		struct insight_wmean w;
		if (insight_waterfall_mean(wf, rank, &w) != 0 || !(w.step > 0))
			continue;
		evaluated++;
		double part = w.part[c], pct = 100 * part / w.step;
		sep(m, e->view, rank);
		buf_printf(m, "%s %.2f ms per step (%.1f%% of %.2f ms, %zu typical steps from %s)", what, part / 1e3, pct,
			   w.step / 1e3, w.ntypical, w.from);
		if (pct < min_pct || !(part > 0))
			continue;
		struct place *p;
		double total;
		size_t np = places(ca, rank, c, &p, &total);
		struct buf ev = BUF_INIT;
		buf_printf(&ev, "%s ", what);
		cost_text(&ev, &w, part);
		if (np) {
			buf_puts(&ev, "; where: ");
			places_text(&ev, c, p, np, total, 4);
		}
		if (extra)
			extra(e, rank, &ev, &w);
		buf_puts(&ev, "; removing it saves up to ");
		insight_fmt_us(&ev, part);
		buf_puts(&ev, " per step");
		struct buf where = BUF_INIT;
		if (np)
			place_text(&where, c, &p[0]);
		struct insight_finding f = {pct >= 25 ? INSIGHT_HIGH : pct >= 5 ? INSIGHT_MEDIUM : INSIGHT_INFO,
					    rank, -1, -1, np ? where.data : NULL, pct, min_pct, ev.data};
		f.cost_us = part;
		f.step_us = w.step;
		f.steps_from = w.from;
		insight_add(e, &f);
		buf_free(&where);
		buf_free(&ev);
		free(p);
	}
	if (!evaluated)
		buf_puts(m, "no step with GPU activity on the selected ranks");
	return evaluated ? 0 : -1;
}

/* ---- host gap ---- */

static int eval_host_gap(struct insight_eval *e, struct buf *m)
{
	return eval_part(e, m, INSIGHT_C_HOST_GAP, 5, NULL,
			 "the GPU idles while the launching thread runs outside every PyTorch operator:");
}

const struct insight_rule insight_rule_host_gap = {
	"host-gap",
	"GPU idle time while the host thread that launches the next kernel runs outside every profiled operator (a "
	"data loader, preprocessing, Python, sleeping), per step (insight_waterfall)",
	">= 5% of the step (high: >= 25%)",
	"Take the work off the training thread: DataLoader(num_workers>0, pin_memory=True, prefetch_factor), "
	"preprocessing in the loader's workers or on the GPU, no blocking Python between steps; record "
	"with_stack=True or record_function ranges to name the code",
	"host_gap_pct",
	eval_host_gap,
};

/* ---- launch overhead ---- */

/* the median kernel against the median CPU time of its launch call */
static void launch_extra(struct insight_eval *e, int rank, struct buf *ev, const struct insight_wmean *w)
{
	(void)w;
	char name[64];
	snprintf(name, sizeof name, "cuda_kernel_launch_stats_rank%d", rank);
	const struct atable *l = insight_table(e, name);
	if (!l || !l->nrows)
		return;
	int cc = insight_col(l, "cpu_duration"), gc = insight_col(l, "gpu_duration");
	double *cpu = xmalloc(l->nrows * sizeof *cpu), *gpu = xmalloc(l->nrows * sizeof *gpu);
	size_t n = 0;
	for (size_t i = 0; i < l->nrows; i++)
		if (isfinite(insight_f(l, i, gc)) && isfinite(insight_f(l, i, cc))) {
			cpu[n] = insight_f(l, i, cc);
			gpu[n++] = insight_f(l, i, gc);
		}
	if (n)
		buf_printf(ev, "; the median kernel runs %.1f us, its launch call takes %.1f us on the CPU (%zu launches)",
			   insight_median(gpu, n), insight_median(cpu, n), n);
	free(cpu);
	free(gpu);
	/* a storm of tiny kernels is one way to be here: say so */
	const struct atable *it = e->t[INSIGHT_T_ITERATIONS];
	int64_t kernels = 0, small = 0;
	size_t steps = 0;
	for (size_t i = 0; it && i < it->nrows; i++)
		if (insight_i(it, i, IT_RANK) == rank) {
			steps++;
			kernels += insight_i(it, i, IT_KERNELS);
			small += insight_i(it, i, IT_SHORT_KERNELS);
		}
	if (steps && kernels)
		buf_printf(ev, "; %.0f kernels per step, %.1f%% of them shorter than %.0f us", (double)kernels / (double)steps,
			   100 * (double)small / (double)kernels, INSIGHT_SHORT_KERNEL_US);
}

static int eval_cpu_bound_launch(struct insight_eval *e, struct buf *m)
{
	return eval_part(e, m, INSIGHT_C_LAUNCH, 5, launch_extra,
			 "the GPU idles while the launching thread is inside PyTorch operators (launch overhead):");
}

const struct insight_rule insight_rule_cpu_bound_launch = {
	"cpu-bound-launch",
	"GPU idle time while the host thread that launches the next kernel is inside a PyTorch operator: the host "
	"dispatches and launches slower than the GPU runs the kernels (insight_waterfall)",
	">= 5% of the step (high: >= 25%)",
	"The CPU cannot launch fast enough: capture the step in CUDA graphs (torch.compile mode=\"reduce-overhead\"), "
	"fuse small ops (torch.compile), fused optimizers (foreach/fused=True), larger batches",
	"launch_overhead_pct",
	eval_cpu_bound_launch,
};

/* ---- synchronisation ---- */

/* the calls per step, from the iterations table */
static void sync_extra(struct insight_eval *e, int rank, struct buf *ev, const struct insight_wmean *w)
{
	(void)w;
	const struct atable *it = e->t[INSIGHT_T_ITERATIONS];
	int64_t calls = 0, items = 0;
	size_t n = 0;
	for (size_t i = 0; it && i < it->nrows; i++)
		if (insight_i(it, i, IT_RANK) == rank) {
			n++;
			calls += insight_i(it, i, IT_SYNC_CALLS);
			items += insight_i(it, i, IT_ITEM_CALLS);
		}
	if (n)
		buf_printf(ev, "; %.1f blocking sync calls and %.1f .item()/_local_scalar_dense per step", (double)calls / (double)n,
			   (double)items / (double)n);
}

static int eval_sync_points(struct insight_eval *e, struct buf *m)
{
	return eval_part(e, m, INSIGHT_C_SYNC, 0.5, sync_extra,
			 "the GPU idles while the launching thread waits in blocking syncs:");
}

const struct insight_rule insight_rule_sync_points = {
	"sync-points",
	"GPU idle time while the host thread that launches the next kernel is in a blocking sync "
	"(cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cudaMemcpy) or an operator that makes "
	"one (aten::item -> aten::_local_scalar_dense), per step (insight_waterfall)",
	">= 0.5% of the step (medium: >= 5%, high: >= 25%)",
	"Remove host syncs from the step: no .item()/.cpu()/print of GPU tensors per layer (accumulate on the GPU, "
	"read once per step or every N steps), non_blocking copies, torch.cuda.set_sync_debug_mode(\"warn\") to "
	"find them",
	"sync_wait_pct",
	eval_sync_points,
};

/* ---- pageable copies ---- */

static void copy_extra(struct insight_eval *e, int rank, struct buf *ev, const struct insight_wmean *w)
{
	(void)w;
	const struct atable *mc = e->t[INSIGHT_T_MEMCPY];
	for (size_t i = 0; mc && i < mc->nrows; i++)
		if (insight_i(mc, i, IM_RANK) == rank && insight_i(mc, i, IM_PAGEABLE) > 0)
			buf_printf(ev, "; %s: %lld pageable copies of >= 1 MiB at %.1f GB/s", insight_s(mc, i, IM_DIR),
				   (long long)insight_i(mc, i, IM_PAGEABLE), insight_f(mc, i, IM_GBPS));
}

static int eval_pageable_copy(struct insight_eval *e, struct buf *m)
{
	return eval_part(e, m, INSIGHT_C_COPY, 0.5, copy_extra,
			 "the GPU computes nothing while copies from/to pageable host memory run or are staged:");
}

const struct insight_rule insight_rule_pageable_copy = {
	"pageable-copy",
	"time in which the GPU only copies from or to pageable host memory (Memcpy ... Pageable), and GPU idle time "
	"while the launching thread is inside the operator that stages such a copy (insight_waterfall)",
	">= 0.5% of the step (medium: >= 5%, high: >= 25%)",
	"Copy from pinned memory without blocking: tensor.pin_memory() or DataLoader(pin_memory=True), then "
	".to(device, non_blocking=True), so the copy runs at full link speed and overlaps compute",
	"copy_wait_pct",
	eval_pageable_copy,
};

/* ---- GPU-bound ---- */

static int eval_gpu_bound(struct insight_eval *e, struct buf *m)
{
	const struct atable *wf = e->t[INSIGHT_T_WATERFALL], *occ = e->t[INSIGHT_T_OCCUPANCY];
	size_t evaluated = 0;
	for (size_t k = 0; k < e->view->nranks; k++) {
		int rank = e->view->ranks[k]->rank;
		struct insight_wmean w;
		if (insight_waterfall_mean(wf, rank, &w) != 0 || !(w.step > 0))
			continue;
		evaluated++;
		double pct = 100 * w.part[INSIGHT_C_BUSY] / w.step;
		sep(m, e->view, rank);
		buf_printf(m, "GPU busy %.1f%% of the step", pct);
		if (pct < 90)
			continue;
		/* the top computation kernels by time */
		double total = 0;
		size_t top[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
		for (size_t i = 0; occ && i < occ->nrows; i++) {
			if (insight_i(occ, i, IO_RANK) != rank)
				continue;
			double t = insight_f(occ, i, IO_TIME);
			total += t;
			for (int q = 0; q < 3; q++)
				if (top[q] == SIZE_MAX || t > insight_f(occ, top[q], IO_TIME)) {
					for (int z = 2; z > q; z--)
						top[z] = top[z - 1];
					top[q] = i;
					break;
				}
		}
		struct buf ev = BUF_INIT;
		buf_printf(&ev, "the GPU is busy %.1f%% of the ", pct);
		insight_fmt_us(&ev, w.step);
		buf_printf(&ev, " step (%zu typical steps, from %s): the host keeps it fed; speed comes from the kernels",
			   w.ntypical, w.from);
		for (int q = 0; q < 3 && top[q] != SIZE_MAX; q++) {
			const char *nm = insight_s(occ, top[q], IO_NAME);
			size_t len = strlen(nm);
			buf_puts(&ev, q ? ", " : "; top computation kernels: ");
			if (len > 90)
				buf_printf(&ev, "%.50s...%s", nm, nm + len - 30);
			else
				buf_puts(&ev, nm);
			buf_printf(&ev, " %.1f%%", total > 0 ? 100 * insight_f(occ, top[q], IO_TIME) / total : 0);
		}
		struct insight_finding f = {INSIGHT_INFO, rank, -1, -1, NULL, pct, 90, ev.data};
		/* its cost: the GPU's own work, the time that faster kernels save */
		f.cost_us = w.part[INSIGHT_C_BUSY];
		f.step_us = w.step;
		f.steps_from = w.from;
		f.busy_cost = true;
		insight_add(e, &f);
		buf_free(&ev);
	}
	if (!evaluated)
		buf_puts(m, "no step with GPU activity on the selected ranks");
	return evaluated ? 0 : -1;
}

const struct insight_rule insight_rule_gpu_bound = {
	"gpu-bound",
	"GPU busy time (kernels, memsets, pinned copies on any stream) as a share of the step (insight_waterfall)",
	">= 90% of the step (info)",
	"The GPU is the bottleneck: optimise the top kernels (mixed precision, channels_last, fused kernels, "
	"torch.compile), or use more GPUs; host-side changes will not help",
	"gpu_busy_pct",
	eval_gpu_bound,
};
