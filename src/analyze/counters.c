/*
 * counters.c - `dyno analyze counters`: HTA's augmented counters (semantics
 * doc section 8).  Per rank:
 *   queue length  every kernel launch (the runtime calls HTA lists, with a
 *                 GPU partner) adds 1 to its stream's queue when the call
 *                 starts, the GPU activity takes 1 off when it starts;
 *                 the series, its describe() per stream (per event sample,
 *                 not time-weighted, as HTA), and the time spent at
 *                 --max-queue-length (1024) or more;
 *   memory bw     each memcpy/memset adds its trace-given GB/s to its memory
 *                 type while it runs; the series and describe() of its
 *                 positive values per type.
 * The two series are per-rank tables (long: on stdout with --time-series,
 * always in --csv-dir); --write-trace writes them into a copy of the trace
 * (counters_trace.c).  Cost: a few radix sorts of the launch and memory
 * rows per rank; one array per series, no per-event allocation.
 *
 * Points at one time are ordered as HTA's unstable sort (numpy's argsort,
 * npsort.c) orders them: the running sums then match HTA's exactly.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/counters.h"
#include "analyze/trace_copy.h"
#include "analyze/npsort.h"
#include "analyze/order.h"
#include "analyze/stats.h"
#include "trace/rsort.h"

struct counters_options {
	int64_t max_queue_length; /* --max-queue-length (HTA 1024) */
	bool time_series;         /* --time-series: the series on stdout */
	const char *write_trace;  /* --write-trace OUT */
};

static bool series_shown(const void *opts, const struct analysis_show *s)
{
	const struct counters_options *o = opts;
	return o->time_series || s->every_table;
}

enum { T_QSUM, T_QSERIES, T_BLOCKED, T_BWSUM, T_BWSERIES, NT };
static const struct analysis_table counters_tables[NT] = {
	{.csv = "queue_length_summary"},
	{.csv = "queue_length_time_series_rank", .per_rank = true, .shown = series_shown},
	{.csv = "time_blocked_on_full_queue"},
	{.csv = "memory_bw_summary"},
	{.csv = "memory_bw_time_series_rank", .per_rank = true, .shown = series_shown},
};

/* ---- the queue length series ---- */

/* HTA's runtime launch events (its symbol table's launch mask). */
static const char *const launch_names[] = {
	"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync",
	"cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel",
	"hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
};

/* rows[0..n) (ascending) reordered by (correlation, row) */
static void sort_by_corr(const struct trace_rank *r, uint32_t *rows, size_t n)
{
	uint64_t *key = xmalloc((n ? n : 1) * sizeof *key);
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_i64(r->correlation[rows[i]]);
	rsort_kv(key, rows, n);
	free(key);
}

/* Sort the n points of p (size bytes each) by ts as pandas' sort_values
 * (numpy's unstable argsort: HTA's order of equal times), then stably by
 * group (pandas' groupby keeps the order within a group).  Frees ts and
 * group, the points' keys in their current order. */
static void sort_by_group_ts(void *p, size_t n, size_t size, double *ts, uint64_t *group)
{
	uint64_t *key = xmalloc((n ? n : 1) * sizeof *key);
	uint32_t *pos = order_identity(n);
	np_argsort(ts, pos, n);
	for (size_t i = 0; i < n; i++)
		key[i] = group[pos[i]];
	rsort_kv(key, pos, n);
	free(key);
	order_apply(p, n, size, pos);
	free(pos);
	free(ts);
	free(group);
}

