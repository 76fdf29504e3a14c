/*
 * analyze.c - `dyno analyze ANALYSIS TRACE_OR_DIR [options]`: load a Kineto
 * trace (or a directory of per-rank traces) with src/trace and print the
 * tables of one HTA analysis from src/analyze, or all of them (`summary`).
 * The analyses, their options, help lines and tables come from the
 * analysis table (src/analyze/list.h); this file only parses options,
 * loads, runs and writes the rendered tables where they belong (stdout,
 * --csv-dir files).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/clock.h"
#include "core/par.h"

struct aopts {
	const char *format;
	const char *ranks;
	const char *csv_dir;
	const char *iterations, *time_range; /* --iterations LO-HI, --time-range START:END */
	int64_t rank;
	bool rank_seen;
	bool keep_last_step, no_ns_rounding, quiet;
	bool fixed; /* --fixed-classification, a load option */
	bool timings, small_pages;
	bool wide; /* terminal table: long names whole */
	int64_t threads;
};

/* "temporal|idle|...|summary" (sep "|") or "temporal, idle, ..., summary". */
static void analysis_names(struct buf *b, const char *sep)
{
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		buf_printf(b, "%s%s", analysis_list[i]->name, sep);
	buf_puts(b, "summary");
}

/* One shown table on stdout: the format's separator, the table (the
 * terminal view of a notes-only table: its counts). */
static void print_table(const struct analyze_result *r, enum aformat fmt, bool *first)
{
	struct buf b = BUF_INIT;
	if (fmt == AFMT_JSON && !*first)
		buf_putc(&b, ',');
	if (fmt == AFMT_TABLE && r->table->notes_only_in_terminal)
		atable_render_notes(r->t, &b);
	else
		atable_render(r->t, fmt, &b);
	if (fmt == AFMT_TABLE)
		buf_putc(&b, '\n');
	*first = false;
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
}

/* CSV on stdout: the shown tables cut into runs of CSV_RUN rows, made on
 * the thread pool (the launch table of a 35 MB trace alone is ~8,000 rows,
 * ~0.5 ms of text on one core, after the analyses), written in order. */
#define CSV_RUN 2048
struct csv_run {
	const struct atable *t;
	size_t from;
	struct buf text;
};

static void csv_run_task(void *ctx, size_t i)
{
	struct csv_run *run = (struct csv_run *)ctx + i;
	atable_render_csv_rows(run->t, run->from, run->from + CSV_RUN, &run->text);
}

static void print_csv_tables(const struct analyze_results *res, int threads, bool *first)
{
	size_t n = 0;
	for (size_t i = 0; i < res->n; i++)
		if (res->v[i].shown)
			n += res->v[i].t->nrows / CSV_RUN + 1;
	struct csv_run *runs = xcalloc(n ? n : 1, sizeof *runs);
	size_t k = 0;
	for (size_t i = 0; i < res->n; i++)
		for (size_t from = 0; res->v[i].shown && (from == 0 || from < res->v[i].t->nrows); from += CSV_RUN)
			runs[k++] = (struct csv_run){res->v[i].t, from, BUF_INIT};
	par_for(k, threads, csv_run_task, runs);
	for (size_t j = 0; j < k; j++) {
		/* several CSV tables on stdout (summary, idle
		 * --interval-stats): a blank line between them, so a reader
		 * can split them; --csv-dir gives one file each */
		if (runs[j].from == 0 && !*first)
			fputc('\n', stdout);
		*first = false;
		fwrite(runs[j].text.data, 1, runs[j].text.len, stdout);
		buf_free(&runs[j].text);
	}
	free(runs);
}

