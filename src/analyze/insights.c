/*
 * insights.c - the `insights` row of the analysis table: `dyno analyze
 * insights TRACE_OR_DIR [--metrics FILE]`.  It runs through the runner like
 * any analysis: its per-rank task measures what the rules need beyond the
 * other analyses (insight_facts.c; insight_attrib.c: the step waterfall,
 * every idle GPU microsecond attributed to what the launching host thread
 * did), the runner also runs the analyses it .uses (their tables are
 * computed, not shown), and its combine evaluates every rule of
 * insight_list.h over both into two tables: `insights` (one row per
 * finding: severity, rule, where, the number and its threshold, the
 * evidence, a recommendation, and what it costs in ms per step and % of
 * the step; ranked by that cost) and `insight_rules` (each rule: fired, ok
 * or not evaluated, with what it measured or why not).  The terminal shows
 * both as readable lines (their notes); csv and json give the rows.
 * Costs: the used analyses (those of summary but op-kernels and cupti), a
 * few linear passes per rank, a sort of each host thread's rows and of the
 * GPU rows (the attribution), and --metrics' parse.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/insights.h"

static const struct insight_rule *const rules[] = {
#define RULE(n) &insight_rule_##n,
#include "analyze/insight_list.h"
#undef RULE
};
enum { NRULES = sizeof rules / sizeof rules[0] };

const char *insight_severity_name(enum insight_severity s)
{
	return s == INSIGHT_HIGH ? "high" : s == INSIGHT_MEDIUM ? "medium" : "info";
}

static struct atable *findings_new(void)
{
	static const char *const cols[] = {"severity:s", "rule:s",  "rank:s",     "iteration:s", "stream:s",
					   "where:s",    "metric:s", "value:f", "threshold:f", "evidence:s",
					   "recommendation:s", "cost_ms_per_step:f", "cost_pct_of_step:f", "steps_from:s", "cost_kind:s",
					   NULL};
	return atable_new("insights", "Insights", cols);
}

static struct atable *rules_new(void)
{
	static const char *const cols[] = {"rule:s", "status:s", "findings:i", "measured:s", "threshold:s",
					   "measures:s", NULL};
	return atable_new("insight_rules", "Insight rules", cols);
}

void insight_add(struct insight_eval *e, const struct insight_finding *f)
{
	struct atable *t = e->t[INSIGHT_T_FINDINGS];
	size_t row = atable_add_row(t);
	char num[32];
	atable_set_s(t, row, 0, insight_severity_name(f->sev));
	atable_set_s(t, row, 1, e->rule->name);
	snprintf(num, sizeof num, "%d", f->rank);
	atable_set_s(t, row, 2, f->rank >= 0 ? num : "all");
	snprintf(num, sizeof num, "%lld", (long long)f->iteration);
	atable_set_s(t, row, 3, f->iteration >= 0 ? num : "");
	snprintf(num, sizeof num, "%lld", (long long)f->stream);
	atable_set_s(t, row, 4, f->stream >= 0 ? num : "");
	atable_set_s(t, row, 5, f->where ? f->where : "");
	atable_set_s(t, row, 6, e->rule->metric);
	atable_set_f(t, row, 7, f->value);
	atable_set_f(t, row, 8, f->threshold);
	atable_set_s(t, row, 9, f->evidence);
	atable_set_s(t, row, 10, e->rule->recommendation);
	bool cost = f->cost_us > 0 && f->step_us > 0;
	atable_set_f(t, row, INSIGHT_F_COST_MS, cost ? f->cost_us / 1e3 : NAN);
	atable_set_f(t, row, INSIGHT_F_COST_PCT, cost ? 100 * f->cost_us / f->step_us : NAN);
	atable_set_s(t, row, INSIGHT_F_STEPS_FROM, cost && f->steps_from ? f->steps_from : "");
	atable_set_s(t, row, INSIGHT_F_COST_KIND, !cost ? "" : f->busy_cost ? "busy" : "lost");
	e->fired++;
}

const struct atable *insight_table(const struct insight_eval *e, const char *name)
{
	for (size_t i = 0; e->results && i < e->results->n; i++)
		if (strcmp(e->results->v[i].name, name) == 0)
			return e->results->v[i].t;
	return NULL;
}

const char *insight_skipped(const struct insight_eval *e, const char *analysis)
{
	for (size_t i = 0; e->results && i < e->results->nskipped; i++)
		if (strcmp(e->results->skipped[i].analysis->name, analysis) == 0)
			return e->results->skipped[i].why;
	return NULL;
}

int insight_col(const struct atable *t, const char *name)
{
	for (size_t c = 0; t && c < t->ncols; c++)
		if (strcmp(t->cols[c].name, name) == 0)
			return (int)c;
	return -1;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double insight_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void insight_fmt_us(struct buf *b, double us)
{
	if (!isfinite(us))
		buf_puts(b, "-");
	else if (fabs(us) >= 1e6)
		buf_printf(b, "%.2f s", us / 1e6);
	else if (fabs(us) >= 1e3)
		buf_printf(b, "%.1f ms", us / 1e3);
	else
		buf_printf(b, "%.0f us", us);
}

/* ---- the row of the analysis table ---- */

