/*
 * temporal.c - temporal breakdown (HTA get_temporal_breakdown, semantics
 * doc section 2): per rank, how the span from the first to the last GPU
 * activity splits into idle, compute and non-compute time.
 *
 * GPU rows are all rows with a stream (stream != -1), of any category, so
 * cuda_sync rows count as busy like in HTA.  compute_time is the merged
 * length of the COMPUTATION rows; non_compute_time is the rest of the busy
 * time (memory, communication, sync).  A rank without GPU rows (HTA raises
 * IndexError) is left out with a note.
 */
#include <math.h>
#include <stdlib.h>

#include "analyze/analysis.h"
#include "analyze/intervals.h"

/* The row's output table (the atable below takes its name from here). */
static const struct analysis_table temporal_tables[] = {{.csv = "temporal_breakdown"}};

struct atable *analyze_temporal(const struct trace_set *set, const struct analyze_ranks *sel)
{
	static const char *const cols[] = {"rank:i", "idle_time(us):f", "compute_time(us):f",
					   "non_compute_time(us):f", "kernel_time(us):f", "idle_time_pctg:f",
					   "compute_time_pctg:f", "non_compute_time_pctg:f", NULL};
	struct atable *t = atable_new(temporal_tables[0].csv, "Temporal breakdown (GPU time, us)", cols);
	bool ints = set->nranks > 0;
	for (size_t k = 0; k < set->nranks; k++)
		ints &= set->ranks[k]->int_times || !analyze_rank_selected(sel, set->ranks[k]->rank);
	for (size_t c = 1; ints && c <= 4; c++)
		atable_int_text(t, c);
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		if (!analyze_rank_selected(sel, r->rank))
			continue;
		size_t n = 0;
		for (size_t i = 0; i < r->n; i++)
			n += trace_is_gpu(r, i);
		if (n == 0) {
			atable_note(t, "rank %d: no GPU events (no row has a stream): temporal breakdown "
				       "unavailable",
				    r->rank);
			continue;
		}
		struct ival *all = xmalloc(n * sizeof *all), *comp = xmalloc(n * sizeof *comp);
		size_t na = 0, nc = 0;
		for (size_t i = 0; i < r->n; i++) {
			if (!trace_is_gpu(r, i))
				continue;
			struct ival v = {r->ts[i], r->ts[i] + r->dur[i]};
			all[na++] = v;
			if (trace_ktype(r, i) == TRACE_KT_COMPUTATION)
				comp[nc++] = v;
		}
		na = ival_merge(all, na);
		nc = ival_merge(comp, nc);
		double kernel_time = all[na - 1].end - all[0].ts;
		double busy = ival_total(all, na);
		double idle = kernel_time - busy;
		double compute = ival_total(comp, nc);
		double non_compute = kernel_time - compute - idle;
		size_t row = atable_add_row(t);
		atable_set_i(t, row, 0, r->rank);
		atable_set_f(t, row, 1, idle);
		atable_set_f(t, row, 2, compute);
		atable_set_f(t, row, 3, non_compute);
		atable_set_f(t, row, 4, kernel_time);
		atable_set_f(t, row, 5, atable_round(100 * idle / kernel_time, 2));
		atable_set_f(t, row, 6, atable_round(100 * compute / kernel_time, 2));
		atable_set_f(t, row, 7, atable_round(100 * non_compute / kernel_time, 2));
		free(all);
		free(comp);
	}
	return t;
}

/* ---- the `temporal` row of the analysis table ---- */


static void temporal_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	(void)c;
	out[0] = analyze_temporal(view, NULL);
}

const struct analysis analysis_temporal = {
	.name = "temporal",
	.help = "GPU idle / compute / non-compute time per rank",
	.tables = temporal_tables,
	.ntables = 1,
	.cost = 2,
	.rank = temporal_rank,
	.skip = analyze_skip_no_gpu,
};
