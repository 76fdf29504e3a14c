/*
 * dynolite.c - libdynolite.so (dynolite.h): loads trace sets with
 * src/trace and runs the analysis table of src/analyze through its one
 * runner (analyze_run), handing the tables out as they are (struct atable:
 * row-major cells, read in place through a stride).  Options are parsed by
 * the analyses' own command-line rows (config.c) with the core parser, so
 * a name or value the CLI refuses is refused here with the same words.
 *
 * Handles index a table of slots with a generation each: freeing bumps
 * the generation, so a stale handle never reaches freed memory.  One
 * mutex serializes the calls (each load or run is parallel inside).
 *
 * Lazy loading: a set is loaded keeping only what the analyses asked for
 * so far need (the loader's skip_* flags, as `dyno analyze X` does), and
 * loaded again keeping the union when a later analysis needs more, so
 * `TraceAnalysis(...).get_temporal_breakdown()` costs what `dyno analyze
 * temporal` costs.  diff (HTA's parse_traces: no last-step filter) gets
 * its own set.  Costs: the sets, plus the tables of live results.
 */
#include "lib/dynolite.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/run.h"
#include "core/args.h"
#include "core/buf.h"

/* ---- errors and returned text: per thread ---- */

static __thread char *t_err;
static __thread char *t_text;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	free(t_err);
	t_err = buf_detach(&b, NULL);
	return -1;
}

static const char *keep_text(char *s)
{
	free(t_text);
	t_text = s;
	return s;
}

const char *dynolite_error(void) { return t_err ? t_err : ""; }
int dynolite_abi(void) { return DYNOLITE_ABI; }
const char *dynolite_version(void) { return DYNO_VERSION; }

/* ---- handles ---- */

enum kind { K_FREE, K_TRACE, K_RESULT };

struct slot {
	uint32_t gen;
	enum kind kind;
	void *p;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static size_t nslots;

static dynolite_handle issue(enum kind k, void *p)
{
	size_t i = 0;
	while (i < nslots && slots[i].kind != K_FREE)
		i++;
	if (i == nslots) {
		if (nslots >= UINT32_MAX - 1)
			return 0;
		slots = xrealloc(slots, (nslots + 1) * sizeof *slots);
		slots[nslots++] = (struct slot){1, K_FREE, NULL};
	}
	slots[i].kind = k;
	slots[i].p = p;
	return (dynolite_handle)slots[i].gen << 32 | (uint64_t)(i + 1);
}

/* The object of h if it is a live handle of kind k, else NULL with the
 * message set. */
static void *lookup(dynolite_handle h, enum kind k)
{
	uint64_t i = (h & 0xffffffffu);
	uint32_t gen = (uint32_t)(h >> 32);
	if (i == 0 || i > nslots || slots[i - 1].gen != gen) {
		fail("invalid handle %#llx (freed, or never issued)", (unsigned long long)h);
		return NULL;
	}
	if (slots[i - 1].kind != k) {
		fail("handle %#llx is %s, not %s", (unsigned long long)h,
		     slots[i - 1].kind == K_FREE ? "freed" : slots[i - 1].kind == K_TRACE ? "a trace" : "a result",
		     k == K_TRACE ? "a trace" : "a result");
		return NULL;
	}
	return slots[i - 1].p;
}

/* ---- options ---- */

/* "name=value" -> name (into b) and value; a bare "name" is "name=true". */
static const char *split_opt(const char *o, struct buf *name)
{
	const char *eq = strchr(o, '=');
	buf_reset(name);
	buf_append(name, o, eq ? (size_t)(eq - o) : strlen(o));
	for (size_t i = 0; i < name->len; i++)
		if (name->data[i] == '_')
			name->data[i] = '-';
	return eq ? eq + 1 : "true";
}

static int parse_bool(const char *name, const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "false") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return fail("option %s: expected true or false, got '%s'", name, v);
}

static int parse_int(const char *name, const char *v, long lo, long hi, long *out)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (!*v || *end || x < lo || x > hi)
		return fail("option %s: expected a whole number in [%ld, %ld], got '%s'", name, lo, hi, v);
	*out = x;
	return 0;
}

/* ---- traces ---- */

struct loaded {
	bool ok;
	struct trace_load_opts lo;
	struct trace_set set;
};

