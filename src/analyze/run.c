/*
 * run.c - runs several analyses over a loaded set at once, in parallel
 * (analyze_run, declared in analyze.h), for `dyno analyze` and above all
 * `summary`.
 *
 * The unit of work is one analysis of one rank: temporal, idle, overlap
 * and launch are computed on a one-rank view of the set (the same
 * functions as a single analysis), the kernel breakdown with
 * kernel_breakdown_rank().  Tasks run on a par_for pool (src/trace/par.h)
 * and only read the model; each writes its own slot.  Afterwards the slots
 * are put together in rank order (atable_append, kernel_breakdown_combine),
 * which gives byte for byte the tables of the sequential functions over the
 * selected ranks, whatever the thread count.  The kernel breakdown is
 * computed once for both its tables and the kernel distribution's.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "core/clock.h"
#include "trace/par.h"

enum task_kind { TK_KERNELS, TK_LAUNCH, TK_IDLE, TK_TEMPORAL, TK_OVERLAP, TK__COUNT };
static const char *const task_name[TK__COUNT] = {"kernels", "launch", "idle", "temporal", "overlap"};

struct task {
	enum task_kind kind;
	size_t rank; /* index into the view */
	/* results (one of) */
	struct atable *t, *st;
	struct kernel_rank_part kp;
	double s; /* wall seconds */
};

struct run_ctx {
	const struct trace_set *view;
	const struct analyze_run_opts *o;
	struct task *tasks;
};

static void run_task(void *arg, size_t i)
{
	struct run_ctx *c = arg;
	struct task *tk = &c->tasks[i];
	int64_t t0 = clock_mono_ns();
	/* a one-rank view of the set: the analyses see only this rank */
	struct trace_set one = *c->view;
	one.ranks = &c->view->ranks[tk->rank];
	one.nranks = 1;
	const struct analyze_run_opts *o = c->o;
	switch (tk->kind) {
	case TK_TEMPORAL: tk->t = analyze_temporal(&one, NULL); break;
	case TK_IDLE: tk->t = analyze_idle(&one, NULL, o->delay, o->idle_stats ? &tk->st : NULL); break;
	case TK_OVERLAP: tk->t = analyze_overlap(&one, NULL); break;
	case TK_KERNELS: kernel_breakdown_rank(one.ranks[0], &o->kernels, &tk->kp); break;
	case TK_LAUNCH: {
		struct atable **ts;
		size_t n = analyze_launch(&one, NULL, &o->launch, &ts);
		tk->t = n ? ts[0] : NULL;
		free(ts);
		break;
	}
	case TK__COUNT: break;
	}
	tk->s = (double)(clock_mono_ns() - t0) / 1e9;
}

/* Append the tables of tasks of one kind, in rank order. */
static struct atable *gather(struct task *tasks, size_t ntasks, enum task_kind kind, bool stats)
{
	struct atable *out = NULL;
	for (size_t i = 0; i < ntasks; i++) {
		if (tasks[i].kind != kind)
			continue;
		struct atable **p = stats ? &tasks[i].st : &tasks[i].t;
		if (!out)
			out = *p;
		else
			atable_append(out, *p);
		*p = NULL;
	}
	return out;
}

static void add_timing(struct analyze_results *out, const char *what, int rank, double s)
{
	out->timings = xrealloc(out->timings, (out->ntimings + 1) * sizeof *out->timings);
	out->timings[out->ntimings++] = (struct analyze_timing){what, rank, s};
}

