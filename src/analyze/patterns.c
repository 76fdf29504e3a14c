/*
 * patterns.c - the `patterns` analysis: HTA's
 * get_frequent_cuda_kernel_sequences (semantics doc section 9) on one rank.
 *
 * HTA first builds its call graph (hta/common/trace_call_graph.py): on
 * every thread that is not a GPU stream the CPU rows (stream -1) nest by
 * their intervals (HTA's order of open and close points, below), a GPU row
 * (stream > 0) becomes a child of the CPU row it is correlated with, and
 * the top-level operators of the backward thread are moved under the main
 * thread's "## backward ##" annotation (else ProfilerStep#) that contains
 * them.  depth is -1 for a row that is no node, 0 for a top-level one.
 * The candidates are the rows whose name contains --operator; the roots
 * are the candidates at the smallest depth of all candidates that have at
 * least --min-len GPU descendants.  A root's pattern is its name and the
 * names of its GPU descendants in start order; equal patterns make one row:
 * count, the sum of the kernels' durations and of the roots' durations.
 * Rows are sorted by count descending, then pattern.
 *
 * --patterns-trace OUT writes HTA's overlaid trace (patterns_trace.c)
 * with the events of the --top-k patterns marked.
 * The rank is --patterns-rank, else the first selected one (HTA: rank 0).
 * It runs only when asked for by name (`dyno analyze patterns`), not in
 * `summary`, which has no operator name to give it.
 * A rank without GPU rows, an operator no row names, or no root with
 * enough kernels gives a note and no rows (exit status 4; HTA returns an
 * empty frame and logs an error).
 *
 * Cost: one sort of 2 points per CPU row (by thread and time, then a merge
 * sort of each run of equal times in HTA's order, which is not transitive
 * there), one stack walk, one pass linking children, one breadth-first
 * pass for depths, then one walk of each root's subtree (the roots'
 * subtrees are disjoint) and a sort of its kernels; arrays of the rank's
 * size, nothing allocated per event.  Needs the CPU rows
 * (ANALYSIS_LOAD_CPU_OPS).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"

static const struct analysis_table patterns_tables[] = {
	{.csv = "frequent_patterns"},
};

/* ---- the call graph ---- */

/* One end of a CPU row's interval on one thread. */
struct point {
	uint32_t grp;  /* thread */
	uint32_t row;
	double t;      /* ts or ts + dur */
	double dur;
	uint32_t idx;  /* HTA's event id, for ties */
	int8_t open;   /* 1: start, 0: end */
};

/* thread, time, then row and start first: a total order */
static int cmp_point_time(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->grp != y->grp)
		return x->grp < y->grp ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return y->open - x->open;
}

/* HTA's _less_than on one thread: time; the two ends of one row start
 * first; a zero-length row nests inside a longer one; at equal times a
 * close comes before an open; two opens: longer first, then lower id; two
 * closes: shorter first, then higher id. */
static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->grp != y->grp)
		return x->grp < y->grp ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->row == y->row)
		return x->open == y->open ? 0 : x->open ? -1 : 1;
	bool less;
	if (x->dur == 0 || y->dur == 0) {
		if (x->dur == 0 && y->dur > 0)
			less = !y->open;
		else if (x->dur > 0 && y->dur == 0)
			less = x->open;
		else if (x->open && y->open)
			less = x->idx < y->idx;
		else if (!x->open && !y->open)
			less = x->idx > y->idx;
		else
			less = x->open;
	} else if (x->open != y->open) {
		less = !x->open;
	} else if (x->dur != y->dur) {
		less = x->open ? x->dur > y->dur : x->dur < y->dur;
	} else {
		less = x->open ? x->idx < y->idx : x->idx > y->idx;
	}
	return less ? -1 : 1;
}

/* A stable bottom-up merge sort by cmp_point: any comparison result keeps
 * it in bounds and O(n log n), transitive or not.  tmp holds n points. */
static void merge_sort_points(struct point *p, size_t n, struct point *tmp)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = cmp_point(&p[j], &p[i]) < 0 ? p[j++] : p[i++];
			while (i < mid)
				tmp[k++] = p[i++];
			while (j < hi)
				tmp[k++] = p[j++];
		}
		memcpy(p, tmp, n * sizeof *p);
	}
}

/* rows by (pid, tid, row) */
static int cmp_thread(const void *a, const void *b, void *arg)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct trace_rank *r = arg;
	if (r->pid[x] != r->pid[y])
		return r->pid[x] < r->pid[y] ? -1 : 1;
	if (r->tid[x] != r->tid[y])
		return r->tid[x] < r->tid[y] ? -1 : 1;
	return (x > y) - (x < y);
}

