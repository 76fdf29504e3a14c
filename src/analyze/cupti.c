/*
 * cupti.c - the `cupti` analysis: HTA's CUPTI counter analysis
 * (get_cupti_counter_data_with_operators, semantics doc section 11), per
 * rank.  The kernels measured by PyTorch's CUPTI range profiler are the
 * `cuda_profiler_range` rows; their args are the counter values (kept by
 * the loader only for this analysis: ANALYSIS_LOAD_PROFILER_ARGS).  Each
 * is attributed to the operators that launched it: the i-th kernel by time
 * is paired with the i-th cudaLaunchKernel* by time (HTA pairs by order,
 * the range events carry no correlation), and the launch's call stack on
 * its thread gives the cpu_op rows around it: op_stack (outermost first,
 * joined with "|"), top_level_op and bottom_level_op.  The table has HTA's
 * columns: the kernel row as HTA's frame holds it (the loader's columns,
 * one per counter, the stale `end`, the call-graph columns), then
 * index_runtime and the three operator columns.
 *
 * Where HTA gives nothing: a rank without cuda_profiler_range rows (HTA
 * returns an empty list) and a rank whose kernel and launch counts differ
 * (HTA logs an error and leaves the rank out) get a note and no rows; the
 * table is then unavailable (`dyno analyze cupti` exits 4).  Differences
 * (docs/analyze.md): counter columns in the order of the trace (HTA: set
 * order, which changes from run to run), a launch with no cpu_op around it
 * gets empty operator names (HTA raises IndexError).
 *
 * Cost: per rank, one pass to find the ranges and launches, one sort of the
 * open/close points of the CPU rows (HTA's call-stack order) and one sweep
 * with a stack per thread; the operator lists of the launches go to one
 * array.  No allocation per event.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "trace/rsort.h"

/* One table per rank, a row per measured kernel and some fifty columns: the
 * terminal shows the notes (what was found), CSV and JSON the rows. */
static const struct analysis_table cupti_tables[] = {
	{.csv = "cupti_counters_", .per_rank = true, .notes_only_in_terminal = true},
};

/* An open or close point of a CPU row, in HTA's call-stack order
 * (trace_call_stack._less_than): by time; at one time the closes of
 * non-zero rows (shorter first, then higher index), then their opens
 * (longer first, then lower index), then zero-length rows' opens (lower
 * index first) and closes (higher index first).  HTA's comparison is not a
 * total order when a zero-length row meets both a close and an open at one
 * time; this one puts it after both (docs/analyze.md). */
struct point {
	int64_t pid, tid;
	double time, dur;
	uint32_t idx, row;
	uint8_t cls; /* 0 close, 1 open, 2 zero open, 3 zero close */
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->cls == 0 && x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	if (x->cls == 1 && x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->idx != y->idx) {
		bool asc = x->cls == 1 || x->cls == 2;
		return (x->idx < y->idx) == asc ? -1 : 1;
	}
	return (x->row > y->row) - (x->row < y->row);
}

/* HTA's call graph skips a (pid, tid) group it takes for a GPU stream: all
 * pids or all tids 0 (or every row on a stream, which gives no points). */
static bool gpu_group(int64_t pid, int64_t tid) { return pid == 0 || tid == 0; }

/* a row HTA's call graph puts on a CPU thread's stack */
static bool on_cpu_thread(const struct trace_rank *r, size_t i)
{
	return r->stream[i] == -1 && !gpu_group(r->pid[i], r->tid[i]);
}

/* The cpu_op rows around each launch: for launch slot s, ops[off[s] ..
 * off[s] + cnt[s]), outermost first. */
struct stacks {
	uint32_t *ops;
	size_t nops, cap;
	uint32_t *off, *cnt;
	size_t negative; /* CPU rows with dur < 0 (HTA raises on them) */
};

