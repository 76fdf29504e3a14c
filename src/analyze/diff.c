/*
 * diff.c - trace diff (HTA TraceDiff.compare_traces and ops_diff, semantics
 * doc section 10): `dyno analyze diff CONTROL TEST` compares one rank and
 * one ProfilerStep of two traces (or rank directories) op name by op name:
 * how often each ran and for how long on each side, and the difference.
 *
 * Rows are those whose iteration is the chosen ProfilerStep (default: the
 * smallest of each side); CPU = no stream, GPU = a stream.  Names are
 * grouped as they are or by their short name (1.7).  Six tables come out,
 * HTA's compare_traces_{all,cpu,gpu}[_short], plus ops_diff (the added,
 * deleted, increased, decreased and unchanged op names, one row each,
 * from the full-name table of all rows).  HTA's diff loads with
 * parse_traces only, so this analysis asks the loader for every
 * ProfilerStep and for python_function rows (ANALYSIS_LOAD_*).
 *
 * Costs: one pass over each side's rows into per-name-id counters (four
 * doubles per interned string), then a sort of the distinct names
 * (O(k log k), k = distinct names, a few hundred); no per-event allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"

enum { T_ALL, T_ALL_SHORT, T_CPU, T_CPU_SHORT, T_GPU, T_GPU_SHORT, T_OPS, T_COUNT };

static const char *const device_names[] = {"all", "cpu", "gpu"};

static bool diff_shown(int t, const struct diff_options *o, const struct analysis_show *s)
{
	if (t == T_OPS)
		return true;
	int dev = 0;
	for (int d = 0; d < 3; d++)
		if (o->device && strcmp(o->device, device_names[d]) == 0)
			dev = d;
	(void)s;
	return t == 2 * dev + (o->short_names ? 1 : 0);
}

#define SHOWN_FN(t)                                                                                                    \
	static bool shown_##t(const void *o, const struct analysis_show *s) { return diff_shown(t, o, s); }
SHOWN_FN(T_ALL)
SHOWN_FN(T_ALL_SHORT)
SHOWN_FN(T_CPU)
SHOWN_FN(T_CPU_SHORT)
SHOWN_FN(T_GPU)
SHOWN_FN(T_GPU_SHORT)

static const struct analysis_table diff_tables[T_COUNT] = {
	{.csv = "compare_traces_all", .shown = shown_T_ALL},
	{.csv = "compare_traces_all_short", .shown = shown_T_ALL_SHORT},
	{.csv = "compare_traces_cpu", .shown = shown_T_CPU},
	{.csv = "compare_traces_cpu_short", .shown = shown_T_CPU_SHORT},
	{.csv = "compare_traces_gpu", .shown = shown_T_GPU},
	{.csv = "compare_traces_gpu_short", .shown = shown_T_GPU_SHORT},
	{.csv = "ops_diff"},
};

/* HTA's shorten_name (1.7) into out: memory kernels and names with neither
 * '<' nor '(' as they are; else without "->", without the text inside
 * balanced <...> and (...), and only the last space-separated word. */
static void short_name(const char *s, bool memory, struct buf *out)
{
	out->len = 0;
	buf_puts(out, "");
	if (memory || (!strchr(s, '<') && !strchr(s, '('))) {
		buf_puts(out, s);
		return;
	}
	int depth = 0;
	for (const char *p = s; *p; p++) {
		if (p[0] == '-' && p[1] == '>') {
			p++;
			continue;
		}
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (depth == 0)
			buf_putc(out, *p);
	}
	/* the last space-separated word (a trailing space leaves "") */
	const char *last = strrchr(out->data, ' ');
	if (last) {
		size_t off = (size_t)(last + 1 - out->data);
		memmove(out->data, out->data + off, out->len - off + 1);
		out->len -= off;
	}
}

/* One side: the chosen rank and iteration, per name id its CPU and GPU
 * count and duration. */
struct side {
	const struct trace_rank *r;
	int32_t iter;
	double *cnt[2], *dur[2]; /* [0] CPU, [1] GPU, by name id */
	char **shortn;           /* short name by id (NULL until asked) */
};