struct file_rank {
	char *path;
	int rank;
};

struct dtrace {
	char **inputs;
	size_t ninputs;
	struct trace_load_opts base; /* the user's load options */
	struct trace_select sel;
	struct file_rank *frank;
	size_t nfrank;
	/* [0]: HTA's load (last step dropped unless asked); [1]: every step
	 * (diff: HTA's parse_traces), when base keeps the last step anyway
	 * [0] serves both */
	struct loaded sets[2];
};

static void trace_free(struct dtrace *t)
{
	for (size_t i = 0; i < t->ninputs; i++)
		free(t->inputs[i]);
	free(t->inputs);
	for (size_t i = 0; i < t->nfrank; i++)
		free(t->frank[i].path);
	free(t->frank);
	for (int k = 0; k < 2; k++)
		if (t->sets[k].ok)
			trace_set_free(&t->sets[k].set);
	free(t);
}

/* Does a set loaded with have hold every row and arg need asks for? */
static bool covers(const struct trace_load_opts *have, const struct trace_load_opts *need)
{
	return have->keep_last_step == need->keep_last_step && !(have->skip_cpu_ops && !need->skip_cpu_ops) &&
	       !(have->no_flows && !need->no_flows) && !(have->no_counters && !need->no_counters) &&
	       (have->keep_python || !need->keep_python) &&
	       (have->keep_user_annotations || !need->keep_user_annotations) &&
	       (have->keep_event_waits || !need->keep_event_waits) &&
	       (have->keep_profiler_args || !need->keep_profiler_args) &&
	       (have->keep_kernel_occupancy || !need->keep_kernel_occupancy) &&
	       /* only some operators kept: enough for a need of those only */
	       (!have->launch_ops_only || need->skip_cpu_ops ||
		(need->launch_ops_only && (have->keep_range_ops || !need->keep_range_ops)));
}

static void unite(struct trace_load_opts *a, const struct trace_load_opts *b)
{
	/* every operator when one side reads them all */
	bool all_ops = (!a->skip_cpu_ops && !a->launch_ops_only) || (!b->skip_cpu_ops && !b->launch_ops_only);
	a->skip_cpu_ops &= b->skip_cpu_ops;
	a->launch_ops_only = !a->skip_cpu_ops && !all_ops;
	a->keep_range_ops |= b->keep_range_ops;
	a->no_flows &= b->no_flows;
	a->no_counters &= b->no_counters;
	a->keep_python |= b->keep_python;
	a->keep_user_annotations |= b->keep_user_annotations;
	a->keep_event_waits |= b->keep_event_waits;
	a->keep_profiler_args |= b->keep_profiler_args;
	a->keep_kernel_occupancy |= b->keep_kernel_occupancy;
}

static int rank_cmp(const void *a, const void *b)
{
	int x = (*(struct trace_rank *const *)a)->rank, y = (*(struct trace_rank *const *)b)->rank;
	return (x > y) - (x < y);
}