/* DIR/<HTA file name>.csv */
static int write_csv(const struct analyze_result *r, const char *dir)
{
	struct buf b = BUF_INIT, path = BUF_INIT;
	atable_render(r->t, AFMT_CSV, &b);
	buf_printf(&path, "%s/%s.csv", dir, r->name);
	int rc = 0;
	FILE *f = fopen(path.data, "w");
	if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
		fflush(stdout); /* the results so far, whole, before the message */
		fprintf(stderr, "dyno analyze: %s: %s\n", path.data, strerror(errno));
		rc = 1;
	}
	buf_free(&path);
	buf_free(&b);
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
		char shared[64] = "";
		if (r->stats.shared_text) /* load_split.c: the text before the helper's part */
			snprintf(shared, sizeof shared, "; the first %.1f MB inflated once for both",
				 (double)r->stats.shared_text / 1e6);
		fprintf(stderr, "    rank %d: %.3f = parse %.3f (%u thread%s%s) + finish %.3f  %s\n", r->rank, r->load_s,
			r->load_s - r->finish_s, r->stats.parse_threads, r->stats.parse_threads == 1 ? "" : "s", shared,
			r->finish_s, r->path);
	}
	fprintf(stderr, "    set finish (alignment, last-step filter%s): %.3f\n", set->filtered ? "" : " not applied",
		set->finish_s);
	fprintf(stderr, "  analyses %.3f (%d thread%s)\n", res->wall_s, par_threads(threads),
		par_threads(threads) == 1 ? "" : "s");
	for (size_t i = 0; i < res->ntimings; i++) {
		const struct analyze_timing *t = &res->timings[i];
		if (t->phase)
			fprintf(stderr, "    %s (all ranks: %s): %.3f\n", t->what, t->phase, t->s);
		else if (t->rank >= 0)
			fprintf(stderr, "    %s, rank %d: %.3f\n", t->what, t->rank, t->s);
		else
			fprintf(stderr, "    %s: %.3f\n", t->what, t->s);
	}
	fprintf(stderr, "  output %.3f\n", out_s);
	fprintf(stderr, "  total %.3f\n", total_s);
}

/* The command's options: the common ones around every analysis's own
 * (from the table), NULL-terminated; free() it. */
static struct arg_opt *make_opts(struct aopts *o, const struct analysis_config *cfg)
{
	const struct arg_opt head[] = {
		{"format", 'f', ARG_STRING, &o->format, "FMT", "table, csv or json", 0, 0, NULL},
		{"rank", 0, ARG_INT, &o->rank, "N",
		 "rank of a trace without distributedInfo.rank and without rank-N in its name", 0, INT32_MAX,
		 &o->rank_seen},
		{"ranks", 0, ARG_STRING, &o->ranks, "LIST", "analyse only these ranks (e.g. 0,3); default all", 0, 0,
		 NULL},
		{"iterations", 0, ARG_STRING, &o->iterations, "N[-M]",
		 "analyse only the events of ProfilerStep#N..M (e.g. 3-5, or 3)", 0, 0, NULL},
		{"time-range", 0, ARG_STRING, &o->time_range, "START:END",
		 "analyse only the events starting in [START, END) us from the trace start", 0, 0, NULL},
	};
	const struct arg_opt tail[] = {
		{"fixed-classification", 0, ARG_BOOL, &o->fixed, NULL,
		 "classify kernels with HTA's bugs fixed (hip*, *Sync* names; see docs/trace-model.md)", 0, 0, NULL},
		{"keep-last-step", 0, ARG_BOOL, &o->keep_last_step, NULL,
		 "do not drop the last ProfilerStep (HTA drops it)", 0, 0, NULL},
		{"no-ns-rounding", 0, ARG_BOOL, &o->no_ns_rounding, NULL,
		 "keep fractional microseconds (HTA_DISABLE_NS_ROUNDING=1)", 0, 0, NULL},
		{"threads", 'j', ARG_INT, &o->threads, "N",
		 "threads for loading and for the analyses (0 = number of cores)", 0, 1024, NULL},
		{"csv-dir", 0, ARG_STRING, &o->csv_dir, "DIR",
		 "also write each table as DIR/<name>.csv (HTA's file names)", 0, 0, NULL},
		{"quiet", 'q', ARG_BOOL, &o->quiet, NULL, "no load warnings on stderr", 0, 0, NULL},
		{"wide", 0, ARG_BOOL, &o->wide, NULL,
		 "table format: print long names (kernels) whole instead of cutting them in the middle", 0, 0, NULL},
		{"small-pages", 0, ARG_BOOL, &o->small_pages, NULL,
		 "keep big arrays on 4 KiB pages (default: transparent huge pages, far fewer page faults)", 0, 0,
		 NULL},
		{"timings", 0, ARG_BOOL, &o->timings, NULL,
		 "print the wall time of each phase (load, parse, finish, each analysis) on stderr", 0, 0, NULL},
	};
	size_t nh = sizeof head / sizeof head[0], nt = sizeof tail / sizeof tail[0];
	struct arg_opt *opts = xcalloc(nh + cfg->nrows + nt + 1, sizeof *opts);
	memcpy(opts, head, sizeof head);
	memcpy(opts + nh, cfg->rows, cfg->nrows * sizeof *opts);
	memcpy(opts + nh + cfg->nrows, tail, sizeof tail);
	return opts; /* calloc'ed: the last row is the NULL end */
}

