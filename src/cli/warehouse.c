/*
 * warehouse.c - `dyno warehouse ingest|report|gpu-hours` (docs/fleet.md):
 * many traces' figures into one database (SQLite file or PostgreSQL), and
 * the fleet-wide reports over it.  The options of each; the work is the
 * warehouse library's (src/fleet): ingest is wh_ingest.c, the reports
 * wh_report.c and wh_html.c, GPU-hours wh_gpu.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "report/html.h"
#include "fleet/wh_gpu.h"
#include "fleet/wh_ingest.h"
#include "fleet/wh_report.h"
#include "fleet/wh_trace.h"
#include "core/args.h"

#define DEFAULT_DB "dyno-warehouse.db"

static const char *default_db(void)
{
	const char *e = getenv("DYNO_WAREHOUSE");
	return e && *e ? e : DEFAULT_DB;
}

static int ingest(int argc, char **argv)
{
	const char *db_spec = default_db(), *job = NULL, *host = NULL;
	int64_t threads = 0;
	bool quiet = false;
	const struct arg_opt opts[] = {
		{"db", 0, ARG_STRING, &db_spec, "FILE|URL", "SQLite file or postgresql:// URL (default $DYNO_WAREHOUSE or " DEFAULT_DB ")", 0, 0, NULL},
		{"job", 0, ARG_STRING, &job, "J", "the job of every trace given (default: from the directories)", 0, 0, NULL},
		{"host", 0, ARG_STRING, &host, "H", "the host of every trace given (default: from the directories)", 0, 0, NULL},
		{"threads", 0, ARG_INT, &threads, "N", "traces analysed at once (default: one per core)", 0, 4096, NULL},
		{"quiet", 'q', ARG_BOOL, &quiet, NULL, "only errors and failed traces on stderr", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno warehouse ingest",
		.usage = "dyno warehouse ingest TRACE_OR_DIR... [--db FILE|postgresql://...] [--job J] [--host H]",
		.description =
			"Add traces to the warehouse: per trace its job, host, rank, time, iteration times,\n"
			"per-kernel calls/total/p50/p95, per-type totals, GPU idle and host-wait shares.  A\n"
			"directory is walked: ROOT/JOB/HOST/... names the job and host.  A trace already there\n"
			"(same content) is skipped; a damaged one is recorded as failed with its error.",
		.opts = opts,
		.min_pos = 1,
		.max_pos = ARGS_ANY,
		.missing_error = "no trace or directory given (see --help)",
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = wh_ingest(a.pos, a.npos, db_spec, job, host, threads, quiet);
	args_free(&a);
	return rc;
}

static int parse_format(const char *format, enum aformat *fmt)
{
	*fmt = strcmp(format, "csv") == 0 ? AFMT_CSV : strcmp(format, "json") == 0 ? AFMT_JSON : AFMT_TABLE;
	return *fmt != AFMT_TABLE || strcmp(format, "table") == 0 ? 0 : -1;
}

static int report(int argc, char **argv)
{
	struct wh_report_opts o = WH_REPORT_OPTS_INIT;
	const char *db_spec = default_db(), *format = "table", *html = NULL;
	bool top = false, by_type = false, jobs = false, regressions = false;
	int64_t bucket_h = 24;
	const struct arg_opt opts[] = {
		{"db", 0, ARG_STRING, &db_spec, "FILE|URL", "SQLite file or postgresql:// URL (default $DYNO_WAREHOUSE or " DEFAULT_DB ")", 0, 0, NULL},
		{"top-kernels", 0, ARG_BOOL, &top, NULL, "kernels by fleet GPU time (the default)", 0, 0, NULL},
		{"by-type", 0, ARG_BOOL, &by_type, NULL, "GPU time by kernel type over time", 0, 0, NULL},
		{"jobs", 0, ARG_BOOL, &jobs, NULL, "per job: traces, hosts, time span, means", 0, 0, NULL},
		{"job", 0, ARG_STRING, &o.job, "J", "that job's traces over time (with --top-kernels, --by-type, --regressions: only its traces)", 0, 0, NULL},
		{"regressions", 0, ARG_BOOL, &regressions, NULL, "kernels slower than their own history, with the jobs and traces", 0, 0, NULL},
		{"format", 0, ARG_STRING, &format, "F", "table, csv or json", 0, 0, NULL},
		{"html", 0, ARG_STRING, &html, "FILE", "every report on one HTML page with charts (- for stdout)", 0, 0, NULL},
		{"limit", 0, ARG_INT, &o.limit, "N", "top kernels: rows (default 20)", 1, INT32_MAX, NULL},
		{"bucket-hours", 0, ARG_INT, &bucket_h, "H", "by type: bucket width in hours (default 24)", 1, 24 * 366, NULL},
		{"threshold", 0, ARG_DOUBLE, &o.threshold, "R", "regressions: p50 at least R x the history's median (default 1.5)", 0, 0, NULL},
		{"min-z", 0, ARG_DOUBLE, &o.min_z, "Z", "regressions: and Z robust deviations above it (default 5)", 0, 0, NULL},
		{"min-history", 0, ARG_INT, &o.min_history, "N", "regressions: traces of history a kernel needs (default 5)", 1, INT32_MAX, NULL},
		{"recent-fraction", 0, ARG_DOUBLE, &o.recent_fraction, "F", "regressions: the newest share of traces judged (default 0.2)", 0, 0, NULL},
		{"since", 0, ARG_INT, &o.since_s, "UNIX_S", "regressions: judge the traces from this time (instead of --recent-fraction)", 1, INT64_MAX / 1000000000, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno warehouse report",
		.usage = "dyno warehouse report [--top-kernels|--by-type|--jobs|--job J|--regressions] [--format table|csv|json]\n"
			 "       dyno warehouse report --html FILE [--job J] [--limit N] [--bucket-hours H] [regression options]",
		.description = "Query the warehouse (docs/fleet.md).  --regressions: a kernel whose per-trace p50 in the\n"
			       "recent traces is >= --threshold x its history's median and >= --min-z robust deviations\n"
			       "(1.4826 MAD) above it, with the jobs and traces that show it.  --html FILE: all four\n"
			       "reports (regressions, top kernels, by type over time, per-job trends) on one page with charts.",
		.opts = opts,
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	o.bucket_s = bucket_h * 3600;
	enum aformat fmt;
	int modes = top + by_type + jobs + regressions;
	const char *bad = NULL;
	if (parse_format(format, &fmt) != 0)
		bad = "--format: table, csv or json";
	if (modes > 1)
		bad = "one of --top-kernels, --by-type, --jobs, --regressions";
	else if (html && (modes || strcmp(format, "table") != 0))
		bad = "--html FILE writes every report: no --top-kernels, --by-type, --jobs, --regressions or --format";
	else if (!(o.threshold > 1) || !(o.min_z >= 0) || !(o.recent_fraction > 0 && o.recent_fraction < 1))
		bad = "--threshold > 1, --min-z >= 0, 0 < --recent-fraction < 1";
	if (bad) {
		fprintf(stderr, "dyno warehouse report: %s\n", bad);
		args_free(&a);
		return 2;
	}
	o.kind = by_type ? WH_REPORT_BY_TYPE
		 : regressions ? WH_REPORT_REGRESSIONS
		 : jobs || (o.job && !top) ? WH_REPORT_JOBS
				      : WH_REPORT_TOP_KERNELS;
	struct wh_db db;
	struct buf err = BUF_INIT, out = BUF_INIT;
	rc = 1;
	if (wh_db_open_existing(&db, db_spec, &err) != 0) {
		fprintf(stderr, "dyno %s\n", err.data);
	} else if (html) {
		if (wh_html_report(&db, &o, &out, &err) != 0)
			fprintf(stderr, "dyno warehouse report: %s\n", err.data);
		else if ((rc = html_write_file("dyno warehouse report", html, &out)) == 0 && strcmp(html, "-") != 0)
			fprintf(stderr, "dyno warehouse report: wrote %s (%zu bytes)\n", html, out.len);
		wh_db_close(&db);
	} else {
		struct atable *t = wh_report(&db, &o, &err);
		if (t) {
			atable_render(t, fmt, &out);
			fwrite(out.data, 1, out.len, stdout);
			atable_free(t);
			rc = 0;
		} else {
			fprintf(stderr, "dyno warehouse report: %s\n", err.data);
		}
		wh_db_close(&db);
	}
	buf_free(&err);
	buf_free(&out);
	args_free(&a);
	return rc;
}

static int gpu_hours(int argc, char **argv)
{
	const char *db_spec = default_db(), *format = "table", *by = "job", *labels = NULL, *host = "localhost";
	bool ingest = false;
	int64_t from = 0, to = INT64_MAX / 1000;
	const struct arg_opt opts[] = {
		{"db", 0, ARG_STRING, &db_spec, "FILE|URL", "SQLite file or postgresql:// URL (default $DYNO_WAREHOUSE or " DEFAULT_DB ")", 0, 0, NULL},
		{"ingest", 0, ARG_BOOL, &ingest, NULL, "store the FILEs: `dyno metrics --json` output (- for stdin)", 0, 0, NULL},
		{"host", 0, ARG_STRING, &host, "H", "--ingest: the host of an answer without a host label (one daemon)", 0, 0, NULL},
		{"label", 0, ARG_STRING, &labels, "JOB=MODEL,...", "give jobs a model label (--by model)", 0, 0, NULL},
		{"by", 0, ARG_STRING, &by, "job|user|model", "roll up per job (default), user or model", 0, 0, NULL},
		{"from", 0, ARG_INT, &from, "UNIX_S", "samples from this time", 0, INT64_MAX / 1000, NULL},
		{"to", 0, ARG_INT, &to, "UNIX_S", "samples before this time", 0, INT64_MAX / 1000, NULL},
		{"format", 0, ARG_STRING, &format, "F", "table, csv or json", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno warehouse gpu-hours",
		.usage = "dyno warehouse gpu-hours [--by job|user|model] [--from S] [--to S]\n"
			 "       dyno warehouse gpu-hours --ingest SCRAPE... [--host H]     (SCRAPE: dyno metrics --json "
			 "--names 'gpu_job_*,gpu_user_*' output)\n"
			 "       dyno warehouse gpu-hours --label JOB=MODEL,...",
		.description = "GPU hours and energy per job, user or model from the daemons' per-job GPU accounting\n"
			       "(docs/metrics.md, gpu_jobs), scraped with dyno metrics --json and stored in the warehouse.",
		.opts = opts,
		.max_pos = ARGS_ANY,
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	enum aformat fmt;
	enum wh_gpu_by b = strcmp(by, "user") == 0 ? WH_GPU_BY_USER : strcmp(by, "model") == 0 ? WH_GPU_BY_MODEL : WH_GPU_BY_JOB;
	const char *bad = parse_format(format, &fmt) != 0				    ? "--format: table, csv or json"
			  : b == WH_GPU_BY_JOB && strcmp(by, "job") != 0		    ? "--by: job, user or model"
			  : ingest != (a.npos > 0)					    ? "--ingest takes the scrape files (and only it does)"
			  : from >= to							    ? "--from must be before --to"
											    : NULL;
	if (bad) {
		fprintf(stderr, "dyno warehouse gpu-hours: %s\n", bad);
		args_free(&a);
		return 2;
	}
	struct wh_db db;
	struct buf err = BUF_INIT;
	rc = 1;
	/* only --ingest and --label write: the rest reads an existing warehouse */
	if ((ingest || labels ? wh_db_open(&db, db_spec, &err) : wh_db_open_existing(&db, db_spec, &err)) != 0) {
		fprintf(stderr, "dyno %s\n", err.data);
		goto out;
	}
	rc = 0;
	for (int i = 0; i < a.npos && rc == 0; i++) {
		struct buf text = BUF_INIT;
		FILE *f = strcmp(a.pos[i], "-") == 0 ? stdin : fopen(a.pos[i], "rb");
		char chunk[65536];
		size_t n, rows = 0;
		if (!f) {
			buf_printf(&err, "%s: cannot open", a.pos[i]);
			rc = 1;
		} else {
			while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
				buf_append(&text, chunk, n);
			if (f != stdin)
				fclose(f);
			rc = wh_gpu_ingest(&db, text.data, text.len, a.pos[i], host, &rows, &err) == 0 ? 0 : 1;
			if (rc == 0)
				printf("%s: %zu samples\n", a.pos[i], rows);
		}
		buf_free(&text);
	}
	if (rc == 0 && labels) {
		char *copy = xstrdup(labels), *save = NULL;
		for (char *it = strtok_r(copy, ",", &save); it && rc == 0; it = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(it, '=');
			if (!eq || eq == it || !eq[1]) {
				buf_printf(&err, "--label: '%s' is not JOB=MODEL", it);
				rc = 2;
			} else {
				*eq = 0;
				rc = wh_gpu_label(&db, it, eq + 1, &err) == 0 ? 0 : 1;
			}
		}
		free(copy);
	}
	if (rc == 0 && !ingest && !labels) {
		struct atable *t = wh_gpu_report(&db, b, from, to, &err);
		if (t) {
			struct buf out = BUF_INIT;
			atable_render(t, fmt, &out);
			fwrite(out.data, 1, out.len, stdout);
			buf_free(&out);
			atable_free(t);
		} else {
			rc = 1;
		}
	}
	if (rc != 0)
		fprintf(stderr, "dyno warehouse gpu-hours: %s\n", err.data);
	wh_db_close(&db);
out:
	buf_free(&err);
	args_free(&a);
	return rc;
}

int cmd_warehouse(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";
	if (strcmp(sub, "ingest") == 0)
		return ingest(argc - 1, argv + 1);
	if (strcmp(sub, "report") == 0)
		return report(argc - 1, argv + 1);
	if (strcmp(sub, "gpu-hours") == 0)
		return gpu_hours(argc - 1, argv + 1);
	bool help = strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0;
	fprintf(help ? stdout : stderr,
		"usage: dyno warehouse ingest TRACE_OR_DIR... [--db FILE|postgresql://...]\n"
		"       dyno warehouse report [--top-kernels|--by-type|--jobs|--job J|--regressions] [--format F]\n"
		"       dyno warehouse report --html FILE [--job J]\n"
		"       dyno warehouse gpu-hours [--by job|user|model] [--from S] [--to S] | --ingest SCRAPE... | --label J=M\n"
		"\nA database of many traces' figures (SQLite by default, or PostgreSQL) and fleet-wide reports\n"
		"over it; `dyno warehouse ingest --help`, `dyno warehouse report --help`.\n");
	if (!help && *sub)
		fprintf(stderr, "dyno warehouse: unknown subcommand '%s'\n", sub);
	return help ? 0 : 2;
}