static bool same_file(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return true;
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	bool same = ra && rb && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

/* HTA's {rank: file}: the given ranks replace the files' own. */
static int apply_file_ranks(const struct dtrace *t, struct trace_set *set)
{
	for (size_t i = 0; i < t->nfrank; i++) {
		size_t k = 0;
		while (k < set->nranks && !same_file(set->ranks[k]->path, t->frank[i].path))
			k++;
		if (k == set->nranks)
			return fail("file_rank: %s is not one of the loaded files", t->frank[i].path);
		set->ranks[k]->rank = t->frank[i].rank;
		set->ranks[k]->rank_rule = TRACE_RANK_OPTION;
	}
	qsort(set->ranks, set->nranks, sizeof *set->ranks, rank_cmp);
	for (size_t k = 1; k < set->nranks; k++)
		if (set->ranks[k]->rank == set->ranks[k - 1]->rank)
			return fail("two files are rank %d: %s and %s", set->ranks[k]->rank, set->ranks[k - 1]->path,
				    set->ranks[k]->path);
	return 0;
}

/* The set of t holding what need asks for: the one loaded, or a new load
 * keeping the union of both. */
static struct trace_set *get_set(struct dtrace *t, const struct trace_load_opts *need)
{
	struct loaded *l = &t->sets[need->keep_last_step && !t->base.keep_last_step];
	if (l->ok && covers(&l->lo, need))
		return &l->set;
	struct trace_load_opts lo = *need;
	if (l->ok)
		unite(&lo, &l->lo);
	struct trace_set set;
	struct buf err = BUF_INIT;
	if (trace_set_load_paths(&set, (const char *const *)t->inputs, t->ninputs, &lo, &err) != 0) {
		fail("%s", err.data);
		buf_free(&err);
		return NULL;
	}
	if (apply_file_ranks(t, &set) != 0 || trace_set_select(&set, &t->sel, &err) != 0) {
		if (err.len)
			fail("%s", err.data);
		buf_free(&err);
		trace_set_free(&set);
		return NULL;
	}
	buf_free(&err);
	if (l->ok)
		trace_set_free(&l->set);
	l->ok = true;
	l->lo = lo;
	l->set = set;
	return &l->set;
}

/* The loader options one analysis needs (NULL: summary's), over the user's. */
static struct trace_load_opts need_of(const struct dtrace *t, const struct analysis *a, bool everything)
{
	struct trace_load_opts lo = t->base;
	if (everything) {
		/* every row and arg any analysis of one set reads */
		for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
			struct trace_load_opts x = t->base;
			if (analysis_list[i]->pair)
				continue;
			analysis_load_opts(analysis_list[i], &x);
			if (i == 0)
				lo = x;
			else
				unite(&lo, &x);
		}
	} else {
		analysis_load_opts(a, &lo);
	}
	/* as in `dyno analyze`: a selection keeps every operator (counters'
	 * trace duration is the span of the selected rows) */
	if (t->sel.iterations || t->sel.time_range)
		lo.launch_ops_only = false;
	return lo;
}


static int load_opt(struct dtrace *t, const char *o, bool *all, struct buf *name)
{
	const char *v = split_opt(o, name);
	const char *n = name->data;
	long x;
	bool b;
	if (!strcmp(n, "rank")) {
		if (parse_int(n, v, 0, INT32_MAX, &x))
			return -1;
		t->base.rank = (int)x;
		t->base.rank_given = true;
	} else if (!strcmp(n, "file-rank")) {
		const char *c = strrchr(v, ':');
		if (!c || c == v || parse_int(n, c + 1, 0, INT32_MAX, &x))
			return c && c != v ? -1 : fail("option file_rank: expected PATH:RANK, got '%s'", v);
		t->frank = xrealloc(t->frank, (t->nfrank + 1) * sizeof *t->frank);
		t->frank[t->nfrank++] = (struct file_rank){xstrndup(v, (size_t)(c - v)), (int)x};
	} else if (!strcmp(n, "iterations")) {
		if (trace_select_parse_iterations(v, &t->sel) != 0)
			return fail("bad iterations '%s' (N or N-M with N <= M, e.g. 3-5)", v);
	} else if (!strcmp(n, "time-range")) {
		if (trace_select_parse_time_range(v, &t->sel) != 0)
			return fail("bad time_range '%s' (START:END in us, 0 <= START < END)", v);
	} else if (!strcmp(n, "keep-last-step")) {
		if (parse_bool(n, v, &t->base.keep_last_step))
			return -1;
	} else if (!strcmp(n, "no-ns-rounding")) {
		if (parse_bool(n, v, &t->base.no_ns_rounding))
			return -1;
	} else if (!strcmp(n, "fixed-classification")) {
		if (parse_bool(n, v, &t->base.fixed_classification))
			return -1;
	} else if (!strcmp(n, "threads")) {
		if (parse_int(n, v, 0, 1024, &x))
			return -1;
		t->base.threads = (int)x;
	} else if (!strcmp(n, "huge-pages")) {
		if (parse_bool(n, v, &b))
			return -1;
		/* the CLI's default: a 1 GB trace's columns fault in 2,000
		 * pages, not 85,000 (docs/analyze.md); process-wide */
		xalloc_huge_pages(b ? 2u << 20 : 0);
	} else if (!strcmp(n, "load")) {
		if (strcmp(v, "lazy") && strcmp(v, "all"))
			return fail("option load: expected lazy or all, got '%s'", v);
		*all = !strcmp(v, "all");
	} else {
		return fail("unknown load option '%s' (rank, file_rank, iterations, time_range, keep_last_step, "
			    "no_ns_rounding, fixed_classification, threads, huge_pages, load)",
			    n);
	}
	return 0;
}

