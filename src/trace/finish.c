/*
 * finish.c - the per-file steps HTA applies after parsing a trace
 * (semantics doc 1.2 steps 3, 12-17), run once per rank by the loader:
 *
 *   1. ns rounding: when any ts had a fraction, ts = ceil(ts),
 *      end = floor(ts + dur), dur = end - ts (can be -1; counted);
 *   2. kind (enum trace_cat) per row, kernel type per interned name;
 *      then, with launch_ops_only, the operators no launch can be
 *      attributed to are dropped (launch_ops.c);
 *   3. CPU<->GPU links: a GPU-side row (stream >= 0 and correlation >= 0,
 *      or an Event/Context Sync) pairs with the CPU-side row of the same
 *      correlation; with duplicates the last row wins, as in HTA (from a
 *      table indexed by id, or a radix sort when the ids are spread out);
 *   4. iteration: CPU rows get the ProfilerStep containing their ts (the
 *      last such step in trace order: a binary search when the steps are
 *      apart, else a heap sweep), GPU rows their launcher's;
 *   5. device type.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/par.h"
#include "trace/load_internal.h"
#include "trace/rowheap.h"
#include "trace/rsort.h"

/* Which side of a correlation row i is on: 0 none, 1 CPU, 2 GPU. */
static inline int corr_side(const struct trace_rank *r, size_t i, uint32_t ev_sync, uint32_t ctx_sync)
{
	if (r->correlation[i] == -1)
		return 0;
	return trace_row_corr_gpu(r, i, ev_sync, ctx_sync) ? 2 : 1;
}

/*
 * trace_rank_link's links from two tables indexed by correlation id minus
 * the smallest (lo; hi the largest), when the ids span at most
 * LINK_SPAN_PER_ROW times the m rows that have one (Kineto numbers them
 * from a counter: trace_diff/control's 34 K span ~92 K): the last CPU and the last GPU row of each id in one
 * pass in row order, the links in a second; no sort (0.27-0.44 ms for the
 * sort alone there, this VM in a slow spell).  Returns false, having
 * written nothing, when the ids are too spread out.
 */
#define LINK_SPAN_PER_ROW 4
static bool link_by_id_table(struct trace_rank *r, size_t m, int64_t lo, int64_t hi, uint32_t ev_sync,
			     uint32_t ctx_sync)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* mod 2^64: hi >= lo */
	if (span == 0 || span > LINK_SPAN_PER_ROW * (uint64_t)m + 1024)
		return false;
	/* last[2 * id + side]: the last row of that side (0 CPU, 1 GPU), -1 none */
	int32_t *last = xmalloc(2 * span * sizeof *last);
	memset(last, 0xff, 2 * span * sizeof *last);
	bool one_cpu = true;
	for (size_t i = 0; i < r->n; i++) {
		if (r->correlation[i] == -1)
			continue;
		size_t id = (size_t)((uint64_t)r->correlation[i] - (uint64_t)lo);
		size_t side = trace_row_corr_gpu(r, i, ev_sync, ctx_sync); /* 0 CPU, 1 GPU */
		one_cpu &= side == 1 || last[2 * id] < 0;
		last[2 * id + side] = (int32_t)i;
	}
	for (size_t i = 0; i < r->n; i++) {
		if (r->correlation[i] == -1)
			continue;
		size_t id = (size_t)((uint64_t)r->correlation[i] - (uint64_t)lo);
		size_t side = trace_row_corr_gpu(r, i, ev_sync, ctx_sync);
		/* the other side's last row; -1 when the id has none */
		r->link[i] = last[2 * id + 1 - side];
	}
	free(last);
	r->link_one_cpu = one_cpu;
	return true;
}

/* Each correlation's rows are a group: its CPU rows link to the group's
 * last GPU row and its GPU rows to the last CPU row (HTA's dictionary
 * lookups, where the last row of a key wins).  From the tables above when
 * the ids are close together; else the rows with a correlation sorted by
 * (correlation, row) with a stable radix sort, each run of one id a group:
 * linear after the sort, whatever the ids look like.  Also says whether
 * every correlation has at most one CPU row (link_one_cpu: then a GPU
 * row's link is the only CPU row of its id, which the last-step filter
 * uses). */
