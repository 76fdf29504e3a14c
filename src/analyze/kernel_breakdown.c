/*
 * kernel_breakdown.c - HTA's GPU kernel breakdown (analysis-semantics section 4):
 * the time of each kernel type and of their overlaps, and per-kernel
 * statistics with HTA's folding of the small kernels into "others".
 *
 * A "GPU row" here is any row with a stream (1.5), whatever its category.
 * Per rank, each analysed type's intervals are merged and swept together
 * (intervals.c); the running value of the sweep is a sum of type bits and,
 * like HTA, the label of a segment is the set of bits of that sum, and
 * only segments with a positive sum count.  The sum can go negative (or
 * carry a wrong bit) for a moment when ns rounding left a merged interval
 * with end < ts; HTA keeps such segments when the sum is positive and drops
 * them otherwise, and so do we.  Segment lengths are truncated to integers
 * (HTA's astype(int)), a no-op on HTA's integer microseconds.
 *
 * Per-kernel statistics group the rows by interned name id, which is the
 * same as grouping by name since a rank interns each name once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/kernel_breakdown.h"
#include "analyze/table.h"
#include "core/buf.h"

static const char *const labels[KB_MASK_MAX] = {
	"",
	"COMPUTATION",
	"COMMUNICATION",
	"COMPUTATION overlapping COMMUNICATION",
	"MEMORY",
	"COMPUTATION overlapping MEMORY",
	"COMMUNICATION overlapping MEMORY",
	"COMPUTATION overlapping COMMUNICATION overlapping MEMORY",
};

const char *kernel_type_label(unsigned mask)
{
	return mask < KB_MASK_MAX ? labels[mask] : "";
}

/* numpy 1.24's quantile with linear interpolation of sorted values v[0..n),
 * written the way numpy computes it so that a value equal to the quantile
 * compares equal here too. */