struct graph {
	size_t n;
	int32_t *parent;  /* -1: top level (or no node) */
	int32_t *child, *sibling; /* first child, next sibling; -1: none */
	int32_t *depth;   /* -1: no node (HTA's initial value) or a thread root */
	uint8_t *node;
};

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* HTA's infer_device_type on one thread: a GPU stream when every row has
 * a stream > 0, or when pid or tid is 0. */
static bool thread_is_gpu(const struct trace_rank *r, const uint32_t *rows, size_t n)
{
	if (n && (r->pid[rows[0]] == 0 || r->tid[rows[0]] == 0))
		return true;
	for (size_t i = 0; i < n; i++)
		if (r->stream[rows[i]] <= 0)
			return false;
	return n > 0;
}

/* Move the top-level nodes of the backward thread under the main thread's
 * annotation that contains them (HTA's _link_main_and_bwd_stacks). */
static void link_backward(const struct trace_rank *r, struct graph *g, const uint32_t *rows, const size_t *gstart,
			  const uint8_t *label, size_t ngrp)
{
	size_t lab[2], nl = 0;
	for (size_t k = 0; k < ngrp; k++)
		if (label[k]) {
			if (nl == 2)
				return; /* HTA links only when exactly two threads are labelled */
			lab[nl++] = k;
		}
	if (nl != 2)
		return;
	/* sorted by label, "bwd" (2) before "main" (1) */
	size_t bwd = lab[0], main = lab[1];
	if (label[lab[0]] == 1 && label[lab[1]] == 2) {
		bwd = lab[1];
		main = lab[0];
	}
	const char *prefixes[2] = {"## backward ##", "ProfilerStep#"};
	for (int p = 0; p < 2; p++) {
		bool any = false;
		for (size_t i = gstart[main]; i < gstart[main + 1]; i++) {
			uint32_t a = rows[i];
			if (!starts(trace_name(r, a), prefixes[p]) || !g->node[a])
				continue;
			any = true;
			double ts = r->ts[a], end = r->ts[a] + r->dur[a];
			bool left = false;
			for (size_t j = gstart[bwd]; j < gstart[bwd + 1]; j++) {
				uint32_t b = rows[j];
				if (!g->node[b] || g->parent[b] != -1 || r->stream[b] != -1)
					continue;
				if (r->ts[b] >= ts && r->ts[b] + r->dur[b] <= end)
					g->parent[b] = (int32_t)a;
				else
					left = true;
			}
			if (!left)
				return; /* the backward thread's root is gone (HTA then looks no further) */
		}
		if (any)
			return;
	}
}