void trace_rank_link(struct trace_rank *r)
{
	uint32_t ev_sync = trace_strtab_find(&r->strs, "Event Sync", 10);
	uint32_t ctx_sync = trace_strtab_find(&r->strs, "Context Sync", 12);
	size_t m = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN; /* the ids' range, for the table */
	for (size_t i = 0; i < r->n; i++) {
		int64_t c = r->correlation[i];
		bool has = c != -1;
		r->link[i] = -1;
		m += has;
		lo = has && c < lo ? c : lo;
		hi = has && c > hi ? c : hi;
	}
	r->link_one_cpu = true;
	if (m == 0 || link_by_id_table(r, m, lo, hi, ev_sync, ctx_sync))
		return;
	uint64_t *key = xmalloc((m + 1) * sizeof *key);
	uint32_t *row = xmalloc((m + 1) * sizeof *row);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) { /* no branch per row: one slot spare */
		key[k] = rsort_key_i64(r->correlation[i]);
		row[k] = (uint32_t)i;
		k += r->correlation[i] != -1;
	}
	rsort_kv(key, row, m);
	for (size_t a = 0; a < m;) {
		size_t b = a + 1;
		while (b < m && key[b] == key[a])
			b++;
		int32_t last[3] = {-1, -1, -1}; /* by side: 1 CPU, 2 GPU */
		size_t ncpu = 0;
		for (size_t j = a; j < b; j++) {
			int side = corr_side(r, row[j], ev_sync, ctx_sync);
			last[side] = (int32_t)row[j];
			ncpu += side == 1;
		}
		if (ncpu > 1)
			r->link_one_cpu = false;
		if (last[1] >= 0 && last[2] >= 0)
			for (size_t j = a; j < b; j++)
				r->link[row[j]] = last[3 - corr_side(r, row[j], ev_sync, ctx_sync)];
		a = b;
	}
	free(key);
	free(row);
}

/* N of a "ProfilerStep#N" name (HTA's ProfilerStep\s*#\s*(\d+)); -1 if none. */
static long step_number(const char *s)
{
	if (strncmp(s, "ProfilerStep", 12) != 0)
		return -1;
	/* HTA extracts with ProfilerStep\s*#\s*(\d+) anywhere in the name */
	for (const char *p = s; (p = strstr(p, "ProfilerStep")) != NULL; p += 12) {
		const char *q = p + 12;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' || *q == '\v')
			q++;
		if (*q != '#')
			continue;
		q++;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' || *q == '\v')
			q++;
		if (*q < '0' || *q > '9')
			continue;
		long v = 0;
		while (*q >= '0' && *q <= '9' && v < 1000000000L)
			v = v * 10 + (*q++ - '0');
		return v;
	}
	return -1;
}

struct step {
	double ts;
	uint32_t row;
};

static int step_cmp(const void *a, const void *b)
{
	const struct step *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int i32_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* CPU rows (and stream-0 cpu_ops): the last step in trace order whose
 * [ts, ts + dur) holds their ts.  Reads ts, dur, stream, kind, names;
 * writes iteration of those rows only (it may run beside
 * trace_rank_link, which writes link only). */
static void assign_cpu_iterations(struct trace_rank *r)
{
	/* step number per name id */
	int32_t *num = xmalloc((r->strs.n ? r->strs.n : 1) * sizeof *num);
	for (uint32_t id = 0; id < r->strs.n; id++)
		num[id] = (int32_t)step_number(r->strs.s[id]);
	size_t ns = 0, cap = 0;
	struct step *st = NULL;
	for (size_t i = 0; i < r->n; i++) {
		if (num[r->name[i]] < 0)
			continue;
		if (ns == cap) {
			cap = cap ? cap * 2 : 64;
			st = xrealloc(st, cap * sizeof *st);
		}
		st[ns++] = (struct step){r->ts[i], (uint32_t)i};
	}
	if (ns)
		qsort(st, ns, sizeof *st, step_cmp);
	/* Steps apart (the usual: each ProfilerStep ends before the next
	 * starts): a row lies in at most one, the last to start at or before
	 * it, found by a binary search over the starts, with no sort of the
	 * rows (~33 K on trace_diff/control; this runs beside the links, and
	 * was the longer of the two).  A step of no length, or one starting
	 * with another, holds nothing and does not matter. */
	bool apart = true;
	for (size_t j = 1; j < ns && apart; j++)
		apart = r->ts[st[j - 1].row] + r->dur[st[j - 1].row] <= st[j].ts;
	if (apart) {
		for (size_t i = 0; i < r->n; i++) {
			if (!(r->stream[i] < 0 || (r->stream[i] == 0 && r->kind[i] == TRACE_CAT_CPU_OP)))
				continue;
			double t = r->ts[i];
			size_t lo = 0, hi = ns;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (st[mid].ts <= t)
					lo = mid + 1;
				else
					hi = mid;
			}
			uint32_t s = lo ? st[lo - 1].row : 0;
			r->iteration[i] = lo && t < r->ts[s] + r->dur[s] ? num[r->name[s]] : TRACE_ITER_NONE;
		}
		free(st);
		free(num);
		return;
	}
	/* Sweep the CPU rows in ts order; a max-heap (by trace order) holds the
	 * steps started so far; a top that has ended is dropped (ts only grows,
	 * so it never contains a later row).  O((rows + steps) log), whatever
	 * the steps look like. */
	size_t nq = 0;
	for (size_t i = 0; i < r->n; i++)
		nq += r->stream[i] < 0 || (r->stream[i] == 0 && r->kind[i] == TRACE_CAT_CPU_OP);
	/* the CPU rows by (ts, row): a stable radix sort of ts over rows in order */
	uint64_t *qk = xmalloc((nq ? nq : 1) * sizeof *qk);
	uint32_t *qrow = xmalloc((nq ? nq : 1) * sizeof *qrow);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->stream[i] < 0 || (r->stream[i] == 0 && r->kind[i] == TRACE_CAT_CPU_OP)) {
			qk[k] = rsort_key_f64(r->ts[i]);
			qrow[k++] = (uint32_t)i;
		}
	rsort_kv(qk, qrow, nq);
	free(qk);
	uint32_t *heap = xmalloc((ns ? ns : 1) * sizeof *heap);
	size_t nh = 0, j = 0;
	for (size_t q = 0; q < nq; q++) {
		double t = r->ts[qrow[q]];
		for (; j < ns && st[j].ts <= t; j++)
			rowheap_push(heap, &nh, st[j].row);
		while (nh && r->ts[heap[0]] + r->dur[heap[0]] <= t)
			rowheap_pop(heap, &nh);
		r->iteration[qrow[q]] = nh ? num[r->name[heap[0]]] : TRACE_ITER_NONE;
	}
	free(heap);
	free(qrow);
	free(st);
	free(num);
}

