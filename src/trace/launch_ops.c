/*
 * launch_ops.c - the aten:: operator around each kernel launch (HTA's
 * attribution in get_aten_op_kernels_and_delay, semantics doc section 13),
 * and the load step that keeps, of the CPU operator rows, only those that
 * attribution can choose (trace_load_opts.launch_ops_only).
 *
 * The attribution: a launch (cudaLaunchKernel, cudaLaunchKernelExC) gets
 * the cpu_op named aten::* on its process and thread that encloses it
 * (start <= launch start, end >= launch end) with the latest start; at
 * equal starts the first in the trace.  Operators and launches are sorted
 * by (pid, tid, ts) with the stable radix sort (three passes; Kineto
 * writes rows nearly in time order) and one sweep per thread keeps a stack
 * of the open operators.
 *
 * Why the load step: `summary` runs op-kernels, which needs the operators,
 * and they are most of a trace's rows (1.5 M of 2.9 M on a 1 GB
 * ns-resolution trace, 100 bytes each over the 15 columns), while op-kernels
 * reads only the few hundred thousand that enclose a launch.  Right after
 * the parse (and ns rounding), before the links, iterations and the
 * last-step filter allocate their scratch for every row, the other
 * operators are dropped and the columns shrunk, so the filter and the
 * analyses work on the small table.  The kept rows are a superset of the
 * chosen operators, so the attribution of every launch is unchanged (an
 * operator that would win over the chosen one in the smaller table would
 * have won in the full one); the other analyses of `summary` do not read
 * operator rows (they give the same numbers with skip_cpu_ops), except
 * counters' trace duration, the span of all rows: the latest operator
 * overall and the latest before the last ProfilerStep (what the last-step
 * filter keeps) are kept for it, and the dropped rows' earliest start goes
 * to skipped_min_ts, as skip_cpu_ops does.
 *
 * Cost: one pass over the names, one over the rows, three radix sorts of
 * the operators and of the launches (12 bytes each), one sweep; the
 * compaction moves the kept rows column by column in place, through a list
 * of the kept rows (4 bytes a row), on two threads where the parse had two.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/par.h"
#include "trace/columns.h"
#include "trace/load_internal.h"
#include "trace/rsort.h"

/* rows[0..n) by (pid, tid, ts), stable: three radix passes, last key first. */
static void sort_by_thread_ts(const struct trace_rank *r, uint32_t *rows, uint64_t *key, size_t n)
{
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_f64(r->ts[rows[i]]);
	rsort_kv(key, rows, n);
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_i64(r->tid[rows[i]]);
	rsort_kv(key, rows, n);
	for (size_t i = 0; i < n; i++)
		key[i] = rsort_key_i64(r->pid[rows[i]]);
	rsort_kv(key, rows, n);
}

static bool same_thread(const struct trace_rank *r, uint32_t a, uint32_t b)
{
	return r->pid[a] == r->pid[b] && r->tid[a] == r->tid[b];
}

/* thread of a before that of b */
static bool thread_before(const struct trace_rank *r, uint32_t a, uint32_t b)
{
	return r->pid[a] < r->pid[b] || (r->pid[a] == r->pid[b] && r->tid[a] < r->tid[b]);
}