static bool huge_pages_set;

int dynolite_load(const char *const *inputs, size_t ninputs, const char *const *opts, size_t nopts,
		  dynolite_handle *out)
{
	*out = 0;
	if (!inputs || ninputs == 0)
		return fail("no input (a trace file or a directory of traces)");
	pthread_mutex_lock(&mu);
	if (!huge_pages_set) {
		huge_pages_set = true;
		xalloc_huge_pages(2u << 20);
	}
	struct dtrace *t = xcalloc(1, sizeof *t);
	t->inputs = xcalloc(ninputs, sizeof *t->inputs);
	t->ninputs = ninputs;
	for (size_t i = 0; i < ninputs; i++)
		t->inputs[i] = xstrdup(inputs[i] ? inputs[i] : "");
	bool all = false;
	struct buf name = BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < nopts && rc == 0; i++)
		rc = load_opt(t, opts[i] ? opts[i] : "", &all, &name);
	buf_free(&name);
	/* parsed now, so that a bad trace fails here: with only what the
	 * cheapest analysis keeps, unless asked for everything */
	if (rc == 0) {
		struct trace_load_opts lo = all ? need_of(t, NULL, true) : need_of(t, analysis_list[0], false);
		if (!get_set(t, &lo))
			rc = -1;
	}
	if (rc == 0 && !(*out = issue(K_TRACE, t)))
		rc = fail("too many handles");
	if (rc != 0)
		trace_free(t);
	pthread_mutex_unlock(&mu);
	return rc;
}

/* the set the last call loaded: HTA's */
static const struct trace_set *main_set(const struct dtrace *t) { return &t->sets[0].set; }

int dynolite_trace_ranks(dynolite_handle h, int32_t *out, size_t cap, size_t *n)
{
	pthread_mutex_lock(&mu);
	const struct dtrace *t = lookup(h, K_TRACE);
	if (t) {
		const struct trace_set *s = main_set(t);
		*n = s->nranks;
		for (size_t k = 0; k < s->nranks && k < cap; k++)
			out[k] = s->ranks[k]->rank;
	}
	pthread_mutex_unlock(&mu);
	return t ? 0 : -1;
}

int dynolite_trace_warnings(dynolite_handle h, const char **out)
{
	pthread_mutex_lock(&mu);
	const struct dtrace *t = lookup(h, K_TRACE);
	if (t)
		*out = keep_text(xstrdup(main_set(t)->warnings ? main_set(t)->warnings : ""));
	pthread_mutex_unlock(&mu);
	return t ? 0 : -1;
}

int dynolite_trace_files(dynolite_handle h, const char **out)
{
	pthread_mutex_lock(&mu);
	const struct dtrace *t = lookup(h, K_TRACE);
	if (t) {
		struct buf b = BUF_INIT;
		const struct trace_set *s = main_set(t);
		for (size_t k = 0; k < s->nranks; k++)
			buf_printf(&b, "%d\t%s\n", s->ranks[k]->rank, s->ranks[k]->path);
		*out = keep_text(buf_detach(&b, NULL));
	}
	pthread_mutex_unlock(&mu);
	return t ? 0 : -1;
}

/* ---- results ---- */

struct strcol {
	char *text;
	size_t len;
	uint8_t *nulls;
};

struct dresult {
	struct analyze_results res;
	struct strcol **strs; /* per table, per column: built on first read */
	char *skipped;
};

static void result_free(struct dresult *r)
{
	for (size_t i = 0; i < r->res.n; i++) {
		for (size_t c = 0; r->strs[i] && c < r->res.v[i].t->ncols; c++) {
			free(r->strs[i][c].text);
			free(r->strs[i][c].nulls);
		}
		free(r->strs[i]);
	}
	free(r->strs);
	free(r->skipped);
	analyze_results_free(&r->res);
	free(r);
}

