/*
 * analyze.c - `dyno analyze ANALYSIS TRACE_OR_DIR [options]`: load a Kineto
 * trace (or a directory of per-rank traces) with src/trace and print the
 * tables of one HTA analysis from src/analyze, or all of them (`summary`).
 * This file only parses options, dispatches and writes the rendered
 * tables; loading and computing live in the libraries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/clock.h"
#include "trace/par.h"

static const char *const analyses[] = {"temporal", "idle",    "kernels", "kernel-distribution",
				       "overlap",  "launch", "summary", NULL};

struct aopts {
	const char *format;
	const char *ranks;
	const char *csv_dir;
	int64_t rank;
	bool rank_seen;
	double delay, runtime_cutoff, launch_delay_cutoff;
	bool no_memory_events, keep_last_step, no_ns_rounding, quiet, interval_stats;
	bool fixed; /* --fixed-classification, a load option */
	bool timings, small_pages;
	int64_t threads;
	/* kernels, kernel-distribution, overlap */
	bool top, no_memory_kernels, all_kernels;
	int64_t num_kernels;
	double duration_ratio;
};

static int parse_ranks(const char *s, int **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return 0;
	size_t cap = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 1000000000L || (*end && *end != ',')) {
			free(*out);
			*out = NULL;
			return -1;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		(*out)[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Print one table to stdout (and DIR/<name>.csv with --csv-dir).  The
 * per-launch table is long: in the terminal view only its counts (notes)
 * are printed. */
static int emit(const struct atable *t, enum aformat fmt, const struct aopts *o, bool *first)
{
	struct buf b = BUF_INIT;
	bool counts_only = fmt == AFMT_TABLE && strncmp(t->name, "cuda_kernel_launch_stats", 24) == 0;
	if (fmt == AFMT_JSON && !*first)
		buf_putc(&b, ',');
	/* several CSV tables on stdout (summary, idle --interval-stats): a
	 * blank line between them, so a reader can split them; --csv-dir
	 * gives one file each */
	if (fmt == AFMT_CSV && !*first)
		buf_putc(&b, '\n');
	if (counts_only)
		buf_printf(&b, "%s\n%s", t->title, t->notes.data);
	else
		atable_render(t, fmt, &b);
	if (fmt == AFMT_TABLE)
		buf_putc(&b, '\n');
	*first = false;
	fwrite(b.data, 1, b.len, stdout);
	if (fmt == AFMT_CSV && t->notes.len && !o->quiet)
		fprintf(stderr, "%s", t->notes.data);
	int rc = 0;
	if (o->csv_dir) {
		buf_reset(&b);
		atable_render(t, AFMT_CSV, &b);
		struct buf path = BUF_INIT;
		buf_printf(&path, "%s/%s.csv", o->csv_dir, t->name);
		FILE *f = fopen(path.data, "w");
		if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
			fprintf(stderr, "dyno analyze: %s: %s\n", path.data, strerror(errno));
			rc = 1;
		}
		buf_free(&path);
	}
	buf_free(&b);
	return rc;
}

/* emit() when shown, else only the --csv-dir file. */
static int emit_maybe(const struct atable *t, enum aformat fmt, const struct aopts *o, bool *first,
		      bool shown)
{
	if (shown)
		return emit(t, fmt, o, first);
	if (!o->csv_dir)
		return 0;
	struct aopts q = *o;
	q.quiet = true;
	FILE *saved = stdout;
	stdout = fopen("/dev/null", "w");
	if (!stdout) {
		stdout = saved;
		return 1;
	}
	bool f = true;
	int rc = emit(t, AFMT_CSV, &q, &f);
	fclose(stdout);
	stdout = saved;
	return rc;
}

/* --timings: the wall time of each phase, on stderr (docs/analyze.md). */
static void print_timings(const struct trace_set *set, const struct analyze_results *res, double load_s,
			  double out_s, double total_s, int threads)
{
	fprintf(stderr, "timings (wall seconds):\n");
	fprintf(stderr, "  load %.3f (ranks in parallel; then the set steps)\n", load_s);
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		fprintf(stderr, "    rank %d: %.3f = parse %.3f (%u thread%s) + finish %.3f  %s\n", r->rank, r->load_s,
			r->load_s - r->finish_s, r->stats.parse_threads, r->stats.parse_threads == 1 ? "" : "s",
			r->finish_s, r->path);
	}
	fprintf(stderr, "    set finish (alignment, last-step filter%s): %.3f\n", set->filtered ? "" : " not applied",
		set->finish_s);
	fprintf(stderr, "  analyses %.3f (%d thread%s)\n", res->wall_s, par_threads(threads),
		par_threads(threads) == 1 ? "" : "s");
	for (size_t i = 0; i < res->ntimings; i++) {
		const struct analyze_timing *t = &res->timings[i];
		if (t->rank >= 0)
			fprintf(stderr, "    %s, rank %d: %.3f\n", t->what, t->rank, t->s);
		else
			fprintf(stderr, "    %s: %.3f\n", t->what, t->s);
	}
	fprintf(stderr, "  output %.3f\n", out_s);
	fprintf(stderr, "  total %.3f\n", total_s);
}