/* usage line and description, from the analysis table */
static void make_help(struct buf *usage, struct buf *desc)
{
	buf_puts(usage, "dyno analyze ");
	analysis_names(usage, "|");
	buf_puts(usage, " TRACE_OR_DIR... [options]\n       dyno analyze diff CONTROL TEST [options]");
	size_t w = strlen("summary");
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		if (strlen(analysis_list[i]->name) > w)
			w = strlen(analysis_list[i]->name);
	buf_puts(desc, "Analyse a Kineto trace (.json or .json.gz; - reads stdin), a directory of per-rank\n"
		       "traces, or several traces of one job (their ranks as in a directory)\n"
		       "like Holistic Trace Analysis, with the same definitions and numbers:\n");
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		buf_printf(desc, "  %-*s  %s\n", (int)w, analysis_list[i]->name, analysis_list[i]->help);
	/* summary: every analysis but those asked for by name only and the
	 * analyses of two sets (analysis.h) */
	buf_printf(desc, "  %-*s  all of the above but", (int)w, "summary");
	const char *sep = " ";
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		if (analysis_list[i]->own_command || analysis_list[i]->pair) {
			buf_printf(desc, "%s%s", sep, analysis_list[i]->name);
			sep = ", ";
		}
	buf_puts(desc, "\n");
	buf_puts(desc, "With --format csv the columns are named as in HTA's CSV files.");
}

/* After parsing: every check of the options that does not need the
 * trace.  0 to go on, else the exit code (2), the message printed. */
