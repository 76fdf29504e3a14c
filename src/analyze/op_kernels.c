/*
 * op_kernels.c - the `op-kernels` analysis: HTA's
 * get_aten_op_kernels_and_delay (semantics doc section 13), per rank.  Each
 * kernel launch (cudaLaunchKernel, cudaLaunchKernelExC with a kernel
 * partner) is attributed to the aten:: operator (cpu_op) on the same
 * process and thread that encloses it with the latest start.  One operator
 * instance (thread, name, start: HTA's grouping) gives a kernel sequence
 * (its kernels' names in launch order, joined by " -> "), its launch
 * delay (first launch start - operator start) and runtime delay (first
 * kernel start - first launch start).  Instances with the same operator
 * name and sequence make one row: occurrence_count and the two delays'
 * means (rounded to 3 decimals as HTA does).  Rows are sorted by count,
 * descending, then name and sequence; HTA's sort is unstable on equal
 * counts (docs/analyze.md).
 *
 * A rank where no launch is inside an aten:: operator (HTA raises
 * KeyError 'thread_id'; on cupti_profiler ValueError) gets a note, no rows.
 *
 * Cost: per rank, the attribution (trace_launch_ops, src/trace/launch_ops.c:
 * radix sorts of operators and launches and one sweep per thread with a
 * stack of open operators; HTA's search is O(launches x operators)), a
 * sort of the attributed launches by (thread, operator, start), the
 * instances grouped in a hash table by operator and kernel name ids (a
 * sequence's text is made once per group), a sort of the groups; arrays
 * per rank, no allocation per event.  Reads only the operators around
 * launches (ANALYSIS_LOAD_LAUNCH_OPS: the loader drops the others).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"

static const struct analysis_table op_kernels_tables[] = {
	{.csv = "aten_op_kernels_and_delay_rank", .per_rank = true},
};

/* One operator instance's launches: pairs sorted by (tid, name, op start,
 * launch start). */
struct pair {
	int64_t tid;
	double op_ts, l_ts;
	uint32_t op_name, l_row, k_row;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->op_name != y->op_name)
		return x->op_name < y->op_name ? -1 : 1;
	if (x->op_ts != y->op_ts)
		return x->op_ts < y->op_ts ? -1 : 1;
	if (x->l_ts != y->l_ts)
		return x->l_ts < y->l_ts ? -1 : 1;
	return (x->l_row > y->l_row) - (x->l_row < y->l_row);
}

/* Operator instances with one operator name and kernel name sequence:
 * their kernel name ids are ids[off, off + len). */
struct group {
	uint64_t hash;
	uint32_t op_name;
	size_t off, len;
	double launch_delay, runtime_delay; /* sums over the group */
	size_t count;
};

/* A group with its texts, then one output row. */
struct inst {
	const char *name, *seq;
	size_t seq_off;
	double launch_delay, runtime_delay; /* sums over the group */
	size_t count;
};

static int cmp_inst_key(const void *a, const void *b)
{
	const struct inst *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->seq, y->seq);
}

static int cmp_row(const void *a, const void *b)
{
	const struct inst *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_inst_key(a, b);
}

static struct atable *one_rank(const struct trace_rank *r)
{
	static const char *const cols[] = {"aten_op_name:s", "kernel_sequence:s", "occurrence_count:i",
					   "avg_aten_op_launch_delay:f", "avg_runtime_delay:f", NULL};
	char name[64], title[96];
	snprintf(name, sizeof name, "%s%d", op_kernels_tables[0].csv, r->rank);
	snprintf(title, sizeof title, "Kernels launched per aten operator and their delays, rank %d (us)", r->rank);
	struct atable *t = atable_new(name, title, cols);

	/* each kernel launch and the operator it is attributed to */
	uint32_t *ls;
	int32_t *op;
	size_t nl = trace_launch_ops(r, true, &ls, &op);
	size_t np = 0;
	struct pair *pairs = xmalloc((nl ? nl : 1) * sizeof *pairs);
	for (size_t j = 0; j < nl; j++) {
		if (op[j] < 0)
			continue;
		uint32_t o = (uint32_t)op[j], l = ls[j];
		pairs[np++] = (struct pair){r->tid[l], r->ts[o], r->ts[l], r->name[o], l, (uint32_t)r->link[l]};
	}
	free(ls);
	free(op);
	qsort(pairs, np, sizeof *pairs, cmp_pair);