/* GPU rows: their launcher's iteration (after the links and the CPU
 * rows' iterations). */
static void assign_gpu_iterations(struct trace_rank *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->stream[i] > 0) {
			int32_t l = r->link[i];
			/* HTA: index_correlation <= 0 gives -1 (event id 0 cannot be a partner) */
			r->iteration[i] = l >= 0 && r->idx[l] > 0 ? r->iteration[l] : TRACE_ITER_NONE;
			if (r->iteration[i] == TRACE_ITER_NAN)
				r->iteration[i] = TRACE_ITER_NONE;
		} else if (r->stream[i] == 0 && r->kind[i] != TRACE_CAT_CPU_OP) {
			r->iteration[i] = TRACE_ITER_NAN;
		}
	}
}

void trace_rank_list_iterations(struct trace_rank *r)
{
	int32_t *num = xmalloc((r->strs.n ? r->strs.n : 1) * sizeof *num);
	for (uint32_t id = 0; id < r->strs.n; id++)
		num[id] = (int32_t)step_number(r->strs.s[id]);
	free(r->iterations);
	size_t k = 0, cap = 16;
	r->iterations = xmalloc(cap * sizeof *r->iterations);
	for (size_t i = 0; i < r->n; i++) {
		if (num[r->name[i]] < 0)
			continue;
		if (k == cap) {
			cap *= 2;
			r->iterations = xrealloc(r->iterations, cap * sizeof *r->iterations);
		}
		r->iterations[k++] = num[r->name[i]];
	}
	qsort(r->iterations, k, sizeof *r->iterations, i32_cmp);
	size_t u = 0;
	for (size_t j = 0; j < k; j++)
		if (u == 0 || r->iterations[u - 1] != r->iterations[j])
			r->iterations[u++] = r->iterations[j];
	r->niterations = u;
	free(num);
}

/* HTA's device type from the launch API names present (one pass over the
 * names for all three). */
static const char *device_type_of(const struct trace_rank *r)
{
	static const char *const api[3] = {"cudaLaunchKernel", "hipLaunchKernel",
					   "runFunction - job_prep_and_submit_for_execution"};
	static const char *const type[3] = {"NVIDIA GPU", "AMD GPU", "MTIA"};
	uint32_t id[3];
	bool seen[3] = {false, false, false};
	for (int a = 0; a < 3; a++)
		id[a] = trace_strtab_find(&r->strs, api[a], strlen(api[a]));
	if (id[0] != TRACE_NO_STR || id[1] != TRACE_NO_STR || id[2] != TRACE_NO_STR)
		for (size_t i = 0; i < r->n; i++) {
			uint32_t nm = r->name[i];
			seen[0] |= nm == id[0];
			seen[1] |= nm == id[1];
			seen[2] |= nm == id[2];
		}
	for (int a = 0; a < 3; a++)
		if (seen[a])
			return type[a];
	return "UNKNOWN GPU";
}