static void graph_build(const struct trace_rank *r, struct graph *g)
{
	size_t n = r->n;
	g->n = n;
	g->parent = xmalloc((n ? n : 1) * sizeof *g->parent);
	g->child = xmalloc((n ? n : 1) * sizeof *g->child);
	g->sibling = xmalloc((n ? n : 1) * sizeof *g->sibling);
	g->depth = xmalloc((n ? n : 1) * sizeof *g->depth);
	g->node = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n; i++)
		g->parent[i] = g->child[i] = g->sibling[i] = g->depth[i] = -1;

	/* the threads */
	uint32_t *rows = xmalloc((n ? n : 1) * sizeof *rows);
	for (size_t i = 0; i < n; i++)
		rows[i] = (uint32_t)i;
	qsort_r(rows, n, sizeof *rows, cmp_thread, (void *)r);
	size_t *gstart = xmalloc((n + 2) * sizeof *gstart), ngrp = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || r->pid[rows[i]] != r->pid[rows[i - 1]] || r->tid[rows[i]] != r->tid[rows[i - 1]])
			gstart[ngrp++] = i;
	gstart[ngrp] = n;
	uint8_t *cpu = xcalloc(ngrp ? ngrp : 1, 1), *label = xcalloc(ngrp ? ngrp : 1, 1);
	uint32_t *grp_of = xmalloc((n ? n : 1) * sizeof *grp_of);

	/* 2 points per CPU row of a CPU thread */
	size_t np = 0;
	for (size_t k = 0; k < ngrp; k++) {
		cpu[k] = !thread_is_gpu(r, rows + gstart[k], gstart[k + 1] - gstart[k]);
		for (size_t i = gstart[k]; i < gstart[k + 1]; i++) {
			grp_of[rows[i]] = (uint32_t)k;
			if (cpu[k] && r->stream[rows[i]] == -1)
				np += 2;
		}
	}
	struct point *pts = xmalloc((np ? np : 1) * sizeof *pts);
	np = 0;
	for (size_t k = 0; k < ngrp; k++) {
		if (!cpu[k])
			continue;
		bool main = false, bwd = false;
		for (size_t i = gstart[k]; i < gstart[k + 1]; i++) {
			uint32_t row = rows[i];
			const char *nm = trace_name(r, row);
			main = main || starts(nm, "ProfilerStep#");
			bwd = bwd || strstr(nm, "autograd::") != NULL;
			if (r->stream[row] != -1)
				continue;
			/* a dur of -1 (ns rounding) nests as a zero-length row: HTA
			 * raises there (docs/analyze.md) */
			double dur = r->dur[row] > 0 ? r->dur[row] : 0;
			pts[np++] = (struct point){(uint32_t)k, row, r->ts[row], dur, r->idx[row], 1};
			pts[np++] = (struct point){(uint32_t)k, row, r->ts[row] + dur, dur, r->idx[row], 0};
		}
		label[k] = main ? 1 : bwd ? 2 : 0;
	}
	/* by thread and time (a total order), then HTA's order within each
	 * run of equal times by insertion: HTA's comparison is not transitive
	 * when zero-length rows meet a close and an open at one time (it has
	 * cycles there), which qsort must never see */
	qsort(pts, np, sizeof *pts, cmp_point_time);
	struct point *tmp = NULL;
	for (size_t a = 0, b; a < np; a = b) {
		for (b = a + 1; b < np && pts[b].grp == pts[a].grp && pts[b].t == pts[a].t; b++)
			;
		if (b - a > 1) {
			if (!tmp)
				tmp = xmalloc(np * sizeof *tmp);
			merge_sort_points(pts + a, b - a, tmp);
		}
	}
	free(tmp);

	/* the stack walk: an open's parent is the top of the stack; a close
	 * pops the top (whichever row it is, as HTA does) */
	int32_t *stack = xmalloc((np / 2 + 1) * sizeof *stack);
	size_t sp = 0;
	for (size_t i = 0; i < np; i++) {
		if (i && pts[i].grp != pts[i - 1].grp)
			sp = 0;
		if (pts[i].open) {
			g->node[pts[i].row] = 1;
			g->parent[pts[i].row] = sp ? stack[sp - 1] : -1;
			stack[sp++] = (int32_t)pts[i].row;
		} else if (sp) {
			sp--;
		}
	}
	free(stack);
	free(pts);

	/* GPU rows under the CPU row they are correlated with */
	for (size_t i = 0; i < n; i++) {
		int32_t c = r->link[i];
		if (r->stream[i] <= 0 || c < 0 || r->idx[c] == 0 || !g->node[c] || g->node[i] || r->stream[c] != -1)
			continue;
		if (!cpu[grp_of[c]])
			continue;
		g->node[i] = 1;
		g->parent[i] = c;
	}
	link_backward(r, g, rows, gstart, label, ngrp);
	free(cpu);
	free(label);
	free(grp_of);
	free(gstart);

	/* child lists (children in row order), then depths breadth first */
	for (size_t i = n; i-- > 0;)
		if (g->node[i] && g->parent[i] >= 0) {
			g->sibling[i] = g->child[g->parent[i]];
			g->child[g->parent[i]] = (int32_t)i;
		}
	size_t nq = 0;
	for (size_t i = 0; i < n; i++)
		if (g->node[i] && g->parent[i] < 0) {
			g->depth[i] = 0;
			rows[nq++] = (uint32_t)i;
		}
	for (size_t h = 0; h < nq; h++) {
		uint32_t p = rows[h];
		for (int32_t c = g->child[p]; c >= 0; c = g->sibling[c])
			if (nq < n) {
				g->depth[c] = g->depth[p] + 1;
				rows[nq++] = (uint32_t)c;
			}
	}
	free(rows);
}

static void graph_free(struct graph *g)
{
	free(g->parent);
	free(g->child);
	free(g->sibling);
	free(g->depth);
	free(g->node);
}

/* ---- the patterns ---- */

/* One root: its kernels' name ids at [off, off + len) of the pool. */
struct root {
	size_t off, len;
	double gpu, cpu;
	size_t count; /* after grouping */
	char *text;   /* the pattern, joined with '|' */
	uint32_t row; /* the root (one of the group's) */
	uint32_t gid; /* the group's number before the sort by count */
};

