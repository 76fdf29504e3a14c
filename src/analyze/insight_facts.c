/*
 * insight_facts.c - what the insight rules measure on one rank that no
 * analysis of the table gives, as four tables (insights.h) the rules and
 * `dyno report` read: per ProfilerStep the GPU idle time before its first
 * GPU activity, data-loader and synchronisation time on the CPU, kernel
 * counts; per stream kernel counts and times; host<->device copy bandwidth
 * per direction; and every collective kernel (name, occurrence, start) for
 * the cross-rank straggler rule; per computation kernel name the
 * time-weighted occupancy Kineto estimated (the loader's optional column).
 * A trace without ProfilerStep has the steps of insight_steps.c (numbered
 * 0, 1, ...), or is one iteration (-1) spanning the trace.
 * Cost: five linear passes over the rank's rows, a merge of its GPU
 * intervals, a sort of its collectives, four arrays by string id.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/insights.h"
#include "analyze/intervals.h"

struct atable *insight_iterations_new(void)
{
	static const char *const cols[] = {"rank:i", "iteration:i", "start(us):f", "dur(us):f", "gpu_busy(us):f",
					   "gpu_idle_at_start(us):f", "dataloader(us):f", "sync(us):f",
					   "sync_calls:i", "item_calls:i", "kernels:i", "short_kernels:i",
					   "top_sync:s", NULL};
	return atable_new("insight_iterations", "Per iteration: GPU idle at its start, CPU data loading and syncs",
			  cols);
}

struct atable *insight_streams_new(void)
{
	static const char *const cols[] = {"rank:i", "stream:i", "kernels:i", "short_kernels:i", "kernel_time(us):f",
					   "median_kernel(us):f", "comm_time(us):f", NULL};
	return atable_new("insight_streams", "Kernels per stream", cols);
}

struct atable *insight_memcpy_new(void)
{
	static const char *const cols[] = {"rank:i", "direction:s", "copies:i", "big_copies:i", "big_bytes:i",
					   "big_time(us):f", "big_gbps:f", "big_pageable:i", NULL};
	return atable_new("insight_memcpy", "Host<->device copies (big: >= 1 MiB)", cols);
}

struct atable *insight_occupancy_new(void)
{
	static const char *const cols[] = {"rank:i", "name:s", "kernels:i", "time(us):f", "occupancy(%):f",
					   "occupancy_time(us):f", NULL};
	return atable_new("insight_kernel_occupancy",
			  "Computation kernels: time-weighted estimated achieved occupancy (Kineto's arg)", cols);
}

struct atable *insight_collectives_new(void)
{
	static const char *const cols[] = {"rank:i", "name:s", "nth:i", "iteration:i", "ts(us):f", "dur(us):f",
					   NULL};
	return atable_new("insight_collectives", "Collective kernels in start order", cols);
}

/* A blocking CUDA runtime call: the CPU waits for the GPU. */
bool insight_is_sync_call(const char *n)
{
	return strcmp(n, "cudaDeviceSynchronize") == 0 || strcmp(n, "cudaStreamSynchronize") == 0 ||
	       strcmp(n, "cudaEventSynchronize") == 0 || strcmp(n, "cudaMemcpy") == 0 ||
	       strcmp(n, "hipDeviceSynchronize") == 0 || strcmp(n, "hipStreamSynchronize") == 0;
}

int insight_iter_index(const struct trace_rank *r, int64_t it)
{
	size_t lo = 0, hi = r->niterations;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->iterations[mid] < it)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->niterations && r->iterations[lo] == it ? (int)lo : -1;
}

struct iter_acc {
	double s, e;           /* the step's CPU span */
	double first_gpu;      /* first GPU start of its rows */
	double sync, sync_top;
	uint32_t sync_top_name;
	int64_t sync_calls, item_calls, kernels, short_kernels;
	struct ival_list loader;
	/* per sync call name, this iteration's time: few names, a short list */
	uint32_t names[8];
	double name_t[8];
};

/* the GPU idle time between s (a step's start) and first (the first GPU
 * work of the step): the GPU ran out of work while the CPU was still
 * preparing the step.  Work queued by earlier steps that runs in that span
 * is busy time, so a GPU with a backlog is not idle. */
static double idle_before(const struct ival *m, size_t n, double first, double s)
{
	return first > s ? (first - s) - ival_overlap(m, n, s, first) : 0;
}

static void add_sync_time(struct iter_acc *a, uint32_t name, double dur)
{
	for (size_t k = 0; k < 8; k++) {
		if (a->names[k] == name || a->name_t[k] == 0) {
			a->names[k] = name;
			a->name_t[k] += dur;
			if (a->name_t[k] > a->sync_top) {
				a->sync_top = a->name_t[k];
				a->sync_top_name = name;
			}
			return;
		}
	}
}

