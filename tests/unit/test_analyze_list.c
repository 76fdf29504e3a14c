/*
 * test_analyze_list.c - the analysis table (src/analyze/list.h) and the
 * CLI built from it: every row is complete (name, help, tables with CSV
 * names, some work to do), option names are unique, `dyno analyze --help`
 * lists every analysis and option, the CLI accepts every name (and refuses
 * others naming them all), each analysis run alone gives exactly its own
 * tables, and --csv-dir writes the files the table names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/run.h"
#include "cli/commands.h"
#include "test.h"

/* cmd_analyze(argv) with stdout and stderr caught; returns its exit code. */
static int run_analyze(char **argv, struct buf *out, struct buf *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	char of[512], ef[512];
	snprintf(of, sizeof of, "%s/analyze.out", test_tmpdir());
	snprintf(ef, sizeof ef, "%s/analyze.err", test_tmpdir());
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	FILE *fo = fopen(of, "w+"), *fe = fopen(ef, "w+");
	REQUIRE(fo && fe);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	int rc = cmd_analyze(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	for (int k = 0; k < 2; k++) {
		FILE *f = k ? fe : fo;
		char tmp[4096];
		size_t n;
		rewind(f);
		while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
			buf_append(k ? err : out, tmp, n);
		fclose(f);
	}
	buf_putc(out, '\0');
	buf_putc(err, '\0');
	return rc;
}

static const char *two_ranks(void)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/traces/trace_filter", test_data_dir());
	return path;
}

TEST(analysis_table_rows_are_complete)
{
	REQUIRE(ANALYSIS_COUNT >= 6);
	for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
		const struct analysis *a = analysis_list[i];
		REQUIRE(a && a->name && a->name[0]);
		CHECK(strcmp(a->name, "summary") != 0); /* the CLI's word for all of them */
		CHECK(a->help && a->help[0]);
		CHECK(a->rank || a->combine || a->pair); /* something to compute */
		CHECK(!a->pair || (!a->rank && !a->combine)); /* two sets: one call, nothing per rank */
		CHECK(!a->pair || a->own_command);            /* ... and never part of summary */
		CHECK(a->opts.size == 0 || (a->opts.defaults && a->opts.rows));
		CHECK(analysis_find(a->name) == a);
		REQUIRE(a->tables && a->ntables >= 1);
		for (size_t t = 0; t < a->ntables; t++)
			CHECK(a->tables[t].csv && a->tables[t].csv[0]);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(analysis_list[k]->name, a->name) != 0);
	}
	CHECK(analysis_find("summary") == NULL);
	CHECK(analysis_find("bogus") == NULL);
}

TEST(analysis_options_are_unique_and_at_their_defaults)
{
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	CHECK(cfg.nrows >= 10); /* idle 2, launch 3, kernels 1 + the shared step 4 */
	for (size_t i = 0; i < cfg.nrows; i++) {
		CHECK(cfg.rows[i].name && cfg.rows[i].help && cfg.rows[i].ptr);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(cfg.rows[k].name, cfg.rows[i].name) != 0);
	}
	/* each analysis's block starts at its defaults */
	for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
		const struct analysis_optdef *d = &analysis_list[i]->opts;
		void *b = analysis_config_opts(&cfg, d);
		CHECK((b != NULL) == (d->size != 0));
		if (b)
			CHECK(memcmp(b, d->defaults, d->size) == 0);
	}
	struct buf err = BUF_INIT;
	CHECK(analysis_config_check(&cfg, &err) == 0);
	/* a bad value is refused by its check, with the option's name */
	struct kernel_step_options *ko = analysis_config_opts(&cfg, &analysis_step_kernel_breakdown.opts);
	ko->duration_ratio = 2;
	CHECK(analysis_config_check(&cfg, &err) == -1);
	CHECK(err.data && strstr(err.data, "--duration-ratio"));
	buf_free(&err);
	analysis_config_free(&cfg);
}

