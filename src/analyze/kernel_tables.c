/*
 * kernel_tables.c - lays out the results of kernels.c, distribution.c and
 * overlap.c as result tables (declared in analyze.h).  Rank selection is a
 * view of the set holding only the selected ranks, so the analyses
 * themselves never need to know about it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/distribution.h"
#include "analyze/analyze.h"
#include "analyze/overlap.h"

/* A trace_set sharing the selected ranks of set; free view.ranks only. */
static struct trace_set select_view(const struct trace_set *set, const struct analyze_ranks *sel)
{
	struct trace_set v = *set;
	v.ranks = xmalloc((set->nranks ? set->nranks : 1) * sizeof *v.ranks);
	v.nranks = 0;
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			v.ranks[v.nranks++] = set->ranks[k];
	return v;
}

/* Ranks of the view with no row on a stream: the analyses have nothing to
 * say about them, which is not the same as zero. */
static void note_no_gpu(struct atable *t, const struct trace_set *v, const char *what)
{
	if (v->nranks == 0)
		atable_note(t, "none of the selected ranks is in the trace: no %s", what);
	for (size_t k = 0; k < v->nranks; k++) {
		const struct trace_rank *r = v->ranks[k];
		size_t i = 0;
		while (i < r->n && !trace_is_gpu(r, i))
			i++;
		if (i == r->n)
			atable_note(t, "rank %d: no GPU events (no row has a stream): no %s", r->rank, what);
	}
}

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
	struct trace_set v = select_view(set, sel);
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
	struct atable *t = atable_new("kernel_type_breakdown", "GPU kernel time by type, all ranks (us)", tcols);
	for (size_t k = 0; k < kb.ntypes; k++) {
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, kernel_type_label(kb.types[k].mask));
		if (integral)
			atable_set_i(t, row, 1, (int64_t)kb.types[k].sum);
		else
			atable_set_f(t, row, 1, kb.types[k].sum);
		atable_set_f(t, row, 2, kb.types[k].percentage);
	}
	note_no_gpu(t, &v, "kernel breakdown");

	static const char *const mcols[] = {"name:s",     "sum (us):f",  "max (us):f",    "min (us):f",
					    "stddev:f",   "mean (us):f", "kernel_type:s", "rank:i", NULL};
	struct atable *m = atable_new("kernel_metrics", "Top GPU kernels per type and rank (us)", mcols);
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
	struct trace_set v = select_view(set, sel);
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
	struct atable *d = atable_new("kernel_duration_distribution",
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
	note_no_gpu(d, &v, "kernels");

	static const char *const scols[] = {"name:s",          "kernel_type:s",       "ranks:i",
					    "fastest_rank:i",  "fastest_mean (us):f", "slowest_rank:i",
					    "slowest_mean (us):f", "spread:f",        NULL};
	struct atable *s = atable_new("kernel_rank_spread",
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

struct atable *analyze_overlap(const struct trace_set *set, const struct analyze_ranks *sel)
{
	struct trace_set v = select_view(set, sel);
	struct overlap_result ov;
	overlap_run(&v, &ov);
	static const char *const cols[] = {"rank:i", "comp_comm_overlap_pctg:f", NULL};
	struct atable *t = atable_new("comm_comp_overlap",
				      "Share of communication kernel time overlapped by computation (%)", cols);
	for (size_t k = 0; k < ov.nrows; k++) {
		const struct overlap_row *r = &ov.rows[k];
		size_t row = atable_add_row(t);
		atable_set_i(t, row, 0, r->rank);
		atable_set_f(t, row, 1, r->pctg);
		if (r->comm_kernels == 0)
			atable_note(t, "rank %d: no communication kernels: overlap undefined (empty, HTA's NaN)",
				    r->rank);
	}
	if (v.nranks == 0)
		note_no_gpu(t, &v, "overlap");
	overlap_free(&ov);
	free(v.ranks);
	return t;
}
