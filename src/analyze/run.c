/*
 * run.c - runs analyses of the table over a loaded set at once, in
 * parallel (analyze_run, run.h), for `dyno analyze` and above all
 * `summary`.  It knows no analysis by name: everything comes from the
 * rows of analysis_list[].
 *
 * The unit of work is one rank of one analysis (its .rank on a one-rank
 * view) or of one shared step (.prepare, e.g. the kernel breakdown, run
 * once however many analyses use it).  Tasks run on a par_for pool
 * (src/core/par.h), costlier kinds first, and only read the model; each
 * writes its own slot.  Afterwards the slots are put together in rank
 * order -- a step's parts by its .combine, an analysis's tables appended
 * (atable_append), then its .combine --, which gives byte for byte the
 * tables of the plain functions over the selected ranks, whatever the
 * thread count.  An analysis of two sets (.pair, `diff`) is one call
 * over the selected ranks of both, after the tasks.  Costs: the tasks,
 * plus one pointer slot per table and rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/run.h"
#include "core/clock.h"
#include "core/par.h"

/* the analysis in the empty view: no rank selected (it runs once so that
 * its notes say so) */
#define NO_RANK ((size_t)-1)

struct step_job {
	const struct analysis_step *s;
	const void *opts;
	void *combined;
};

struct job {
	const struct analysis *a;
	const void *opts;
	bool *want, *shown; /* per table */
	struct step_job *prep;
};

struct task {
	struct step_job *sj; /* one of */
	struct job *j;
	size_t rank;         /* index into the view, or NO_RANK */
	void *slot;          /* a step's part, or an analysis's struct atable *[ntables] */
	double s;            /* wall seconds */
};

struct run_ctx {
	const struct trace_set *view;
	struct task *tasks;
};

static void run_task(void *arg, size_t i)
{
	struct run_ctx *c = arg;
	struct task *tk = &c->tasks[i];
	int64_t t0 = clock_mono_ns();
	if (tk->sj) {
		tk->sj->s->rank(tk->sj->opts, c->view->ranks[tk->rank], tk->slot);
	} else {
		const struct job *j = tk->j;
		/* the analysis sees only this rank */
		struct trace_set one = tk->rank == NO_RANK ? *c->view : analyze_view_rank(c->view, tk->rank);
		struct analysis_ctx ctx = {j->opts, j->want, j->prep ? j->prep->opts : NULL, NULL};
		j->a->rank(&ctx, &one, tk->slot);
	}
	tk->s = (double)(clock_mono_ns() - t0) / 1e9;
}

/* the rank number of a task (-1: the empty view) */
static int task_rank(const struct trace_set *view, const struct task *tk)
{
	return tk->rank == NO_RANK ? -1 : view->ranks[tk->rank]->rank;
}

static void add_timing(struct analyze_results *out, const char *what, const char *phase, int rank, double s)
{
	out->timings = xrealloc(out->timings, (out->ntimings + 1) * sizeof *out->timings);
	out->timings[out->ntimings++] = (struct analyze_timing){what, phase, rank, s};
}

static void add_result(struct analyze_results *out, const struct job *j, size_t t, struct atable *tab, int rank)
{
	const struct analysis_table *d = &j->a->tables[t];
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	struct buf name = BUF_INIT;
	if (d->per_rank && rank >= 0)
		buf_printf(&name, "%s%d", d->csv, rank);
	else
		buf_puts(&name, d->csv);
	out->v[out->n++] = (struct analyze_result){tab, j->a, d, buf_detach(&name, NULL), j->shown[t]};
}

/* The tasks, costlier kinds first (par_for hands them out in order), each
 * kind's ranks in rank order. */