static int check_args(const struct aopts *o, const struct analysis_config *cfg, const char *what,
		      enum aformat *fmt, const struct analysis **only, int **sel_ranks, size_t *nsel,
		      struct trace_select *rows)
{
	/* set first: the caller reads them whatever this returns */
	*fmt = AFMT_TABLE;
	*only = NULL;
	if (o->iterations && trace_select_parse_iterations(o->iterations, rows) != 0) {
		fprintf(stderr, "dyno analyze: bad --iterations '%s' (N or N-M with N <= M, e.g. 3-5)\n", o->iterations);
		return 2;
	}
	if (o->time_range && trace_select_parse_time_range(o->time_range, rows) != 0) {
		fprintf(stderr, "dyno analyze: bad --time-range '%s' (START:END in us, 0 <= START < END)\n",
			o->time_range);
		return 2;
	}
	if (strcmp(o->format, "csv") == 0)
		*fmt = AFMT_CSV;
	else if (strcmp(o->format, "json") == 0)
		*fmt = AFMT_JSON;
	else if (strcmp(o->format, "table") != 0) {
		fprintf(stderr, "dyno analyze: unknown --format '%s' (table, csv or json)\n", o->format);
		return 2;
	}
	struct buf err = BUF_INIT;
	if (analysis_config_check(cfg, &err) != 0) {
		fprintf(stderr, "dyno analyze: %s\n", err.data);
		buf_free(&err);
		return 2;
	}
	*only = analysis_find(what);
	if (!*only && strcmp(what, "summary") != 0) {
		analysis_names(&err, ", ");
		fprintf(stderr, "dyno analyze: unknown analysis '%s' (%s)\n", what, err.data);
		buf_free(&err);
		return 2;
	}
	/* an option the analysis cannot run without: said before the trace
	 * is loaded (a big one takes seconds), as a usage error */
	for (size_t i = 0; *only && (*only)->required && i < cfg->nrows; i++) {
		const struct arg_opt *r = &cfg->rows[i];
		if (r->type == ARG_STRING && strcmp(r->name, (*only)->required) == 0 && !*(const char **)r->ptr) {
			fprintf(stderr, "dyno analyze %s: --%s %s is required (see --help)\n", what, r->name,
				r->metavar ? r->metavar : "VALUE");
			buf_free(&err);
			return 2;
		}
	}
	if (analyze_ranks_parse(o->ranks, sel_ranks, nsel) != 0) {
		fprintf(stderr, "dyno analyze: bad --ranks '%s' (a list like 0,1,7)\n", o->ranks);
		return 2;
	}
	if (o->csv_dir) {
		struct stat st;
		/* the directory is the user's to make (as with HTA's output
		 * paths): say which of the two is wrong */
		int e = stat(o->csv_dir, &st) != 0 ? errno : 0;
		if (e || !S_ISDIR(st.st_mode)) {
			if (e == ENOENT)
				fprintf(stderr, "dyno analyze: --csv-dir %s: no such directory (create it first)\n",
					o->csv_dir);
			else if (e)
				fprintf(stderr, "dyno analyze: --csv-dir %s: %s\n", o->csv_dir, strerror(e));
			else
				fprintf(stderr, "dyno analyze: --csv-dir %s: not a directory\n", o->csv_dir);
			free(*sel_ranks);
			*sel_ranks = NULL;
			return 2;
		}
	}
	return 0;
}

/* Every selected rank must be in the set: 0, or 2 with the message. */
static int check_ranks(const struct trace_set *set, const int *sel_ranks, size_t nsel, const char *path)
{
	struct analyze_ranks sel = {sel_ranks, nsel};
	struct buf err = BUF_INIT;
	int rc = analyze_ranks_check(set, &sel, path, &err) == 0 ? 0 : 2;
	if (rc)
		fprintf(stderr, "dyno analyze: --ranks: %s\n", err.data);
	buf_free(&err);
	return rc;
}

/* Why the results are partial: the ranks whose input stopped early
 * (a truncated or corrupt file: the events before the damage were kept);
 * empty if none. */
static void partial_reason(const struct trace_set *set, struct buf *out)
{
	for (size_t k = 0; k < set->nranks; k++) {
		const struct trace_rank *r = set->ranks[k];
		if (r->stats.truncated)
			buf_printf(out, "%sdamaged trace, rank %d: %s", out->len ? "; " : "", r->rank,
				   r->stats.truncated_msg);
	}
}

/* Summary's list of the analyses it left out and why (their .skip), one
 * row each: in the terminal after the tables, when there is one; always the
 * last element of the JSON array, so that a reader finds it; with CSV on
 * stderr, as notes are (stdout stays HTA's files).  Not an HTA file: not
 * written to --csv-dir. */
/* A table of an analysis that ran but is undefined on every selected rank
 * (no row, marked unavailable: the GPU user annotations of a trace without
 * any): in the terminal it is a skipped line, not an empty table. */
static bool skipped_in_terminal(const struct analyze_result *r)
{
	return r->shown && r->t->unavailable && r->t->nrows == 0;
}

static struct atable *skipped_table(const struct analyze_results *res)
{
	static const char *const cols[] = {"analysis:s", "reason:s", NULL};
	struct atable *t = atable_new("skipped_analyses", "Analyses skipped (undefined for this trace)", cols);
	for (size_t i = 0; i < res->nskipped; i++) {
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, res->skipped[i].analysis->name);
		atable_set_s(t, row, 1, res->skipped[i].why);
	}
	return t;
}