/* One op name of one side in a table being joined. */
struct entry {
	const char *name;
	int side; /* 0 control, 1 test */
	double cnt, dur;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->side - y->side;
}

static void side_count(struct side *s)
{
	const struct trace_rank *r = s->r;
	for (int d = 0; d < 2; d++) {
		s->cnt[d] = xcalloc(r->strs.n + 1, sizeof(double));
		s->dur[d] = xcalloc(r->strs.n + 1, sizeof(double));
	}
	for (size_t i = 0; i < r->n; i++) {
		if (r->iteration[i] != s->iter || r->name[i] >= r->strs.n)
			continue;
		int d = trace_is_gpu(r, i);
		s->cnt[d][r->name[i]] += 1;
		s->dur[d][r->name[i]] += r->dur[i];
	}
}

static void side_short_names(struct side *s)
{
	const struct trace_rank *r = s->r;
	s->shortn = xcalloc(r->strs.n + 1, sizeof(char *));
	struct buf b = BUF_INIT;
	for (uint32_t id = 0; id < r->strs.n; id++) {
		if (!s->cnt[0][id] && !s->cnt[1][id])
			continue;
		short_name(r->strs.s[id], r->str_ktype[id] == TRACE_KT_MEMORY, &b);
		s->shortn[id] = xstrdup(b.data);
	}
	buf_free(&b);
}

static void side_free(struct side *s)
{
	for (int d = 0; d < 2; d++) {
		free(s->cnt[d]);
		free(s->dur[d]);
	}
	if (s->shortn)
		for (uint32_t id = 0; id < s->r->strs.n; id++)
			free(s->shortn[id]);
	free(s->shortn);
}

/* One compare_traces table: devices d0..d1 (0 CPU, 1 GPU), full or short
 * names; the outer join of the two sides on the name, sorted by name. */
static struct atable *new_compare(int t)
{
	static const char *const cols[] = {"name:s", "control_counts:f", "control_total_duration:f", "test_counts:f",
					   "test_total_duration:f", "diff_counts:f", "diff_duration:f",
					   "counts_change_categories:s", NULL};
	static const char *const short_cols[] = {"short_name:s", "control_counts:f", "control_total_duration:f",
						 "test_counts:f", "test_total_duration:f", "diff_counts:f",
						 "diff_duration:f", "counts_change_categories:s", NULL};
	static const char *const titles[] = {"Trace diff: all ops", "Trace diff: CPU ops", "Trace diff: GPU ops"};
	return atable_new(diff_tables[t].csv, titles[t / 2], t & 1 ? short_cols : cols);
}