static size_t make_tasks(struct step_job *steps, size_t nsteps, struct job *jobs, size_t njobs, size_t nranks,
			 struct task **out)
{
	size_t nkinds = nsteps + njobs, n = 0;
	struct task *kinds = xcalloc(nkinds ? nkinds : 1, sizeof *kinds);
	double *cost = xcalloc(nkinds ? nkinds : 1, sizeof *cost);
	size_t nk = 0;
	for (size_t i = 0; i < nsteps; i++) {
		kinds[nk] = (struct task){.sj = &steps[i]};
		cost[nk++] = steps[i].s->cost;
	}
	for (size_t i = 0; i < njobs; i++)
		if (jobs[i].a->rank) {
			kinds[nk] = (struct task){.j = &jobs[i]};
			cost[nk++] = jobs[i].a->cost;
		}
	/* stable insertion sort by cost, descending (a handful of kinds) */
	for (size_t i = 1; i < nk; i++)
		for (size_t k = i; k > 0 && cost[k] > cost[k - 1]; k--) {
			struct task t = kinds[k];
			kinds[k] = kinds[k - 1];
			kinds[k - 1] = t;
			double c = cost[k];
			cost[k] = cost[k - 1];
			cost[k - 1] = c;
		}
	struct task *tasks = xcalloc(nk * (nranks ? nranks : 1) + 1, sizeof *tasks);
	for (size_t i = 0; i < nk; i++) {
		if (kinds[i].sj) {
			for (size_t r = 0; r < nranks; r++) {
				tasks[n] = kinds[i];
				tasks[n].rank = r;
				tasks[n++].slot = xcalloc(1, kinds[i].sj->s->part_size);
			}
		} else {
			for (size_t r = 0; r < (nranks ? nranks : 1); r++) {
				tasks[n] = kinds[i];
				tasks[n].rank = nranks ? r : NO_RANK;
				tasks[n++].slot = xcalloc(kinds[i].j->a->ntables, sizeof(struct atable *));
			}
		}
	}
	free(kinds);
	free(cost);
	*out = tasks;
	return n;
}

/* One analysis's tables: the rank tables appended in rank order, its
 * combine, then its results in table order. */
static void finish_job(struct job *j, const struct trace_set *view, const struct trace_set *test_view,
		       struct task *tasks, size_t ntasks, struct analyze_results *out)
{
	const struct analysis *a = j->a;
	struct atable **tabs = xcalloc(a->ntables, sizeof *tabs);
	if (a->pair) {
		/* one call over both sets (no rank tasks: it compares one
		 * rank of each) */
		int64_t t0 = clock_mono_ns();
		struct analysis_ctx ctx = {j->opts, j->want, NULL, NULL};
		a->pair(&ctx, view, test_view, tabs);
		add_timing(out, a->name, "tables", -1, (double)(clock_mono_ns() - t0) / 1e9);
	}
	for (size_t i = 0; i < ntasks; i++) {
		if (tasks[i].j != j)
			continue;
		struct atable **part = tasks[i].slot;
		for (size_t t = 0; t < a->ntables; t++) {
			if (!part[t] || a->tables[t].per_rank)
				continue;
			if (!tabs[t])
				tabs[t] = part[t];
			else
				atable_append(tabs[t], part[t]);
			part[t] = NULL;
		}
	}
	if (a->combine) {
		int64_t t0 = clock_mono_ns();
		struct analysis_ctx ctx = {j->opts, j->want, j->prep ? j->prep->opts : NULL,
					   j->prep ? j->prep->combined : NULL, out};
		a->combine(&ctx, view, tabs);
		add_timing(out, a->name, "tables", -1, (double)(clock_mono_ns() - t0) / 1e9);
	}
	for (size_t t = 0; t < a->ntables; t++) {
		if (!a->tables[t].per_rank) {
			if (tabs[t] && j->want[t])
				add_result(out, j, t, tabs[t], -1);
			else
				atable_free(tabs[t]);
			continue;
		}
		for (size_t i = 0; i < ntasks; i++) {
			struct atable **part = tasks[i].slot;
			if (tasks[i].j != j || !part[t])
				continue;
			if (j->want[t])
				add_result(out, j, t, part[t], task_rank(view, &tasks[i]));
			else
				atable_free(part[t]);
			part[t] = NULL;
		}
	}
	free(tabs);
}

/* Is a one of the analyses only reads the tables of (its .uses)? */
static bool used_by(const struct analysis *only, const struct analysis *a)
{
	for (const struct analysis *const *u = only ? only->uses : NULL; u && *u; u++)
		if (*u == a)
			return true;
	return false;
}

/* The analyses that run, in table order, which of their tables are shown
 * and wanted, and the steps they share (each once).  Summary leaves out
 * those undefined on view (their .skip), recording why in out; so does an
 * analysis for those it uses (run as in summary, their tables not shown). */