TEST(analyze_help_lists_every_analysis_and_option)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *argv[] = {"analyze", "--help", NULL};
	CHECK_INT(run_analyze(argv, &out, &err), 0);
	const char *usage_end = strchr(out.data, '\n');
	REQUIRE(usage_end);
	for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
		const struct analysis *a = analysis_list[i];
		/* in the usage line, and a line of its own with its help */
		const char *u = strstr(out.data, a->name);
		CHECK(u && u < usage_end);
		struct buf line = BUF_INIT;
		buf_printf(&line, "\n  %s ", a->name);
		const char *l = strstr(out.data, line.data);
		CHECK(l != NULL);
		CHECK(l && strstr(l, a->help) && strstr(l, a->help) < strchr(l + 1, '\n'));
		buf_free(&line);
	}
	CHECK(strstr(out.data, "  summary ") != NULL);
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	for (size_t i = 0; i < cfg.nrows; i++) {
		struct buf opt = BUF_INIT;
		buf_printf(&opt, "--%s", cfg.rows[i].name);
		CHECK(strstr(out.data, opt.data) != NULL);
		buf_free(&opt);
	}
	analysis_config_free(&cfg);
	buf_free(&out);
	buf_free(&err);
}

TEST(analyze_cli_accepts_every_analysis_name)
{
	for (size_t i = 0; i <= ANALYSIS_COUNT; i++) {
		const char *name = i < ANALYSIS_COUNT ? analysis_list[i]->name : "summary";
		struct buf out = BUF_INIT, err = BUF_INIT;
		char *argv[] = {"analyze", (char *)name, (char *)two_ranks(), "--format", "json", "-q", NULL, NULL, NULL};
		/* an analysis of two sets takes CONTROL and TEST: the same twice */
		if (i < ANALYSIS_COUNT && analysis_list[i]->pair)
			memmove(&argv[3], (char *[]){(char *)two_ranks(), "--format", "json", "-q", NULL}, 5 * sizeof *argv);
		/* patterns needs an operator name (one with patterns on this trace) */
		if (strcmp(name, "patterns") == 0) {
			argv[6] = "--operator";
			argv[7] = "Optimizer";
		}
		/* 4: undefined on this trace (cupti: no CUPTI counters), said in a note */
		int rc = run_analyze(argv, &out, &err);
		if (rc == 4)
			CHECK(out.data && strstr(out.data, "unavailable") != NULL);
		else
			CHECK_INT(rc, 0);
		CHECK(out.len > 10 && out.data[0] == '[');
		/* the first table shown is one of this analysis's */
		const struct analysis *a = analysis_find(name) ? analysis_find(name) : analysis_list[0];
		bool own = false;
		for (size_t t = 0; t < a->ntables; t++) {
			struct buf want = BUF_INIT;
			buf_printf(&want, "[{\"name\":\"%s", a->tables[t].csv);
			own |= strncmp(out.data, want.data, want.len) == 0;
			buf_free(&want);
		}
		CHECK(own);
		buf_free(&out);
		buf_free(&err);
	}
	/* anything else: exit 2, naming every analysis */
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *argv[] = {"analyze", "bogus", (char *)two_ranks(), NULL};
	CHECK_INT(run_analyze(argv, &out, &err), 2);
	CHECK(strstr(err.data, "unknown analysis 'bogus'") != NULL);
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		CHECK(strstr(err.data, analysis_list[i]->name) != NULL);
	buf_free(&out);
	buf_free(&err);
}

/* Run alone, an analysis gives its own tables only, in table order, each
 * named as its row says; with every_table, all of them. */