static struct atable *compare_table(struct side sides[2], int t, int d0, int d1, bool shortn)
{
	struct atable *tab = new_compare(t);
	size_t cap = 0, n = 0;
	for (int k = 0; k < 2; k++)
		cap += sides[k].r->strs.n;
	struct entry *e = xmalloc((cap ? cap : 1) * sizeof *e);
	for (int k = 0; k < 2; k++) {
		const struct side *s = &sides[k];
		for (uint32_t id = 0; id < s->r->strs.n; id++) {
			double c = 0, du = 0;
			for (int d = d0; d <= d1; d++) {
				c += s->cnt[d][id];
				du += s->dur[d][id];
			}
			if (c > 0)
				e[n++] = (struct entry){shortn ? s->shortn[id] : s->r->strs.s[id], k, c, du};
		}
	}
	qsort(e, n, sizeof *e, cmp_entry);
	/* pandas: a side's columns turn float when the join left a hole in
	 * them (NaN, then filled with 0), durations when a side had fractional
	 * times */
	bool hole[2] = {false, false};
	/* HTA's join keeps control's names first (sorted), then the names
	 * only test has (sorted): pass 0 writes the first, pass 1 the others */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n;) {
			/* same-side duplicates (two ids, one short name) add up */
			double c[2] = {0, 0}, du[2] = {0, 0};
			bool present[2] = {false, false};
			const char *name = e[i].name;
			size_t j = i;
			for (; j < n && strcmp(e[j].name, name) == 0; j++) {
				c[e[j].side] += e[j].cnt;
				du[e[j].side] += e[j].dur;
				present[e[j].side] = true;
			}
			i = j;
			if (present[0] != (pass == 0))
				continue;
			hole[0] |= !present[0];
			hole[1] |= !present[1];
			size_t row = atable_add_row(tab);
			double dc = c[1] - c[0];
			atable_set_s(tab, row, 0, name);
			atable_set_f(tab, row, 1, c[0]);
			atable_set_f(tab, row, 2, du[0]);
			atable_set_f(tab, row, 3, c[1]);
			atable_set_f(tab, row, 4, du[1]);
			atable_set_f(tab, row, 5, dc);
			atable_set_f(tab, row, 6, du[1] - du[0]);
			atable_set_s(tab, row, 7, dc > 0 ? "+" : dc < 0 ? "-" : "=");
		}
	bool ints[2] = {!hole[0] && sides[0].r->int_times, !hole[1] && sides[1].r->int_times};
	if (!hole[0])
		atable_int_text(tab, 1);
	if (ints[0])
		atable_int_text(tab, 2);
	if (!hole[1])
		atable_int_text(tab, 3);
	if (ints[1])
		atable_int_text(tab, 4);
	if (!hole[0] && !hole[1])
		atable_int_text(tab, 5);
	if (ints[0] && ints[1])
		atable_int_text(tab, 6);
	free(e);
	return tab;
}

/* ops_diff from the full-name table of all rows: one row per op name,
 * the categories in HTA's key order, names in the table's order. */
static struct atable *ops_table(const struct atable *all)
{
	static const char *const cols[] = {"change:s", "name:s", NULL};
	static const char *const cats[] = {"added", "deleted", "increased", "decreased", "unchanged"};
	struct atable *t = atable_new(diff_tables[T_OPS].csv, "Trace diff: ops added, deleted, more or fewer", cols);
	for (int cat = 0; cat < 5; cat++)
		for (size_t r = 0; r < all->nrows; r++) {
			double c = all->cells[r * all->ncols + 1].f, tc = all->cells[r * all->ncols + 3].f;
			double d = tc - c;
			bool in = cat == 0   ? c == 0 && tc > 0
				  : cat == 1 ? c > 0 && tc == 0
				  : cat == 2 ? c > 0 && d > 0
				  : cat == 3 ? tc > 0 && d < 0
					     : tc > 0 && d == 0;
			if (!in)
				continue;
			size_t row = atable_add_row(t);
			atable_set_s(t, row, 0, cats[cat]);
			atable_set_s(t, row, 1, all->cells[r * all->ncols].s);
		}
	return t;
}

/* The iteration of a side: the one asked for, else its smallest; false
 * (with a note) when it has none. */
static bool pick_iteration(const struct trace_rank *r, const char *label, int64_t want, int32_t *out,
			   struct atable *t)
{
	if (want < 0) {
		if (r->niterations == 0) {
			atable_note(t, "%s rank %d: no ProfilerStep in the trace: trace diff unavailable", label,
				    r->rank);
			return false;
		}
		*out = r->iterations[0];
		return true;
	}
	for (size_t k = 0; k < r->niterations; k++)
		if (r->iterations[k] == want) {
			*out = (int32_t)want;
			return true;
		}
	atable_note(t, "%s rank %d: no ProfilerStep#%lld (it has %zu iterations%s%d..%d): trace diff unavailable",
		    label, r->rank, (long long)want, r->niterations, r->niterations ? ", " : "",
		    r->niterations ? r->iterations[0] : 0,
		    r->niterations ? r->iterations[r->niterations - 1] : 0);
	return false;
}