/* Every rank of sel must be in set (as the CLI checks). */
static int check_ranks(const struct trace_set *set, const struct analyze_ranks *sel)
{
	for (size_t i = 0; i < sel->n; i++) {
		bool found = false;
		for (size_t k = 0; k < set->nranks; k++)
			found |= set->ranks[k]->rank == sel->ranks[i];
		if (!found) {
			struct buf b = BUF_INIT;
			for (size_t k = 0; k < set->nranks; k++)
				buf_printf(&b, " %d", set->ranks[k]->rank);
			fail("rank %d is not in the trace (ranks:%s)", sel->ranks[i], b.data);
			buf_free(&b);
			return -1;
		}
	}
	return 0;
}

/* The damage of a set's ranks, "; "-separated (empty: none). */
static void partial_reason(const struct trace_set *set, struct buf *out)
{
	for (size_t k = 0; k < set->nranks; k++)
		if (set->ranks[k]->stats.truncated)
			buf_printf(out, "%sdamaged trace, rank %d: %s", out->len ? "; " : "", set->ranks[k]->rank,
				   set->ranks[k]->stats.truncated_msg);
}

/* The analysis's options: "ranks" for the runner, every other one through
 * the command-line rows of the analyses (the CLI's parser and checks). */
static int run_opts(const char *const *opts, size_t nopts, struct analysis_config *cfg, int **ranks, size_t *nranks,
		    int *threads, struct buf *argtext)
{
	struct buf name = BUF_INIT;
	struct buf *arg = argtext; /* the string options point into it: the caller frees it after the run */
	/* argv for args_parse: "--name=value" texts in one buffer */
	char **argv = xcalloc(nopts + 1, sizeof *argv);
	size_t *offs = xcalloc(nopts + 1, sizeof *offs);
	int argc = 0, rc = 0;
	for (size_t i = 0; i < nopts && rc == 0; i++) {
		const char *v = split_opt(opts[i] ? opts[i] : "", &name);
		if (!strcmp(name.data, "ranks")) {
			free(*ranks);
			if (analyze_ranks_parse(v, ranks, nranks) != 0)
				rc = fail("bad ranks '%s' (a list like 0,1,7)", v);
			continue;
		}
		if (!strcmp(name.data, "threads")) {
			long x;
			rc = parse_int("threads", v, 0, 1024, &x);
			*threads = (int)x;
			continue;
		}
		if (!strcmp(name.data, "flagfile") || !strcmp(name.data, "help")) {
			rc = fail("unknown option '%s'", name.data);
			continue;
		}
		offs[argc++] = arg->len;
		buf_printf(arg, "--%s=%s", name.data, v);
		buf_putc(arg, '\0');
	}
	for (int i = 0; i < argc; i++)
		argv[i] = arg->data + offs[i];
	if (rc == 0) {
		struct arg_opt *rows = xcalloc(cfg->nrows + 1, sizeof *rows);
		memcpy(rows, cfg->rows, cfg->nrows * sizeof *rows);
		struct args a;
		if (args_parse(rows, argc, argv, &a) != ARGS_OK) {
			rc = fail("%s", a.error.len ? a.error.data : "bad option");
		} else if (a.npos) {
			rc = fail("unexpected option text '%s' (name=value)", a.pos[0]);
		} else {
			buf_reset(&name);
			if (analysis_config_check(cfg, &name) != 0)
				rc = fail("%s", name.data);
		}
		args_free(&a);
		free(rows);
	}
	free(argv);
	free(offs);
	buf_free(&name);
	return rc;
}

static int finish_result(struct dresult *r, dynolite_handle *out)
{
	r->strs = xcalloc(r->res.n ? r->res.n : 1, sizeof *r->strs);
	if (!(*out = issue(K_RESULT, r))) {
		result_free(r);
		return fail("too many handles");
	}
	return 0;
}

