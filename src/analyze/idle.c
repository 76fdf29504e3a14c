/*
 * idle.c - idle time breakdown (HTA get_idle_time_breakdown, semantics doc
 * section 3): on each stream, every gap before a kernel is attributed to
 *   host_wait   the kernel was launched after the previous one ended
 *               (the GPU waited for the CPU),
 *   kernel_wait the gap is shorter than --consecutive-kernel-delay (30 us),
 *               including negative gaps (overlapping kernels),
 *   other       the rest; the first kernel of a stream is "other" with no
 *               gap.
 * Kernels here are kernel/memcpy/memset (and MTIA) rows with a stream; the
 * launch time is the ts of the CPU partner found by correlation.  The
 * optional second table is describe() of the gaps per stream and category.
 * HTA's default is rank 0 only; we analyse every selected rank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/order.h"
#include "analyze/stats.h"
#include "trace/rsort.h"

enum { HOST_WAIT, KERNEL_WAIT, OTHER, NCAT };
static const char *const cat_name[NCAT] = {"host_wait", "kernel_wait", "other"};

struct kev {
	int64_t stream;
	double ts, end, runtime;
	size_t pos; /* row, for a deterministic order among equal ts */
};

/* The row's output tables (the atables below take their names from here).
 * The statistics are on stdout when asked for, in summary, and -- as
 * before the analysis table -- whenever --csv-dir writes them. */
static bool idle_stats_shown(const void *opts, const struct analysis_show *s)
{
	const struct idle_options *o = opts;
	return o->interval_stats || s->summary || s->every_table;
}

static const struct analysis_table idle_tables[] = {
	{.csv = "idle_time_breakdown"},
	{.csv = "idle_interval_stats", .shown = idle_stats_shown},
};

struct group {
	size_t start, n, first_pos;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->first_pos < y->first_pos ? -1 : x->first_pos > y->first_pos;
}

/* Sort the kernels by stream, then ts, then row: stable radix passes from
 * the last key (they are collected in row order, so the row tie-break is
 * free). */
static void kev_sort(struct kev *all, size_t n)
{
	uint64_t *key = xmalloc(n * sizeof *key);
	uint32_t *pos = order_identity(n);
	for (size_t j = 0; j < n; j++)
		key[j] = rsort_key_f64(all[j].ts);
	rsort_kv(key, pos, n);
	for (size_t j = 0; j < n; j++)
		key[j] = rsort_key_i64(all[pos[j]].stream);
	rsort_kv(key, pos, n);
	order_apply(all, n, sizeof *all, pos);
	free(key);
	free(pos);
}