void analyze_diff(const struct trace_set *control, const struct trace_set *test, const struct diff_select *sel,
		  struct atable **out)
{
	const struct trace_set *sets[2] = {control, test};
	static const char *const labels[2] = {"control", "test"};
	struct side sides[2];
	memset(sides, 0, sizeof sides);
	bool ok = true;
	/* where a side cannot be compared, every table is empty with the reason */
	struct atable *why = atable_new("ops_diff", "Trace diff", (const char *const[]){"change:s", "name:s", NULL});
	for (int k = 0; k < 2; k++) {
		const struct trace_rank *r = NULL;
		for (size_t i = 0; i < sets[k]->nranks && !r; i++)
			if (sel->rank < 0 || sets[k]->ranks[i]->rank == sel->rank)
				r = sets[k]->ranks[i];
		if (!r) {
			if (sel->rank < 0)
				atable_note(why, "%s: no trace: trace diff unavailable", labels[k]);
			else
				atable_note(why, "%s: no rank %d: trace diff unavailable", labels[k], (int)sel->rank);
			ok = false;
			continue;
		}
		sides[k].r = r;
		ok &= pick_iteration(r, labels[k], sel->iteration, &sides[k].iter, why);
	}
	if (!ok) {
		for (int t = 0; t < T_COUNT; t++) {
			out[t] = t == T_OPS ? why : new_compare(t);
			if (t != T_OPS)
				buf_append(&out[t]->notes, why->notes.data, why->notes.len);
		}
		return;
	}
	atable_free(why);
	for (int k = 0; k < 2; k++) {
		side_count(&sides[k]);
		side_short_names(&sides[k]);
	}
	for (int t = 0; t < T_OPS; t++) {
		int dev = t / 2; /* 0 all, 1 CPU, 2 GPU */
		int d0 = dev == 2 ? 1 : 0, d1 = dev == 1 ? 0 : 1;
		out[t] = compare_table(sides, t, d0, d1, t & 1);
		for (int k = 0; k < 2; k++)
			atable_note(out[t], "%s: rank %d, ProfilerStep#%d", labels[k], sides[k].r->rank,
				    (int)sides[k].iter);
	}
	out[T_OPS] = ops_table(out[T_ALL]);
	for (int k = 0; k < 2; k++)
		side_free(&sides[k]);
}

/* ---- the `diff` row of the analysis table ---- */

static const struct diff_options diff_defaults = {.iteration = -1, .device = "all"};
static const struct analysis_opt diff_opts_rows[] = {
	{{"iteration", 0, ARG_INT, NULL, "N", "diff: the ProfilerStep compared (default: each side's first)", 0,
	  INT32_MAX, NULL},
	 offsetof(struct diff_options, iteration)},
	{{"device", 0, ARG_STRING, NULL, "D", "diff: the table shown: all, cpu or gpu ops", 0, 0, NULL},
	 offsetof(struct diff_options, device)},
	{{"short-names", 0, ARG_BOOL, NULL, NULL, "diff: show the table by short op names", 0, 0, NULL},
	 offsetof(struct diff_options, short_names)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static int diff_check(const void *opts, struct buf *err)
{
	const struct diff_options *o = opts;
	for (int d = 0; d < 3; d++)
		if (strcmp(o->device, device_names[d]) == 0)
			return 0;
	buf_printf(err, "bad --device '%s' (all, cpu or gpu)", o->device);
	return -1;
}

static void diff_pair(const struct analysis_ctx *c, const struct trace_set *control, const struct trace_set *test,
		      struct atable **out)
{
	const struct diff_options *o = c->opts;
	/* the views hold the selected rank, or every rank (then the first) */
	struct diff_select sel = {-1, o->iteration};
	analyze_diff(control, test, &sel, out);
}

const struct analysis analysis_diff = {
	.name = "diff",
	.help = "CONTROL TEST: op counts and durations of one rank and iteration compared",
	.load = ANALYSIS_LOAD_CPU_OPS | ANALYSIS_LOAD_ALL_STEPS | ANALYSIS_LOAD_PYTHON,
	.opts = {sizeof(struct diff_options), &diff_defaults, diff_opts_rows, diff_check},
	.tables = diff_tables,
	.ntables = T_COUNT,
	.cost = 1,
	.pair = diff_pair,
	.own_command = true, /* two sets: never part of summary */
};