	/* the instances: HTA groups launches by (thread, name, operator start).
	 * Instances with the same operator and kernel names (name ids) are one
	 * group, found in a hash table: a sequence's text is made once per
	 * group instead of once per instance (188 K instances, 64 groups on
	 * a 1 GB trace) */
	struct group *g = NULL;
	size_t ng = 0, gcap = 0, ni = 0;
	uint32_t *ids = NULL; /* the groups' kernel name ids, then the current instance's */
	size_t nids = 0, idcap = 0;
	uint32_t *slot = NULL; /* group index + 1, 0: empty */
	size_t hcap = 0;
	for (size_t a = 0, b; a < np; a = b) {
		const struct pair *p = &pairs[a];
		size_t start = nids;
		uint64_t h = (0xcbf29ce484222325ull ^ p->op_name) * 0x100000001b3ull;
		for (b = a; b < np && pairs[b].tid == p->tid && pairs[b].op_name == p->op_name &&
			    pairs[b].op_ts == p->op_ts;
		     b++) {
			if (nids == idcap) {
				idcap = idcap ? 2 * idcap : 256;
				ids = xrealloc(ids, idcap * sizeof *ids);
			}
			ids[nids] = r->name[pairs[b].k_row];
			h = (h ^ ids[nids++]) * 0x100000001b3ull;
		}
		size_t len = nids - start;
		ni++;
		if (2 * (ng + 1) > hcap) {
			hcap = hcap ? 2 * hcap : 64;
			free(slot);
			slot = xcalloc(hcap, sizeof *slot);
			for (size_t k = 0; k < ng; k++) {
				size_t s = g[k].hash & (hcap - 1);
				while (slot[s])
					s = (s + 1) & (hcap - 1);
				slot[s] = (uint32_t)(k + 1);
			}
		}
		size_t s = h & (hcap - 1);
		for (; slot[s]; s = (s + 1) & (hcap - 1)) {
			const struct group *x = &g[slot[s] - 1];
			if (x->hash == h && x->op_name == p->op_name && x->len == len &&
			    memcmp(ids + x->off, ids + start, len * sizeof *ids) == 0)
				break;
		}
		double ld = p->l_ts - p->op_ts, rd = r->ts[p->k_row] - p->l_ts;
		if (slot[s]) {
			struct group *x = &g[slot[s] - 1];
			x->count++;
			x->launch_delay += ld;
			x->runtime_delay += rd;
			nids = start; /* the group has these ids already */
			continue;
		}
		if (ng == gcap) {
			gcap = gcap ? 2 * gcap : 64;
			g = xrealloc(g, gcap * sizeof *g);
		}
		g[ng] = (struct group){h, p->op_name, start, len, ld, rd, 1};
		slot[s] = (uint32_t)++ng;
	}
	free(slot);
	free(pairs);

	/* each group's text */
	struct inst *in = xmalloc((ng ? ng : 1) * sizeof *in);
	struct buf seqs = BUF_INIT;
	for (size_t k = 0; k < ng; k++) {
		in[k] = (struct inst){trace_strtab_get(&r->strs, g[k].op_name), NULL, seqs.len, g[k].launch_delay,
				      g[k].runtime_delay, g[k].count};
		for (size_t j = 0; j < g[k].len; j++) {
			if (j)
				buf_puts(&seqs, " -> ");
			buf_puts(&seqs, trace_strtab_get(&r->strs, ids[g[k].off + j]));
		}
		buf_putc(&seqs, '\0');
	}
	free(g);
	free(ids);
	for (size_t k = 0; k < ng; k++)
		in[k].seq = seqs.data + in[k].seq_off;

	/* one row per (name, sequence): groups whose texts are equal (a
	 * kernel name holding " -> ") are one row */
	if (ng > 1)
		qsort(in, ng, sizeof *in, cmp_inst_key);
	size_t nr = 0;
	for (size_t k = 0; k < ng; k++) {
		if (nr && cmp_inst_key(&in[nr - 1], &in[k]) == 0) {
			in[nr - 1].count += in[k].count;
			in[nr - 1].launch_delay += in[k].launch_delay;
			in[nr - 1].runtime_delay += in[k].runtime_delay;
		} else {
			in[nr++] = in[k];
		}
	}
	if (nr > 1)
		qsort(in, nr, sizeof *in, cmp_row);
	for (size_t k = 0; k < nr; k++) {
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, in[k].name);
		atable_set_s(t, row, 1, in[k].seq);
		atable_set_i(t, row, 2, (int64_t)in[k].count);
		atable_set_f(t, row, 3, atable_round(in[k].launch_delay / (double)in[k].count, 3));
		atable_set_f(t, row, 4, atable_round(in[k].runtime_delay / (double)in[k].count, 3));
	}
	if (nr == 0)
		atable_note(t,
			    "rank %d: no kernel launch (cudaLaunchKernel) inside an aten:: operator: "
			    "op-kernels unavailable",
			    r->rank);
	else
		atable_note(t, "rank %d: %zu operator instances launched kernels; %zu distinct (operator, kernels)",
			    r->rank, ni, nr);
	free(in);
	buf_free(&seqs);
	return t;
}

size_t analyze_op_kernels(const struct trace_set *set, const struct analyze_ranks *sel, struct atable ***out)
{
	*out = xcalloc(set->nranks ? set->nranks : 1, sizeof **out);
	size_t n = 0;
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			(*out)[n++] = one_rank(set->ranks[k]);
	return n;
}

/* ---- the `op-kernels` row of the analysis table ---- */

static void op_kernels_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	(void)c;
	struct atable **ts;
	size_t n = analyze_op_kernels(view, NULL, &ts);
	out[0] = n ? ts[0] : NULL;
	free(ts);
}

/* summary: a trace that never names a launch has none (an O(1) lookup) */
static const char *op_kernels_skip(const void *opts, const struct trace_set *view)
{
	(void)opts;
	for (size_t k = 0; k < view->nranks; k++) {
		const struct trace_strtab *s = &view->ranks[k]->strs;
		if (trace_strtab_find(s, "cudaLaunchKernel", 16) != TRACE_NO_STR ||
		    trace_strtab_find(s, "cudaLaunchKernelExC", 19) != TRACE_NO_STR)
			return NULL;
	}
	return "no kernel launches (cudaLaunchKernel)";
}

const struct analysis analysis_op_kernels = {
	.name = "op-kernels",
	.help = "kernels launched per aten operator, with launch and runtime delays, per rank",
	.load = ANALYSIS_LOAD_LAUNCH_OPS,
	.tables = op_kernels_tables,
	.ntables = 1,
	.cost = 2,
	.rank = op_kernels_rank,
	.skip = op_kernels_skip,
};