size_t counters_queue_series(const struct trace_rank *r, struct queue_point **out, bool *mismatch)
{
	*mismatch = false;
	bool *is_launch = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *is_launch);
	for (size_t i = 0; i < sizeof launch_names / sizeof *launch_names; i++) {
		uint32_t id = trace_strtab_find(&r->strs, launch_names[i], strlen(launch_names[i]));
		if (id != TRACE_NO_STR)
			is_launch[id] = true;
	}
	/* launches (index_correlation > 0) and GPU rows, by correlation */
	size_t nl = 0, ng = 0;
	for (size_t i = 0; i < r->n; i++) {
		nl += is_launch[r->name[i]] && trace_index_correlation(r, i) > 0;
		ng += trace_is_gpu(r, i);
	}
	uint32_t *lrows = xmalloc((nl ? nl : 1) * sizeof *lrows), *grows = xmalloc((ng ? ng : 1) * sizeof *grows);
	nl = ng = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (is_launch[r->name[i]] && trace_index_correlation(r, i) > 0)
			lrows[nl++] = (uint32_t)i;
		if (trace_is_gpu(r, i))
			grows[ng++] = (uint32_t)i;
	}
	free(is_launch);
	uint32_t *lsorted = xmalloc((nl ? nl : 1) * sizeof *lsorted);
	memcpy(lsorted, lrows, nl * sizeof *lrows);
	sort_by_corr(r, lsorted, nl);
	sort_by_corr(r, grows, ng);
	/* HTA: each launch joined (left) with the GPU rows of its correlation,
	 * in launch row order; a launch without one has no stream and drops
	 * out.  GPU rows whose correlation some launch has, in row order. */
	size_t np = 0, nj = 0, nk = 0;
	/* pass 1: counts (a correlation shared by many rows on both sides is a
	 * product; capped at 16 GPU rows per launch like launch.c) */
	for (size_t a = 0, b = 0; a < nl && b < ng;) {
		int64_t ca = r->correlation[lsorted[a]], cb = r->correlation[grows[b]];
		if (ca != cb) {
			ca < cb ? a++ : b++;
			continue;
		}
		size_t a2 = a, b2 = b;
		while (a2 < nl && r->correlation[lsorted[a2]] == ca)
			a2++;
		while (b2 < ng && r->correlation[grows[b2]] == ca)
			b2++;
		nj += (a2 - a) * (b2 - b > 16 ? 16 : b2 - b);
		nk += b2 - b;
		a = a2;
		b = b2;
	}
	*mismatch = nj != nk;
	np = nj + nk;
	struct queue_point *p = xmalloc((np ? np : 1) * sizeof *p);
	/* the first GPU row of each launch's correlation: a binary search over
	 * grows, which is sorted by correlation */
	size_t k = 0;
	for (size_t i = 0; i < nl; i++) {
		size_t row = lrows[i];
		int64_t c = r->correlation[row];
		size_t lo = 0, hi = ng;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (r->correlation[grows[mid]] < c)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t j = lo, m = 0; j < ng && m < 16 && r->correlation[grows[j]] == c; j++, m++) {
			size_t g = grows[j];
			p[k++] = (struct queue_point){r->ts[row], r->pid[g], r->tid[g], r->stream[g], r->idx[row], 1};
		}
	}
	/* GPU rows of a launched correlation, in row order */
	bool *launched = NULL;
	if (nk) {
		/* mark the GPU rows found above (grows sorted by correlation) */
		launched = xcalloc(r->n, sizeof *launched);
		for (size_t a = 0, b = 0; a < nl && b < ng;) {
			int64_t ca = r->correlation[lsorted[a]], cb = r->correlation[grows[b]];
			if (ca < cb)
				a++;
			else if (ca > cb)
				b++;
			else
				launched[grows[b++]] = true;
		}
		for (size_t i = 0; i < r->n; i++)
			if (launched[i])
				p[k++] = (struct queue_point){r->ts[i], r->pid[i], r->tid[i], r->stream[i], r->idx[i], -1};
		free(launched);
	}
	free(lrows);
	free(grows);
	free(lsorted);
	/* by stream, then ts; then the running sum per stream */
	double *ts = xmalloc((np ? np : 1) * sizeof *ts);
	uint64_t *grp = xmalloc((np ? np : 1) * sizeof *grp);
	for (size_t i = 0; i < np; i++) {
		ts[i] = p[i].ts;
		grp[i] = rsort_key_i64(p[i].stream);
	}
	sort_by_group_ts(p, np, sizeof *p, ts, grp);
	int32_t q = 0;
	for (size_t i = 0; i < np; i++) {
		if (i == 0 || p[i].stream != p[i - 1].stream)
			q = 0;
		q += p[i].queue_length;
		p[i].queue_length = q;
	}
	*out = p;
	return np;
}