static void iterations_table(const struct trace_rank *r, const struct insight_steps *st, const struct ival *m,
			     size_t nm, struct atable *t)
{
	/* without ProfilerStep: the steps of insight_steps.c (optimizer
	 * ranges, the kernel period, else the whole trace), rows by time (a
	 * GPU row by its launch's) */
	const struct insight_step *steps = st->v;
	enum insight_step_source src = st->src;
	size_t nsteps = st->n;
	bool derived = !r->niterations && src != INSIGHT_STEPS_WHOLE && nsteps;
	size_t ni = r->niterations ? r->niterations : derived ? nsteps : 1;
	struct iter_acc *acc = xcalloc(ni, sizeof *acc);
	for (size_t k = 0; k < ni; k++) {
		acc[k].s = INFINITY;
		acc[k].e = -INFINITY;
		acc[k].first_gpu = INFINITY;
		acc[k].sync_top_name = TRACE_NO_STR;
	}
	uint32_t lsd = trace_strtab_find(&r->strs, "aten::_local_scalar_dense", 25);
	for (size_t i = 0; i < r->n; i++) {
		int k = 0;
		if (r->niterations) {
			if (r->iteration[i] < 0)
				continue;
			k = insight_iter_index(r, r->iteration[i]);
			if (k < 0)
				continue;
		} else if (derived) {
			double at = trace_is_gpu(r, i) && r->link[i] >= 0 ? r->ts[r->link[i]] : r->ts[i];
			long sk = insight_step_of(steps, nsteps, at);
			if (sk < 0)
				continue;
			k = (int)sk;
		}
		struct iter_acc *a = &acc[k];
		double end = r->ts[i] + r->dur[i];
		const char *name = trace_name(r, i);
		if (derived) {
			a->s = steps[k].s;
			a->e = steps[k].e;
		} else if (!r->niterations || (r->kind[i] == TRACE_CAT_USER_ANNOTATION && insight_profiler_step(name) >= 0)) {
			/* the step's span (or the whole trace's) */
			a->s = fmin(a->s, r->ts[i]);
			a->e = fmax(a->e, end);
		}
		if (trace_is_gpu(r, i)) {
			a->first_gpu = fmin(a->first_gpu, r->ts[i]);
			if (r->kind[i] == TRACE_CAT_KERNEL) {
				a->kernels++;
				a->short_kernels += r->dur[i] < INSIGHT_SHORT_KERNEL_US;
			}
			continue;
		}
		uint8_t kind = r->kind[i];
		if ((kind == TRACE_CAT_CPU_OP || kind == TRACE_CAT_USER_ANNOTATION) && strstr(name, "DataLoader"))
			ival_push(&a->loader, r->ts[i], end);
		else if ((kind == TRACE_CAT_CUDA_RUNTIME || kind == TRACE_CAT_CUDA_DRIVER) && insight_is_sync_call(name)) {
			a->sync += r->dur[i];
			a->sync_calls++;
			add_sync_time(a, r->name[i], r->dur[i]);
		} else if (kind == TRACE_CAT_CPU_OP && r->name[i] == lsd)
			a->item_calls++;
	}
	for (size_t k = 0; k < ni; k++) {
		struct iter_acc *a = &acc[k];
		ival_list_merge(&a->loader);
		if (a->e < a->s) {
			ival_list_free(&a->loader);
			continue; /* a step number with no step row left (selection) */
		}
		size_t row = atable_add_row(t);
		atable_set_i(t, row, IT_RANK, r->rank);
		atable_set_i(t, row, IT_ITER, r->niterations ? r->iterations[k] : derived ? steps[k].id : -1);
		atable_set_f(t, row, IT_START, a->s);
		atable_set_f(t, row, IT_DUR, a->e - a->s);
		atable_set_f(t, row, IT_GPU_BUSY, ival_overlap(m, nm, a->s, a->e));
		atable_set_f(t, row, IT_IDLE_START, isfinite(a->first_gpu) ? idle_before(m, nm, a->first_gpu, a->s)
									   : NAN);
		atable_set_f(t, row, IT_LOADER, ival_total(a->loader.v, a->loader.n));
		atable_set_f(t, row, IT_SYNC, a->sync);
		atable_set_i(t, row, IT_SYNC_CALLS, a->sync_calls);
		atable_set_i(t, row, IT_ITEM_CALLS, a->item_calls);
		atable_set_i(t, row, IT_KERNELS, a->kernels);
		atable_set_i(t, row, IT_SHORT_KERNELS, a->short_kernels);
		atable_set_s(t, row, IT_TOP_SYNC,
			     a->sync_top_name == TRACE_NO_STR ? "" : trace_strtab_get(&r->strs, a->sync_top_name));
		ival_list_free(&a->loader);
	}
	free(acc);
}