static void classify_names(struct trace_rank *r, bool fixed)
{
	free(r->str_ktype);
	r->str_ktype = xmalloc(r->strs.n ? r->strs.n : 1);
	for (uint32_t id = 0; id < r->strs.n; id++)
		r->str_ktype[id] = (uint8_t)(fixed ? trace_classify_fixed(r->strs.s[id], r->strs.len[id])
						   : trace_classify(r->strs.s[id], r->strs.len[id]));
}

/* Kernels starting before the previous one on their stream ended (ROCm
 * traces have them): kept like HTA does, but counted so the user hears.
 * Order: stream, ts, end (stable radix passes from the last key). */
static void count_stream_overlaps(struct trace_rank *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += trace_is_idle_kernel(r, i);
	if (n < 2)
		return;
	uint64_t *key = xmalloc(n * sizeof *key);
	uint32_t *row = xmalloc(n * sizeof *row);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_idle_kernel(r, i)) {
			key[k] = rsort_key_f64(r->ts[i] + r->dur[i]);
			row[k++] = (uint32_t)i;
		}
	rsort_kv(key, row, n);
	for (size_t j = 0; j < n; j++)
		key[j] = rsort_key_f64(r->ts[row[j]]);
	rsort_kv(key, row, n);
	for (size_t j = 0; j < n; j++)
		key[j] = rsort_key_i64(r->stream[row[j]]);
	rsort_kv(key, row, n);
	for (size_t j = 1; j < n; j++) {
		size_t a = row[j - 1], b = row[j];
		if (r->stream[a] == r->stream[b] && r->ts[b] < r->ts[a] + r->dur[a])
			r->stats.stream_overlaps++;
	}
	free(key);
	free(row);
}

/* Three tasks that read the same columns and write different ones (link;
 * the CPU rows' iteration; stats.stream_overlaps), the longest first: on
 * two threads one of them takes two (trace_diff/control, this VM in a slow
 * spell: the links 0.3-0.5 ms, the overlap count's sorts 0.25-0.5, the
 * iterations 0.2-0.35). */
static void finish_part(void *ctx, size_t part)
{
	struct trace_rank *r = ctx;
	if (part == 0)
		trace_rank_link(r);
	else if (part == 1)
		count_stream_overlaps(r);
	else
		assign_cpu_iterations(r);
}

void trace_rank_finish(struct trace_rank *r, const struct trace_load_opts *opts)
{
	int64_t t0 = clock_mono_ns();
	if (r->float_ts && !opts->no_ns_rounding) {
		for (size_t i = 0; i < r->n; i++) {
			double end = r->ts[i] + r->dur[i];
			r->ts[i] = ceil(r->ts[i]);
			r->dur[i] = floor(end) - r->ts[i];
			if (r->dur[i] < 0)
				r->stats.neg_dur_after_rounding++;
		}
		for (size_t i = 0; i < r->nflows; i++)
			r->flows[i].ts = ceil(r->flows[i].ts);
		for (size_t i = 0; i < r->ncounters; i++)
			r->counters[i].ts = ceil(r->counters[i].ts);
		r->skipped_min_ts = ceil(r->skipped_min_ts);
	}
	/* kind from the cat id, computed once per distinct cat */
	uint8_t *kind_of = xmalloc(r->strs.n ? r->strs.n : 1);
	memset(kind_of, 0xff, r->strs.n ? r->strs.n : 1);
	for (size_t i = 0; i < r->n; i++) {
		uint32_t c = r->cat[i];
		if (kind_of[c] == 0xff)
			kind_of[c] = (uint8_t)trace_cat_of(r->strs.s[c], r->strs.len[c]);
		r->kind[i] = kind_of[c];
	}
	free(kind_of);
	classify_names(r, opts->fixed_classification);
	/* before every step that allocates per row */
	trace_rank_keep_launch_ops(r, opts);
	/* The links, the stream overlap count and the CPU rows' iterations
	 * (finish_part).  Two threads only when the loader split this file's
	 * parse, i.e. it saw a free core (load_rank.c allows that when no other
	 * rank is loading). */
	par_for(3, r->stats.parse_threads >= 2 ? 2 : 1, finish_part, r);
	assign_gpu_iterations(r);
	trace_rank_list_iterations(r);
	const char *dt = r->gpu_device_mtia ? "MTIA" : device_type_of(r);
	free(r->device_type);
	r->device_type = xstrdup(dt);
	r->stats.kept = r->n;
	r->finish_s = (double)(clock_mono_ns() - t0) / 1e9;
}