TEST(analyze_run_one_analysis_gives_its_tables)
{
	/* an analysis that reads no CPU op, flow or counter has them skipped */
	struct trace_load_opts lk = {0};
	analysis_load_opts(analysis_find("kernels"), &lk);
	CHECK(lk.skip_cpu_ops && lk.no_flows && lk.no_counters);
	CHECK(!lk.keep_user_annotations);
	/* annotations keeps the user_annotation rows, not the cpu_op ones */
	struct trace_load_opts la = {0};
	analysis_load_opts(analysis_find("annotations"), &la);
	CHECK(la.skip_cpu_ops && la.keep_user_annotations);
	/* summary keeps the CPU rows op-kernels reads (the operators around
	 * launches) and, on a rank with CUPTI counters, cupti's (all) */
	struct trace_load_opts lo = {0};
	analysis_load_opts(NULL, &lo);
	CHECK(!lo.skip_cpu_ops && lo.launch_ops_only && lo.keep_range_ops);
	struct trace_load_opts lok = {0};
	analysis_load_opts(analysis_find("op-kernels"), &lok);
	CHECK(!lok.skip_cpu_ops && lok.launch_ops_only && !lok.keep_range_ops);
	/* an analysis that reads every operator gets them all */
	struct trace_load_opts lp = {0};
	analysis_load_opts(analysis_find("patterns"), &lp);
	CHECK(!lp.skip_cpu_ops && !lp.launch_ops_only);
	struct trace_set set;
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(&set, two_ranks(), &lo, &err) == 0);
	REQUIRE(set.nranks == 2);
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	for (size_t i = 0; i < ANALYSIS_COUNT; i++) {
		const struct analysis *a = analysis_list[i];
		struct analyze_run_opts o = {.only = a, .config = &cfg, .fmt = AFMT_TABLE, .every_table = true,
					     .threads = 2};
		struct analyze_results r;
		analyze_run(&set, NULL, &o, &r);
		size_t want = 0, own = 0;
		for (size_t t = 0; t < a->ntables; t++)
			want += a->tables[t].per_rank ? set.nranks : 1;
		size_t t = 0;
		for (size_t k = 0; k < r.n; k++) {
			if (r.v[k].analysis != a) {
				/* a table of an analysis it reads (.uses): never shown */
				bool used = false;
				for (const struct analysis *const *u = a->uses; u && *u; u++)
					used |= *u == r.v[k].analysis;
				CHECK(used && !r.v[k].shown);
				continue;
			}
			own++;
			while (t < a->ntables && &a->tables[t] != r.v[k].table)
				t++;
			REQUIRE(t < a->ntables); /* in table order */
			CHECK(r.v[k].analysis == a);
			CHECK_STR(r.v[k].name, r.v[k].t->name);
			CHECK(strncmp(r.v[k].name, a->tables[t].csv, strlen(a->tables[t].csv)) == 0);
			CHECK(r.v[k].shown || a->tables[t].shown); /* hidden only by its predicate */
		}
		CHECK_INT(own, want);
		analyze_results_free(&r);
	}
	analysis_config_free(&cfg);
	trace_set_free(&set);
	buf_free(&err);
}

TEST(analyze_csv_dir_writes_the_tables_files)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/csv", test_tmpdir());
	REQUIRE(mkdir(dir, 0755) == 0);
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *argv[] = {"analyze", "summary", (char *)two_ranks(), "--csv-dir", dir, "-q", NULL};
	CHECK_INT(run_analyze(argv, &out, &err), 0);
	/* what summary skips on this trace (cupti: no CUPTI counters) writes
	 * no file either */
	struct trace_load_opts lo = {0};
	analysis_load_opts(NULL, &lo);
	struct trace_set set;
	struct buf lerr = BUF_INIT;
	REQUIRE(trace_set_load(&set, two_ranks(), &lo, &lerr) == 0);
	buf_free(&lerr);
	size_t files = 0;
	for (size_t i = 0; i < ANALYSIS_COUNT; i++)
		for (size_t t = 0; t < analysis_list[i]->ntables && !analysis_list[i]->own_command; t++) {
			const struct analysis_table *d = &analysis_list[i]->tables[t];
			/* no file: an analysis of two sets (summary has one input)
			 * or one summary skips */
			const struct analysis *a = analysis_list[i];
			bool none = a->pair != NULL || (a->skip && a->skip(a->opts.defaults, &set) != NULL);
			for (int rank = 0; rank < (d->per_rank ? 2 : 1); rank++) {
				struct buf p = BUF_INIT;
				buf_printf(&p, "%s/%s", dir, d->csv);
				if (d->per_rank)
					buf_printf(&p, "%d", rank);
				buf_puts(&p, ".csv");
				struct stat st;
				if (none)
					CHECK(stat(p.data, &st) != 0);
				else
					CHECK(stat(p.data, &st) == 0 && st.st_size > 0);
				files += !none;
				buf_free(&p);
			}
		}
	CHECK(files >= 9);
	trace_set_free(&set);
	buf_free(&out);
	buf_free(&err);
}