/* ---- the memory bandwidth series ---- */

/* HTA's memory type of a MEMORY kernel's name. */
static void mem_type(const char *name, size_t len, const char **s, size_t *n)
{
	if (strncmp(name, "Memset", 6) == 0) {
		*s = "Memset";
		*n = 6;
	} else if (strncmp(name, "Memcpy", 6) != 0) {
		*s = "Memcpy Unknown";
		*n = 14;
	} else {
		*s = name;
		*n = len < 11 ? len : 11;
	}
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t counters_bw_series(const struct trace_rank *r, struct bw_point **out, char ***types, size_t *ntypes)
{
	/* the type of each name id that a MEMORY row uses (interned into a
	 * scratch table: a trace can have many names) */
	struct trace_strtab tt;
	trace_strtab_init(&tt);
	uint32_t *type_of = xmalloc((r->strs.n ? r->strs.n : 1) * sizeof *type_of);
	memset(type_of, 0xff, (r->strs.n ? r->strs.n : 1) * sizeof *type_of);
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!trace_is_gpu(r, i) || trace_ktype(r, i) != TRACE_KT_MEMORY)
			continue;
		m++;
		uint32_t id = r->name[i];
		if (type_of[id] == UINT32_MAX) {
			const char *s;
			size_t n;
			mem_type(r->strs.s[id], r->strs.len[id], &s, &n);
			type_of[id] = trace_strtab_intern(&tt, s, n);
		}
	}
	/* type ids in name order (HTA's groupby) */
	char **names = xmalloc((tt.n ? tt.n : 1) * sizeof *names);
	for (uint32_t t = 0; t < tt.n; t++)
		names[t] = xstrdup(tt.s[t]);
	qsort(names, tt.n, sizeof *names, str_cmp);
	uint32_t *rank_of = xmalloc((tt.n ? tt.n : 1) * sizeof *rank_of);
	for (uint32_t t = 0; t < tt.n; t++)
		rank_of[trace_strtab_find(&tt, names[t], strlen(names[t]))] = t;
	/* starts then ends, in row order; a 0 µs copy lasts 1 µs (HTA) */
	size_t np = 2 * m;
	struct bw_point *p = xmalloc((np ? np : 1) * sizeof *p);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_gpu(r, i) && trace_ktype(r, i) == TRACE_KT_MEMORY) {
			double dur = r->dur[i] == 0 ? 1 : r->dur[i];
			uint32_t t = rank_of[type_of[r->name[i]]];
			p[k] = (struct bw_point){r->ts[i], r->mem_bw_gbps[i], r->pid[i], (uint32_t)k, t};
			p[m + k] = (struct bw_point){r->ts[i] + dur, -r->mem_bw_gbps[i], r->pid[i], (uint32_t)(m + k), t};
			k++;
		}
	free(type_of);
	free(rank_of);
	uint32_t nnames = tt.n;
	trace_strtab_free(&tt);
	double *ts = xmalloc((np ? np : 1) * sizeof *ts);
	uint64_t *grp = xmalloc((np ? np : 1) * sizeof *grp);
	for (size_t i = 0; i < np; i++) {
		ts[i] = p[i].ts;
		grp[i] = p[i].type;
	}
	sort_by_group_ts(p, np, sizeof *p, ts, grp);
	/* running sum per type; floating residues (1e-15, positive or negative)
	 * stay, as in HTA f4d0062c (later HTA versions show negatives as 0) */
	double s = 0;
	for (size_t i = 0; i < np; i++) {
		if (i == 0 || p[i].type != p[i - 1].type)
			s = 0;
		s += p[i].gbps;
		p[i].gbps = s;
	}
	*out = p;
	*types = names;
	*ntypes = nnames; /* 0 when k is */
	return np;
}

/* ---- the tables ---- */

static const char *const qsum_cols[] = {"rank:i", "stream:i", "count:f", "mean:f", "std:f", "min:f",
					"25%:f",  "50%:f",    "75%:f",   "max:f",  NULL};
