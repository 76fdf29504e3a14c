/*
 * kernels.c - GPU kernel breakdown (HTA get_gpu_kernel_breakdown,
 * semantics doc section 4) and communication/computation overlap
 * (get_comm_comp_overlap, section 6).  Both classify the rows with a stream
 * by HTA's kernel type (src/trace/classify.c) and sweep merged intervals.
 *
 * kernel_type_breakdown: the GPU time of each combination of types that run
 *   at once ("COMPUTATION overlapping COMMUNICATION", ...), summed over
 *   ranks.  Zero-length segments (ties in the sweep) are not reported; HTA's
 *   unstable sort may report them with a 0 sum.
 * kernel_metrics: per rank and type, per kernel name sum/max/min/stddev/mean
 *   of dur; above num_kernels names, HTA folds the tail into "others" (rows
 *   whose running sum passes the duration_ratio quantile of the running
 *   sums, or beyond num_kernels) and re-aggregates over the per-name totals,
 *   which turns kept names into sum=max=min=mean, stddev 0.  We reproduce
 *   that quirk (it is what HTA prints); ties in the sort by sum are broken by
 *   name, where pandas' order is unspecified.
 * comm_comp_overlap: percentage of merged communication time during which
 *   computation also runs; NaN (empty) without communication.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/intervals.h"
#include "analyze/stats.h"

/* pandas groupby aggregates: sum and mean with Kahan compensation,
 * variance by Welford's online update (pandas' group_sum/group_mean/
 * group_var), so our last digits match HTA's. */
struct gstats {
	double sum, mean, std, min, max;
};

static void group_stats(const double *v, size_t n, struct gstats *g)
{
	double s = 0, comp = 0, mean = 0, m2 = 0;
	g->min = INFINITY;
	g->max = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double y = v[i] - comp, t = s + y;
		comp = (t - s) - y;
		s = t;
		double d = v[i] - mean;
		mean += d / (double)(i + 1);
		m2 += d * (v[i] - mean);
		if (v[i] < g->min)
			g->min = v[i];
		if (v[i] > g->max)
			g->max = v[i];
	}
	g->sum = s;
	g->mean = n ? s / (double)n : NAN;
	g->std = n > 1 ? sqrt(m2 / (double)(n - 1)) : NAN;
}

static const enum trace_ktype kt_order[3] = {TRACE_KT_COMPUTATION, TRACE_KT_COMMUNICATION, TRACE_KT_MEMORY};

struct pt {
	double t;
	int delta; /* +bit at a start, -bit at an end */
};

static int pt_cmp(const void *a, const void *b)
{
	const struct pt *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta < y->delta ? -1 : x->delta > y->delta; /* ends first: no zero-length noise */
}

/* Merged intervals of the rows of type kt (stream != -1). */
static size_t merged_of_type(const struct trace_rank *r, enum trace_ktype kt, struct ival **out)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += trace_is_gpu(r, i) && trace_ktype(r, i) == kt;
	struct ival *v = xmalloc((n ? n : 1) * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_gpu(r, i) && trace_ktype(r, i) == kt)
			v[k++] = (struct ival){r->ts[i], r->ts[i] + r->dur[i]};
	*out = v;
	return ival_merge(v, k);
}

struct label_sum {
	double sum[8]; /* by bit mask */
	bool seen[8];
};

static void type_sweep(const struct trace_rank *r, int ntypes, struct label_sum *ls)
{
	struct ival *m[3];
	size_t nm[3], total = 0;
	for (int t = 0; t < ntypes; t++) {
		nm[t] = merged_of_type(r, kt_order[t], &m[t]);
		total += nm[t];
	}
	struct pt *p = xmalloc((2 * total + 1) * sizeof *p);
	size_t np = 0;
	for (int t = 0; t < ntypes; t++) {
		for (size_t i = 0; i < nm[t]; i++) {
			p[np++] = (struct pt){m[t][i].ts, 1 << t};
			p[np++] = (struct pt){m[t][i].end, -(1 << t)};
		}
		free(m[t]);
	}
	qsort(p, np, sizeof *p, pt_cmp);
	int mask = 0;
	for (size_t i = 0; i + 1 < np; i++) {
		mask += p[i].delta;
		double len = p[i + 1].t - p[i].t;
		if (mask > 0 && mask < 8 && len > 0) {
			ls->sum[mask] += len;
			ls->seen[mask] = true;
		}
	}
	free(p);
}

static void mask_label(int mask, char *out, size_t cap)
{
	out[0] = 0;
	for (int t = 0; t < 3; t++) {
		if (!(mask & (1 << t)))
			continue;
		if (out[0])
			strncat(out, " overlapping ", cap - strlen(out) - 1);
		strncat(out, trace_ktype_name(kt_order[t]), cap - strlen(out) - 1);
	}
}

struct kstat {
	uint32_t name;
	size_t n;
	double sum, max, min, mean, std;
	double *durs;
	size_t cap;
};