static const struct insight_options insight_defaults = {NULL, 25.0};

static const struct analysis_opt insight_opts[] = {
	{{"metrics", 0, ARG_STRING, NULL, "FILE",
	  "insights: host metrics of the same window (dyno metrics --json output or dynolog's JSON log)", 0, 0, NULL},
	 offsetof(struct insight_options, metrics)},
	{{"link-gbps", 0, ARG_DOUBLE, NULL, "GBPS",
	  "insights: host<->device link bandwidth the copies are compared with (25: PCIe 4.0 x16)", 0, 0,
	  NULL},
	 offsetof(struct insight_options, link_gbps)},
	{{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}, 0},
};

static int insight_check(const void *opts, struct buf *err)
{
	const struct insight_options *o = opts;
	if (!(o->link_gbps > 0) || o->link_gbps > 1e6) {
		buf_printf(err, "--link-gbps must be a positive bandwidth in GB/s");
		return -1;
	}
	if (o->metrics && access(o->metrics, R_OK) != 0) {
		buf_printf(err, "--metrics %s: cannot be read", o->metrics);
		return -1;
	}
	return 0;
}

static bool never_shown(const void *opts, const struct analysis_show *s)
{
	(void)opts;
	(void)s;
	return false;
}

static const struct analysis_table insight_tables[INSIGHT_NTABLES] = {
	[INSIGHT_T_FINDINGS] = {.csv = "insights", .notes_only_in_terminal = true},
	[INSIGHT_T_RULES] = {.csv = "insight_rules", .notes_only_in_terminal = true},
	[INSIGHT_T_ITERATIONS] = {.csv = "insight_iterations", .shown = never_shown},
	[INSIGHT_T_STREAMS] = {.csv = "insight_streams", .shown = never_shown},
	[INSIGHT_T_MEMCPY] = {.csv = "insight_memcpy", .shown = never_shown},
	[INSIGHT_T_COLLECTIVES] = {.csv = "insight_collectives", .shown = never_shown},
	[INSIGHT_T_OCCUPANCY] = {.csv = "insight_kernel_occupancy", .shown = never_shown},
	[INSIGHT_T_WATERFALL] = {.csv = "insight_waterfall", .shown = never_shown},
	[INSIGHT_T_CAUSES] = {.csv = "insight_idle_causes", .shown = never_shown},
};

static void insight_rank(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	(void)c;
	if (view->nranks != 1)
		return;
	/* the steps once, for the facts and the attribution */
	struct insight_steps st;
	st.n = insight_steps_find(view->ranks[0], &st.v, &st.src);
	insight_facts_rank(view->ranks[0], &st, out);
	out[INSIGHT_T_WATERFALL] = insight_waterfall_new();
	out[INSIGHT_T_CAUSES] = insight_causes_new();
	insight_attrib_rank(view->ranks[0], &st, out[INSIGHT_T_WATERFALL], out[INSIGHT_T_CAUSES]);
	free(st.v);
}