size_t trace_launch_ops(const struct trace_rank *r, bool kernel_only, uint32_t **launch_out, int32_t **op_out)
{
	/* per name: 1 aten:: operator name, 2 launch name */
	uint8_t *what = xcalloc(r->strs.n ? r->strs.n : 1, 1);
	for (uint32_t id = 0; id < r->strs.n; id++) {
		const char *s = r->strs.s[id];
		what[id] = strncmp(s, "aten::", 6) == 0                                           ? 1
			   : strcmp(s, "cudaLaunchKernel") == 0 || strcmp(s, "cudaLaunchKernelExC") == 0 ? 2
												       : 0;
	}
	/* which rows are operators and launches: computed without a branch
	 * per row (the two kinds alternate with the runtime rows, and a test
	 * per row would be mispredicted half the time), appended by writing
	 * every row and advancing past the ones that count (one slot spare) */
	uint8_t *is_op = xmalloc(r->n ? r->n : 1);
	size_t no = 0, nl = 0;
	for (size_t i = 0; i < r->n; i++) {
		uint8_t w = what[r->name[i]];
		bool o = (w == 1) & (r->kind[i] == TRACE_CAT_CPU_OP);
		bool l = w == 2;
		if (kernel_only && l) /* launches only: rare enough to test */
			l = r->link[i] >= 0 && r->kind[r->link[i]] == TRACE_CAT_KERNEL;
		is_op[i] = (uint8_t)(o | (uint8_t)l << 1);
		no += o;
		nl += l;
	}
	uint32_t *ops = xmalloc((no + 1) * sizeof *ops), *ls = xmalloc((nl + 1) * sizeof *ls);
	no = nl = 0;
	for (size_t i = 0; i < r->n; i++) {
		ops[no] = ls[nl] = (uint32_t)i;
		no += is_op[i] & 1;
		nl += is_op[i] >> 1;
	}
	free(is_op);
	free(what);
	uint64_t *key = xmalloc((no > nl ? no : nl ? nl : 1) * sizeof *key);
	sort_by_thread_ts(r, ops, key, no);
	sort_by_thread_ts(r, ls, key, nl);
	free(key);
	/* operators starting together: the first in the trace is pushed last,
	 * so that it is the one found, as in HTA (the sort left them in row
	 * order) */
	for (size_t a = 0, b; a < no; a = b) {
		for (b = a + 1; b < no && same_thread(r, ops[a], ops[b]) && r->ts[ops[b]] == r->ts[ops[a]]; b++)
			;
		for (size_t x = a, y = b - 1; x < y; x++, y--) {
			uint32_t t = ops[x];
			ops[x] = ops[y];
			ops[y] = t;
		}
	}

	/* One sweep per thread.  Operators are pushed in start order; one that
	 * ended before the current time (less 1 µs: ns rounding can give a
	 * launch dur -1, so its end may be 1 before its start) can enclose
	 * nothing later and is popped. */
	int32_t *op = xmalloc((nl ? nl : 1) * sizeof *op);
	uint32_t *stack = xmalloc((no ? no : 1) * sizeof *stack);
	size_t i = 0, j = 0;
	while (j < nl) {
		uint32_t first = ls[j];
		while (i < no && thread_before(r, ops[i], first))
			i++;
		size_t sp = 0;
		for (; j < nl && same_thread(r, ls[j], first); j++) {
			uint32_t l = ls[j];
			double lts = r->ts[l], lend = lts + r->dur[l];
			for (; i < no && same_thread(r, ops[i], first) && r->ts[ops[i]] <= lts; i++) {
				uint32_t o = ops[i];
				while (sp && r->ts[stack[sp - 1]] + r->dur[stack[sp - 1]] < r->ts[o] - 1)
					sp--;
				stack[sp++] = o;
			}
			while (sp && r->ts[stack[sp - 1]] + r->dur[stack[sp - 1]] < lts - 1)
				sp--;
			op[j] = -1;
			for (size_t k = sp; k-- > 0;)
				if (r->ts[stack[k]] + r->dur[stack[k]] >= lend) {
					op[j] = (int32_t)stack[k];
					break;
				}
		}
	}
	free(stack);
	free(ops);
	*launch_out = ls;
	*op_out = op;
	return nl;
}

/* A row the step may drop: what skip_cpu_ops drops of the operators (no
 * stream, no correlation, not event 0, which HTA's lookups can hit). */
static bool droppable(const struct trace_rank *r, size_t i)
{
	/* & not &&: no branch per row */
	return (r->kind[i] == TRACE_CAT_CPU_OP) & (r->stream[i] == -1) & (r->correlation[i] == -1) & (r->idx[i] != 0);
}

struct compact_job {
	struct trace_rank *r;
	const uint32_t *src; /* the kept rows, ascending */
	size_t n;
};

/* Column c's kept rows moved down to rows 0..n (src[i] >= i: in place,
 * front to back), as whole 1-, 4- or 8-byte values (doubles by their
 * bits), then the column shrunk to n rows, which gives the dropped rows'
 * pages back (not in a column arena: columns.c).  A gather through the
 * index list, not a test per row: kept and dropped rows alternate, and the
 * branch would be mispredicted about every other row, 15 times over (1 ms
 * of a 35 MB trace's 75k rows). */
static void compact_column(void *ctx, size_t c)
{
	const struct compact_job *j = ctx;
	struct trace_rank *r = j->r;
	if (!trace_col_kept(r, c))
		return; /* an optional column this load did not ask for: NULL */
	void *col = *trace_col(r, c);
	trace_col_gather(col, col, trace_columns[c].size, j->src, j->n);
	trace_col_resize(r, c, j->n);
}