static const char *const bwsum_cols[] = {"rank:i", "name:s", "count:f", "mean:f", "std:f", "min:f",
					 "25%:f",  "50%:f",  "75%:f",   "max:f",  NULL};

/* pandas' describe() of the values in series order (its sums run in that
 * order); scratch: n doubles */
static void put_describe(struct atable *t, size_t row, size_t col, const double *v, size_t n, double *scratch)
{
	struct describe d;
	describe_in_order(v, n, scratch, &d);
	double x[] = {d.count, d.mean, d.std, d.min, d.q25, d.q50, d.q75, d.max};
	for (size_t i = 0; i < 8; i++)
		atable_set_f(t, row, col + i, x[i]);
}

/* The rank's trace duration (HTA get_trace_duration: last ts - first ts of
 * its rows, the rows --skip-cpu-ops dropped included at the start). */
static double trace_duration(const struct trace_rank *r)
{
	double lo = r->skipped_min_ts, hi = -INFINITY;
	for (size_t i = 0; i < r->n; i++) {
		if (r->ts[i] < lo)
			lo = r->ts[i];
		if (r->ts[i] > hi)
			hi = r->ts[i];
	}
	return r->n ? hi - lo : NAN;
}

/* series: also the queue length time series table (19k rows on a 35 MB
 * trace; summary shows only the summaries) */
static void queue_tables(const struct trace_rank *r, int64_t maxq, bool series, struct atable **out)
{
	struct queue_point *p;
	bool mismatch;
	size_t n = counters_queue_series(r, &p, &mismatch);
	char name[80];
	snprintf(name, sizeof name, "%s%d", counters_tables[T_QSERIES].csv, r->rank);
	static const char *const scols[] = {"event_index:i", "ts:f", "pid:i", "tid:i", "stream:i", "queue_length:i",
					    NULL};
	char title[96];
	snprintf(title, sizeof title, "Queue length time series, rank %d", r->rank);
	struct atable *s = out[T_QSERIES] = series ? atable_new(name, title, scols) : NULL;
	if (s)
		atable_int_text(s, 1);
	struct atable *sum = out[T_QSUM] = atable_new(counters_tables[T_QSUM].csv, "Queue length per stream", qsum_cols);
	static const char *const bcols[] = {"rank:i", "stream:i", "duration_at_max_queue_length:f",
					    "relative_duration_at_max_queue_length:f", NULL};
	struct atable *bl = out[T_BLOCKED] =
		atable_new(counters_tables[T_BLOCKED].csv, "Time blocked on a full launch queue (us)", bcols);
	double *v = xmalloc((2 * n + 1) * sizeof *v); /* values, then scratch */
	/* HTA keeps one blocked row per rank: the last stream with a full queue */
	bool blocked = false;
	int64_t bstream = 0;
	double bdur = 0;
	for (size_t a = 0; a < n;) {
		size_t b = a;
		bool full = false;
		double d = 0;
		while (b < n && p[b].stream == p[a].stream) {
			size_t i = b++;
			v[i - a] = p[i].queue_length;
			if (p[i].queue_length >= maxq) {
				full = true;
				if (b < n && p[b].stream == p[a].stream)
					d += p[b].ts - p[i].ts;
			}
			if (!s)
				continue;
			size_t row = atable_add_row(s);
			atable_set_i(s, row, 0, p[i].idx);
			atable_set_f(s, row, 1, p[i].ts);
			atable_set_i(s, row, 2, p[i].pid);
			atable_set_i(s, row, 3, p[i].tid);
			atable_set_i(s, row, 4, p[i].stream);
			atable_set_i(s, row, 5, p[i].queue_length);
		}
		size_t row = atable_add_row(sum);
		atable_set_i(sum, row, 0, r->rank);
		atable_set_i(sum, row, 1, p[a].stream);
		put_describe(sum, row, 2, v, b - a, v + n);
		if (full) {
			blocked = true;
			bstream = p[a].stream;
			bdur = d;
		}
		a = b;
	}
	if (blocked) {
		size_t row = atable_add_row(bl);
		atable_set_i(bl, row, 0, r->rank);
		atable_set_i(bl, row, 1, bstream);
		atable_set_f(bl, row, 2, bdur);
		atable_set_f(bl, row, 3, bdur / trace_duration(r));
		atable_note(bl, "rank %d: HTA keeps only the last stream with a full queue per rank", r->rank);
	}
	if (!n) {
		atable_note(sum, "rank %d: no kernel launch with its GPU activity in the trace: queue length unavailable",
			    r->rank);
		if (s)
			atable_note(s, "rank %d: no kernel launch with its GPU activity: no queue length series",
				    r->rank);
	} else if (mismatch) {
		atable_note(sum, "rank %d: launches and GPU activities do not pair one to one (HTA stops on this)",
			    r->rank);
	}
	free(v);
	free(p);
}