int dynolite_run(dynolite_handle th, dynolite_handle testh, const char *analysis, const char *const *opts,
		 size_t nopts, dynolite_handle *out)
{
	*out = 0;
	pthread_mutex_lock(&mu);
	struct dtrace *t = lookup(th, K_TRACE), *test = testh ? lookup(testh, K_TRACE) : NULL;
	const struct analysis *a = analysis && strcmp(analysis, "summary") ? analysis_find(analysis) : NULL;
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	int *ranks = NULL;
	size_t nranks = 0;
	int threads = t ? t->base.threads : 0;
	struct buf argtext = BUF_INIT;
	int rc = 0;
	if (!t || (testh && !test)) {
		rc = -1;
	} else if (!a && (!analysis || strcmp(analysis, "summary"))) {
		struct buf b = BUF_INIT;
		for (size_t i = 0; i < ANALYSIS_COUNT; i++)
			buf_printf(&b, "%s, ", analysis_list[i]->name);
		rc = fail("unknown analysis '%s' (%ssummary)", analysis ? analysis : "(null)", b.data);
		buf_free(&b);
	} else if (a && a->pair && !test) {
		rc = fail("%s compares two traces: give the second (test) trace", a->name);
	} else if ((!a || !a->pair) && test) {
		rc = fail("%s analyses one trace: no second trace", a ? a->name : "summary");
	} else {
		rc = run_opts(opts, nopts, &cfg, &ranks, &nranks, &threads, &argtext);
	}
	if (rc == 0 && a && a->pair && nranks > 1)
		rc = fail("%s: compares one rank of each side, got %zu ranks", a->name, nranks);
	const struct trace_set *set = NULL, *tset = NULL;
	if (rc == 0) {
		struct trace_load_opts need = need_of(t, a, false);
		set = get_set(t, &need);
		if (set && test) {
			struct trace_load_opts tneed = need_of(test, a, false);
			tset = get_set(test, &tneed);
		}
		if (!set || (test && !tset))
			rc = -1;
	}
	struct analyze_ranks sel = {ranks, nranks};
	if (rc == 0)
		rc = check_ranks(set, &sel);
	if (rc == 0 && tset)
		rc = check_ranks(tset, &sel);
	if (rc == 0) {
		struct dresult *r = xcalloc(1, sizeof *r);
		struct analyze_run_opts ro = {.only = a, .config = &cfg, .fmt = AFMT_CSV, .every_table = true,
					      .threads = threads, .test = tset};
		analyze_run(set, &sel, &ro, &r->res);
		struct buf partial = BUF_INIT, sk = BUF_INIT;
		partial_reason(set, &partial);
		if (tset)
			partial_reason(tset, &partial);
		for (size_t i = 0; partial.len && i < r->res.n; i++)
			atable_set_partial(r->res.v[i].t, partial.data);
		for (size_t i = 0; i < r->res.nskipped; i++)
			buf_printf(&sk, "%s\t%s\n", r->res.skipped[i].analysis->name, r->res.skipped[i].why);
		r->skipped = buf_detach(&sk, NULL);
		buf_free(&partial);
		rc = finish_result(r, out);
	}
	free(ranks);
	buf_free(&argtext);
	analysis_config_free(&cfg);
	pthread_mutex_unlock(&mu);
	return rc;
}

/* ---- events ---- */

/* kind -> a test: -1 all, -2 gpu, -3 cpu, else a trace_cat */
static int kind_of(const char *kind)
{
	if (!kind || !*kind || !strcmp(kind, "all"))
		return -1;
	if (!strcmp(kind, "gpu"))
		return -2;
	if (!strcmp(kind, "cpu"))
		return -3;
	for (int c = 0; c < TRACE_CAT__COUNT; c++)
		if (!strcmp(kind, trace_cat_name((enum trace_cat)c)))
			return c;
	struct buf b = BUF_INIT;
	for (int c = 0; c < TRACE_CAT__COUNT; c++)
		buf_printf(&b, ", %s", trace_cat_name((enum trace_cat)c));
	fail("unknown event kind '%s' (all, gpu, cpu%s)", kind, b.data);
	buf_free(&b);
	return INT_MIN;
}

static bool row_of_kind(const struct trace_rank *r, size_t i, int k)
{
	return k == -1 || (k == -2 && r->stream[i] != -1) || (k == -3 && r->stream[i] == -1) || k == r->kind[i];
}

/* pid/tid: a number, or the text of a non-numeric one ("Spans"): those
 * are NaN-free int64 columns, so a text id becomes -1 */
static int64_t id_value(int64_t v) { return trace_id_is_str(v) ? -1 : v; }