int cmd_analyze(int argc, char **argv)
{
	struct aopts o = {.format = "table", .delay = 30, .runtime_cutoff = 50, .launch_delay_cutoff = 100,
			  .num_kernels = 10, .duration_ratio = 0.8};
	const struct arg_opt opts[] = {
		{"format", 'f', ARG_STRING, &o.format, "FMT", "table, csv or json", 0, 0, NULL},
		{"rank", 0, ARG_INT, &o.rank, "N",
		 "rank of a trace without distributedInfo.rank and without rank-N in its name", 0, INT32_MAX,
		 &o.rank_seen},
		{"ranks", 0, ARG_STRING, &o.ranks, "LIST", "analyse only these ranks (e.g. 0,3); default all", 0, 0,
		 NULL},
		{"consecutive-kernel-delay", 0, ARG_DOUBLE, &o.delay, "US",
		 "idle: gaps shorter than this are kernel_wait", 0, 0, NULL},
		{"interval-stats", 0, ARG_BOOL, &o.interval_stats, NULL,
		 "idle: also print the idle interval statistics", 0, 0, NULL},
		{"runtime-cutoff", 0, ARG_DOUBLE, &o.runtime_cutoff, "US",
		 "launch: CPU launch calls longer than this are outliers", 0, 0, NULL},
		{"launch-delay-cutoff", 0, ARG_DOUBLE, &o.launch_delay_cutoff, "US",
		 "launch: launch delays longer than this are outliers", 0, 0, NULL},
		{"no-memory-events", 0, ARG_BOOL, &o.no_memory_events, NULL,
		 "launch: leave out cudaMemcpyAsync/cudaMemsetAsync", 0, 0, NULL},
		{"top", 0, ARG_BOOL, &o.top, NULL,
		 "kernels: print the per-kernel table (kernel_metrics) instead of the type breakdown", 0, 0,
		 NULL},
		{"num-kernels", 0, ARG_INT, &o.num_kernels, "N",
		 "kernels: keep at most N kernels per type and rank, fold the rest into 'others'", 1,
		 INT64_MAX, NULL},
		{"duration-ratio", 0, ARG_DOUBLE, &o.duration_ratio, "R",
		 "kernels: fold kernels past this quantile of the cumulative time", 0, 0, NULL},
		{"all-kernels", 0, ARG_BOOL, &o.all_kernels, NULL,
		 "kernels, kernel-distribution: no folding into 'others', true per-call statistics "
		 "(= --num-kernels 1000000000000 --duration-ratio 1)",
		 0, 0, NULL},
		{"no-memory-kernels", 0, ARG_BOOL, &o.no_memory_kernels, NULL,
		 "kernels, kernel-distribution: leave out memcpy/memset (HTA includes them)", 0, 0, NULL},
		{"fixed-classification", 0, ARG_BOOL, &o.fixed, NULL,
		 "classify kernels with HTA's bugs fixed (hip*, *Sync* names; see docs/trace-model.md)", 0, 0, NULL},
		{"keep-last-step", 0, ARG_BOOL, &o.keep_last_step, NULL,
		 "do not drop the last ProfilerStep (HTA drops it)", 0, 0, NULL},
		{"no-ns-rounding", 0, ARG_BOOL, &o.no_ns_rounding, NULL,
		 "keep fractional microseconds (HTA_DISABLE_NS_ROUNDING=1)", 0, 0, NULL},
		{"threads", 'j', ARG_INT, &o.threads, "N",
		 "threads for loading and for the analyses (0 = number of cores)", 0, 1024, NULL},
		{"csv-dir", 0, ARG_STRING, &o.csv_dir, "DIR",
		 "also write each table as DIR/<name>.csv (HTA's file names)", 0, 0, NULL},
		{"quiet", 'q', ARG_BOOL, &o.quiet, NULL, "no load warnings on stderr", 0, 0, NULL},
		{"small-pages", 0, ARG_BOOL, &o.small_pages, NULL,
		 "keep big arrays on 4 KiB pages (default: transparent huge pages, far fewer page faults)", 0, 0,
		 NULL},
		{"timings", 0, ARG_BOOL, &o.timings, NULL,
		 "print the wall time of each phase (load, parse, finish, each analysis) on stderr", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dyno analyze",
		.usage = "dyno analyze temporal|idle|kernels|kernel-distribution|overlap|launch|summary TRACE_OR_DIR [options]",
		.description = "Analyse a Kineto trace (.json or .json.gz) or a directory of per-rank traces\n"
			       "like Holistic Trace Analysis, with the same definitions and numbers:\n"
			       "  temporal  GPU idle / compute / non-compute time per rank\n"
			       "  idle      GPU idle time per stream: host_wait, kernel_wait, other\n"
			       "  kernels   GPU kernel time by type (and overlaps); --top: per-kernel table\n"
			       "  kernel-distribution  kernel durations per rank, slowest vs fastest rank\n"
			       "  overlap   share of communication time overlapped by computation, per rank\n"
			       "  launch    CUDA kernel launch statistics per rank\n"
			       "  summary   all of the above\n"
			       "With --format csv the columns are named as in HTA's CSV files.",
		.opts = opts,
		.min_pos = 2,
		.max_pos = 2,
		.missing_error = "expected ANALYSIS and TRACE_OR_DIR (see --help)",
	};
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	const char *what = a.pos[0], *path = a.pos[1];
	/* the columns and the analyses' scratch arrays are filled once, front to
	 * back: on 2 MiB pages that is ~40x fewer page faults (a 1 GB trace:
	 * ~85,000 -> ~2,000), up to half the wall time on a virtual machine
	 * where faults are costly (docs/analyze.md) */
	if (!o.small_pages)
		xalloc_huge_pages(2u << 20);
	bool known = false;
	for (int i = 0; analyses[i]; i++)
		known |= strcmp(analyses[i], what) == 0;
	enum aformat fmt = AFMT_TABLE;
	if (strcmp(o.format, "csv") == 0)
		fmt = AFMT_CSV;
	else if (strcmp(o.format, "json") == 0)
		fmt = AFMT_JSON;
	else if (strcmp(o.format, "table") != 0) {
		fprintf(stderr, "dyno analyze: unknown --format '%s' (table, csv or json)\n", o.format);
		args_free(&a);
		return 2;
	}
	if (!(o.duration_ratio >= 0 && o.duration_ratio <= 1)) {
		fprintf(stderr, "dyno analyze: --duration-ratio %g: must be between 0 and 1\n", o.duration_ratio);
		args_free(&a);
		return 2;
	}
	int *sel_ranks;
	size_t nsel;
	if (!known || parse_ranks(o.ranks, &sel_ranks, &nsel) != 0) {
		if (!known)
			fprintf(stderr, "dyno analyze: unknown analysis '%s' (temporal, idle, kernels, kernel-distribution, "
				"overlap, launch, summary)\n", what);
		else
			fprintf(stderr, "dyno analyze: bad --ranks '%s' (a list like 0,1,7)\n", o.ranks);
		args_free(&a);
		return 2;
	}
	if (o.csv_dir) {
		struct stat st;
		if (stat(o.csv_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "dyno analyze: --csv-dir %s: not a directory\n", o.csv_dir);
			free(sel_ranks);
			args_free(&a);
			return 2;
		}
	}
	struct trace_load_opts lo = {.rank = (int)o.rank, .rank_given = o.rank_seen,
				     .keep_last_step = o.keep_last_step, .no_ns_rounding = o.no_ns_rounding,
				     .threads = (int)o.threads, .skip_cpu_ops = true,
				     .no_flows = true, .no_counters = true, .fixed_classification = o.fixed};
	struct trace_set set;
	struct buf err = BUF_INIT;
	int64_t t0 = clock_mono_ns();
	if (trace_set_load(&set, path, &lo, &err) != 0) {
		fprintf(stderr, "dyno analyze: %s\n", err.data);
		buf_free(&err);
		free(sel_ranks);
		args_free(&a);
		return 1;
	}
	buf_free(&err);
	double load_s = (double)(clock_mono_ns() - t0) / 1e9;
	if (!o.quiet && set.warnings[0])
		fprintf(stderr, "%s", set.warnings);
	struct analyze_ranks sel = {sel_ranks, nsel};
	for (size_t i = 0; i < nsel; i++) {
		bool found = false;
		for (size_t k = 0; k < set.nranks; k++)
			found |= set.ranks[k]->rank == sel_ranks[i];
		if (!found) {
			fprintf(stderr, "dyno analyze: --ranks: rank %d is not in %s (ranks:", sel_ranks[i], path);
			for (size_t k = 0; k < set.nranks; k++)
				fprintf(stderr, " %d", set.ranks[k]->rank);
			fprintf(stderr, ")\n");
			trace_set_free(&set);
			free(sel_ranks);
			args_free(&a);
			return 2;
		}
	}
	bool all = strcmp(what, "summary") == 0;
	if (o.all_kernels) {
		o.num_kernels = 1000000000000LL;
		o.duration_ratio = 1.0;
	}
	struct analyze_run_opts ro = {
		.delay = o.delay,
		.idle_stats = all || o.interval_stats || o.csv_dir,
		.kernels = {.duration_ratio = o.duration_ratio, .num_kernels = (uint64_t)o.num_kernels,
			    .include_memory = !o.no_memory_kernels},
		.launch = {o.runtime_cutoff, o.launch_delay_cutoff, !o.no_memory_events},
		.threads = (int)o.threads,
	};
	static const struct {
		const char *name;
		unsigned bit;
	} bits[] = {{"temporal", AN_TEMPORAL}, {"idle", AN_IDLE}, {"kernels", AN_KERNELS},
		    {"kernel-distribution", AN_KDIST}, {"overlap", AN_OVERLAP}, {"launch", AN_LAUNCH}};
	ro.which = all ? AN_ALL : 0;
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (strcmp(what, bits[i].name) == 0)
			ro.which = bits[i].bit;
	/* every analysis of every rank on the thread pool; printed below in
	 * the fixed order */
	struct analyze_results res;
	analyze_run(&set, &sel, &ro, &res);
	int64_t t_out = clock_mono_ns();
	bool first = true;
	rc = 0;
	if (fmt == AFMT_JSON)
		fputs("[", stdout);
	if (res.temporal)
		rc |= emit(res.temporal, fmt, &o, &first);
	if (res.idle) {
		rc |= emit(res.idle, fmt, &o, &first);
		if (res.idle_stats)
			rc |= emit(res.idle_stats, fmt, &o, &first);
	}
	if (res.ktypes) {
		/* one table on stdout (so the CSV diffs against HTA's file), both
		 * into --csv-dir */
		bool show_types = all || !o.top, show_metrics = all || o.top;
		rc |= emit_maybe(res.ktypes, fmt, &o, &first, show_types);
		rc |= emit_maybe(res.kmetrics, fmt, &o, &first, show_metrics);
	}
	if (res.kdist) {
		rc |= emit(res.kdist, fmt, &o, &first);
		if (fmt != AFMT_CSV || o.csv_dir)
			rc |= emit_maybe(res.kspread, fmt, &o, &first, fmt != AFMT_CSV);
	}
	if (res.overlap)
		rc |= emit(res.overlap, fmt, &o, &first);
	for (size_t i = 0; i < res.nlaunch; i++)
		rc |= emit(res.launch[i], fmt, &o, &first);
	if (fmt == AFMT_JSON)
		fputs("]\n", stdout);
	if (!o.quiet && fmt == AFMT_TABLE) {
		fprintf(stderr, "loaded %zu rank(s) in %.3f s\n", set.nranks, load_s);
		for (size_t k = 0; k < set.nranks && k < 16; k++)
			fprintf(stderr, "  rank %d (from %s): %s, %zu rows\n", set.ranks[k]->rank,
				trace_rank_rule_name(set.ranks[k]->rank_rule), set.ranks[k]->path, set.ranks[k]->n);
	}
	if (o.timings)
		print_timings(&set, &res, load_s, (double)(clock_mono_ns() - t_out) / 1e9,
			      (double)(clock_mono_ns() - t0) / 1e9, ro.threads);
	analyze_results_free(&res);
	trace_set_free(&set);
	free(sel_ranks);
	args_free(&a);
	return rc ? 1 : 0;
}