struct stream_acc {
	int64_t stream, kernels, short_kernels;
	double time, comm;
	double *durs;
	size_t n, cap;
};

static void streams_table(const struct trace_rank *r, struct atable *t)
{
	struct stream_acc *s = NULL;
	size_t ns = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!trace_is_gpu(r, i) || r->kind[i] != TRACE_CAT_KERNEL)
			continue;
		size_t k = 0;
		while (k < ns && s[k].stream != r->stream[i])
			k++;
		if (k == ns) {
			s = xrealloc(s, (ns + 1) * sizeof *s);
			memset(&s[ns], 0, sizeof *s);
			s[ns++].stream = r->stream[i];
		}
		struct stream_acc *a = &s[k];
		a->kernels++;
		a->short_kernels += r->dur[i] < INSIGHT_SHORT_KERNEL_US;
		a->time += r->dur[i];
		if (trace_ktype(r, i) == TRACE_KT_COMMUNICATION)
			a->comm += r->dur[i];
		if (a->n == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 64;
			a->durs = xrealloc(a->durs, a->cap * sizeof *a->durs);
		}
		a->durs[a->n++] = r->dur[i];
	}
	for (size_t k = 0; k < ns; k++) {
		size_t row = atable_add_row(t);
		atable_set_i(t, row, IS_RANK, r->rank);
		atable_set_i(t, row, IS_STREAM, s[k].stream);
		atable_set_i(t, row, IS_KERNELS, s[k].kernels);
		atable_set_i(t, row, IS_SHORT, s[k].short_kernels);
		atable_set_f(t, row, IS_KERNEL_TIME, s[k].time);
		atable_set_f(t, row, IS_MEDIAN_DUR, insight_median(s[k].durs, s[k].n));
		atable_set_f(t, row, IS_COMM_TIME, s[k].comm);
		free(s[k].durs);
	}
	free(s);
}

static void memcpy_table(const struct trace_rank *r, struct atable *t)
{
	static const char *const dirs[] = {"HtoD", "DtoH"};
	struct {
		int64_t copies, big, pageable;
		double bytes, time;
	} d[2] = {{0}};
	for (size_t i = 0; i < r->n; i++) {
		if (r->kind[i] != TRACE_CAT_GPU_MEMCPY || !trace_is_gpu(r, i))
			continue;
		const char *name = trace_name(r, i);
		int k = strstr(name, "HtoD") ? 0 : strstr(name, "DtoH") ? 1 : -1;
		if (k < 0)
			continue;
		d[k].copies++;
		if (r->bytes[i] < INSIGHT_BIG_COPY_BYTES || r->dur[i] <= 0)
			continue;
		d[k].big++;
		d[k].bytes += (double)r->bytes[i];
		d[k].time += r->dur[i];
		d[k].pageable += strstr(name, "Pageable") != NULL;
	}
	for (int k = 0; k < 2; k++) {
		if (!d[k].copies)
			continue;
		size_t row = atable_add_row(t);
		atable_set_i(t, row, IM_RANK, r->rank);
		atable_set_s(t, row, IM_DIR, dirs[k]);
		atable_set_i(t, row, IM_COPIES, d[k].copies);
		atable_set_i(t, row, IM_BIG, d[k].big);
		atable_set_i(t, row, IM_BYTES, (int64_t)d[k].bytes);
		atable_set_f(t, row, IM_TIME, d[k].time);
		/* bytes per µs / 1000 = GB/s */
		atable_set_f(t, row, IM_GBPS, d[k].time > 0 ? d[k].bytes / d[k].time / 1e3 : NAN);
		atable_set_i(t, row, IM_PAGEABLE, d[k].pageable);
	}
}

/* rows by start time, then row order (qsort_r: the rank is the argument) */
static int by_ts(const void *a, const void *b, void *arg)
{
	const struct trace_rank *r = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (r->ts[i] != r->ts[j])
		return r->ts[i] < r->ts[j] ? -1 : 1;
	return (i > j) - (i < j);
}