/* the readable view of the two tables (the terminal prints the notes) */
static void notes(struct atable *f, struct atable *r)
{
	for (size_t i = 0; i < f->nrows; i++) {
		const char *rank = insight_s(f, i, 2), *it = insight_s(f, i, 3), *st = insight_s(f, i, 4),
			   *where = insight_s(f, i, 5);
		struct buf b = BUF_INIT;
		buf_printf(&b, "[%s] %s: rank %s", insight_s(f, i, 0), insight_s(f, i, 1), rank);
		if (*it)
			buf_printf(&b, ", iteration %s", it);
		if (*st)
			buf_printf(&b, ", stream %s", st);
		size_t wl = strlen(where);
		if (wl > 100) /* a C++ kernel name: its head and tail say which */
			buf_printf(&b, ", %.60s...%s", where, where + wl - 30);
		else if (wl)
			buf_printf(&b, ", %s", where);
		double ms = insight_f(f, i, INSIGHT_F_COST_MS);
		if (isfinite(ms))
			buf_printf(&b, " -- %.2f ms per step (%.1f%%)", ms, insight_f(f, i, INSIGHT_F_COST_PCT));
		atable_note(f, "%s\n    %s\n    -> %s", b.data, insight_s(f, i, 9), insight_s(f, i, 10));
		buf_free(&b);
	}
	if (f->nrows == 0)
		atable_note(f, "no rule fired");
	for (size_t i = 0; i < r->nrows; i++)
		atable_note(r, "%-20s %-14s %s", insight_s(r, i, 0), insight_s(r, i, 1), insight_s(r, i, 3));
}

static int sev_rank(const char *s)
{
	return strcmp(s, "high") == 0 ? 0 : strcmp(s, "medium") == 0 ? 1 : 2;
}

struct fsort {
	const struct atable *t;
	size_t row;
};

/* by the time they cost, the largest first: the time lost (idle,
 * exposed communication, waiting ranks), then the time of a finding's own
 * GPU work; then those without a time cost, worst first; a rule's
 * findings in the order it made them */
static int finding_cmp(const void *a, const void *b)
{
	const struct fsort *x = a, *y = b;
	double cx = insight_f(x->t, x->row, INSIGHT_F_COST_MS), cy = insight_f(y->t, y->row, INSIGHT_F_COST_MS);
	bool hx = isfinite(cx), hy = isfinite(cy);
	if (hx != hy)
		return hx ? -1 : 1;
	/* time lost before time the GPU spends on a finding's own work */
	bool bx = strcmp(insight_s(x->t, x->row, INSIGHT_F_COST_KIND), "busy") == 0,
	     by = strcmp(insight_s(y->t, y->row, INSIGHT_F_COST_KIND), "busy") == 0;
	if (hx && bx != by)
		return bx ? 1 : -1;
	if (hx && cx != cy)
		return cx > cy ? -1 : 1;
	int sx = sev_rank(insight_s(x->t, x->row, 0)), sy = sev_rank(insight_s(y->t, y->row, 0));
	if (sx != sy)
		return sx - sy;
	return (x->row > y->row) - (x->row < y->row);
}

static void sort_findings(struct atable *t)
{
	size_t n = t->nrows, w = t->ncols;
	if (n < 2)
		return;
	struct fsort *o = xmalloc(n * sizeof *o);
	for (size_t i = 0; i < n; i++)
		o[i] = (struct fsort){t, i};
	qsort(o, n, sizeof *o, finding_cmp);
	union acell *sorted = xmalloc(n * w * sizeof *sorted);
	for (size_t k = 0; k < n; k++)
		memcpy(&sorted[k * w], &t->cells[o[k].row * w], w * sizeof *sorted);
	memcpy(t->cells, sorted, n * w * sizeof *sorted);
	free(sorted);
	free(o);
}