void trace_rank_keep_launch_ops(struct trace_rank *r, const struct trace_load_opts *opts)
{
	/* an MTIA rank (by its backend or, as HTA's device type, by its
	 * launch API's name) keeps every row: its last-step rule is not the
	 * one the latest operators are kept for */
	static const char mtia_api[] = "runFunction - job_prep_and_submit_for_execution";
	if (!opts->launch_ops_only || opts->skip_cpu_ops || r->gpu_device_mtia || r->n == 0 ||
	    trace_strtab_find(&r->strs, mtia_api, sizeof mtia_api - 1) != TRACE_NO_STR)
		return;
	/* cupti reads every operator of a rank with CUPTI counters */
	if (opts->keep_range_ops)
		for (size_t i = 0; i < r->n; i++)
			if (r->kind[i] == TRACE_CAT_CUDA_PROFILER_RANGE)
				return;
	/* rows named by a launch API stay whatever their category: HTA's
	 * device type (finish.c) is read from them */
	uint32_t cuda_api = trace_strtab_find(&r->strs, "cudaLaunchKernel", 16);
	uint32_t hip_api = trace_strtab_find(&r->strs, "hipLaunchKernel", 15);
	uint8_t *keep = xmalloc(r->n);
	for (size_t i = 0; i < r->n; i++)
		keep[i] = !droppable(r, i) | (r->name[i] == cuda_api) | (r->name[i] == hip_api);
	uint32_t *ls;
	int32_t *op;
	size_t nl = trace_launch_ops(r, false, &ls, &op);
	for (size_t j = 0; j < nl; j++)
		if (op[j] >= 0)
			keep[op[j]] = 1;
	free(ls);
	free(op);

	/* the latest operator overall and the latest before the last
	 * ProfilerStep's start (the last-step filter's rule, set.c) */
	uint32_t ev_sync = trace_strtab_find(&r->strs, "Event Sync", 10);
	uint32_t ctx_sync = trace_strtab_find(&r->strs, "Context Sync", 12);
	bool *step = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *step);
	for (uint32_t id = 0; id < r->strs.n; id++)
		step[id] = trace_is_step_name(r->strs.s[id]);
	double last_step = -INFINITY;
	for (size_t i = 0; i < r->n; i++)
		if (step[r->name[i]] && r->ts[i] > last_step && !trace_row_corr_gpu(r, i, ev_sync, ctx_sync))
			last_step = r->ts[i];
	free(step);
	/* the first row of the greatest ts among the dropped (and among the
	 * dropped before last_step): selects, not branches, as above */
	size_t latest = SIZE_MAX, latest_before = SIZE_MAX;
	double best = 0, best_before = 0;
	for (size_t i = 0; i < r->n; i++) {
		double t = r->ts[i];
		bool d = !keep[i];
		bool a = d & ((latest == SIZE_MAX) | (t > best));
		bool b = d & (t < last_step) & ((latest_before == SIZE_MAX) | (t > best_before));
		latest = a ? i : latest;
		best = a ? t : best;
		latest_before = b ? i : latest_before;
		best_before = b ? t : best_before;
	}
	if (latest != SIZE_MAX)
		keep[latest] = 1;
	if (latest_before != SIZE_MAX)
		keep[latest_before] = 1;

	/* the kept rows, and the dropped ones counted for the alignment, as
	 * skip_cpu_ops's are */
	uint32_t *src = xmalloc(r->n * sizeof *src);
	size_t n = 0;
	double min_ts = r->skipped_min_ts;
	for (size_t i = 0; i < r->n; i++) {
		src[n] = (uint32_t)i;
		n += keep[i];
		double t = keep[i] ? min_ts : r->ts[i];
		min_ts = t < min_ts ? t : min_ts;
	}
	free(keep);
	r->stats.skipped_cpu_ops += r->n - n;
	r->skipped_min_ts = min_ts;
	/* the columns on two threads when the loader split this file's parse
	 * (it saw a free core), as trace_rank_finish's steps */
	struct compact_job j = {r, src, n};
	par_for(TRACE_NCOLS, r->stats.parse_threads >= 2 ? 2 : 1, compact_column, &j);
	free(src);
	r->n = n;
	r->cap = n ? n : 1;
}