static void bw_tables(const struct trace_rank *r, bool series, struct atable **out)
{
	struct bw_point *p;
	char **types;
	size_t nt;
	size_t n = counters_bw_series(r, &p, &types, &nt);
	char name[80], title[96];
	snprintf(name, sizeof name, "%s%d", counters_tables[T_BWSERIES].csv, r->rank);
	snprintf(title, sizeof title, "Memory bandwidth time series, rank %d (GB/s)", r->rank);
	static const char *const scols[] = {"event_index:i", "ts:f", "pid:i", "name:s", "memory_bw_gbps:f", NULL};
	struct atable *s = out[T_BWSERIES] = series ? atable_new(name, title, scols) : NULL;
	struct atable *sum = out[T_BWSUM] =
		atable_new(counters_tables[T_BWSUM].csv, "Memory bandwidth per memory type (GB/s)", bwsum_cols);
	double *v = xmalloc((2 * n + 1) * sizeof *v); /* values, then scratch */
	for (size_t a = 0; a < n;) {
		size_t b = a, nv = 0;
		while (b < n && p[b].type == p[a].type) {
			size_t i = b++;
			if (s) {
				size_t row = atable_add_row(s);
				atable_set_i(s, row, 0, p[i].n);
				atable_set_f(s, row, 1, p[i].ts);
				atable_set_i(s, row, 2, p[i].pid);
				atable_set_s(s, row, 3, types[p[i].type]);
				atable_set_f(s, row, 4, p[i].gbps);
			}
			if (p[i].gbps > 0)
				v[nv++] = p[i].gbps;
		}
		/* HTA's describe() has a row only for types with a positive value */
		if (nv) {
			size_t row = atable_add_row(sum);
			atable_set_i(sum, row, 0, r->rank);
			atable_set_s(sum, row, 1, types[p[a].type]);
			put_describe(sum, row, 2, v, nv, v + n);
		}
		a = b;
	}
	if (!n) {
		atable_note(sum, "rank %d: no memcpy/memset on a GPU stream: memory bandwidth unavailable", r->rank);
		if (s)
			atable_note(s, "rank %d: no memcpy/memset: no memory bandwidth series", r->rank);
	} else if (!sum->nrows) {
		atable_note(sum, "rank %d: the trace gives no memcpy/memset bandwidth (all 0): memory bandwidth "
				 "unavailable",
			    r->rank);
	}
	for (size_t t = 0; t < nt; t++)
		free(types[t]);
	free(types);
	free(v);
	free(p);
}

void analyze_counters_rank(const struct trace_rank *r, int64_t max_queue_length, bool series, struct atable **out)
{
	queue_tables(r, max_queue_length, series, out);
	bw_tables(r, series, out);
}

/* ---- the `counters` row of the analysis table ---- */