static double np_quantile(const double *v, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double dn = (double)n;
	double virt = dn * q + (1.0 + q * (1.0 - 1.0 - 1.0)) - 1.0;
	double prev = floor(virt);
	if (prev < 0)
		prev = 0;
	if (prev > dn - 1)
		prev = dn - 1;
	size_t lo = (size_t)prev, hi = lo + 1 < n ? lo + 1 : n - 1;
	double t = virt - prev;
	double a = v[lo], b = v[hi], d = b - a;
	double r = a + d * t;
	if (t >= 0.5)
		r = b - d * (1.0 - t);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Per-name accumulators of one rank.  The variance is Welford's online
 * update in row order, which is what pandas' groupby std computes, so our
 * digits are pandas' digits (and equal durations give exactly 0). */
struct kacc {
	uint64_t count;
	double sum, max, min, mean, m2;
};

static void welford(uint64_t *n, double *mean, double *m2, double v)
{
	(*n)++;
	double old = *mean;
	*mean += (v - old) / (double)*n;
	*m2 += (v - *mean) * (v - old);
}

struct kname {
	uint32_t id;
	const char *name;
	double sum, max, min, mean, stddev;
	uint64_t count;
};

/* the statistics of name id from its accumulator (count > 0); the
 * standard deviation is pandas' (ddof 1; 0 for one sample) */
static struct kname kname_of(const struct trace_rank *r, uint32_t id, const struct kacc *a)
{
	return (struct kname){
		.id = id,
		.name = trace_strtab_get(&r->strs, id),
		.count = a->count,
		.sum = a->sum,
		.max = a->max,
		.min = a->min,
		.mean = a->sum / (double)a->count,
		.stddev = a->count > 1 ? sqrt(a->m2 / (double)(a->count - 1)) : 0,
	};
}

static int cmp_kname_sum(const void *a, const void *b)
{
	const struct kname *x = a, *y = b;
	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	/* HTA's sort is unstable here: ties are in no defined order; ours is
	 * by name (set by type_metrics before sorting) */
	return strcmp(x->name, y->name);
}

struct rows {
	struct kernel_metric_row *v;
	size_t n, cap;
};

static struct kernel_metric_row *rows_add(struct rows *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	struct kernel_metric_row *m = &r->v[r->n++];
	memset(m, 0, sizeof *m);
	return m;
}

/* sample standard deviation (ddof 1) of v[0..n), pandas' way; 0 where
 * pandas gives NaN (one value), as HTA fills it */
static double stddev1(const double *v, size_t n)
{
	if (n < 2)
		return 0;
	uint64_t k = 0;
	double mean = 0, m2 = 0;
	for (size_t i = 0; i < n; i++)
		welford(&k, &mean, &m2, v[i]);
	return sqrt(m2 / (double)(n - 1));
}

/* The metric rows of one type of one rank (names[0..n) of that type). */
static void type_metrics(const struct trace_rank *r, enum trace_ktype type, struct kname *names, size_t n,
			 const struct kernel_breakdown_opts *o, struct rows *out)
{
	if (n == 0)
		return;
	qsort(names, n, sizeof *names, cmp_kname_sum);
	if ((uint64_t)n <= o->num_kernels) {
		for (size_t i = 0; i < n; i++) {
			struct kernel_metric_row *m = rows_add(out);
			m->name = trace_strtab_get(&r->strs, names[i].id);
			m->sum = names[i].sum;
			m->max = names[i].max;
			m->min = names[i].min;
			m->mean = names[i].mean;
			m->stddev = names[i].stddev;
			m->count = names[i].count;
			m->type = type;
			m->rank = r->rank;
		}
		return;
	}
	/* more than num_kernels names: fold by the quantile of the cumulative
	 * sums (not duration_ratio * total), and every name past num_kernels */
	double *cum = xmalloc(n * sizeof *cum), *sorted = xmalloc(n * sizeof *sorted);
	double acc = 0;
	for (size_t i = 0; i < n; i++) {
		acc += names[i].sum;
		cum[i] = sorted[i] = acc;
	}
	qsort(sorted, n, sizeof *sorted, cmp_double);
	double q = np_quantile(sorted, n, o->duration_ratio);
	double *folded = xmalloc(n * sizeof *folded);
	size_t nf = 0;
	for (size_t i = 0; i < n; i++) {
		if (cum[i] > q || (uint64_t)i >= o->num_kernels) {
			folded[nf++] = names[i].sum;
			continue;
		}
		/* HTA re-aggregates over the per-name totals: one value each */
		struct kernel_metric_row *m = rows_add(out);
		m->name = trace_strtab_get(&r->strs, names[i].id);
		m->sum = m->max = m->min = m->mean = names[i].sum;
		m->stddev = 0;
		m->count = names[i].count;
		m->type = type;
		m->rank = r->rank;
	}
	if (nf > 0) {
		struct kernel_metric_row *m = rows_add(out);
		m->name = "others";
		m->others = true;
		m->sum = 0;
		m->max = -INFINITY;
		m->min = INFINITY;
		for (size_t i = 0; i < nf; i++) {
			m->sum += folded[i];
			m->max = fmax(m->max, folded[i]);
			m->min = fmin(m->min, folded[i]);
		}
		m->mean = m->sum / (double)nf;
		m->stddev = stddev1(folded, nf);
		m->count = nf;
		m->type = type;
		m->rank = r->rank;
	}
	free(folded);
	free(sorted);
	free(cum);
}

static void rank_breakdown(const struct trace_rank *r, const struct kernel_breakdown_opts *o, double *typesum,
			   struct rows *out)
{
	size_t nstr = r->strs.n;
	/* the loader's classification: HTA's, or the fixed rules when loaded
	 * with trace_load_opts.fixed_classification */
	const uint8_t *kt = r->str_ktype;
	int ntypes = o->include_memory ? 3 : 2; /* COMPUTATION, COMMUNICATION[, MEMORY] */
	struct ival_list iv[3];
	memset(iv, 0, sizeof iv);
	struct kacc *acc = xcalloc(nstr ? nstr : 1, sizeof *acc);

	for (size_t i = 0; i < r->n; i++) {
		if (r->stream[i] == -1)
			continue;
		int t = kt[r->name[i]];
		if (t >= ntypes)
			continue;
		double d = r->dur[i];
		ival_push(&iv[t], r->ts[i], r->ts[i] + d);
		struct kacc *a = &acc[r->name[i]];
		if (a->count == 0 || d > a->max)
			a->max = d;
		if (a->count == 0 || d < a->min)
			a->min = d;
		a->sum += d;
		welford(&a->count, &a->mean, &a->m2, d);
	}

	/* kernel type time: sweep the merged intervals of all types */
	int weight[3] = {1, 2, 4};
	for (int t = 0; t < ntypes; t++)
		ival_list_merge(&iv[t]);
	struct ival_point *p;
	size_t np = ival_sweep_points(iv, weight, (size_t)ntypes, &p);
	long running = 0;
	unsigned all = (1u << ntypes) - 1;
	for (size_t i = 0; i + 1 < np; i++) {
		running += p[i].delta;
		unsigned mask = running > 0 ? (unsigned)running & all : 0;
		if (mask != 0)
			typesum[mask] += trunc(p[i + 1].t - p[i].t);
	}
	free(p);
	for (int t = 0; t < ntypes; t++)
		ival_list_free(&iv[t]);

	/* per-kernel statistics, type by type */
	struct kname *names = xmalloc((nstr ? nstr : 1) * sizeof *names);
	for (int t = 0; t < ntypes; t++) {
		size_t n = 0;
		for (uint32_t id = 0; id < nstr; id++) {
			struct kacc *a = &acc[id];
			if (a->count == 0 || kt[id] != t)
				continue;
			names[n++] = kname_of(r, id, a);
		}
		type_metrics(r, (enum trace_ktype)t, names, n, o, out);
	}
	free(names);
	free(acc);
}

/* The same per-name statistics and folding over any rows of a rank (HTA's
 * _aggr_gpu_kernel_time is also what its user annotation breakdown runs):
 * one pass over the rank, then one row per name. */
void kernel_name_metrics(const struct trace_rank *r, bool (*keep)(const struct trace_rank *r, size_t i),
			 const struct kernel_breakdown_opts *o, struct kernel_metric_row **rows, size_t *nrows)
{
	size_t nstr = r->strs.n;
	struct kacc *acc = xcalloc(nstr ? nstr : 1, sizeof *acc);
	for (size_t i = 0; i < r->n; i++) {
		if (!keep(r, i))
			continue;
		double d = r->dur[i];
		struct kacc *a = &acc[r->name[i]];
		if (a->count == 0 || d > a->max)
			a->max = d;
		if (a->count == 0 || d < a->min)
			a->min = d;
		a->sum += d;
		welford(&a->count, &a->mean, &a->m2, d);
	}
	struct kname *names = xmalloc((nstr ? nstr : 1) * sizeof *names);
	size_t n = 0;
	for (uint32_t id = 0; id < nstr; id++) {
		struct kacc *a = &acc[id];
		if (a->count == 0)
			continue;
		names[n++] = kname_of(r, id, a);
	}
	struct rows out = {0};
	type_metrics(r, TRACE_KT_OTHER, names, n, o, &out);
	free(names);
	free(acc);
	*rows = out.v;
	*nrows = out.n;
}

static int cmp_type_row(const void *a, const void *b)
{
	const struct kernel_type_row *x = a, *y = b;
	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return (x->mask > y->mask) - (x->mask < y->mask);
}

static int cmp_metric(const void *a, const void *b)
{
	const struct kernel_metric_row *x = a, *y = b;
	int c = strcmp(trace_ktype_name(x->type), trace_ktype_name(y->type));
	if (c == 0)
		c = strcmp(x->name, y->name);
	if (c == 0)
		c = (x->rank > y->rank) - (x->rank < y->rank);
	return c;
}

void kernel_breakdown_rank(const struct trace_rank *r, const struct kernel_breakdown_opts *opts,
			   struct kernel_rank_part *out)
{
	memset(out, 0, sizeof *out);
	struct rows rows = {0};
	rank_breakdown(r, opts, out->typesum, &rows);
	out->rows = rows.v;
	out->nrows = rows.n;
}

void kernel_breakdown_combine(struct kernel_rank_part *parts, size_t nparts, struct kernel_breakdown *out)
{
	memset(out, 0, sizeof *out);
	/* the sums are of whole microseconds (trunc), exact in a double, so
	 * summing per rank first gives the same value as one running sum */
	double typesum[KB_MASK_MAX] = {0};
	size_t nrows = 0;
	for (size_t k = 0; k < nparts; k++) {
		for (unsigned m = 0; m < KB_MASK_MAX; m++)
			typesum[m] += parts[k].typesum[m];
		nrows += parts[k].nrows;
	}
	struct kernel_metric_row *rows = xmalloc((nrows ? nrows : 1) * sizeof *rows);
	size_t o = 0;
	for (size_t k = 0; k < nparts; k++) {
		if (parts[k].nrows)
			memcpy(rows + o, parts[k].rows, parts[k].nrows * sizeof *rows);
		o += parts[k].nrows;
		free(parts[k].rows);
		parts[k].rows = NULL;
		parts[k].nrows = 0;
	}

	double total = 0;
	for (unsigned m = 1; m < KB_MASK_MAX; m++)
		total += typesum[m];
	out->types = xcalloc(KB_MASK_MAX, sizeof *out->types);
	for (unsigned m = 1; m < KB_MASK_MAX; m++) {
		/* a label seen only in zero-length segments (ties) is left out;
		 * HTA shows it or not depending on its unstable sort */
		if (typesum[m] <= 0)
			continue;
		struct kernel_type_row *t = &out->types[out->ntypes++];
		t->mask = m;
		t->sum = typesum[m];
		/* in HTA's order of operations, (sum / total) * 100: the last bit
		 * decides ties of the half-to-even rounding */
		t->percentage = atable_round(typesum[m] / total * 100.0, 1);
	}
	qsort(out->types, out->ntypes, sizeof *out->types, cmp_type_row);

	if (nrows > 1)
		qsort(rows, nrows, sizeof *rows, cmp_metric);
	out->metrics = rows;
	out->nmetrics = nrows;
}

void kernel_breakdown_run(const struct trace_set *set, const struct kernel_breakdown_opts *opts,
			  struct kernel_breakdown *out)
{
	struct kernel_rank_part *parts = xcalloc(set->nranks ? set->nranks : 1, sizeof *parts);
	for (size_t k = 0; k < set->nranks; k++)
		kernel_breakdown_rank(set->ranks[k], opts, &parts[k]);
	kernel_breakdown_combine(parts, set->nranks, out);
	free(parts);
}

void kernel_breakdown_free(struct kernel_breakdown *kb)
{
	free(kb->types);
	free(kb->metrics);
	memset(kb, 0, sizeof *kb);
}

/* ---- the shared step of `kernels` and `kernel-distribution` ---- */

struct kernel_breakdown_opts kernel_step_breakdown_opts(const struct kernel_step_options *o)
{
	struct kernel_breakdown_opts k = {.duration_ratio = o->duration_ratio,
					  .num_kernels = (uint64_t)o->num_kernels,
					  .include_memory = !o->no_memory_kernels};
	if (o->all_kernels) {
		k.num_kernels = 1000000000000ULL;
		k.duration_ratio = 1.0;
	}
	return k;
}

static const struct kernel_step_options step_defaults = {.num_kernels = 10, .duration_ratio = 0.8};
static const struct analysis_opt step_opts[] = {
	{{"num-kernels", 0, ARG_INT, NULL, "N",
	  "kernels, kernel-distribution: keep at most N kernels per type and rank, fold the rest into 'others'", 1,
	  INT64_MAX, NULL},
	 offsetof(struct kernel_step_options, num_kernels)},
	{{"duration-ratio", 0, ARG_DOUBLE, NULL, "R",
	  "kernels, kernel-distribution: fold kernels past this quantile of the cumulative time", 0, 0, NULL},
	 offsetof(struct kernel_step_options, duration_ratio)},
	{{"all-kernels", 0, ARG_BOOL, NULL, NULL,
	  "kernels, kernel-distribution: no folding into 'others', true per-call statistics "
	  "(= --num-kernels 1000000000000 --duration-ratio 1)",
	  0, 0, NULL},
	 offsetof(struct kernel_step_options, all_kernels)},
	{{"no-memory-kernels", 0, ARG_BOOL, NULL, NULL,
	  "kernels, kernel-distribution: leave out memcpy/memset (HTA includes them)", 0, 0, NULL},
	 offsetof(struct kernel_step_options, no_memory_kernels)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static int step_check(const void *opts, struct buf *err)
{
	const struct kernel_step_options *o = opts;
	if (o->duration_ratio >= 0 && o->duration_ratio <= 1)
		return 0;
	buf_printf(err, "--duration-ratio %g: must be between 0 and 1", o->duration_ratio);
	return -1;
}

static void step_rank(const void *opts, const struct trace_rank *r, void *part)
{
	struct kernel_breakdown_opts ko = kernel_step_breakdown_opts(opts);
	kernel_breakdown_rank(r, &ko, part);
}

static void *step_combine(const void *opts, void *parts, size_t n)
{
	(void)opts;
	struct kernel_breakdown *kb = xmalloc(sizeof *kb);
	kernel_breakdown_combine(parts, n, kb);
	return kb;
}

static void step_free(void *combined)
{
	kernel_breakdown_free(combined);
	free(combined);
}

const struct analysis_step analysis_step_kernel_breakdown = {
	.name = "kernel breakdown",
	.opts = {sizeof(struct kernel_step_options), &step_defaults, step_opts, step_check},
	.cost = 5,
	.part_size = sizeof(struct kernel_rank_part),
	.rank = step_rank,
	.combine = step_combine,
	.free = step_free,
};
