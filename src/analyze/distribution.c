/*
 * distribution.c - the `kernel-distribution` analysis: kernel duration
 * distribution across ranks (see distribution.h), from the kernel
 * breakdown the runner computes once as the step shared with `kernels`.
 * kernel_metrics rows are sorted by type, name, rank, so the rows of one
 * kernel name are consecutive: one pass groups them; the spread table is
 * one sort of the kernels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/distribution.h"
#include "core/buf.h"

/* The row's output tables (the atables below take their names from here).
 * The spread is not one of HTA's files: `--format csv` leaves it out of
 * stdout, which then diffs against HTA's CSV. */
static bool spread_shown(const void *opts, const struct analysis_show *s)
{
	(void)opts;
	return s->fmt != AFMT_CSV;
}

static const struct analysis_table dist_tables[] = {
	{.csv = "kernel_duration_distribution"},
	{.csv = "kernel_rank_spread", .shown = spread_shown},
};

void kernel_dist_run(const struct kernel_breakdown *kb, struct kernel_dist *out)
{
	memset(out, 0, sizeof *out);
	out->rows = xcalloc(kb->nmetrics ? kb->nmetrics : 1, sizeof *out->rows);
	for (size_t i = 0; i < kb->nmetrics;) {
		const struct kernel_metric_row *m = &kb->metrics[i];
		size_t j = i + 1;
		while (j < kb->nmetrics && kb->metrics[j].type == m->type && strcmp(kb->metrics[j].name, m->name) == 0)
			j++;
		if (!m->others) {
			struct kernel_dist_row *d = &out->rows[out->nrows++];
			d->name = m->name;
			d->type = m->type;
			d->first = i;
			d->count = j - i;
			d->mean_lo = d->mean_hi = m->mean;
			d->rank_lo = d->rank_hi = m->rank;
			for (size_t k = i + 1; k < j; k++) {
				const struct kernel_metric_row *x = &kb->metrics[k];
				if (x->mean < d->mean_lo) {
					d->mean_lo = x->mean;
					d->rank_lo = x->rank;
				}
				if (x->mean > d->mean_hi) {
					d->mean_hi = x->mean;
					d->rank_hi = x->rank;
				}
			}
			d->spread = d->mean_lo > 0 ? d->mean_hi / d->mean_lo : NAN;
		}
		i = j;
	}
}

void kernel_dist_free(struct kernel_dist *kd)
{
	free(kd->rows);
	memset(kd, 0, sizeof *kd);
}

static int cmp_spread(const void *a, const void *b)
{
	const struct kernel_dist_row *x = *(const struct kernel_dist_row *const *)a;
	const struct kernel_dist_row *y = *(const struct kernel_dist_row *const *)b;
	double sx = isnan(x->spread) ? -1 : x->spread, sy = isnan(y->spread) ? -1 : y->spread;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	int c = strcmp(trace_ktype_name(x->type), trace_ktype_name(y->type));
	return c ? c : strcmp(x->name, y->name);
}

void analyze_kernel_distribution(const struct trace_set *set, const struct analyze_ranks *sel,
				 const struct kernel_breakdown_opts *o, struct atable **dist,
				 struct atable **spread)
{
	struct trace_set v = analyze_view(set, sel);
	struct kernel_breakdown kb;
	kernel_breakdown_run(&v, o, &kb);
	analyze_kernel_distribution_tables(&v, o, &kb, dist, spread);
	kernel_breakdown_free(&kb);
	free(v.ranks);
}

void analyze_kernel_distribution_tables(const struct trace_set *view, const struct kernel_breakdown_opts *o,
					const struct kernel_breakdown *kbp, struct atable **dist,
					struct atable **spread)
{
	const struct trace_set v = *view;
	const struct kernel_breakdown kb = *kbp;
	struct kernel_dist kd;
	kernel_dist_run(&kb, &kd);

	static const char *const dcols[] = {"name:s",     "kernel_type:s", "rank:i",     "mean (us):f",
					    "min (us):f", "max (us):f",    "sum (us):f", NULL};
	struct atable *d = atable_new(dist_tables[0].csv,
				      "Kernel duration per rank (us; HTA's kernel_metrics without 'others')", dcols);
	for (size_t k = 0; k < kd.nrows; k++) {
		for (size_t j = kd.rows[k].first; j < kd.rows[k].first + kd.rows[k].count; j++) {
			const struct kernel_metric_row *m = &kb.metrics[j];
			size_t row = atable_add_row(d);
			atable_set_s(d, row, 0, m->name);
			atable_set_s(d, row, 1, trace_ktype_name(m->type));
			atable_set_i(d, row, 2, m->rank);
			atable_set_f(d, row, 3, m->mean);
			atable_set_f(d, row, 4, m->min);
			atable_set_f(d, row, 5, m->max);
			atable_set_f(d, row, 6, m->sum);
		}
	}
	if (kb.nmetrics > 0 && o->num_kernels < UINT64_MAX)
		atable_note(d,
			    "a kernel folded into 'others' on a rank has no row for that rank; with more than "
			    "%llu kernels of a type, HTA reports each kept kernel's total as its mean/min/max "
			    "(--all-kernels gives true per-call statistics)",
			    (unsigned long long)o->num_kernels);
	analyze_note_no_gpu(d, &v, "kernels");

	static const char *const scols[] = {"name:s",          "kernel_type:s",       "ranks:i",
					    "fastest_rank:i",  "fastest_mean (us):f", "slowest_rank:i",
					    "slowest_mean (us):f", "spread:f",        NULL};
	struct atable *s = atable_new(dist_tables[1].csv,
				      "Kernels by spread of their mean duration across ranks (slowest / fastest)",
				      scols);
	const struct kernel_dist_row **order = xmalloc((kd.nrows ? kd.nrows : 1) * sizeof *order);
	for (size_t k = 0; k < kd.nrows; k++)
		order[k] = &kd.rows[k];
	qsort(order, kd.nrows, sizeof *order, cmp_spread);
	for (size_t k = 0; k < kd.nrows; k++) {
		const struct kernel_dist_row *r = order[k];
		size_t row = atable_add_row(s);
		atable_set_s(s, row, 0, r->name);
		atable_set_s(s, row, 1, trace_ktype_name(r->type));
		atable_set_i(s, row, 2, (int64_t)r->count);
		atable_set_i(s, row, 3, r->rank_lo);
		atable_set_f(s, row, 4, r->mean_lo);
		atable_set_i(s, row, 5, r->rank_hi);
		atable_set_f(s, row, 6, r->mean_hi);
		atable_set_f(s, row, 7, r->spread);
	}
	free(order);
	kernel_dist_free(&kd);
	*dist = d;
	*spread = s;
}

/* ---- the `kernel-distribution` row of the analysis table ---- */

static void dist_combine(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	struct kernel_breakdown_opts ko = kernel_step_breakdown_opts(c->prepare_opts);
	analyze_kernel_distribution_tables(view, &ko, c->prepared, &out[0], &out[1]);
}

const struct analysis analysis_kernel_distribution = {
	.name = "kernel-distribution",
	.help = "kernel durations per rank, slowest vs fastest rank",
	.tables = dist_tables,
	.ntables = 2,
	.prepare = &analysis_step_kernel_breakdown,
	.combine = dist_combine,
	.skip = analyze_skip_no_gpu,
};
