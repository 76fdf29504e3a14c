/*
 * overlap.c - the `overlap` analysis: communication/computation overlap
 * per rank (see overlap.h) and its table, comm_comp_overlap.  One merge and
 * one sweep of each rank's GPU intervals.
 *
 * Per rank: merge the communication intervals (A) and the computation
 * intervals (C) of the rows that have a stream; sweep A's points with +-1
 * and C's with +-2; a segment that starts where the running sum is 3 has
 * both running.  The ratio is overlap / sum of A's merged lengths, so 0/0
 * (no communication) is NaN, which HTA writes as an empty CSV field.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "analyze/overlap.h"
#include "analyze/table.h"
#include "core/buf.h"

/* The row's output table (the atable below takes its name from here). */
static const struct analysis_table overlap_tables[] = {{.csv = "comm_comp_overlap"}};

static void rank_overlap(const struct trace_rank *r, struct overlap_row *row)
{
	struct ival_list iv[2];
	memset(iv, 0, sizeof iv);
	memset(row, 0, sizeof *row);
	row->rank = r->rank;
	for (size_t i = 0; i < r->n; i++) {
		if (r->stream[i] == -1)
			continue;
		enum trace_ktype t = trace_ktype(r, i);
		if (t == TRACE_KT_COMMUNICATION) {
			ival_push(&iv[0], r->ts[i], r->ts[i] + r->dur[i]);
			row->comm_kernels++;
		} else if (t == TRACE_KT_COMPUTATION) {
			ival_push(&iv[1], r->ts[i], r->ts[i] + r->dur[i]);
			row->comp_kernels++;
		}
	}
	ival_list_merge(&iv[0]);
	ival_list_merge(&iv[1]);
	for (size_t i = 0; i < iv[0].n; i++)
		row->comm_time += iv[0].v[i].end - iv[0].v[i].ts;

	static const int weight[2] = {1, 2};
	struct ival_point *p;
	size_t np = ival_sweep_points(iv, weight, 2, &p);
	long running = 0;
	for (size_t i = 0; i + 1 < np; i++) {
		running += p[i].delta;
		if (running == 3)
			row->overlap_time += p[i + 1].t - p[i].t;
	}
	free(p);
	ival_list_free(&iv[0]);
	ival_list_free(&iv[1]);
	/* numpy round(x, 2); 0/0 stays NaN like HTA's */
	row->pctg = atable_round(100.0 * (row->overlap_time / row->comm_time), 2);
	if (row->comm_kernels == 0)
		row->pctg = NAN;
}

void overlap_run(const struct trace_set *set, struct overlap_result *out)
{
	out->nrows = set->nranks;
	out->rows = xcalloc(set->nranks ? set->nranks : 1, sizeof *out->rows);
	for (size_t k = 0; k < set->nranks; k++)
		rank_overlap(set->ranks[k], &out->rows[k]);
}

void overlap_free(struct overlap_result *o)
{
	free(o->rows);
	memset(o, 0, sizeof *o);
}

struct atable *analyze_overlap(const struct trace_set *set, const struct analyze_ranks *sel)
{
	struct trace_set v = analyze_view(set, sel);
	struct overlap_result ov;
	overlap_run(&v, &ov);
	static const char *const cols[] = {"rank:i", "comp_comm_overlap_pctg:f", NULL};
	struct atable *t = atable_new(overlap_tables[0].csv,
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
		analyze_note_no_gpu(t, &v, "overlap");
	overlap_free(&ov);
	free(v.ranks);
	return t;
}

/* ---- the `overlap` row of the analysis table ---- */

static void overlap_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	(void)c;
	out[0] = analyze_overlap(view, NULL);
}

const struct analysis analysis_overlap = {
	.name = "overlap",
	.help = "share of communication time overlapped by computation, per rank",
	.tables = overlap_tables,
	.ntables = 1,
	.cost = 1,
	.rank = overlap_rank,
	.skip = analyze_skip_no_gpu,
};