static int cmp_root_key(const void *a, const void *b, void *arg)
{
	const struct root *x = a, *y = b;
	const uint32_t *sort_pool = arg;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	for (size_t i = 0; i < x->len; i++)
		if (sort_pool[x->off + i] != sort_pool[y->off + i])
			return sort_pool[x->off + i] < sort_pool[y->off + i] ? -1 : 1;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct root *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* kernels of one root: by start, then event id (HTA's sort of equal
 * starts is unspecified) */
static int cmp_kernel(const void *a, const void *b, void *arg)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct trace_rank *r = arg;
	if (r->ts[x] != r->ts[y])
		return r->ts[x] < r->ts[y] ? -1 : 1;
	return (r->idx[x] > r->idx[y]) - (r->idx[x] < r->idx[y]);
}

static bool rank_has_gpu(const struct trace_rank *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->stream[i] != -1)
			return true;
	return false;
}

struct atable *analyze_patterns_rank(const struct trace_rank *r, const char *op, int64_t min_len, int64_t top_k)
{
	return analyze_patterns_marks(r, op, min_len, top_k, NULL);
}

struct atable *analyze_patterns_marks(const struct trace_rank *r, const char *op, int64_t min_len, int64_t top_k,
				      int32_t *marks)
{
	if (marks)
		for (size_t i = 0; i < r->n; i++)
			marks[i] = -1;
	static const char *const cols[] = {"pattern:s", "count:i", "GPU kernel duration (us):f",
					   "CPU op duration (us):f", NULL};
	char title[96];
	snprintf(title, sizeof title, "Frequent CUDA kernel sequences, rank %d (us)", r->rank);
	struct atable *t = atable_new(patterns_tables[0].csv, title, cols);
	if (!rank_has_gpu(r)) {
		atable_note(t, "rank %d: no GPU events (no row has a stream): patterns unavailable", r->rank);
		t->unavailable = true;
		return t;
	}
	/* the names that contain op */
	uint8_t *cand = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	size_t ncand_names = 0;
	for (uint32_t id = 0; id < r->strs.n; id++)
		if (strstr(trace_strtab_get(&r->strs, id), op)) {
			cand[id] = 1;
			ncand_names++;
		}
	size_t ncand = 0;
	for (size_t i = 0; ncand_names && i < r->n; i++)
		ncand += cand[r->name[i]];
	if (ncand == 0) {
		atable_note(t, "rank %d: no event name contains '%s': patterns unavailable", r->rank, op);
		t->unavailable = true;
		free(cand);
		return t;
	}
	struct graph g;
	graph_build(r, &g);
	int32_t min_depth = INT32_MAX;
	for (size_t i = 0; i < r->n; i++)
		if (cand[r->name[i]] && g.depth[i] < min_depth)
			min_depth = g.depth[i];

	/* each root's kernels, by a walk of its subtree */
	uint32_t *walk = xmalloc((r->n ? r->n : 1) * sizeof *walk);
	uint32_t *kern = xmalloc((r->n ? r->n : 1) * sizeof *kern);
	/* a root's name and its GPU rows: at most 2 per row (a GPU row that is
	 * a root counts twice) */
	uint32_t *pool = xmalloc((2 * r->n + 1) * sizeof *pool);
	struct root *roots = xmalloc((ncand ? ncand : 1) * sizeof *roots);
	size_t nroots = 0, npool = 0;
	for (size_t i = 0; i < r->n; i++) {
		/* a row that is no node has num_kernels 0 in HTA */
		if (!cand[r->name[i]] || g.depth[i] != min_depth || !g.node[i])
			continue;
		size_t nw = 0, nk = 0;
		double ksum = 0;
		walk[nw++] = (uint32_t)i;
		while (nw) {
			uint32_t v = walk[--nw];
			if (r->stream[v] != -1) {
				kern[nk++] = v;
				ksum += r->dur[v];
			}
			for (int32_t c = g.child[v]; c >= 0; c = g.sibling[c])
				walk[nw++] = (uint32_t)c;
		}
		/* HTA's num_kernels: the GPU rows of the subtree (a GPU row: itself) */
		if ((int64_t)nk < min_len)
			continue;
		qsort_r(kern, nk, sizeof *kern, cmp_kernel, (void *)r);
		struct root *x = &roots[nroots++];
		x->off = npool;
		x->len = nk + 1;
		pool[npool++] = r->name[i];
		for (size_t k = 0; k < nk; k++)
			pool[npool++] = r->name[kern[k]];
		x->gpu = ksum;
		x->cpu = r->dur[i];
		x->count = 1;
		x->text = NULL;
		x->row = (uint32_t)i;
	}
	free(kern);
	free(cand);

	if (nroots > 1)
		qsort_r(roots, nroots, sizeof *roots, cmp_root_key, pool);
	/* each root's row and group, for the marks */
	uint32_t *root_row = xmalloc((nroots ? nroots : 1) * sizeof *root_row);
	uint32_t *grp = xmalloc((nroots ? nroots : 1) * sizeof *grp);
	size_t nr = 0;
	for (size_t k = 0; k < nroots; k++) {
		root_row[k] = roots[k].row;
		if (nr && cmp_root_key(&roots[nr - 1], &roots[k], pool) == 0) {
			roots[nr - 1].count++;
			roots[nr - 1].gpu += roots[k].gpu;
			roots[nr - 1].cpu += roots[k].cpu;
		} else {
			roots[nr] = roots[k];
			roots[nr].gid = (uint32_t)nr;
			nr++;
		}
		grp[k] = (uint32_t)nr - 1;
	}
	for (size_t k = 0; k < nr; k++) {
		struct buf b = BUF_INIT;
		for (size_t j = 0; j < roots[k].len; j++) {
			if (j)
				buf_putc(&b, '|');
			buf_puts(&b, trace_strtab_get(&r->strs, pool[roots[k].off + j]));
		}
		roots[k].text = buf_detach(&b, NULL);
	}
	free(pool);
	if (nr > 1)
		qsort(roots, nr, sizeof *roots, cmp_row);
	if (marks) {
		/* every row of the subtrees of the top_k patterns' roots (HTA's
		 * pattern_indices): the pattern's row number */
		uint32_t *pos = xmalloc((nr ? nr : 1) * sizeof *pos);
		for (size_t k = 0; k < nr; k++)
			pos[roots[k].gid] = (uint32_t)k;
		for (size_t k = 0; k < nroots; k++) {
			if ((int64_t)pos[grp[k]] >= top_k)
				continue;
			size_t nw = 0;
			walk[nw++] = root_row[k];
			while (nw) {
				uint32_t v = walk[--nw];
				marks[v] = (int32_t)pos[grp[k]];
				for (int32_t c = g.child[v]; c >= 0; c = g.sibling[c])
					walk[nw++] = (uint32_t)c;
			}
		}
		free(pos);
	}
	free(root_row);
	free(grp);
	free(walk);
	graph_free(&g);
	for (size_t k = 0; k < nr; k++) {
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, roots[k].text);
		atable_set_i(t, row, 1, (int64_t)roots[k].count);
		atable_set_f(t, row, 2, roots[k].gpu);
		atable_set_f(t, row, 3, roots[k].cpu);
		free(roots[k].text);
	}
	free(roots);
	if (nr == 0) {
		atable_note(t,
			    "rank %d: no '%s' operator at the top depth (%d) launched %lld or more GPU kernels: "
			    "patterns unavailable",
			    r->rank, op, (int)min_depth, (long long)min_len);
		t->unavailable = true;
	} else {
		atable_note(t, "rank %d: %zu '%s' roots at depth %d with >= %lld kernels; %zu patterns (top %lld: "
			       "the first rows)",
			    r->rank, nroots, op, (int)min_depth, (long long)min_len, nr,
			    (long long)(top_k < (int64_t)nr ? top_k : (int64_t)nr));
	}
	return t;
}

