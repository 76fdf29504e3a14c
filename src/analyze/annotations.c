/*
 * annotations.c - the `annotations` analysis: HTA's user annotation
 * breakdowns (get_gpu_user_annotation_breakdown, semantics doc section
 * 13): per rank, the time of each user annotation name, aggregated like the
 * per-kernel statistics of the kernel breakdown (sum, max, min, stddev,
 * mean, and HTA's folding into "others" past 1000 names or 0.8 of the
 * cumulative time).  gpu_user_annotation_breakdown reads the rows of
 * category gpu_user_annotation (the annotation's span on the GPU),
 * cpu_user_annotation_breakdown those of user_annotation (its span on the
 * CPU, HTA's use_gpu_annotation=False).
 *
 * After HTA's loading (the last ProfilerStep and uncorrelated GPU rows
 * dropped, 1.3) a multi-step trace keeps few gpu_user_annotation rows; we
 * read the same model, so we report what HTA reports.  A rank without any
 * such row gets a note ("unavailable"), not zeros: HTA returns None there.
 *
 * Cost: one pass over each rank's rows, a counter per interned name, and a
 * sort of the names.  The loader keeps the user_annotation rows for it
 * (ANALYSIS_LOAD_ANNOTATIONS) but still drops the cpu_op rows, most of a
 * trace: summary costs about what it did without this analysis.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"

struct annotations_options {
	bool cpu; /* --cpu: the CPU table on stdout instead of the GPU one */
};

/* Like `kernels`: `--format csv` prints exactly one of HTA's files; summary
 * shows both. */
static bool gpu_shown(const void *opts, const struct analysis_show *s)
{
	const struct annotations_options *o = opts;
	return s->summary || !o->cpu;
}

static bool cpu_shown(const void *opts, const struct analysis_show *s)
{
	const struct annotations_options *o = opts;
	return s->summary || o->cpu;
}

static const struct analysis_table annotations_tables[] = {
	{.csv = "gpu_user_annotation_breakdown", .shown = gpu_shown},
	{.csv = "cpu_user_annotation_breakdown", .shown = cpu_shown},
};

/* HTA's defaults of get_gpu_user_annotation_breakdown */
#define ANN_NUM 1000
#define ANN_RATIO 0.8

static bool is_gpu_annotation(const struct trace_rank *r, size_t i)
{
	return r->kind[i] == TRACE_CAT_GPU_USER_ANNOTATION;
}

static bool is_cpu_annotation(const struct trace_rank *r, size_t i)
{
	return r->kind[i] == TRACE_CAT_USER_ANNOTATION;
}

static int cmp_row_name(const void *a, const void *b)
{
	const struct kernel_metric_row *x = a, *y = b;
	/* "others" sorts among the names by code point, as in HTA */
	return strcmp(x->name, y->name);
}

static struct atable *breakdown(const struct trace_set *set, const struct analyze_ranks *sel, bool gpu)
{
	static const char *const cols[] = {"name:s",   "sum (us):f",  "max (us):f", "min (us):f",
					   "stddev:f", "mean (us):f", "rank:i",     NULL};
	const struct analysis_table *tab = &annotations_tables[gpu ? 0 : 1];
	struct atable *t = atable_new(tab->csv,
				      gpu ? "GPU user annotations per rank (time on the GPU, us)"
					  : "CPU user annotations per rank (time on the CPU, us)",
				      cols);
	const struct kernel_breakdown_opts ko = {.duration_ratio = ANN_RATIO, .num_kernels = ANN_NUM};
	/* as in kernel_metrics: HTA's sum/max/min stay int64 ("45", not
	 * "45.0") when every trace had integer ts and dur only */
	bool ints = set->nranks > 0;
	for (size_t k = 0; k < set->nranks; k++)
		ints &= set->ranks[k]->int_times || !analyze_rank_selected(sel, set->ranks[k]->rank);
	for (size_t c = 1; ints && c <= 3; c++)
		atable_int_text(t, c);
	bool any = false;
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		if (!analyze_rank_selected(sel, r->rank))
			continue;
		any = true;
		struct kernel_metric_row *rows;
		size_t n;
		kernel_name_metrics(r, gpu ? is_gpu_annotation : is_cpu_annotation, &ko, &rows, &n);
		if (n == 0)
			atable_note(t, "rank %d: no %s events: %s user annotation breakdown unavailable", r->rank,
				    gpu ? "gpu_user_annotation" : "user_annotation", gpu ? "GPU" : "CPU");
		if (n > 1)
			qsort(rows, n, sizeof *rows, cmp_row_name);
		bool folded = false;
		for (size_t j = 0; j < n; j++) {
			size_t row = atable_add_row(t);
			atable_set_s(t, row, 0, rows[j].name);
			atable_set_f(t, row, 1, rows[j].sum);
			atable_set_f(t, row, 2, rows[j].max);
			atable_set_f(t, row, 3, rows[j].min);
			atable_set_f(t, row, 4, rows[j].stddev);
			atable_set_f(t, row, 5, rows[j].mean);
			atable_set_i(t, row, 6, r->rank);
			folded |= rows[j].others;
		}
		if (folded)
			atable_note(t,
				    "rank %d: more than %d annotation names: those past %g of the cumulative time "
				    "are 'others' (HTA: then sum = max = min = mean = each name's total)",
				    r->rank, ANN_NUM, ANN_RATIO);
		free(rows);
	}
	if (!any)
		atable_note(t, "no selected rank is in the trace");
	/* no rank has such events: undefined (HTA returns None), not an
	 * empty breakdown; summary lists it as skipped */
	if (any && t->nrows == 0)
		t->unavailable = true;
	return t;
}

void analyze_annotations(const struct trace_set *set, const struct analyze_ranks *sel, struct atable **gpu,
			 struct atable **cpu)
{
	if (gpu)
		*gpu = breakdown(set, sel, true);
	if (cpu)
		*cpu = breakdown(set, sel, false);
}

/* ---- the `annotations` row of the analysis table ---- */

static const struct annotations_options annotations_defaults = {.cpu = false};
static const struct analysis_opt annotations_opts[] = {
	{{"cpu", 0, ARG_BOOL, NULL, NULL,
	  "annotations: print the CPU user annotation table instead of the GPU one", 0, 0, NULL},
	 offsetof(struct annotations_options, cpu)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static void annotations_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	analyze_annotations(view, NULL, c->want[0] ? &out[0] : NULL, c->want[1] ? &out[1] : NULL);
}

static const char *annotations_skip(const void *opts, const struct trace_set *view)
{
	(void)opts;
	for (size_t k = 0; k < view->nranks; k++)
		for (size_t i = 0; i < view->ranks[k]->n; i++)
			if (is_gpu_annotation(view->ranks[k], i) || is_cpu_annotation(view->ranks[k], i))
				return NULL;
	return "no user annotation events";
}

const struct analysis analysis_annotations = {
	.name = "annotations",
	.help = "time per user annotation (GPU and CPU spans) per rank",
	.load = ANALYSIS_LOAD_ANNOTATIONS,
	.opts = {sizeof(struct annotations_options), &annotations_defaults, annotations_opts, NULL},
	.tables = annotations_tables,
	.ntables = 2,
	.cost = 1,
	.rank = annotations_rank,
	.skip = annotations_skip,
};