static size_t plan(const struct analyze_run_opts *o, const struct trace_set *view, struct job *jobs,
		   struct step_job *steps, size_t *nsteps_out, struct analyze_results *out)
{
	const struct analysis_show show = {o->fmt, o->only == NULL, o->every_table};
	const struct analysis_show as_summary = {o->fmt, true, o->every_table};
	size_t njobs = 0, nsteps = 0;
	for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
		const struct analysis *a = analysis_list[i];
		bool used = used_by(o->only, a);
		if ((o->only && o->only != a && !used) || (!o->only && a->own_command))
			continue;
		/* summary has one input: an analysis of two sets runs alone */
		if ((!o->only || used) && a->pair)
			continue;
		const char *why = (!o->only || used) && view->nranks && a->skip
					  ? a->skip(analysis_config_opts(o->config, &a->opts), view)
					  : NULL;
		/* asked for by name: it runs whatever the trace holds (its notes
		 * say what is missing), and undefined on every rank is said by
		 * the exit status, the same for every analysis */
		if (o->only == a && view->nranks && a->skip)
			out->undefined = a->skip(analysis_config_opts(o->config, &a->opts), view);
		if (why) {
			out->skipped = xrealloc(out->skipped, (out->nskipped + 1) * sizeof *out->skipped);
			out->skipped[out->nskipped++] = (struct analyze_skipped){a, why};
			continue;
		}
		struct job *j = &jobs[njobs++];
		*j = (struct job){a, analysis_config_opts(o->config, &a->opts), xcalloc(a->ntables, sizeof(bool)),
				  xcalloc(a->ntables, sizeof(bool)), NULL};
		for (size_t t = 0; t < a->ntables; t++) {
			bool s = !a->tables[t].shown || a->tables[t].shown(j->opts, used ? &as_summary : &show);
			j->shown[t] = s && !used;
			j->want[t] = s || o->every_table;
		}
		if (!a->prepare)
			continue;
		for (size_t k = 0; k < nsteps && !j->prep; k++)
			if (steps[k].s == a->prepare)
				j->prep = &steps[k];
		if (!j->prep) {
			j->prep = &steps[nsteps++];
			j->prep->s = a->prepare;
			j->prep->opts = analysis_config_opts(o->config, &a->prepare->opts);
			j->prep->combined = NULL;
		}
	}
	*nsteps_out = nsteps;
	return njobs;
}

void analyze_run(const struct trace_set *set, const struct analyze_ranks *sel, const struct analyze_run_opts *o,
		 struct analyze_results *out)
{
	memset(out, 0, sizeof *out);
	int64_t t0 = clock_mono_ns();
	struct trace_set view = analyze_view(set, sel);

	struct job jobs[ANALYSIS_COUNT];
	struct step_job steps[ANALYSIS_COUNT];
	size_t nsteps, njobs = plan(o, &view, jobs, steps, &nsteps, out);

	struct task *tasks;
	size_t nt = make_tasks(steps, nsteps, jobs, njobs, view.nranks, &tasks);
	struct run_ctx c = {&view, tasks};
	par_for(nt, o->threads, run_task, &c);
	/* par_for joined every thread: the slots are ours to read */
	for (size_t i = 0; i < nt; i++)
		add_timing(out, tasks[i].sj ? tasks[i].sj->s->name : tasks[i].j->a->name, NULL,
			   task_rank(&view, &tasks[i]), tasks[i].s);

	for (size_t k = 0; k < nsteps; k++) {
		int64_t t1 = clock_mono_ns();
		const struct analysis_step *s = steps[k].s;
		char *parts = xcalloc(view.nranks ? view.nranks : 1, s->part_size);
		for (size_t i = 0; i < nt; i++)
			if (tasks[i].sj == &steps[k])
				memcpy(parts + tasks[i].rank * s->part_size, tasks[i].slot, s->part_size);
		steps[k].combined = s->combine(steps[k].opts, parts, view.nranks);
		free(parts);
		add_timing(out, s->name, "combine", -1, (double)(clock_mono_ns() - t1) / 1e9);
	}
	struct trace_set test_view = o->test ? analyze_view(o->test, sel) : view;
	for (size_t i = 0; i < njobs; i++)
		finish_job(&jobs[i], &view, &test_view, tasks, nt, out);
	if (o->test)
		free(test_view.ranks);

	for (size_t k = 0; k < nsteps; k++)
		steps[k].s->free(steps[k].combined);
	for (size_t i = 0; i < njobs; i++) {
		free(jobs[i].want);
		free(jobs[i].shown);
	}
	for (size_t i = 0; i < nt; i++)
		free(tasks[i].slot);
	free(tasks);
	free(view.ranks);
	out->wall_s = (double)(clock_mono_ns() - t0) / 1e9;
}

void analyze_results_free(struct analyze_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		atable_free(r->v[i].t);
		free(r->v[i].name);
	}
	free(r->v);
	free(r->skipped);
	free(r->timings);
	memset(r, 0, sizeof *r);
}