static void collectives_table(const struct trace_rank *r, struct atable *t)
{
	size_t n = 0, cap = 0, *rows = NULL;
	for (size_t i = 0; i < r->n; i++) {
		if (!trace_is_gpu(r, i) || r->kind[i] != TRACE_CAT_KERNEL || trace_ktype(r, i) != TRACE_KT_COMMUNICATION)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			rows = xrealloc(rows, cap * sizeof *rows);
		}
		rows[n++] = i;
	}
	if (n > 1)
		qsort_r(rows, n, sizeof *rows, by_ts, (void *)r);
	uint32_t *nth = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *nth);
	for (size_t k = 0; k < n; k++) {
		size_t i = rows[k];
		size_t row = atable_add_row(t);
		atable_set_i(t, row, IC_RANK, r->rank);
		atable_set_s(t, row, IC_NAME, trace_name(r, i));
		atable_set_i(t, row, IC_NTH, nth[r->name[i]]++);
		atable_set_i(t, row, IC_ITER, r->iteration[i]);
		atable_set_f(t, row, IC_TS, r->ts[i]);
		atable_set_f(t, row, IC_DUR, r->dur[i]);
	}
	free(nth);
	free(rows);
}

/* Kineto's estimate of a kernel's occupancy (min(active blocks, grid
 * blocks) per SM x block size / the SM's thread slots): a running kernel
 * has some, so 0 (the occupancy calculator failed: typically opt-in
 * dynamic shared memory) or a negative value (no device properties) says
 * "unknown", as does anything past 100. */
static bool occupancy_known(float v) { return v > 0 && v <= 100; }

/* Per computation kernel name: launches, time, and the occupancy weighted
 * by each launch's duration over the launches that have one.  Arrays by
 * string id: one pass over the rows. */
static void occupancy_table(const struct trace_rank *r, struct atable *t)
{
	size_t ns = r->strs.n ? r->strs.n : 1;
	double *time = xcalloc(ns, sizeof *time), *wsum = xcalloc(ns, sizeof *wsum), *wt = xcalloc(ns, sizeof *wt);
	int64_t *count = xcalloc(ns, sizeof *count);
	for (size_t i = 0; i < r->n; i++) {
		if (r->kind[i] != TRACE_CAT_KERNEL || !trace_is_gpu(r, i) || trace_ktype(r, i) != TRACE_KT_COMPUTATION)
			continue;
		uint32_t nm = r->name[i];
		count[nm]++;
		time[nm] += r->dur[i];
		if (r->occupancy_kept && occupancy_known(r->occupancy[i]) && r->dur[i] > 0) {
			wsum[nm] += r->occupancy[i] * r->dur[i];
			wt[nm] += r->dur[i];
		}
	}
	for (uint32_t nm = 0; nm < r->strs.n; nm++) {
		if (!count[nm])
			continue;
		size_t row = atable_add_row(t);
		atable_set_i(t, row, IO_RANK, r->rank);
		atable_set_s(t, row, IO_NAME, trace_strtab_get(&r->strs, nm));
		atable_set_i(t, row, IO_KERNELS, count[nm]);
		atable_set_f(t, row, IO_TIME, time[nm]);
		atable_set_f(t, row, IO_OCC, wt[nm] > 0 ? wsum[nm] / wt[nm] : NAN);
		atable_set_f(t, row, IO_OCC_TIME, wt[nm]);
	}
	free(time);
	free(wsum);
	free(wt);
	free(count);
}

void insight_facts_rank(const struct trace_rank *r, const struct insight_steps *st, struct atable **out)
{
	size_t ng = 0;
	for (size_t i = 0; i < r->n; i++)
		ng += trace_is_gpu(r, i);
	struct ival *m = xmalloc((ng ? ng : 1) * sizeof *m);
	size_t nm = 0;
	for (size_t i = 0; i < r->n; i++)
		if (trace_is_gpu(r, i))
			m[nm++] = (struct ival){r->ts[i], r->ts[i] + r->dur[i]};
	nm = ival_merge(m, nm);
	out[INSIGHT_T_ITERATIONS] = insight_iterations_new();
	iterations_table(r, st, m, nm, out[INSIGHT_T_ITERATIONS]);
	free(m);
	out[INSIGHT_T_STREAMS] = insight_streams_new();
	streams_table(r, out[INSIGHT_T_STREAMS]);
	out[INSIGHT_T_MEMCPY] = insight_memcpy_new();
	memcpy_table(r, out[INSIGHT_T_MEMCPY]);
	out[INSIGHT_T_COLLECTIVES] = insight_collectives_new();
	collectives_table(r, out[INSIGHT_T_COLLECTIVES]);
	out[INSIGHT_T_OCCUPANCY] = insight_occupancy_new();
	occupancy_table(r, out[INSIGHT_T_OCCUPANCY]);
}