static struct atable *events_table(const struct trace_set *set, const struct analyze_ranks *sel, int k)
{
	static const char *const cols[] = {"rank:i",   "index:i",       "cat:s",         "name:s",
					   "pid:i",    "tid:i",         "ts:f",          "dur:f",
					   "stream:i", "correlation:i", "external_id:i", "index_correlation:i",
					   "iteration:i", "bytes:i",    "memory_bw_gbps:f", NULL};
	struct atable *t = atable_new("events", "Events", cols);
	for (size_t q = 0; q < set->nranks; q++) {
		const struct trace_rank *r = set->ranks[q];
		if (!analyze_rank_selected(sel, r->rank))
			continue;
		for (size_t i = 0; i < r->n; i++) {
			if (!row_of_kind(r, i, k))
				continue;
			size_t row = atable_add_row(t);
			atable_set_i(t, row, 0, r->rank);
			atable_set_i(t, row, 1, r->idx[i]);
			atable_set_s(t, row, 2, trace_strtab_get(&r->strs, r->cat[i]));
			atable_set_s(t, row, 3, trace_name(r, i));
			atable_set_i(t, row, 4, id_value(r->pid[i]));
			atable_set_i(t, row, 5, id_value(r->tid[i]));
			atable_set_f(t, row, 6, r->ts[i]);
			atable_set_f(t, row, 7, r->dur[i]);
			atable_set_i(t, row, 8, r->stream[i]);
			atable_set_i(t, row, 9, r->correlation[i]);
			atable_set_i(t, row, 10, r->external_id[i]);
			atable_set_i(t, row, 11, trace_index_correlation(r, i));
			atable_set_i(t, row, 12, r->iteration[i] == TRACE_ITER_NAN ? -1 : r->iteration[i]);
			atable_set_i(t, row, 13, r->bytes[i]);
			atable_set_f(t, row, 14, r->mem_bw_gbps[i]);
		}
	}
	return t;
}

int dynolite_events(dynolite_handle th, const char *kind, const char *const *opts, size_t nopts,
		    dynolite_handle *out)
{
	*out = 0;
	pthread_mutex_lock(&mu);
	struct dtrace *t = lookup(th, K_TRACE);
	int k = t ? kind_of(kind) : INT_MIN;
	int *ranks = NULL;
	size_t nranks = 0;
	int rc = k == INT_MIN ? -1 : 0;
	for (size_t i = 0; i < nopts && rc == 0; i++) {
		struct buf name = BUF_INIT;
		const char *v = split_opt(opts[i] ? opts[i] : "", &name);
		if (strcmp(name.data, "ranks"))
			rc = fail("unknown events option '%s' (ranks)", name.data);
		else if ((free(ranks), analyze_ranks_parse(v, &ranks, &nranks)) != 0)
			rc = fail("bad ranks '%s' (a list like 0,1,7)", v);
		buf_free(&name);
	}
	const struct trace_set *set = NULL;
	if (rc == 0) {
		/* GPU rows are in every load; CPU rows only when kept */
		struct trace_load_opts need = t->base;
		need.skip_cpu_ops = k == -2 || (k >= 0 && k != TRACE_CAT_CPU_OP && k != TRACE_CAT_USER_ANNOTATION &&
						k != TRACE_CAT_PYTHON_FUNCTION && k != TRACE_CAT_OTHER);
		need.no_flows = need.no_counters = true;
		need.keep_python |= k == TRACE_CAT_PYTHON_FUNCTION;
		set = get_set(t, &need);
		rc = set ? 0 : -1;
	}
	struct analyze_ranks sel = {ranks, nranks};
	if (rc == 0)
		rc = check_ranks(set, &sel);
	if (rc == 0) {
		struct dresult *r = xcalloc(1, sizeof *r);
		r->res.v = xcalloc(1, sizeof *r->res.v);
		r->res.n = 1;
		r->res.v[0] = (struct analyze_result){events_table(set, &sel, k), NULL, NULL, xstrdup("events"), true};
		struct buf partial = BUF_INIT;
		partial_reason(set, &partial);
		if (partial.len)
			atable_set_partial(r->res.v[0].t, partial.data);
		buf_free(&partial);
		r->skipped = xstrdup("");
		rc = finish_result(r, out);
	}
	free(ranks);
	pthread_mutex_unlock(&mu);
	return rc;
}

/* ---- reading results ---- */

int dynolite_result_ntables(dynolite_handle h, size_t *n)
{
	pthread_mutex_lock(&mu);
	const struct dresult *r = lookup(h, K_RESULT);
	if (r)
		*n = r->res.n;
	pthread_mutex_unlock(&mu);
	return r ? 0 : -1;
}

