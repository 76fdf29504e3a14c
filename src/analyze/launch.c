/*
 * launch.c - CUDA kernel launch statistics (HTA get_cuda_kernel_launch_stats,
 * semantics doc section 7): for each launch (cudaLaunchKernel,
 * cudaLaunchKernelExC, MTIA runFunction, and with memory events
 * cudaMemcpyAsync / cudaMemsetAsync), the CPU call's duration, the GPU
 * activity's duration, and the launch delay max(0, gpu.ts - cpu end).
 * Pairs are CPU rows (no stream) and GPU rows (a stream) with a correlation
 * of a launch, joined on correlation, sorted by correlation.  Derived counts
 * (short kernels, runtime and launch-delay outliers) are notes.
 * cuLaunchKernel and the hip APIs are not launches here, as in HTA.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "trace/rsort.h"

/* The row's output table (the atables below take their names from here):
 * one per rank, long (a row per launch), so the terminal shows its counts
 * (notes) only. */
static const struct analysis_table launch_tables[] = {
	{.csv = "cuda_kernel_launch_stats_rank", .per_rank = true, .notes_only_in_terminal = true},
};

/* rows[0..n) (ascending) reordered by (correlation, row): a stable sort of
 * the correlation over rows in order */
static void sort_by_corr(const struct trace_rank *r, uint32_t *rows, size_t n, uint64_t *key)
{
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_i64(r->correlation[rows[i]]);
	rsort_kv(key, rows, n);
}

static struct atable *one_rank(const struct trace_rank *r, const struct launch_opts *o)
{
	static const char *const cols[] = {"correlation:i", "cpu_duration:f", "gpu_duration:f",
					   "launch_delay:f", NULL};
	char name[64], title[96];
	snprintf(name, sizeof name, "%s%d", launch_tables[0].csv, r->rank);
	snprintf(title, sizeof title, "CUDA kernel launch statistics, rank %d (us)", r->rank);
	struct atable *t = atable_new(name, title, cols);
	for (size_t c = 1; r->int_times && c <= 3; c++)
		atable_int_text(t, c);
	const char *launch_names[] = {"cudaLaunchKernel", "cudaLaunchKernelExC",
				      "runFunction - job_prep_and_submit_for_execution", "cudaMemcpyAsync",
				      "cudaMemsetAsync"};
	size_t nl = o->include_memory_events ? 5 : 3;
	uint32_t ids[5];
	for (size_t i = 0; i < nl; i++)
		ids[i] = trace_strtab_find(&r->strs, launch_names[i], strlen(launch_names[i]));
	bool *is_launch = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *is_launch);
	for (size_t i = 0; i < nl; i++)
		if (ids[i] != TRACE_NO_STR)
			is_launch[ids[i]] = true;
	/* rows with a correlation by (correlation, row); a run of one
	 * correlation that holds a launch row gives its CPU rows (no stream)
	 * and GPU rows, each in row order.  A launch without a correlation
	 * pairs with nothing; HTA would pair every uncorrelated CPU row with
	 * every uncorrelated GPU row. */
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++)
		m += r->correlation[i] != -1;
	uint32_t *rows = xmalloc((m ? m : 1) * sizeof *rows);
	uint64_t *key = xmalloc((m ? m : 1) * sizeof *key);
	m = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->correlation[i] != -1)
			rows[m++] = (uint32_t)i;
	sort_by_corr(r, rows, m, key);
	free(key);
	uint32_t *cpu = xmalloc((m ? m : 1) * sizeof *cpu), *gpu = xmalloc((m ? m : 1) * sizeof *gpu);
	size_t nc = 0, ng = 0;
	for (size_t a = 0; a < m;) {
		size_t b = a + 1;
		bool launch = is_launch[r->name[rows[a]]];
		while (b < m && r->correlation[rows[b]] == r->correlation[rows[a]])
			launch |= is_launch[r->name[rows[b++]]];
		for (size_t j = a; launch && j < b; j++) {
			if (r->stream[rows[j]] == -1)
				cpu[nc++] = rows[j];
			else
				gpu[ng++] = rows[j];
		}
		a = b;
	}
	free(rows);
	free(is_launch);
	size_t shortk = 0, rt_out = 0, ld_out = 0, capped = 0;
	double sum_cpu = 0, sum_gpu = 0, sum_ld = 0, max_ld = NAN;
	for (size_t a = 0, b = 0; a < nc && b < ng;) {
		int64_t ca = r->correlation[cpu[a]], cb = r->correlation[gpu[b]];
		if (ca < cb) {
			a++;
			continue;
		}
		if (ca > cb) {
			b++;
			continue;
		}
		size_t a2 = a, b2 = b;
		while (a2 < nc && r->correlation[cpu[a2]] == ca)
			a2++;
		while (b2 < ng && r->correlation[gpu[b2]] == ca)
			b2++;
		/* a correlation shared by many rows on both sides (a broken
		 * trace) would give a quadratic number of pairs: at most 16 x 16 */
		if ((a2 - a) * (b2 - b) > 256)
			capped++;
		size_t ae = a2 - a > 16 ? a + 16 : a2, be = b2 - b > 16 ? b + 16 : b2;
		for (size_t x = a; x < ae; x++)
			for (size_t y = b; y < be; y++) {
				size_t c = cpu[x], g = gpu[y];
				double cd = r->dur[c], gd = r->dur[g];
				double ld = r->ts[g] - r->ts[c] - r->dur[c];
				if (ld < 0)
					ld = 0;
				size_t row = atable_add_row(t);
				atable_set_i(t, row, 0, ca);
				atable_set_f(t, row, 1, cd);
				atable_set_f(t, row, 2, gd);
				atable_set_f(t, row, 3, ld);
				shortk += cd <= o->runtime_cutoff && gd < cd;
				rt_out += cd > o->runtime_cutoff;
				ld_out += ld > o->launch_delay_cutoff;
				sum_cpu += cd;
				sum_gpu += gd;
				sum_ld += ld;
				if (isnan(max_ld) || ld > max_ld)
					max_ld = ld;
			}
		a = a2;
		b = b2;
	}
	size_t ngpu = 0;
	for (size_t i = 0; i < r->n && !ngpu; i++)
		ngpu += trace_is_gpu(r, i);
	if (ngpu == 0) /* like every other analysis: no GPU, no statistics (not "0 launches") */
		atable_note(t, "rank %d: no GPU events (no row has a stream): launch statistics unavailable",
			    r->rank);
	else
		atable_note(t, "rank %d: %zu launches; short GPU kernels (cpu_duration <= %g and gpu_duration < "
		       "cpu_duration): %zu; runtime outliers (cpu_duration > %g): %zu; launch delay outliers "
		       "(> %g): %zu",
		    r->rank, t->nrows, o->runtime_cutoff, shortk, o->runtime_cutoff, rt_out,
		    o->launch_delay_cutoff, ld_out);
	if (t->nrows) {
		double v[] = {sum_cpu, sum_gpu, sum_ld, sum_ld / (double)t->nrows, max_ld};
		struct buf txt[5];
		for (int i = 0; i < 5; i++) {
			buf_init(&txt[i]);
			atable_fmt_display(&txt[i], v[i]);
		}
		atable_note(t, "rank %d: sum cpu_duration %s, sum gpu_duration %s, sum launch_delay %s, "
			       "mean launch_delay %s, max launch_delay %s",
			    r->rank, txt[0].data, txt[1].data, txt[2].data, txt[3].data, txt[4].data);
		for (int i = 0; i < 5; i++)
			buf_free(&txt[i]);
	}
	if (capped)
		atable_note(t, "rank %d: %zu correlation ids shared by many CPU and GPU rows: only 16 x 16 pairs "
			       "each",
			    r->rank, capped);
	free(cpu);
	free(gpu);
	return t;
}