static void one_rank(const struct trace_rank *r, double delay, struct atable *t, struct atable *st)
{
	/* ts of event id 0 (HTA looks index_correlation 0 up as an event id) */
	double ts_ev0 = NAN;
	for (size_t i = 0; i < r->n; i++)
		if (r->idx[i] == 0) {
			ts_ev0 = r->ts[i];
			break;
		}
	/* streams in order of first appearance */
	size_t nk = 0;
	for (size_t i = 0; i < r->n; i++)
		nk += trace_is_idle_kernel(r, i);
	if (nk == 0) {
		atable_note(t, "rank %d: no kernels on any stream: idle time breakdown unavailable", r->rank);
		return;
	}
	struct kev *all = xmalloc(nk * sizeof *all);
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!trace_is_idle_kernel(r, i))
			continue;
		double rt = NAN;
		if (r->link[i] >= 0)
			rt = r->ts[r->link[i]];
		else if (r->correlation[i] >= 0)
			rt = ts_ev0; /* index_correlation 0 */
		all[m++] = (struct kev){r->stream[i], r->ts[i], r->ts[i] + r->dur[i], rt, i};
	}
	kev_sort(all, nk);
	/* streams in order of first appearance in the table, as HTA lists them */
	struct group *gr = xmalloc(nk * sizeof *gr);
	size_t ns = 0;
	for (size_t j = 0; j < nk; j++) {
		if (j == 0 || all[j].stream != all[j - 1].stream)
			gr[ns++] = (struct group){j, 0, all[j].pos};
		struct group *g = &gr[ns - 1];
		g->n++;
		if (all[j].pos < g->first_pos)
			g->first_pos = all[j].pos;
	}
	qsort(gr, ns, sizeof *gr, group_cmp);
	double *gaps[NCAT];
	for (int c = 0; c < NCAT; c++)
		gaps[c] = xmalloc(nk * sizeof *gaps[c]);
	for (size_t si = 0; si < ns; si++) {
		const struct kev *kv = all + gr[si].start;
		m = gr[si].n;
		int64_t stream = kv[0].stream;
		size_t ng[NCAT] = {0};
		size_t nkern[NCAT] = {0};
		double sum[NCAT] = {0};
		for (size_t j = 0; j < m; j++) {
			double gap = NAN;
			int c = OTHER;
			if (j > 0) {
				double prev_end = kv[j - 1].end;
				gap = kv[j].ts - prev_end;
				if (kv[j].runtime > prev_end)
					c = HOST_WAIT;
				else if (gap < delay)
					c = KERNEL_WAIT;
			}
			nkern[c]++;
			if (!isnan(gap)) {
				sum[c] += gap;
				gaps[c][ng[c]++] = gap;
			}
		}
		double total = sum[0] + sum[1] + sum[2];
		for (int c = 0; c < NCAT; c++) {
			if (!nkern[c])
				continue;
			size_t row = atable_add_row(t);
			atable_set_i(t, row, 0, r->rank);
			atable_set_i(t, row, 1, stream);
			atable_set_s(t, row, 2, cat_name[c]);
			atable_set_f(t, row, 3, atable_round(sum[c], 2));
			atable_set_f(t, row, 4, total == 0 ? NAN : atable_round(sum[c] / total, 2));
			if (st) {
				struct describe d;
				describe(gaps[c], ng[c], &d);
				row = atable_add_row(st);
				atable_set_s(st, row, 0, cat_name[c]);
				atable_set_i(st, row, 1, r->rank);
				atable_set_i(st, row, 2, stream);
				double v[8] = {d.count, d.mean, d.std, d.min, d.q25, d.q50, d.q75, d.max};
				for (int q = 0; q < 8; q++)
					atable_set_f(st, row, 3 + (size_t)q, atable_round(v[q], 2));
			}
		}
	}
	for (int c = 0; c < NCAT; c++)
		free(gaps[c]);
	free(all);
	free(gr);
}

struct atable *analyze_idle(const struct trace_set *set, const struct analyze_ranks *sel, double delay,
			    struct atable **stats)
{
	static const char *const cols[] = {"rank:i", "stream:i", "idle_category:s", "idle_time:f",
					   "idle_time_ratio:f", NULL};
	static const char *const scols[] = {"idle_category:s", "rank:i", "stream:i", "count:f", "mean:f",
					    "std:f", "min:f", "25%:f", "50%:f", "75%:f", "max:f", NULL};
	struct atable *t = atable_new(idle_tables[0].csv, "Idle time breakdown (us)", cols);
	struct atable *st = NULL;
	if (stats)
		st = *stats = atable_new(idle_tables[1].csv, "Idle interval statistics (us)", scols);
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			one_rank(set->ranks[k], delay, t, st);
	return t;
}

/* ---- the `idle` row of the analysis table ---- */

static const struct idle_options idle_defaults = {.delay = 30};
static const struct analysis_opt idle_opts[] = {
	{{"consecutive-kernel-delay", 0, ARG_DOUBLE, NULL, "US", "idle: gaps shorter than this are kernel_wait", 0, 0,
	  NULL},
	 offsetof(struct idle_options, delay)},
	{{"interval-stats", 0, ARG_BOOL, NULL, NULL, "idle: also print the idle interval statistics", 0, 0, NULL},
	 offsetof(struct idle_options, interval_stats)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static void idle_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct idle_options *o = c->opts;
	/* the statistics sort every gap: only when wanted */
	out[0] = analyze_idle(view, NULL, o->delay, c->want[1] ? &out[1] : NULL);
}

/* HTA's idle breakdown reads kernels, memcpy and memset on a stream only */
static const char *idle_skip(const void *opts, const struct trace_set *view)
{
	(void)opts;
	for (size_t k = 0; k < view->nranks; k++)
		for (size_t i = 0; i < view->ranks[k]->n; i++)
			if (trace_is_idle_kernel(view->ranks[k], i))
				return NULL;
	return "no kernel, memcpy or memset on any stream";
}

const struct analysis analysis_idle = {
	.name = "idle",
	.help = "GPU idle time per stream: host_wait, kernel_wait, other",
	.opts = {sizeof(struct idle_options), &idle_defaults, idle_opts, NULL},
	.tables = idle_tables,
	.ntables = 2,
	.cost = 3,
	.rank = idle_rank,
	.skip = idle_skip,
};