/* ---- the `patterns` row of the analysis table ---- */

static const struct patterns_options patterns_defaults = {.op = NULL, .min_len = 3, .top_k = 5, .rank = -1};
static const struct analysis_opt patterns_opts[] = {
	{{"operator", 0, ARG_STRING, NULL, "NAME",
	  "patterns: the operators whose name contains NAME (e.g. aten::linear); required", 0, 0, NULL},
	 offsetof(struct patterns_options, op)},
	{{"min-len", 0, ARG_INT, NULL, "N", "patterns: least number of GPU kernels of a pattern (HTA 3)", 0, 0,
	  NULL},
	 offsetof(struct patterns_options, min_len)},
	{{"top-k", 0, ARG_INT, NULL, "K", "patterns: the most frequent patterns the notes count (HTA 5)", 0, 0,
	  NULL},
	 offsetof(struct patterns_options, top_k)},
	{{"patterns-rank", 0, ARG_INT, NULL, "N", "patterns: the rank to analyse (default: the first selected)", 0,
	  0, NULL},
	 offsetof(struct patterns_options, rank)},
	{{"patterns-trace", 0, ARG_STRING, NULL, "OUT",
	  "patterns: write the trace with the top-k patterns' events marked (\"Patterns\" arg, HTA's overlaid trace; "
	  ".gz: gzip)",
	  0, 0, NULL},
	 offsetof(struct patterns_options, trace_out)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static int patterns_check(const void *opts, struct buf *err)
{
	const struct patterns_options *o = opts;
	if (o->op && !*o->op) {
		buf_puts(err, "--operator: an empty name matches every event; give an operator name");
		return -1;
	}
	if (o->min_len < 1) {
		buf_printf(err, "bad --min-len %lld (at least 1)", (long long)o->min_len);
		return -1;
	}
	if (o->trace_out) {
		/* refuse at once an OUT that cannot be created, before any loading */
		if (!*o->trace_out) {
			buf_puts(err, "--patterns-trace: empty file name");
			return -1;
		}
		const char *slash = strrchr(o->trace_out, '/');
		struct buf dir = BUF_INIT;
		if (!slash)
			buf_puts(&dir, ".");
		else if (slash == o->trace_out)
			buf_puts(&dir, "/");
		else
			buf_printf(&dir, "%.*s", (int)(slash - o->trace_out), o->trace_out);
		int bad = access(dir.data, W_OK | X_OK) != 0;
		if (bad)
			buf_printf(err, "--patterns-trace %s: directory %s: %s", o->trace_out, dir.data, strerror(errno));
		buf_free(&dir);
		if (bad)
			return -1;
	}
	if (o->top_k < 1) {
		buf_printf(err, "bad --top-k %lld (at least 1)", (long long)o->top_k);
		return -1;
	}
	return 0;
}

static void patterns_combine(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct patterns_options *o = c->opts;
	atable_free(out[0]);
	const struct trace_rank *r = NULL;
	for (size_t k = 0; k < view->nranks && !r; k++)
		if (o->rank < 0 || view->ranks[k]->rank == o->rank)
			r = view->ranks[k];
	if (!o->op || !r) {
		static const char *const cols[] = {"pattern:s", "count:i", "GPU kernel duration (us):f",
						   "CPU op duration (us):f", NULL};
		out[0] = atable_new(patterns_tables[0].csv, "Frequent CUDA kernel sequences (us)", cols);
		if (!o->op)
			atable_note(out[0], "patterns needs --operator NAME (e.g. aten::linear)");
		else if (o->rank >= 0)
			atable_note(out[0], "rank %lld is not among the selected ranks", (long long)o->rank);
		else
			atable_note(out[0], "no selected rank is in the trace");
		out[0]->unavailable = true;
		return;
	}
	int32_t *marks = o->trace_out ? xmalloc((r->n ? r->n : 1) * sizeof *marks) : NULL;
	out[0] = analyze_patterns_marks(r, o->op, o->min_len, o->top_k, marks);
	if (marks && out[0]->nrows) {
		struct buf err = BUF_INIT;
		if (patterns_write_trace(r, out[0], marks, o->trace_out, &err) != 0) {
			fprintf(stderr, "dyno analyze patterns: --patterns-trace: %s\n", err.data);
			atable_note(out[0], "--patterns-trace: %s", err.data);
			out[0]->output_failed = true;
		} else {
			atable_note(out[0], "wrote %s (search \"Patterns\" in Perfetto)", o->trace_out);
		}
		buf_free(&err);
	} else if (marks) {
		atable_note(out[0], "--patterns-trace: no pattern, nothing written");
	}
	free(marks);
	if (r->stats.skipped_cpu_ops)
		atable_note(out[0], "CPU operators were not loaded: patterns miss them");
}

const struct analysis analysis_patterns = {
	.name = "patterns",
	.help = "frequent CUDA kernel sequences launched by an operator (--operator NAME), one rank",
	.load = ANALYSIS_LOAD_CPU_OPS,
	.opts = {sizeof(struct patterns_options), &patterns_defaults, patterns_opts, patterns_check},
	.tables = patterns_tables,
	.ntables = 1,
	.cost = 2,
	/* it needs an operator name, which summary does not have: asked for
	 * by name only (like critical-path), so summary's output and load
	 * stay as they were */
	.own_command = true,
	.combine = patterns_combine,
	.required = "operator",
};
