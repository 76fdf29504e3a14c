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

#include "analyze/analyze.h"

struct cr {
	int64_t corr;
	size_t row;
};

static int cr_cmp(const void *a, const void *b)
{
	const struct cr *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int i64cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static bool in_sorted(const int64_t *v, size_t n, int64_t k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == k;
}

static struct atable *one_rank(const struct trace_rank *r, const struct launch_opts *o)
{
	static const char *const cols[] = {"correlation:i", "cpu_duration:f", "gpu_duration:f",
					   "launch_delay:f", NULL};
	char name[64], title[96];
	snprintf(name, sizeof name, "cuda_kernel_launch_stats_rank%d", r->rank);
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
	int64_t *s = xmalloc((r->n ? r->n : 1) * sizeof *s);
	size_t ns = 0;
	/* a launch without a correlation pairs with nothing; HTA would pair
	 * every uncorrelated CPU row with every uncorrelated GPU row */
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = 0; j < nl && r->correlation[i] != -1; j++)
			if (r->name[i] == ids[j]) {
				s[ns++] = r->correlation[i];
				break;
			}
	qsort(s, ns, sizeof *s, i64cmp);
	struct cr *cpu = xmalloc((r->n ? r->n : 1) * sizeof *cpu), *gpu = xmalloc((r->n ? r->n : 1) * sizeof *gpu);
	size_t nc = 0, ng = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!in_sorted(s, ns, r->correlation[i]))
			continue;
		if (r->stream[i] == -1)
			cpu[nc++] = (struct cr){r->correlation[i], i};
		else
			gpu[ng++] = (struct cr){r->correlation[i], i};
	}
	qsort(cpu, nc, sizeof *cpu, cr_cmp);
	qsort(gpu, ng, sizeof *gpu, cr_cmp);
	size_t shortk = 0, rt_out = 0, ld_out = 0, capped = 0;
	double sum_cpu = 0, sum_gpu = 0, sum_ld = 0, max_ld = NAN;
	for (size_t a = 0, b = 0; a < nc && b < ng;) {
		if (cpu[a].corr < gpu[b].corr) {
			a++;
			continue;
		}
		if (cpu[a].corr > gpu[b].corr) {
			b++;
			continue;
		}
		size_t a2 = a, b2 = b;
		while (a2 < nc && cpu[a2].corr == cpu[a].corr)
			a2++;
		while (b2 < ng && gpu[b2].corr == gpu[b].corr)
			b2++;
		/* a correlation shared by many rows on both sides (a broken
		 * trace) would give a quadratic number of pairs: at most 16 x 16 */
		if ((a2 - a) * (b2 - b) > 256)
			capped++;
		size_t ae = a2 - a > 16 ? a + 16 : a2, be = b2 - b > 16 ? b + 16 : b2;
		for (size_t x = a; x < ae; x++)
			for (size_t y = b; y < be; y++) {
				size_t c = cpu[x].row, g = gpu[y].row;
				double cd = r->dur[c], gd = r->dur[g];
				double ld = r->ts[g] - r->ts[c] - r->dur[c];
				if (ld < 0)
					ld = 0;
				size_t row = atable_add_row(t);
				atable_set_i(t, row, 0, cpu[x].corr);
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
	atable_note(t, "rank %d: %zu launches; short GPU kernels (cpu_duration <= %g and gpu_duration < "
		       "cpu_duration): %zu; runtime outliers (cpu_duration > %g): %zu; launch delay outliers "
		       "(> %g): %zu",
		    r->rank, t->nrows, o->runtime_cutoff, shortk, o->runtime_cutoff, rt_out,
		    o->launch_delay_cutoff, ld_out);
	if (t->nrows)
		atable_note(t, "rank %d: sum cpu_duration %.17g, sum gpu_duration %.17g, sum launch_delay %.17g, "
			       "mean launch_delay %.17g, max launch_delay %.17g",
			    r->rank, sum_cpu, sum_gpu, sum_ld, sum_ld / (double)t->nrows, max_ld);
	if (capped)
		atable_note(t, "rank %d: %zu correlation ids shared by many CPU and GPU rows: only 16 x 16 pairs "
			       "each",
			    r->rank, capped);
	free(s);
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