void analyze_run(const struct trace_set *set, const struct analyze_ranks *sel, const struct analyze_run_opts *o,
		 struct analyze_results *out)
{
	memset(out, 0, sizeof *out);
	int64_t t0 = clock_mono_ns();
	struct trace_set view = *set;
	view.ranks = xmalloc((set->nranks ? set->nranks : 1) * sizeof *view.ranks);
	view.nranks = 0;
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			view.ranks[view.nranks++] = set->ranks[k];
	if (view.nranks == 0) {
		/* nothing to split: the sequential functions write their notes */
		if (o->which & AN_TEMPORAL)
			out->temporal = analyze_temporal(set, sel);
		if (o->which & AN_IDLE)
			out->idle = analyze_idle(set, sel, o->delay, o->idle_stats ? &out->idle_stats : NULL);
		if (o->which & AN_KERNELS)
			analyze_kernels(set, sel, &o->kernels, &out->ktypes, &out->kmetrics);
		if (o->which & AN_KDIST)
			analyze_kernel_distribution(set, sel, &o->kernels, &out->kdist, &out->kspread);
		if (o->which & AN_OVERLAP)
			out->overlap = analyze_overlap(set, sel);
		if (o->which & AN_LAUNCH)
			out->nlaunch = analyze_launch(set, sel, &o->launch, &out->launch);
		free(view.ranks);
		out->wall_s = (double)(clock_mono_ns() - t0) / 1e9;
		return;
	}
	bool want[TK__COUNT] = {
		[TK_KERNELS] = (o->which & (AN_KERNELS | AN_KDIST)) != 0,
		[TK_LAUNCH] = (o->which & AN_LAUNCH) != 0,
		[TK_IDLE] = (o->which & AN_IDLE) != 0,
		[TK_TEMPORAL] = (o->which & AN_TEMPORAL) != 0,
		[TK_OVERLAP] = (o->which & AN_OVERLAP) != 0,
	};
	/* the costlier kinds first (par_for hands tasks out in order) */
	struct task *tasks = xcalloc(TK__COUNT * view.nranks, sizeof *tasks);
	size_t nt = 0;
	for (int k = 0; k < TK__COUNT; k++)
		for (size_t r = 0; want[k] && r < view.nranks; r++)
			tasks[nt++] = (struct task){.kind = (enum task_kind)k, .rank = r};
	struct run_ctx c = {&view, o, tasks};
	par_for(nt, o->threads, run_task, &c);
	/* par_for joined every thread: the slots are ours to read */
	for (size_t i = 0; i < nt; i++)
		add_timing(out, task_name[tasks[i].kind], view.ranks[tasks[i].rank]->rank, tasks[i].s);

	if (want[TK_TEMPORAL])
		out->temporal = gather(tasks, nt, TK_TEMPORAL, false);
	if (want[TK_IDLE]) {
		out->idle = gather(tasks, nt, TK_IDLE, false);
		if (o->idle_stats)
			out->idle_stats = gather(tasks, nt, TK_IDLE, true);
	}
	if (want[TK_OVERLAP])
		out->overlap = gather(tasks, nt, TK_OVERLAP, false);
	if (want[TK_LAUNCH]) {
		out->launch = xcalloc(view.nranks, sizeof *out->launch);
		for (size_t i = 0; i < nt; i++)
			if (tasks[i].kind == TK_LAUNCH && tasks[i].t)
				out->launch[out->nlaunch++] = tasks[i].t;
	}
	if (want[TK_KERNELS]) {
		int64_t t1 = clock_mono_ns();
		struct kernel_rank_part *parts = xcalloc(view.nranks, sizeof *parts);
		for (size_t i = 0; i < nt; i++)
			if (tasks[i].kind == TK_KERNELS)
				parts[tasks[i].rank] = tasks[i].kp;
		struct kernel_breakdown kb;
		kernel_breakdown_combine(parts, view.nranks, &kb);
		free(parts);
		if (o->which & AN_KERNELS)
			analyze_kernels_tables(&view, &o->kernels, &kb, &out->ktypes, &out->kmetrics);
		if (o->which & AN_KDIST)
			analyze_kernel_distribution_tables(&view, &o->kernels, &kb, &out->kdist, &out->kspread);
		kernel_breakdown_free(&kb);
		add_timing(out, "kernels (all ranks: combine, tables)", -1, (double)(clock_mono_ns() - t1) / 1e9);
	}
	free(tasks);
	free(view.ranks);
	out->wall_s = (double)(clock_mono_ns() - t0) / 1e9;
}

void analyze_results_free(struct analyze_results *r)
{
	atable_free(r->temporal);
	atable_free(r->idle);
	atable_free(r->idle_stats);
	atable_free(r->ktypes);
	atable_free(r->kmetrics);
	atable_free(r->kdist);
	atable_free(r->kspread);
	atable_free(r->overlap);
	for (size_t i = 0; i < r->nlaunch; i++)
		atable_free(r->launch[i]);
	free(r->launch);
	free(r->timings);
	memset(r, 0, sizeof *r);
}