int dynolite_result_skipped(dynolite_handle h, const char **out)
{
	pthread_mutex_lock(&mu);
	const struct dresult *r = lookup(h, K_RESULT);
	if (r)
		*out = keep_text(xstrdup(r->skipped));
	pthread_mutex_unlock(&mu);
	return r ? 0 : -1;
}

static const struct analyze_result *table_of(dynolite_handle h, size_t i, struct dresult **rp)
{
	struct dresult *r = lookup(h, K_RESULT);
	if (!r)
		return NULL;
	if (i >= r->res.n) {
		fail("table %zu of a result with %zu", i, r->res.n);
		return NULL;
	}
	*rp = r;
	return &r->res.v[i];
}

int dynolite_table(dynolite_handle h, size_t i, struct dynolite_table *out)
{
	pthread_mutex_lock(&mu);
	struct dresult *r;
	const struct analyze_result *v = table_of(h, i, &r);
	if (v) {
		const struct atable *t = v->t;
		bool per_rank = v->table && v->table->per_rank;
		*out = (struct dynolite_table){
			.name = v->name,
			.base = per_rank ? v->table->csv : v->name,
			.analysis = v->analysis ? v->analysis->name : "events",
			.rank = per_rank ? strtol(v->name + strlen(v->table->csv), NULL, 10) : -1,
			.nrows = t->nrows,
			.ncols = t->ncols,
			.notes = t->notes.data,
			.partial = t->partial,
			.unavailable = t->unavailable,
			.per_rank = per_rank,
		};
	}
	pthread_mutex_unlock(&mu);
	return v ? 0 : -1;
}

/* A text column as one buffer: each row's text and a NUL. */
static void build_strings(const struct atable *t, size_t c, struct strcol *s)
{
	struct buf b = BUF_INIT;
	for (size_t row = 0; row < t->nrows; row++) {
		const char *x = t->cells[row * t->ncols + c].s;
		if (!x) {
			if (!s->nulls)
				s->nulls = xcalloc(t->nrows, 1);
			s->nulls[row] = 1;
		}
		buf_append(&b, x ? x : "", x ? strlen(x) + 1 : 1);
	}
	s->text = buf_detach(&b, &s->len);
}

int dynolite_column(dynolite_handle h, size_t i, size_t c, struct dynolite_column *out)
{
	pthread_mutex_lock(&mu);
	struct dresult *r;
	const struct analyze_result *v = table_of(h, i, &r);
	int rc = v ? 0 : -1;
	if (v && c >= v->t->ncols)
		rc = fail("column %zu of a table with %zu", c, (size_t)v->t->ncols);
	if (rc == 0) {
		const struct atable *t = v->t;
		const struct acol *col = &t->cols[c];
		*out = (struct dynolite_column){
			.name = col->name,
			.type = col->type == ACOL_INT ? DYNOLITE_INT : col->type == ACOL_FLOAT ? DYNOLITE_FLOAT : DYNOLITE_STR,
			.int_text = col->int_text,
			.data = t->nrows ? (const void *)&t->cells[c] : NULL,
			.stride = t->ncols * sizeof *t->cells,
		};
		if (col->type == ACOL_STR) {
			if (!r->strs[i])
				r->strs[i] = xcalloc(t->ncols, sizeof *r->strs[i]);
			struct strcol *s = &r->strs[i][c];
			if (!s->text)
				build_strings(t, c, s);
			out->strings = s->text;
			out->strings_len = s->len;
			out->nulls = s->nulls;
		}
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

int dynolite_free(dynolite_handle h)
{
	pthread_mutex_lock(&mu);
	uint64_t i = h & 0xffffffffu;
	int rc = 0;
	if (i == 0 || i > nslots || slots[i - 1].gen != (uint32_t)(h >> 32) || slots[i - 1].kind == K_FREE) {
		rc = fail("invalid handle %#llx (freed, or never issued)", (unsigned long long)h);
	} else {
		struct slot *s = &slots[i - 1];
		if (s->kind == K_TRACE)
			trace_free(s->p);
		else
			result_free(s->p);
		s->kind = K_FREE;
		s->p = NULL;
		/* the old handle never matches again (0 is skipped: no handle is 0) */
		if (++s->gen == 0)
			s->gen = 1;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}
