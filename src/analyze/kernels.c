/*
 * kernels.c - the `kernels` analysis: HTA's kernel_type_breakdown and
 * kernel_metrics tables laid out from the kernel breakdown
 * (kernel_breakdown.c), which the runner computes once per rank as the
 * shared step that kernel-distribution uses too.  Laying out the tables is
 * linear in the breakdown's rows.
 */
#include <math.h>
#include <stdlib.h>

#include "analyze/analysis.h"

/* The row's output tables (the atables below take their names from here).
 * The per-kernel one is on stdout with --top instead of the type
 * breakdown, so that `--format csv` prints exactly one of HTA's files;
 * summary shows both. */
static bool types_shown(const void *opts, const struct analysis_show *s)
{
	const struct kernels_options *o = opts;
	return s->summary || !o->top;
}

static bool metrics_shown(const void *opts, const struct analysis_show *s)
{
	const struct kernels_options *o = opts;
	return s->summary || o->top;
}

static const struct analysis_table kernels_tables[] = {
	{.csv = "kernel_type_breakdown", .shown = types_shown},
	{.csv = "kernel_metrics", .shown = metrics_shown},
};

/* HTA's frame has int64 times when every rank's trace had integer ts and
 * dur only (trace_rank.int_times); pandas then prints sum/max/min as "45",
 * not "45.0", and so do we, so that our CSV is byte-identical. */
static bool int_times(const struct trace_set *v)
{
	for (size_t k = 0; k < v->nranks; k++)
		if (!v->ranks[k]->int_times)
			return false;
	return true;
}

static void metrics_row(struct atable *t, const struct kernel_metric_row *m)
{
	size_t row = atable_add_row(t);
	atable_set_s(t, row, 0, m->name);
	atable_set_f(t, row, 1, m->sum);
	atable_set_f(t, row, 2, m->max);
	atable_set_f(t, row, 3, m->min);
	atable_set_f(t, row, 4, m->stddev);
	atable_set_f(t, row, 5, m->mean);
	atable_set_s(t, row, 6, trace_ktype_name(m->type));
	atable_set_i(t, row, 7, m->rank);
}

void analyze_kernels(const struct trace_set *set, const struct analyze_ranks *sel,
		     const struct kernel_breakdown_opts *o, struct atable **types, struct atable **metrics)
{
	struct trace_set v = analyze_view(set, sel);
	struct kernel_breakdown kb;
	kernel_breakdown_run(&v, o, &kb);
	analyze_kernels_tables(&v, o, &kb, types, metrics);
	kernel_breakdown_free(&kb);
	free(v.ranks);
}

void analyze_kernels_tables(const struct trace_set *view, const struct kernel_breakdown_opts *o,
			    const struct kernel_breakdown *kbp, struct atable **types, struct atable **metrics)
{
	const struct trace_set v = *view;
	const struct kernel_breakdown kb = *kbp;

	/* HTA's sums are integers (µs after its rounding); keep that text
	 * unless --no-ns-rounding left fractions */
	bool integral = true;
	for (size_t k = 0; k < kb.ntypes; k++)
		integral &= kb.types[k].sum == floor(kb.types[k].sum) && fabs(kb.types[k].sum) < 9e15;
	const char *tcols[] = {"kernel_type:s", integral ? "sum:i" : "sum:f", "percentage:f", NULL};
	struct atable *t = atable_new(kernels_tables[0].csv, "GPU kernel time by type, all ranks (us)", tcols);
	for (size_t k = 0; k < kb.ntypes; k++) {
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, kernel_type_label(kb.types[k].mask));
		if (integral)
			atable_set_i(t, row, 1, (int64_t)kb.types[k].sum);
		else
			atable_set_f(t, row, 1, kb.types[k].sum);
		atable_set_f(t, row, 2, kb.types[k].percentage);
	}
	analyze_note_no_gpu(t, &v, "kernel breakdown");

	static const char *const mcols[] = {"name:s",     "sum (us):f",  "max (us):f",    "min (us):f",
					    "stddev:f",   "mean (us):f", "kernel_type:s", "rank:i", NULL};
	struct atable *m = atable_new(kernels_tables[1].csv, "Top GPU kernels per type and rank (us)", mcols);
	if (int_times(&v))
		for (size_t c = 1; c <= 3; c++)
			atable_int_text(m, c);
	for (size_t k = 0; k < kb.nmetrics; k++)
		metrics_row(m, &kb.metrics[k]);
	atable_note(m,
		    "top %llu kernels per type and rank, up to %g of the cumulative time; the rest is "
		    "'others' (HTA: then sum = max = min = mean = each kernel's total)",
		    (unsigned long long)o->num_kernels, o->duration_ratio);
	*types = t;
	*metrics = m;
}

/* ---- the `kernels` row of the analysis table ---- */

static const struct kernels_options kernels_defaults = {.top = false};
static const struct analysis_opt kernels_opts[] = {
	{{"top", 0, ARG_BOOL, NULL, NULL,
	  "kernels: print the per-kernel table (kernel_metrics) instead of the type breakdown", 0, 0, NULL},
	 offsetof(struct kernels_options, top)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static void kernels_combine(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	struct kernel_breakdown_opts ko = kernel_step_breakdown_opts(c->prepare_opts);
	analyze_kernels_tables(view, &ko, c->prepared, &out[0], &out[1]);
}

const struct analysis analysis_kernels = {
	.name = "kernels",
	.help = "GPU kernel time by type (and overlaps); --top: per-kernel table",
	.opts = {sizeof(struct kernels_options), &kernels_defaults, kernels_opts, NULL},
	.tables = kernels_tables,
	.ntables = 2,
	.prepare = &analysis_step_kernel_breakdown,
	.combine = kernels_combine,
	.skip = analyze_skip_no_gpu,
};