static int kstat_by_sum(const void *a, const void *b)
{
	const struct kstat *x = a, *y = b;
	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

struct mrow {
	const char *name;
	double sum, max, min, std, mean;
	int type;
	int rank;
};

static void kernel_stats(const struct trace_rank *r, enum trace_ktype kt, double ratio, size_t num_kernels,
			 struct mrow **rows, size_t *nrows, size_t *cap)
{
	/* group the rows of this type by name id */
	size_t nn = r->strs.n;
	int32_t *slot = xmalloc((nn ? nn : 1) * sizeof *slot);
	memset(slot, 0xff, (nn ? nn : 1) * sizeof *slot);
	struct kstat *ks = NULL;
	size_t nk = 0, kcap = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!trace_is_gpu(r, i) || trace_ktype(r, i) != kt)
			continue;
		uint32_t id = r->name[i];
		if (slot[id] < 0) {
			if (nk == kcap) {
				kcap = kcap ? kcap * 2 : 32;
				ks = xrealloc(ks, kcap * sizeof *ks);
			}
			ks[nk] = (struct kstat){.name = id};
			slot[id] = (int32_t)nk++;
		}
		struct kstat *k = &ks[slot[id]];
		if (k->n == k->cap) {
			k->cap = k->cap ? k->cap * 2 : 8;
			k->durs = xrealloc(k->durs, k->cap * sizeof *k->durs);
		}
		k->durs[k->n++] = r->dur[i];
	}
	free(slot);
	for (size_t j = 0; j < nk; j++) {
		struct gstats d;
		struct kstat *k = &ks[j];
		group_stats(k->durs, k->n, &d);
		k->sum = d.sum;
		k->max = d.max;
		k->min = d.min;
		k->mean = d.mean;
		k->std = isnan(d.std) ? 0 : d.std;
		free(k->durs);
		k->durs = NULL;
	}
	if (nk)
		qsort(ks, nk, sizeof *ks, kstat_by_sum);
	size_t first_other = nk;
	if (nk > num_kernels) {
		double *cum = xmalloc(nk * sizeof *cum);
		double c = 0;
		for (size_t j = 0; j < nk; j++)
			cum[j] = c += ks[j].sum;
		double q = quantile_sorted(cum, nk, ratio);
		/* kept: cumsum <= q and position < num_kernels (cum is ascending) */
		first_other = 0;
		while (first_other < nk && first_other < num_kernels && cum[first_other] <= q)
			first_other++;
		free(cum);
	}
	for (size_t j = 0; j < first_other; j++) {
		if (*nrows == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*rows = xrealloc(*rows, *cap * sizeof **rows);
		}
		struct kstat *k = &ks[j];
		bool folded = nk > num_kernels; /* re-aggregated over the totals */
		(*rows)[(*nrows)++] = (struct mrow){trace_strtab_get(&r->strs, k->name), k->sum,
						    folded ? k->sum : k->max, folded ? k->sum : k->min,
						    folded ? 0 : k->std, folded ? k->sum : k->mean, kt, r->rank};
	}
	if (first_other < nk) {
		size_t m = nk - first_other;
		double *tot = xmalloc(m * sizeof *tot);
		for (size_t j = 0; j < m; j++)
			tot[j] = ks[first_other + j].sum;
		struct gstats d;
		group_stats(tot, m, &d);
		double s = d.sum;
		if (*nrows == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*rows = xrealloc(*rows, *cap * sizeof **rows);
		}
		(*rows)[(*nrows)++] = (struct mrow){"others", s, d.max, d.min, isnan(d.std) ? 0 : d.std, d.mean, kt,
						    r->rank};
		free(tot);
	}
	free(ks);
}