static void insight_combine(const struct analysis_ctx *c, const struct trace_set *view, struct atable **out)
{
	const struct insight_options *o = c->opts;
	for (size_t t = INSIGHT_T_ITERATIONS; t < INSIGHT_NTABLES; t++)
		if (!out[t]) /* no rank selected */
			out[t] = t == INSIGHT_T_ITERATIONS ? insight_iterations_new()
				 : t == INSIGHT_T_STREAMS  ? insight_streams_new()
				 : t == INSIGHT_T_MEMCPY   ? insight_memcpy_new()
				 : t == INSIGHT_T_OCCUPANCY ? insight_occupancy_new()
				 : t == INSIGHT_T_WATERFALL ? insight_waterfall_new()
				 : t == INSIGHT_T_CAUSES    ? insight_causes_new()
							   : insight_collectives_new();
	out[INSIGHT_T_FINDINGS] = findings_new();
	out[INSIGHT_T_RULES] = rules_new();
	struct host_metrics hm;
	struct buf why = BUF_INIT;
	bool have_metrics = false;
	if (o->metrics) {
		have_metrics = host_metrics_load(o->metrics, &hm, &why) == 0;
		if (!have_metrics)
			atable_note(out[INSIGHT_T_FINDINGS], "--metrics: %s", why.data);
		else if (hm.bad_lines)
			atable_note(out[INSIGHT_T_FINDINGS], "--metrics %s: %zu of %zu lines skipped, the first: %s",
				    o->metrics, hm.bad_lines, hm.lines, hm.first_bad);
		if (have_metrics && hm.capped)
			atable_note(out[INSIGHT_T_FINDINGS], "--metrics %s: only the first %zu points read", o->metrics,
				    (size_t)HOST_METRICS_MAX_POINTS);
	} else {
		buf_puts(&why, "no --metrics FILE given (dyno metrics --json or dynolog's JSON log of the same window)");
	}
	struct insight_eval e = {view, c->results, out, o, have_metrics ? &hm : NULL, why.data, NULL, 0};
	struct atable *rt = out[INSIGHT_T_RULES];
	for (size_t i = 0; i < NRULES; i++) {
		struct buf measured = BUF_INIT;
		e.rule = rules[i];
		e.fired = 0;
		int rc = view->nranks ? rules[i]->eval(&e, &measured) : -1;
		if (!view->nranks)
			buf_puts(&measured, "no selected rank in the trace");
		size_t row = atable_add_row(rt);
		char status[32];
		if (rc != 0)
			snprintf(status, sizeof status, "not evaluated");
		else if (e.fired)
			snprintf(status, sizeof status, "fired (%zu)", e.fired);
		else
			snprintf(status, sizeof status, "ok");
		atable_set_s(rt, row, 0, rules[i]->name);
		atable_set_s(rt, row, 1, status);
		atable_set_i(rt, row, 2, (int64_t)e.fired);
		atable_set_s(rt, row, 3, measured.data);
		atable_set_s(rt, row, 4, rules[i]->threshold);
		atable_set_s(rt, row, 5, rules[i]->measures);
		buf_free(&measured);
	}
	sort_findings(out[INSIGHT_T_FINDINGS]);
	free(out[INSIGHT_T_FINDINGS]->title);
	struct buf title = BUF_INIT;
	buf_printf(&title, "Insights: %zu finding%s", out[INSIGHT_T_FINDINGS]->nrows,
		   out[INSIGHT_T_FINDINGS]->nrows == 1 ? "" : "s");
	out[INSIGHT_T_FINDINGS]->title = buf_detach(&title, NULL);
	notes(out[INSIGHT_T_FINDINGS], rt);
	if (have_metrics)
		host_metrics_free(&hm);
	buf_free(&why);
}

static const struct analysis *const insight_uses[] = {&analysis_temporal, &analysis_idle,   &analysis_kernels,
						      &analysis_kernel_distribution, &analysis_overlap,
						      &analysis_launch, &analysis_counters, &analysis_annotations,
						      NULL};

const struct analysis analysis_insights = {
	.name = "insights",
	.help = "what is wrong and what to do: rules over the analyses (starvation, syncs, exposed comm., "
		"stragglers, ...)",
	.load = ANALYSIS_LOAD_CPU_OPS | ANALYSIS_LOAD_ANNOTATIONS | ANALYSIS_LOAD_OCCUPANCY | ANALYSIS_LOAD_PYTHON,
	.opts = {sizeof(struct insight_options), &insight_defaults, insight_opts, insight_check},
	.tables = insight_tables,
	.ntables = INSIGHT_NTABLES,
	.cost = 3,
	.own_command = true,
	.rank = insight_rank,
	.combine = insight_combine,
	.uses = insight_uses,
};