/* the terminal's rows for the tables skipped_in_terminal: "annotations
 * (gpu_user_annotation_breakdown)" and the first line of its notes */
static void add_unavailable_tables(const struct analyze_results *res, struct atable *t)
{
	for (size_t i = 0; i < res->n; i++) {
		if (!skipped_in_terminal(&res->v[i]))
			continue;
		const struct atable *u = res->v[i].t;
		const char *n = u->notes.data ? u->notes.data : "", *nl = strchr(n, '\n');
		struct buf name = BUF_INIT, why = BUF_INIT;
		buf_printf(&name, "%s (%s)", res->v[i].analysis->name, u->name);
		buf_append(&why, n, nl ? (size_t)(nl - n) : strlen(n));
		size_t row = atable_add_row(t);
		atable_set_s(t, row, 0, name.data);
		atable_set_s(t, row, 1, why.len ? why.data : "no data on any selected rank");
		buf_free(&name);
		buf_free(&why);
	}
}

static void print_skipped(const struct analyze_results *res, enum aformat fmt, const struct aopts *o, bool *first)
{
	if (fmt == AFMT_CSV) {
		for (size_t i = 0; !o->quiet && i < res->nskipped; i++)
			fprintf(stderr, "dyno analyze: summary: %s skipped: %s\n", res->skipped[i].analysis->name,
				res->skipped[i].why);
		return;
	}
	struct analysis_table d = {.csv = "skipped_analyses"};
	struct analyze_result r = {.t = skipped_table(res), .table = &d, .shown = true};
	if (fmt == AFMT_TABLE)
		add_unavailable_tables(res, r.t);
	if (fmt == AFMT_TABLE && r.t->nrows == 0) {
		atable_free(r.t);
		return;
	}
	r.t->wide = o->wide;
	print_table(&r, fmt, first);
	atable_free(r.t);
}

/* The results in order: the shown ones on stdout, all into --csv-dir. */
static int output(const struct analyze_results *res, enum aformat fmt, const struct aopts *o, bool summary)
{
	bool first = true;
	int rc = 0;
	/* CSV: the tables' notes on stderr (stdout is exactly HTA's files),
	 * all before the results, so on one pipe (2>&1) no stderr text lands
	 * inside a result line */
	for (size_t i = 0; fmt == AFMT_CSV && !o->quiet && i < res->n; i++)
		if (res->v[i].shown && res->v[i].t->notes.len)
			fprintf(stderr, "%s", res->v[i].t->notes.data);
	/* CSV: the skipped analyses are stderr lines too, so before the results */
	if (summary && fmt == AFMT_CSV)
		print_skipped(res, fmt, o, &first);
	if (fmt == AFMT_JSON)
		fputs("[", stdout);
	if (fmt == AFMT_CSV)
		print_csv_tables(res, (int)o->threads, &first);
	for (size_t i = 0; i < res->n; i++) {
		if (res->v[i].shown && fmt != AFMT_CSV && !(summary && fmt == AFMT_TABLE && skipped_in_terminal(&res->v[i])))
			print_table(&res->v[i], fmt, &first);
		if (o->csv_dir)
			rc |= write_csv(&res->v[i], o->csv_dir);
	}
	if (summary && fmt != AFMT_CSV)
		print_skipped(res, fmt, o, &first);
	if (fmt == AFMT_JSON)
		fputs("]\n", stdout);
	fflush(stdout); /* before anything more on stderr (--timings) */
	return rc;
}