/* summary over set: the names of the analyses it skipped, space-separated,
 * each reason checked non-empty; *ran_annotations: annotations gave tables */
static void summary_skips(const char *trace, struct buf *names, bool *ran_temporal, bool *ran_annotations)
{
	struct buf path = BUF_INIT, err = BUF_INIT;
	buf_printf(&path, "%s/traces/%s", test_data_dir(), trace);
	struct trace_load_opts lo = {0};
	analysis_load_opts(NULL, &lo);
	struct trace_set set;
	REQUIRE(trace_set_load(&set, path.data, &lo, &err) == 0);
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	struct analyze_run_opts o = {.config = &cfg, .fmt = AFMT_TABLE, .threads = 2};
	struct analyze_results r;
	analyze_run(&set, NULL, &o, &r);
	for (size_t i = 0; i < r.nskipped; i++) {
		CHECK(r.skipped[i].why && r.skipped[i].why[0]);
		buf_printf(names, "%s%s", names->len ? " " : "", r.skipped[i].analysis->name);
		/* a skipped analysis gives no table */
		for (size_t k = 0; k < r.n; k++)
			CHECK(r.v[k].analysis != r.skipped[i].analysis);
	}
	*ran_temporal = *ran_annotations = false;
	for (size_t k = 0; k < r.n; k++) {
		*ran_temporal |= strcmp(r.v[k].analysis->name, "temporal") == 0;
		*ran_annotations |= strcmp(r.v[k].analysis->name, "annotations") == 0;
	}
	/* run alone, a skipped analysis runs (its notes say what is missing) */
	for (size_t i = 0; i < r.nskipped; i++) {
		struct analyze_run_opts one = o;
		one.only = r.skipped[i].analysis;
		struct analyze_results r1;
		analyze_run(&set, NULL, &one, &r1);
		CHECK_INT(r1.nskipped, 0);
		CHECK(r1.n > 0);
		analyze_results_free(&r1);
	}
	analyze_results_free(&r);
	analysis_config_free(&cfg);
	trace_set_free(&set);
	buf_free(&path);
	buf_free(&err);
}

/* summary runs what is defined for the trace and says why it skipped the
 * rest: no GPU rows, no user annotations, no kernel launches, no CUPTI
 * counters. */
TEST(analyze_summary_says_why_it_skipped)
{
	struct buf names = BUF_INIT;
	bool temporal, annotations;
	summary_skips("cpu_only", &names, &temporal, &annotations);
	CHECK_STR(names.data, "temporal idle kernels kernel-distribution overlap launch counters op-kernels cupti");
	CHECK(!temporal && annotations);
	buf_reset(&names);
	summary_skips("critical_path/cuda_event_sync_multi_stream", &names, &temporal, &annotations);
	CHECK_STR(names.data, "annotations cupti");
	CHECK(temporal && !annotations);
	buf_reset(&names);
	/* hipLaunchKernel is not a launch of op-kernels */
	summary_skips("amd_trace", &names, &temporal, &annotations);
	CHECK_STR(names.data, "op-kernels cupti");
	CHECK(temporal && annotations);
	buf_free(&names);
}