static const struct counters_options counters_defaults = {.max_queue_length = 1024};
static const struct analysis_opt counters_opts[] = {
	{{"max-queue-length", 0, ARG_INT, NULL, "N",
	  "counters: a launch queue this long is full (time blocked on it is reported)", 1, INT32_MAX, NULL},
	 offsetof(struct counters_options, max_queue_length)},
	{{"time-series", 0, ARG_BOOL, NULL, NULL, "counters: also print the queue length and bandwidth time series",
	  0, 0, NULL},
	 offsetof(struct counters_options, time_series)},
	{{"write-trace", 0, ARG_STRING, NULL, "OUT",
	  "counters, critical-path: write the trace plus the counters as counter events (counters) or with "
	  "the critical path marked (critical-path) to OUT (gzip if it ends in .gz; several ranks: OUT with "
	  ".rank<r> before the extension)", 0, 0,
	  NULL},
	 offsetof(struct counters_options, write_trace)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static void counters_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct counters_options *o = c->opts;
	if (view->nranks == 0) {
		static const char *const bcols[] = {"rank:i", "stream:i", "duration_at_max_queue_length:f",
						    "relative_duration_at_max_queue_length:f", NULL};
		out[T_QSUM] = atable_new(counters_tables[T_QSUM].csv, "Queue length per stream", qsum_cols);
		atable_note(out[T_QSUM], "no selected rank in the trace: queue length unavailable");
		out[T_BLOCKED] = atable_new(counters_tables[T_BLOCKED].csv, "Time blocked on a full launch queue (us)",
					    bcols);
		out[T_BWSUM] = atable_new(counters_tables[T_BWSUM].csv, "Memory bandwidth per memory type (GB/s)",
					  bwsum_cols);
		atable_note(out[T_BWSUM], "no selected rank in the trace: memory bandwidth unavailable");
		return;
	}
	/* the series tables only where they are wanted (shown or --csv-dir):
	 * both are wanted or neither (one rule, series_shown) */
	analyze_counters_rank(view->ranks[0], o->max_queue_length, c->want[T_QSERIES] || c->want[T_BWSERIES], out);
}

/* The file of rank r when several ranks are written: ".rank<r>" before the
 * extension (".json.gz", ".json", ".gz"), or at the end. */
static void rank_path(const char *out, int rank, struct buf *p)
{
	static const char *const ext[] = {".json.gz", ".json", ".gz"};
	size_t n = strlen(out), stem = n;
	for (size_t i = 0; i < 3 && stem == n; i++) {
		size_t e = strlen(ext[i]);
		if (n > e && strcmp(out + n - e, ext[i]) == 0)
			stem = n - e;
	}
	buf_printf(p, "%.*s.rank%d%s", (int)stem, out, rank, out + stem);
}

static void counters_combine(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct counters_options *o = c->opts;
	if (!o->write_trace || !*o->write_trace)
		return;
	struct atable *t = out[T_QSUM];
	for (size_t k = 0; k < view->nranks; k++) {
		struct buf path = BUF_INIT, err = BUF_INIT;
		if (view->nranks > 1)
			rank_path(o->write_trace, view->ranks[k]->rank, &path);
		else
			buf_puts(&path, o->write_trace);
		if (counters_write_trace(view->ranks[k], path.data, &err) != 0) {
			fprintf(stderr, "dyno analyze counters: --write-trace: %s\n", err.data);
			if (t) {
				atable_note(t, "--write-trace: %s", err.data);
				t->output_failed = true;
			}
		} else if (t) {
			atable_note(t, "rank %d: trace with counters written to %s", view->ranks[k]->rank, path.data);
		}
		buf_free(&path);
		buf_free(&err);
	}
}

/* --write-trace: refuse at once an OUT that cannot be created (its
 * directory missing or not writable), before any loading */
static int counters_check(const void *opts, struct buf *err)
{
	const struct counters_options *o = opts;
	return o->write_trace ? tcopy_check_out(o->write_trace, err) : 0;
}

const struct analysis analysis_counters = {
	.name = "counters",
	.help = "launch queue length per stream and memcpy/memset bandwidth (HTA augmented counters)",
	.opts = {sizeof(struct counters_options), &counters_defaults, counters_opts, counters_check},
	.tables = counters_tables,
	.ntables = NT,
	.cost = 3,
	.rank = counters_rank,
	.combine = counters_combine,
	/* queue lengths and bandwidths are of GPU streams: without a GPU row
	 * neither is defined (summary lists it as skipped instead of printing
	 * empty tables; asked for by name it exits 4) */
	.skip = analyze_skip_no_gpu,
};