int cmd_analyze(int argc, char **argv)
{
	struct aopts o = {.format = "table"};
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	struct arg_opt *opts = make_opts(&o, &cfg);
	struct buf usage = BUF_INIT, desc = BUF_INIT;
	make_help(&usage, &desc);
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dyno analyze",
		.usage = usage.data,
		.description = desc.data,
		.opts = opts,
		.min_pos = 2,
		.max_pos = ARGS_ANY,
		.missing_error = "expected ANALYSIS and TRACE_OR_DIR (see --help)",
	};
	int rc = args_cmd(&cmd, argc, argv, &a);
	buf_free(&usage);
	buf_free(&desc);
	free(opts);
	if (rc >= 0) {
		analysis_config_free(&cfg);
		return rc;
	}
	const char *what = a.pos[0], *path = a.pos[1];
	bool several = a.npos > 2 && !(analysis_find(what) && analysis_find(what)->pair);
	const char *label = several ? "the inputs" : path; /* in messages */
	/* the columns and the analyses' scratch arrays are filled once, front to
	 * back: on 2 MiB pages that is ~40x fewer page faults (a 1 GB trace:
	 * ~85,000 -> ~2,000), up to half the wall time on a virtual machine
	 * where faults are costly (docs/analyze.md) */
	if (!o.small_pages)
		xalloc_huge_pages(2u << 20);
	enum aformat fmt = AFMT_TABLE;
	const struct analysis *only = NULL;
	int *sel_ranks = NULL;
	size_t nsel = 0;
	/* an input right after a boolean option is more likely its value
	 * ("--top 3"): say so, as for any command with a fixed input count */
	for (int i = 2; i < a.npos; i++)
		if (a.pos_after_bool[i]) {
			fprintf(stderr, "dyno analyze: unexpected argument '%s': --%s takes no value (see --help)\n",
				a.pos[i], a.pos_after_bool[i]);
			analysis_config_free(&cfg);
			args_free(&a);
			return 2;
		}
	struct trace_select rows = {0};
	rc = check_args(&o, &cfg, what, &fmt, &only, &sel_ranks, &nsel, &rows);
	/* an analysis of two sets takes CONTROL and TEST, the others one input */
	bool pair = only && only->pair;
	if (!rc && pair && a.npos != 3) {
		fprintf(stderr, "dyno analyze: %s: expected CONTROL and TEST (two traces or directories)\n", what);
		rc = 2;
	}
	if (!rc && pair && nsel > 1) {
		fprintf(stderr, "dyno analyze: %s: --ranks: compares one rank of each side, got %zu\n", what, nsel);
		rc = 2;
	}
	if (rc) {
		free(sel_ranks);
		analysis_config_free(&cfg);
		args_free(&a);
		return rc;
	}
	struct trace_load_opts lo = {.rank = (int)o.rank, .rank_given = o.rank_seen,
				     .keep_last_step = o.keep_last_step, .no_ns_rounding = o.no_ns_rounding,
				     .threads = (int)o.threads, .fixed_classification = o.fixed};
	analysis_load_opts(only, &lo);
	/* a selection's rows span a time the operators kept for the whole
	 * trace's span need not reach (counters' trace duration): all kept */
	if (rows.iterations || rows.time_range)
		lo.launch_ops_only = false;
	struct trace_set set, test = {0};
	struct buf err = BUF_INIT;
	int64_t t0 = clock_mono_ns();
	/* every input but diff's TEST is one set: the files of one job */
	rc = trace_set_load_paths(&set, (const char *const *)a.pos + 1, pair ? 1 : (size_t)a.npos - 1, &lo, &err);
	if (rc == 0 && pair) {
		rc = trace_set_load(&test, a.pos[2], &lo, &err);
		if (rc != 0)
			trace_set_free(&set);
	}
	if (rc != 0)
		fprintf(stderr, "dyno analyze: %s\n", err.data);
	/* the rows every analysis sees, chosen once (exit status 4: none) */
	int sel_rc = 0;
	if (rc == 0 && trace_set_select(&set, &rows, &err) != 0) {
		fprintf(stderr, "dyno analyze: %s: %s\n", label, err.data);
		sel_rc = 4;
	}
	if (rc == 0 && !sel_rc && pair && trace_set_select(&test, &rows, &err) != 0) {
		fprintf(stderr, "dyno analyze: %s: %s\n", a.pos[2], err.data);
		sel_rc = 4;
	}
	if (sel_rc) {
		trace_set_free(&set);
		if (pair)
			trace_set_free(&test);
		rc = -1;
	}
	buf_free(&err);
	if (rc != 0) {
		free(sel_ranks);
		analysis_config_free(&cfg);
		args_free(&a);
		return sel_rc ? sel_rc : 1;
	}
	double load_s = (double)(clock_mono_ns() - t0) / 1e9;
	if (!o.quiet && set.warnings[0])
		fprintf(stderr, "%s", set.warnings);
	if (pair && !o.quiet && test.warnings[0])
		fprintf(stderr, "%s", test.warnings);
	struct buf partial = BUF_INIT;
	partial_reason(&set, &partial);
	if (pair)
		partial_reason(&test, &partial);
	rc = check_ranks(&set, sel_ranks, nsel, label);
	if (rc == 0 && pair)
		rc = check_ranks(&test, sel_ranks, nsel, a.pos[2]);
	if (rc == 0) {
		/* every analysis of every rank on the thread pool; printed in
		 * the table's order */
		struct analyze_ranks sel = {sel_ranks, nsel};
		struct analyze_run_opts ro = {.only = only, .config = &cfg, .fmt = fmt,
					      .every_table = o.csv_dir != NULL, .threads = (int)o.threads,
					      .test = pair ? &test : NULL};
		struct analyze_results res;
		analyze_run(&set, &sel, &ro, &res);
		int64_t t_out = clock_mono_ns();
		for (size_t i = 0; i < res.n; i++) {
			res.v[i].t->wide = o.wide;
			if (partial.len)
				atable_set_partial(res.v[i].t, partial.data);
		}
		/* CSV stays HTA's format: the damage is said on stderr, even
		 * with -q, as the exit status says it too */
		if (partial.len && fmt == AFMT_CSV)
			fprintf(stderr, "dyno analyze: PARTIAL results: %s\n", partial.data);
		/* every stderr line before the results: on one pipe (2>&1) they
		 * then never split a result line */
		if (!o.quiet && fmt == AFMT_TABLE) {
			fprintf(stderr, "loaded %zu rank(s) in %.3f s\n", set.nranks, load_s);
			for (size_t k = 0; k < set.nranks && k < 16; k++)
				fprintf(stderr, "  rank %d (from %s): %s, %zu rows\n", set.ranks[k]->rank,
					trace_rank_rule_name(set.ranks[k]->rank_rule), set.ranks[k]->path,
					set.ranks[k]->n);
			for (size_t k = 0; pair && k < test.nranks && k < 16; k++)
				fprintf(stderr, "  test rank %d (from %s): %s, %zu rows\n", test.ranks[k]->rank,
					trace_rank_rule_name(test.ranks[k]->rank_rule), test.ranks[k]->path,
					test.ranks[k]->n);
		}
		rc = output(&res, fmt, &o, only == NULL) ? 1 : partial.len ? 3 : 0;
		/* one analysis asked for and undefined on every selected rank
		 * (HTA fails): its notes say why, the status says it to scripts.
		 * One rule for all: its .skip (what summary skips it for), or
		 * every one of its tables marked unavailable (one-rank analyses:
		 * critical-path, patterns) */
		bool all_unavailable = false;
		for (size_t i = 0; only && i < res.n; i++)
			if (res.v[i].analysis == only) {
				if (!res.v[i].t->unavailable) {
					all_unavailable = false;
					break;
				}
				all_unavailable = true;
			}
		if (rc == 0 && only && (res.undefined || all_unavailable))
			rc = 4;
		/* a file asked for (--write-trace, --patterns-trace) that was not
		 * written: its message is on stderr, the status must say it too */
		for (size_t i = 0; i < res.n; i++)
			if (res.v[i].t->output_failed)
				rc = 1;
		if (o.timings)
			print_timings(&set, &res, load_s, (double)(clock_mono_ns() - t_out) / 1e9,
				      (double)(clock_mono_ns() - t0) / 1e9, ro.threads);
		analyze_results_free(&res);
	}
	buf_free(&partial);
	trace_set_free(&set);
	if (pair)
		trace_set_free(&test);
	free(sel_ranks);
	analysis_config_free(&cfg);
	args_free(&a);
	return rc;
}