static int mrow_cmp(const void *a, const void *b)
{
	const struct mrow *x = a, *y = b;
	int c = strcmp(trace_ktype_name((enum trace_ktype)x->type), trace_ktype_name((enum trace_ktype)y->type));
	if (c)
		return c;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

struct atable *analyze_kernels(const struct trace_set *set, const struct analyze_ranks *sel,
			       const struct kernel_opts *o, struct atable **metrics)
{
	static const char *const cols[] = {"kernel_type:s", "sum:f", "percentage:f", NULL};
	static const char *const mcols[] = {"name:s", "sum (us):f", "max (us):f", "min (us):f", "stddev:f",
					    "mean (us):f", "kernel_type:s", "rank:i", NULL};
	struct atable *t = atable_new("kernel_type_breakdown", "GPU kernel time by type (us, all ranks)", cols);
	atable_int_text(t, 1);
	int ntypes = o->include_memory_kernels ? 3 : 2;
	struct label_sum ls = {0};
	struct mrow *rows = NULL;
	size_t nrows = 0, cap = 0;
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		if (!analyze_rank_selected(sel, r->rank))
			continue;
		type_sweep(r, ntypes, &ls);
		for (int ti = 0; ti < ntypes; ti++)
			kernel_stats(r, kt_order[ti], o->duration_ratio, o->num_kernels, &rows, &nrows, &cap);
	}
	/* labels by sum, descending (ties: mask order) */
	int order[8], no = 0;
	double total = 0;
	for (int m = 1; m < 8; m++)
		if (ls.seen[m]) {
			order[no++] = m;
			total += ls.sum[m];
		}
	for (int i = 1; i < no; i++)
		for (int j = i; j > 0 && ls.sum[order[j]] > ls.sum[order[j - 1]]; j--) {
			int x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (int i = 0; i < no; i++) {
		char label[96];
		mask_label(order[i], label, sizeof label);
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, label);
		atable_set_f(t, row, 1, ls.sum[order[i]]);
		atable_set_f(t, row, 2, atable_round(100 * ls.sum[order[i]] / total, 1));
	}
	if (no == 0)
		atable_note(t, "no GPU kernels: kernel breakdown unavailable");
	if (metrics) {
		struct atable *mt = atable_new("kernel_metrics", "Top kernels per type and rank (us)", mcols);
		/* sum/max/min are int64 in HTA's frame when every rank's times are */
		bool ints = true;
		for (size_t k = 0; k < set->nranks; k++)
			ints &= set->ranks[k]->int_times || !analyze_rank_selected(sel, set->ranks[k]->rank);
		for (size_t c = 1; ints && c <= 3; c++)
			atable_int_text(mt, c);
		if (nrows)
			qsort(rows, nrows, sizeof *rows, mrow_cmp);
		for (size_t i = 0; i < nrows; i++) {
			size_t row = atable_add_row(mt);
			atable_set_s(mt, row, 0, rows[i].name);
			atable_set_f(mt, row, 1, rows[i].sum);
			atable_set_f(mt, row, 2, rows[i].max);
			atable_set_f(mt, row, 3, rows[i].min);
			atable_set_f(mt, row, 4, rows[i].std);
			atable_set_f(mt, row, 5, rows[i].mean);
			atable_set_s(mt, row, 6, trace_ktype_name((enum trace_ktype)rows[i].type));
			atable_set_i(mt, row, 7, rows[i].rank);
		}
		*metrics = mt;
	}
	free(rows);
	return t;
}

struct atable *analyze_overlap(const struct trace_set *set, const struct analyze_ranks *sel)
{
	static const char *const cols[] = {"rank:i", "comp_comm_overlap_pctg:f", NULL};
	struct atable *t = atable_new("comm_comp_overlap",
				      "Communication time overlapped by computation (%)", cols);
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		if (!analyze_rank_selected(sel, r->rank))
			continue;
		struct ival *a, *c;
		size_t na = merged_of_type(r, TRACE_KT_COMMUNICATION, &a);
		size_t nc = merged_of_type(r, TRACE_KT_COMPUTATION, &c);
		struct pt *p = xmalloc((2 * (na + nc) + 1) * sizeof *p);
		size_t np = 0;
		for (size_t i = 0; i < na; i++) {
			p[np++] = (struct pt){a[i].ts, 1};
			p[np++] = (struct pt){a[i].end, -1};
		}
		for (size_t i = 0; i < nc; i++) {
			p[np++] = (struct pt){c[i].ts, 2};
			p[np++] = (struct pt){c[i].end, -2};
		}
		qsort(p, np, sizeof *p, pt_cmp);
		double ov = 0;
		int run = 0;
		for (size_t i = 0; i + 1 < np; i++) {
			run += p[i].delta;
			if (run == 3)
				ov += p[i + 1].t - p[i].t;
		}
		double comm = ival_total(a, na);
		size_t row = atable_add_row(t);
		atable_set_i(t, row, 0, r->rank);
		atable_set_f(t, row, 1, na ? atable_round(100 * ov / comm, 2) : NAN);
		if (!na)
			atable_note(t, "rank %d: no communication kernels: overlap unavailable", r->rank);
		free(p);
		free(a);
		free(c);
	}
	return t;
}

struct atable *analyze_kernel_distribution(const struct atable *m)
{
	static const char *const cols[] = {"kernel_type:s", "name:s", "rank:i", "mean (us):f", "min (us):f",
					   "max (us):f", NULL};
	struct atable *t = atable_new("kernel_duration_distribution",
				      "Kernel duration across ranks: mean with min/max (us)", cols);
	for (size_t r = 0; r < m->nrows; r++) {
		const union acell *c = &m->cells[r * m->ncols];
		if (strcmp(c[0].s, "others") == 0)
			continue;
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, c[6].s);
		atable_set_s(t, row, 1, c[0].s);
		atable_set_i(t, row, 2, c[7].i);
		atable_set_f(t, row, 3, c[5].f);
		atable_set_f(t, row, 4, c[3].f);
		atable_set_f(t, row, 5, c[2].f);
	}
	atable_note(t, "from kernel_metrics (HTA's kernel duration distribution plots these; kernels folded "
		       "into 'others' are not shown)");
	return t;
}