static void launch_stacks(const struct trace_rank *r, const int32_t *slot, struct stacks *st)
{
	size_t np = 0;
	for (size_t i = 0; i < r->n; i++)
		if (on_cpu_thread(r, i))
			np += 2;
	struct point *pt = xmalloc((np ? np : 1) * sizeof *pt);
	np = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!on_cpu_thread(r, i))
			continue;
		double d = r->dur[i];
		if (d < 0) {
			st->negative++;
			d = 0;
		}
		struct point p = {r->pid[i], r->tid[i], r->ts[i], d, r->idx[i], (uint32_t)i, d > 0 ? 1 : 2};
		pt[np++] = p;
		p.time = r->ts[i] + d;
		p.cls = d > 0 ? 0 : 3;
		pt[np++] = p;
	}
	qsort(pt, np, sizeof *pt, cmp_point);
	uint32_t *stack = xmalloc((np / 2 + 1) * sizeof *stack);
	size_t depth = 0;
	for (size_t k = 0; k < np; k++) {
		if (k > 0 && (pt[k].pid != pt[k - 1].pid || pt[k].tid != pt[k - 1].tid))
			depth = 0; /* the next thread */
		if (pt[k].cls == 0 || pt[k].cls == 3) {
			/* HTA pops the top, whichever row closes */
			if (depth)
				depth--;
			continue;
		}
		int32_t s = slot[pt[k].row];
		if (s >= 0) {
			st->off[s] = (uint32_t)st->nops;
			for (size_t j = 0; j < depth; j++) {
				if (r->kind[stack[j]] != TRACE_CAT_CPU_OP)
					continue;
				if (st->nops == st->cap) {
					st->cap = st->cap ? st->cap * 2 : 1024;
					st->ops = xrealloc(st->ops, st->cap * sizeof *st->ops);
				}
				st->ops[st->nops++] = stack[j];
			}
			st->cnt[s] = (uint32_t)(st->nops - st->off[s]);
		}
		stack[depth++] = pt[k].row;
	}
	free(stack);
	free(pt);
}

/* rows[0..n) (ascending) reordered by (ts, row) */
static void sort_by_ts(const struct trace_rank *r, uint32_t *rows, size_t n)
{
	uint64_t *key = xmalloc((n ? n : 1) * sizeof *key);
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_f64(r->ts[rows[i]]);
	rsort_kv(key, rows, n);
	free(key);
}

/* The numeric arg key of profiler row idx, or NULL: range_args is in
 * ascending idx, so a binary search finds the row's run. */