size_t analyze_launch(const struct trace_set *set, const struct analyze_ranks *sel, const struct launch_opts *o,
		      struct atable ***out)
{
	*out = xcalloc(set->nranks ? set->nranks : 1, sizeof **out);
	size_t n = 0;
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			(*out)[n++] = one_rank(set->ranks[k], o);
	return n;
}

/* ---- the `launch` row of the analysis table ---- */

static const struct launch_options launch_defaults = {.runtime_cutoff = 50, .launch_delay_cutoff = 100};
static const struct analysis_opt launch_opts_rows[] = {
	{{"runtime-cutoff", 0, ARG_DOUBLE, NULL, "US", "launch: CPU launch calls longer than this are outliers", 0, 0,
	  NULL},
	 offsetof(struct launch_options, runtime_cutoff)},
	{{"launch-delay-cutoff", 0, ARG_DOUBLE, NULL, "US", "launch: launch delays longer than this are outliers", 0,
	  0, NULL},
	 offsetof(struct launch_options, launch_delay_cutoff)},
	{{"no-memory-events", 0, ARG_BOOL, NULL, NULL, "launch: leave out cudaMemcpyAsync/cudaMemsetAsync", 0, 0,
	  NULL},
	 offsetof(struct launch_options, no_memory_events)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static void launch_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct launch_options *o = c->opts;
	struct launch_opts lo = {o->runtime_cutoff, o->launch_delay_cutoff, !o->no_memory_events};
	struct atable **ts;
	/* view holds one rank (or none): one table at most */
	size_t n = analyze_launch(view, NULL, &lo, &ts);
	out[0] = n ? ts[0] : NULL;
	free(ts);
}

const struct analysis analysis_launch = {
	.name = "launch",
	.help = "CUDA kernel launch statistics per rank",
	.opts = {sizeof(struct launch_options), &launch_defaults, launch_opts_rows, NULL},
	.tables = launch_tables,
	.ntables = 1,
	.cost = 4,
	.rank = launch_rank,
	.skip = analyze_skip_no_gpu,
};