static const struct trace_range_arg *range_arg(const struct trace_rank *r, uint32_t idx, uint32_t key)
{
	size_t lo = 0, hi = r->nrange_args;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->range_args[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct trace_range_arg *hit = NULL;
	for (size_t k = lo; k < r->nrange_args && r->range_args[k].idx == idx; k++)
		if (r->range_args[k].key == key)
			hit = &r->range_args[k]; /* the last of duplicate keys, as a dict */
	return hit;
}

/* HTA's integer columns read from args the loader does not keep for other
 * rows: a profiler row's own arg when it has one (its numeric args are all
 * kept), else HTA's default. */
static const struct {
	const char *col, *key;
	int64_t dflt;
} arg_cols[] = {
	{"wait_on_stream", "wait_on_stream", -1},
	{"wait_on_cuda_event_record_corr_id", "wait_on_cuda_event_record_corr_id", -1},
	{"python_id", "Python id", -1},
	{"python_parent_id", "Python parent id", -1},
	{"in_msg_nelems", "In msg nelems", 0},
	{"out_msg_nelems", "Out msg nelems", 0},
	{"group_size", "Group size", 0},
	{"process_rank", "Rank", -1},
};

/* Column positions of the table, in HTA's order. */
enum {
	C_INDEX, C_CAT, C_NAME, C_PID, C_TID, C_TS, C_DUR, C_STREAM, C_CORR, C_BYTES, C_BW,
	C_WAIT_STREAM, C_WAIT_CORR, C_INPUT_DIMS, C_INPUT_TYPE, C_INPUT_STRIDES, C_EXT, C_PY, C_PY_PARENT,
	C_COLL, C_IN_NELEMS, C_OUT_NELEMS, C_DTYPE, C_GROUP, C_PRANK, C_IN_SPLIT, C_OUT_SPLIT,
	C_NFIXED /* then the counters, then the tail below */
};
enum {
	T_INDEX_CORR, T_ITERATION, T_END, T_DEPTH, T_HEIGHT, T_PARENT, T_NUM_KERNELS, T_KDUR_SUM,
	T_KSPAN, T_FIRST_START, T_LAST_END, T_INDEX_RUNTIME, T_OP_STACK, T_TOP, T_BOTTOM, T_NTAIL
};

static struct atable *new_table(const struct trace_rank *r, const uint32_t *keys, size_t nkeys,
				const bool *key_int, bool str_ids, bool iter_nan, bool on_cpu)
{
	/* pid/tid are strings when the trace names them ("Spans"); iteration
	 * is a float column when some row has none (HTA NaN) */
	const char *fixed[C_NFIXED] = {
		"index:i", "cat:s", "name:s", str_ids ? "pid:s" : "pid:i", str_ids ? "tid:s" : "tid:i",
		"ts:f", "dur:f", "stream:i", "correlation:i", "bytes:i", "memory_bw_gbps:f",
		"wait_on_stream:i", "wait_on_cuda_event_record_corr_id:i", "input_dims:s", "input_type:s",
		"input_strides:s", "external_id:i", "python_id:i", "python_parent_id:i", "collective_name:s",
		"in_msg_nelems:i", "out_msg_nelems:i", "msg_dtype:s", "group_size:i", "process_rank:i",
		"in_split_size:s", "out_split_size:s"};
	/* the call-graph columns are floats when some range lies on a CPU
	 * thread: those cells are then empty (not computed) */
	const char *tail[T_NTAIL] = {
		"index_correlation:i", iter_nan ? "iteration:f" : "iteration:i", "end:f",
		on_cpu ? "depth:f" : "depth:i", on_cpu ? "height:f" : "height:i", on_cpu ? "parent:f" : "parent:i",
		on_cpu ? "num_kernels:f" : "num_kernels:i", "kernel_dur_sum:f", "kernel_span:f",
		"first_kernel_start:f", "last_kernel_end:f", "index_runtime:i", "op_stack:s", "top_level_op:s",
		"bottom_level_op:s"};
	size_t nc = C_NFIXED + nkeys + T_NTAIL;
	const char **cols = xmalloc((nc + 1) * sizeof *cols);
	struct buf names = BUF_INIT;
	size_t *offs = xmalloc((nkeys ? nkeys : 1) * sizeof *offs);
	for (size_t k = 0; k < nkeys; k++) {
		offs[k] = names.len;
		buf_printf(&names, "%s:%c", trace_strtab_get(&r->strs, keys[k]), key_int[k] ? 'i' : 'f');
		buf_putc(&names, '\0');
	}
	size_t c = 0;
	for (size_t k = 0; k < C_NFIXED; k++)
		cols[c++] = fixed[k];
	for (size_t k = 0; k < nkeys; k++)
		cols[c++] = names.data + offs[k];
	for (size_t k = 0; k < T_NTAIL; k++)
		cols[c++] = tail[k];
	cols[c] = NULL;
	char name[64], title[96];
	snprintf(name, sizeof name, "%s%d", cupti_tables[0].csv, r->rank);
	snprintf(title, sizeof title, "CUPTI counters per kernel and operator, rank %d", r->rank);
	struct atable *t = atable_new(name, title, cols);
	free(cols);
	free(offs);
	buf_free(&names);
	/* HTA's ts is an int64 column unless the trace had fractional times;
	 * dur and end are when every event had integer times */
	if (!r->float_ts)
		atable_int_text(t, C_TS);
	if (r->int_times) {
		atable_int_text(t, C_DUR);
		atable_int_text(t, C_NFIXED + nkeys + T_END);
	}
	for (size_t k = T_DEPTH; on_cpu && k <= T_NUM_KERNELS; k++)
		atable_int_text(t, C_NFIXED + nkeys + k);
	return t;
}

static void set_id(struct atable *t, size_t row, size_t col, const struct trace_rank *r, int64_t v, bool str)
{
	if (!str) {
		atable_set_i(t, row, col, v);
		return;
	}
	char tmp[24];
	if (trace_id_is_str(v)) {
		atable_set_s(t, row, col, trace_strtab_get(&r->strs, (uint32_t)(v - TRACE_ID_STR_BASE)));
		return;
	}
	snprintf(tmp, sizeof tmp, "%lld", (long long)v);
	atable_set_s(t, row, col, tmp);
}

struct atable *analyze_cupti_rank(const struct trace_rank *r)
{
	/* the measured kernels and the launches */
	uint32_t *kern = xmalloc((r->n ? r->n : 1) * sizeof *kern);
	uint32_t *lau = xmalloc((r->n ? r->n : 1) * sizeof *lau);
	size_t nk = 0, nl = 0;
	/* HTA: cat matches "cuda_runtime" and name matches "cudaLaunchKernel"
	 * (re.match: a prefix); decided once per interned string */
	uint8_t *pre = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (uint32_t s = 0; s < r->strs.n; s++)
		pre[s] = (strncmp(r->strs.s[s], "cuda_runtime", 12) == 0 ? 1 : 0) |
			 (strncmp(r->strs.s[s], "cudaLaunchKernel", 16) == 0 ? 2 : 0);
	bool str_ids = false, iter_nan = false, any_on_cpu = false;
	for (size_t i = 0; i < r->n; i++) {
		if (r->kind[i] == TRACE_CAT_CUDA_PROFILER_RANGE) {
			kern[nk++] = (uint32_t)i;
			str_ids |= trace_id_is_str(r->pid[i]) || trace_id_is_str(r->tid[i]);
			iter_nan |= r->iteration[i] == TRACE_ITER_NAN;
			any_on_cpu |= on_cpu_thread(r, i);
		} else if ((pre[r->cat[i]] & 1) && (pre[r->name[i]] & 2)) {
			lau[nl++] = (uint32_t)i;
		}
	}
	free(pre);
	sort_by_ts(r, kern, nk);
	sort_by_ts(r, lau, nl);

	/* the counters: every arg key of the kernels, in first-seen order; an
	 * integer column unless some value was written with a fraction */
	uint32_t *keys = NULL;
	bool *key_int = NULL;
	size_t nkeys = 0;
	{
		uint8_t *seen = xcalloc(r->strs.n ? r->strs.n : 1, 1);
		for (size_t a = 0; a < r->nrange_args; a++) {
			uint32_t k = r->range_args[a].key;
			if (k >= r->strs.n)
				continue;
			if (!seen[k]) {
				seen[k] = 1;
				keys = xrealloc(keys, (nkeys + 1) * sizeof *keys);
				key_int = xrealloc(key_int, (nkeys + 1) * sizeof *key_int);
				keys[nkeys] = k;
				key_int[nkeys++] = true;
			}
		}
		for (size_t a = 0; a < r->nrange_args; a++)
			if (!r->range_args[a].is_int || r->range_args[a].value != floor(r->range_args[a].value))
				for (size_t k = 0; k < nkeys; k++)
					if (keys[k] == r->range_args[a].key)
						key_int[k] = false;
		free(seen);
	}
	struct atable *t = new_table(r, keys, nkeys, key_int, str_ids, iter_nan, any_on_cpu);

	if (nk == 0) {
		atable_note(t, "rank %d: no CUPTI counters (no cuda_profiler_range events; collect them with "
			       "the PyTorch profiler's experimental_config profiler_metrics): cupti unavailable",
			    r->rank);
		t->unavailable = true;
		goto out;
	}
	if (nk != nl) {
		atable_note(t,
			    "rank %d: %zu kernels with CUPTI counters but %zu kernel launches (cudaLaunchKernel*): "
			    "they are paired by order, so none can be attributed (HTA leaves the rank out): "
			    "cupti unavailable",
			    r->rank, nk, nl);
		t->unavailable = true;
		goto out;
	}

	int32_t *slot = xmalloc(r->n * sizeof *slot);
	memset(slot, -1, r->n * sizeof *slot);
	for (size_t j = 0; j < nl; j++)
		slot[lau[j]] = (int32_t)j;
	struct stacks st = {0};
	st.off = xcalloc(nl, sizeof *st.off);
	st.cnt = xcalloc(nl, sizeof *st.cnt);
	launch_stacks(r, slot, &st);
	free(slot);

	size_t arg_key[sizeof arg_cols / sizeof arg_cols[0]];
	for (size_t a = 0; a < sizeof arg_cols / sizeof arg_cols[0]; a++)
		arg_key[a] = trace_strtab_find(&r->strs, arg_cols[a].key, strlen(arg_cols[a].key));
	static const size_t arg_col_pos[] = {C_WAIT_STREAM, C_WAIT_CORR, C_PY, C_PY_PARENT,
					     C_IN_NELEMS, C_OUT_NELEMS, C_GROUP, C_PRANK};
	size_t tail = C_NFIXED + nkeys, no_op = 0, on_cpu = 0;
	struct buf stack = BUF_INIT;
	for (size_t j = 0; j < nk; j++) {
		size_t i = kern[j], row = atable_add_row(t);
		atable_set_i(t, row, C_INDEX, r->idx[i]);
		atable_set_s(t, row, C_CAT, trace_strtab_get(&r->strs, r->cat[i]));
		atable_set_s(t, row, C_NAME, trace_name(r, i));
		set_id(t, row, C_PID, r, r->pid[i], str_ids);
		set_id(t, row, C_TID, r, r->tid[i], str_ids);
		atable_set_f(t, row, C_TS, r->ts[i]);
		atable_set_f(t, row, C_DUR, r->dur[i]);
		atable_set_i(t, row, C_STREAM, r->stream[i]);
		atable_set_i(t, row, C_CORR, r->correlation[i]);
		atable_set_i(t, row, C_BYTES, r->bytes[i]);
		atable_set_f(t, row, C_BW, r->mem_bw_gbps[i]);
		for (size_t a = 0; a < sizeof arg_cols / sizeof arg_cols[0]; a++) {
			const struct trace_range_arg *v =
				arg_key[a] == TRACE_NO_STR ? NULL : range_arg(r, r->idx[i], (uint32_t)arg_key[a]);
			atable_set_i(t, row, arg_col_pos[a], v ? (int64_t)v->value : arg_cols[a].dflt);
		}
		/* string args: a profiler range has none (only numeric ones are
		 * kept): HTA's defaults */
		atable_set_s(t, row, C_INPUT_DIMS, "-1");
		atable_set_s(t, row, C_INPUT_TYPE, "-1");
		atable_set_s(t, row, C_INPUT_STRIDES, "-1");
		atable_set_i(t, row, C_EXT, r->external_id[i]);
		atable_set_s(t, row, C_COLL, "");
		atable_set_s(t, row, C_DTYPE, "");
		atable_set_s(t, row, C_IN_SPLIT, "[]");
		atable_set_s(t, row, C_OUT_SPLIT, "[]");
		for (size_t k = 0; k < nkeys; k++) {
			const struct trace_range_arg *v = range_arg(r, r->idx[i], keys[k]);
			if (key_int[k])
				atable_set_i(t, row, C_NFIXED + k, v ? (int64_t)v->value : -1);
			else
				atable_set_f(t, row, C_NFIXED + k, v ? v->value : -1);
		}
		atable_set_i(t, row, tail + T_INDEX_CORR, trace_index_correlation(r, i));
		if (iter_nan)
			atable_set_f(t, row, tail + T_ITERATION,
				     r->iteration[i] == TRACE_ITER_NAN ? NAN : r->iteration[i]);
		else
			atable_set_i(t, row, tail + T_ITERATION, r->iteration[i]);
		/* HTA's `end` is computed before the alignment and never moved */
		atable_set_f(t, row, tail + T_END, r->ts[i] + r->dur[i] + r->min_ts);
		if (on_cpu_thread(r, i)) {
			/* a range on a CPU thread is a node of HTA's call graph:
			 * its depth and kernel sums are not computed here */
			on_cpu++;
			for (size_t c = T_DEPTH; c <= T_LAST_END; c++)
				atable_set_f(t, row, tail + c, NAN);
		} else {
			/* HTA's call-graph columns of a row outside every CPU
			 * stack: depth, height, parent -1, no kernels */
			static const double dflt[] = {-1, -1, -1, 0, 0, 0, -1, -1};
			for (size_t c = T_DEPTH; c <= T_LAST_END; c++) {
				if (t->cols[tail + c].type == ACOL_INT)
					atable_set_i(t, row, tail + c, (int64_t)dflt[c - T_DEPTH]);
				else
					atable_set_f(t, row, tail + c, dflt[c - T_DEPTH]);
			}
		}
		atable_set_i(t, row, tail + T_INDEX_RUNTIME, r->idx[lau[j]]);
		buf_reset(&stack);
		for (uint32_t o = 0; o < st.cnt[j]; o++) {
			if (o)
				buf_putc(&stack, '|');
			buf_puts(&stack, trace_name(r, st.ops[st.off[j] + o]));
		}
		atable_set_s(t, row, tail + T_OP_STACK, stack.len ? stack.data : "");
		atable_set_s(t, row, tail + T_TOP, st.cnt[j] ? trace_name(r, st.ops[st.off[j]]) : "");
		atable_set_s(t, row, tail + T_BOTTOM,
			     st.cnt[j] ? trace_name(r, st.ops[st.off[j] + st.cnt[j] - 1]) : "");
		no_op += st.cnt[j] == 0;
	}
	buf_free(&stack);
	atable_note(t, "rank %d: %zu kernels with %zu CUPTI counters, paired with the launches by order "
		       "(rows: --format csv or json)",
		    r->rank, nk, nkeys);
	if (no_op)
		atable_note(t, "rank %d: %zu launches have no cpu_op around them: empty operator names "
			       "(HTA raises IndexError)",
			    r->rank, no_op);
	if (on_cpu)
		atable_note(t, "rank %d: %zu profiler ranges lie on a CPU thread: their call-graph columns "
			       "(depth .. last_kernel_end) are not computed",
			    r->rank, on_cpu);
	if (st.negative)
		atable_note(t, "rank %d: %zu CPU rows have a negative duration after ns rounding, taken as 0 "
			       "(HTA's call stack raises ValueError on them)",
			    r->rank, st.negative);
	free(st.ops);
	free(st.off);
	free(st.cnt);
out:
	free(keys);
	free(key_int);
	free(kern);
	free(lau);
	return t;
}

size_t analyze_cupti(const struct trace_set *set, const struct analyze_ranks *sel, struct atable ***out)
{
	*out = xcalloc(set->nranks ? set->nranks : 1, sizeof **out);
	size_t n = 0;
	for (size_t k = 0; k < set->nranks; k++)
		if (analyze_rank_selected(sel, set->ranks[k]->rank))
			(*out)[n++] = analyze_cupti_rank(set->ranks[k]);
	return n;
}

/* ---- the `cupti` row of the analysis table ---- */

static void cupti_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	(void)c;
	if (view->nranks == 0) {
		static const char *const cols[] = {"index:i", "name:s", NULL};
		out[0] = atable_new(cupti_tables[0].csv, "CUPTI counters per kernel and operator", cols);
		atable_note(out[0], "no selected rank is in the trace: cupti unavailable");
		out[0]->unavailable = true;
		return;
	}
	out[0] = analyze_cupti_rank(view->ranks[0]);
}

/* summary: the kind of every row is known, one early-exit scan */
static const char *cupti_skip(const void *opts, const struct trace_set *view)
{
	(void)opts;
	for (size_t k = 0; k < view->nranks; k++) {
		const struct trace_rank *r = view->ranks[k];
		for (size_t i = 0; i < r->n; i++)
			if (r->kind[i] == TRACE_CAT_CUDA_PROFILER_RANGE)
				return NULL;
	}
	return "no CUPTI counters (no cuda_profiler_range events)";
}

const struct analysis analysis_cupti = {
	.name = "cupti",
	.help = "CUPTI range-profiler counters per kernel, attributed to the operators that launched it, per rank",
	.load = ANALYSIS_LOAD_RANGE_OPS | ANALYSIS_LOAD_PROFILER_ARGS,
	.tables = cupti_tables,
	.ntables = 1,
	.cost = 1,
	.rank = cupti_rank,
	.skip = cupti_skip,
};
