/*
 * trigger.c - `dyno trigger add|list|rm|fire`: the daemons' triggers
 * (docs/fleet.md, "Triggers"): a daemon asks its registered PyTorch
 * processes for a trace on its own when a metric condition holds over a
 * window, on a cadence, or when told to (fire).  The Kineto config is made
 * here from gputrace's trace options (kineto_config.c), so a trigger's
 * trace is the one `dyno gputrace` would ask for.  Every request is one of
 * our extensions (addTrigger, listTriggers, removeTrigger, fireTrigger),
 * sent only to daemons whose getStatus lists it; with many daemons each
 * gets the same request (a trigger added to a whole job's hosts).
 * Costs one getStatus and one request per daemon.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "client/kineto_config.h"
#include "client/peers.h"
#include "client/rpc_cmd.h"

/* ok: "status":"ok"; else the daemon's "error" */
static bool judge_ok(const struct json_value *root, struct buf *detail)
{
	const char *s;
	size_t n;
	if (json_get_str(root, "status", &s, &n) && n == 2 && memcmp(s, "ok", 2) == 0) {
		buf_puts(detail, "ok");
		return true;
	}
	if (json_get_str(root, "error", &s, &n))
		buf_printf(detail, "%.*s", (int)(n > 300 ? 300 : n), s);
	else
		buf_puts(detail, "answer has no \"status\":\"ok\"");
	return false;
}

/* Send req to the targets that list ext; print (one daemon: upstream's two
 * lines; many: a table).  Exit code. */
static int send_ext(const char *prog, struct host_opts *h, struct targets *t, const char *ext, const struct buf *req,
		cli_judge_fn judge)
{
	struct rpc_job *jobs = cli_run_extension(t, h, NULL, ext, req->data, req->len);
	for (size_t i = 0; i < t->n; i++)
		if (jobs[i].status == RPC_ERR_NO_RESPONSE && !jobs[i].resp.len)
			snprintf(jobs[i].err, sizeof jobs[i].err, "the daemon does not list the %s extension (an upstream "
				 "or older dynolog?)", ext);
	int rc = cli_simple_output(prog, t, jobs, judge);
	cli_jobs_free(jobs, t->n);
	return rc;
}

static int add(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	struct trace_opts to = TRACE_OPTS_INIT;
	const char *when = NULL, *snoop_log = NULL, *peers = NULL, *peers_job = NULL, *job = NULL;
	int64_t every_s = 0, min_interval_s = 300, process_limit = 1000, snoop_s = 0, peers_delay_s = 20;
	int64_t peers_port = NET_RPC_PORT;
	bool while_job = false;
	const struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"when", 0, ARG_STRING, &when, "COND",
		 "fire when a metric condition holds: 'KEY OP NUMBER [for DURATION]' (e.g. 'cpu_util > 90 for 60s'; KEY from docs/metrics.md)", 0, 0,
		 NULL},
		{"every-s", 0, ARG_INT, &every_s, "SECONDS", "fire on a cadence, per registered job", 1, 7 * 86400, NULL},
		{"job-id", 0, ARG_STRING, &job, "ID", "only this job's processes (without it: every registered job)", 0, 0,
		 NULL},
		{"while-job", 0, ARG_BOOL, &while_job, NULL,
		 "--when holds only while the job (any job) has registered processes", 0, 0, NULL},
		{"min-interval-s", 0, ARG_INT, &min_interval_s, "SECONDS", "fire at most once per this long per job", 0,
		 7 * 86400, NULL},
		{"process-limit", 0, ARG_INT, &process_limit, "N", "trace at most N processes of a job", 1, 1000000, NULL},
		{"log-file", 0, ARG_STRING, &to.log_file, "PATH",
		 "trace file (required); '{fire}' becomes the firing's number; Kineto adds _<pid>", 0, 0, NULL},
		{"duration-ms", 0, ARG_INT, &to.duration_ms, "MS", "trace duration", 0, INT32_MAX, NULL},
		{"iterations", 0, ARG_INT, &to.iterations, "N", "trace N iterations instead of a duration (> 0)",
		 INT64_MIN, INT32_MAX, NULL},
		{"record-shapes", 0, ARG_BOOL, &to.record_shapes, NULL, "record operator input shapes", 0, 0, NULL},
		{"with-stacks", 0, ARG_BOOL, &to.with_stacks, NULL, "record Python stacks", 0, 0, NULL},
		{"gpusnoop-s", 0, ARG_INT, &snoop_s, "SECONDS",
		 "also a gpusnoop session of this length on each triggered process (daemon with --trace_path_prefixes)", 0,
		 86400, NULL},
		{"gpusnoop-log", 0, ARG_STRING, &snoop_log, "PREFIX",
		 "gpusnoop reports go to PREFIX.<firing>.<pid>.log on the daemon's host", 0, 0, NULL},
		{"peers", 0, ARG_STRING, &peers, "HOST[:PORT],...",
		 "a firing also asks these daemons to trace the job, all from one start time (names are resolved now, "
		 "by dyno: the daemon takes addresses)",
		 0, 0, NULL},
		{"peers-slurm-job", 0, ARG_STRING, &peers_job, "JOBID",
		 "the peers are the nodes of this SLURM job (squeue/scontrol; the daemon itself left out)", 0, 0, NULL},
		{"peers-port", 0, ARG_INT, &peers_port, "PORT", "the peers' RPC port where an entry names none", 1, 65535,
		 NULL},
		{"peers-delay-s", 0, ARG_INT, &peers_delay_s, "SECONDS",
		 "with --peers: the common PROFILE_START_TIME this far ahead (as gputrace: Kineto needs ~6 s after its poll)",
		 1, 300, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno trigger add",
		.usage = "dyno trigger add ID --log-file PATH [--when COND | --every-s S] [--job-id J] [--while-job]\n"
			 "                        [--min-interval-s S] [trace options] [--gpusnoop-s S --gpusnoop-log P]\n"
			 "                        [--peers HOST[:PORT],... | --peers-slurm-job JOBID] [--peers-port P]\n"
			 "                        [--peers-delay-s S]",
		.description = "Add a trigger to the daemon(s): without --when or --every-s it fires only on\n"
			       "`dyno trigger fire ID`.  Kept in the daemon's --trigger_file across restarts.",
		.opts = opts,
		.min_pos = 1,
		.max_pos = 1,
		.missing_error = "the trigger's ID is required (see --help)",
	};
	struct args a;
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	struct buf cfg = BUF_INIT, err = BUF_INIT, req = BUF_INIT, peer_addrs = BUF_INIT, note = BUF_INIT;
	if (!kineto_log_file_check(to.log_file, &err) || !kineto_config_build(&to, &cfg, &err)) {
		fprintf(stderr, "%s: %s\n", cmd.prog, err.data);
		rc = 2;
		goto out;
	}
	if (when && every_s) {
		fprintf(stderr, "%s: --when and --every-s: a trigger is one or the other\n", cmd.prog);
		rc = 2;
		goto out;
	}
	if ((peers || peers_job) && !peers_resolve(peers, peers_job, peers_port, &t, &peer_addrs, &note, &err)) {
		fprintf(stderr, "%s: %s\n", cmd.prog, err.data);
		rc = 2;
		goto out;
	}
	if (note.len)
		fprintf(stderr, "%s: %s\n", cmd.prog, note.data);
	struct jw w;
	jw_init(&w, &req);
	jw_obj_begin(&w);
	jw_key(&w, "fn"), jw_str(&w, "addTrigger");
	jw_key(&w, "trigger");
	jw_obj_begin(&w);
	jw_key(&w, "id"), jw_str(&w, a.pos[0]);
	if (when)
		jw_key(&w, "when"), jw_str(&w, when);
	if (every_s)
		jw_key(&w, "every_s"), jw_i64(&w, every_s);
	if (job)
		jw_key(&w, "job"), jw_str(&w, job);
	if (while_job)
		jw_key(&w, "while_job"), jw_bool(&w, true);
	jw_key(&w, "config"), jw_strn(&w, cfg.data, cfg.len);
	jw_key(&w, "min_interval_s"), jw_i64(&w, min_interval_s);
	jw_key(&w, "process_limit"), jw_i64(&w, process_limit);
	if (snoop_s)
		jw_key(&w, "gpusnoop_s"), jw_i64(&w, snoop_s);
	if (snoop_log)
		jw_key(&w, "gpusnoop_log"), jw_str(&w, snoop_log);
	if (peer_addrs.len) {
		jw_key(&w, "peers"), jw_strn(&w, peer_addrs.data, peer_addrs.len);
		jw_key(&w, "peers_delay_s"), jw_i64(&w, peers_delay_s);
	}
	jw_obj_end(&w);
	jw_obj_end(&w);
	rc = send_ext(cmd.prog, &h, &t, "addTrigger", &req, judge_ok);
out:
	buf_free(&cfg);
	buf_free(&err);
	buf_free(&req);
	buf_free(&peer_addrs);
	buf_free(&note);
	targets_free(&t);
	args_free(&a);
	return rc;
}

/* rm and fire: {"fn":FN,"id":ID} */
static int by_id(int argc, char **argv, const char *prog, const char *fn, const char *what)
{
	struct host_opts h = HOST_OPTS_INIT;
	const struct arg_opt opts[] = {HOST_ARG_OPTS(&h), {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}};
	char usage[96];
	snprintf(usage, sizeof usage, "%s ID [host options]", prog);
	const struct arg_cmd cmd = {.prog = prog, .usage = usage, .description = what, .opts = opts, .min_pos = 1,
				    .max_pos = 1, .missing_error = "the trigger's ID is required (see --help)"};
	struct args a;
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	struct buf req = BUF_INIT;
	struct jw w;
	jw_init(&w, &req);
	jw_obj_begin(&w);
	jw_key(&w, "fn"), jw_str(&w, fn);
	jw_key(&w, "id"), jw_str(&w, a.pos[0]);
	jw_obj_end(&w);
	rc = send_ext(prog, &h, &t, fn, &req, judge_ok);
	buf_free(&req);
	targets_free(&t);
	args_free(&a);
	return rc;
}

/* One daemon's listTriggers answer as two tables. */
static bool print_list(const struct json_value *root, const char *indent)
{
	const struct json_value *ts = json_get(root, "triggers"), *fs = json_get(root, "firings");
	if (!ts || ts->type != JV_ARRAY || !fs || fs->type != JV_ARRAY)
		return false;
	printf("%s%-20s  %-40s  %-8s  %8s  %6s  %s\n", indent, "TRIGGER", "WHEN", "JOB", "MIN-INT", "FIRED", "LIMITED");
	for (uint32_t i = 0; i < ts->len; i++) {
		const struct json_value *e = &ts->u.items[i], *d = json_get(e, "definition");
		const char *id = "?", *when = NULL, *job = "any";
		size_t n;
		int64_t every = 0, mi = 0, fired = 0, lim = 0;
		json_get_str(d, "id", &id, &n);
		json_get_str(d, "when", &when, &n);
		json_get_str(d, "job", &job, &n);
		json_get_i64(d, "every_s", &every);
		json_get_i64(d, "min_interval_s", &mi);
		json_get_i64(e, "fired", &fired);
		json_get_i64(e, "rate_limited", &lim);
		char kind[64];
		if (when)
			snprintf(kind, sizeof kind, "%s", when);
		else if (every)
			snprintf(kind, sizeof kind, "every %" PRId64 "s", every);
		else
			snprintf(kind, sizeof kind, "(fireTrigger only)");
		printf("%s%-20s  %-40s  %-8s  %7" PRId64 "s  %6" PRId64 "  %" PRId64 "\n", indent, id, kind, job, mi, fired,
		       lim);
	}
	printf("\n%sfirings (oldest first): %u\n", indent, fs->len);
	for (uint32_t i = 0; i < fs->len; i++) {
		const struct json_value *f = &fs->u.items[i], *r = json_get(f, "result");
		const char *time = "?", *trig = "?", *job = "", *why = "", *err = NULL;
		size_t n;
		int64_t seq = 0, matched = 0;
		json_get_str(f, "time", &time, &n);
		json_get_str(f, "trigger", &trig, &n);
		json_get_str(f, "job", &job, &n);
		json_get_str(f, "why", &why, &n);
		json_get_i64(f, "seq", &seq);
		json_get_i64(r, "matched", &matched);
		json_get_str(r, "error", &err, &n);
		const struct json_value *tp = json_get(r, "triggered");
		printf("%s  #%" PRId64 " %s %s job %s: %s -> ", indent, seq, time, trig, *job ? job : "-", why);
		if (err)
			printf("%s\n", err);
		else
			printf("%" PRId64 " matched, %u triggered\n", matched, tp && tp->type == JV_ARRAY ? tp->len : 0);
	}
	return true;
}

static int list(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	bool json = false;
	const struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"json", 0, ARG_BOOL, &json, NULL, "print each daemon's answer as JSON (one line per daemon)", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {.prog = "dyno trigger list", .usage = "dyno trigger list [--json] [host options]",
				    .description = "The daemons' triggers and their recent firings (why each fired, what "
						   "was asked, the answer).",
				    .opts = opts};
	struct args a;
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	static const char req[] = "{\"fn\":\"listTriggers\"}";
	struct rpc_job *jobs = cli_run_extension(&t, &h, NULL, "listTriggers", req, sizeof req - 1);
	size_t failed = 0;
	for (size_t i = 0; i < t.n; i++) {
		struct json_doc doc;
		struct buf d = BUF_INIT;
		bool parsed = jobs[i].status == RPC_OK && cli_parse_answer(&jobs[i], &doc, &d), ok = parsed;
		if (jobs[i].status != RPC_OK)
			buf_puts(&d, jobs[i].status == RPC_ERR_NO_RESPONSE ? "the daemon does not list the listTriggers extension"
									   : jobs[i].err);
		if (t.many)
			printf("%s%s:\n", i ? "\n" : "", t.t[i].label);
		if (ok && json)
			printf("%.*s\n", (int)jobs[i].resp.len, jobs[i].resp.data);
		else if (ok && !print_list(doc.root, t.many ? "  " : "")) {
			buf_puts(&d, "not a listTriggers answer");
			ok = false;
		}
		if (parsed)
			json_doc_free(&doc);
		if (!ok) {
			fprintf(stderr, "%s: %s: %s\n", cmd.prog, t.t[i].label, d.data);
			failed++;
		}
		buf_free(&d);
	}
	cli_jobs_free(jobs, t.n);
	targets_free(&t);
	args_free(&a);
	return failed ? 1 : 0;
}

int cmd_trigger(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";
	if (strcmp(sub, "add") == 0)
		return add(argc - 1, argv + 1);
	if (strcmp(sub, "list") == 0)
		return list(argc - 1, argv + 1);
	if (strcmp(sub, "rm") == 0)
		return by_id(argc - 1, argv + 1, "dyno trigger rm", "removeTrigger", "Remove a trigger from the daemon(s).");
	if (strcmp(sub, "fire") == 0)
		return by_id(argc - 1, argv + 1, "dyno trigger fire", "fireTrigger",
			     "Fire a trigger now (each job still subject to its --min-interval-s).");
	bool help = strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0;
	fprintf(help ? stdout : stderr,
		"usage: dyno trigger add ID --log-file PATH [--when COND | --every-s S] [options]\n"
		"       dyno trigger list [--json]\n"
		"       dyno trigger rm ID\n"
		"       dyno trigger fire ID\n"
		"\nTriggers make the daemons trace their PyTorch processes on their own: when a metric condition\n"
		"holds over a window, on a cadence, or when fired; `dyno trigger add --help`.\n");
	if (!help && *sub)
		fprintf(stderr, "dyno trigger: unknown subcommand '%s'\n", sub);
	return help ? 0 : 2;
}
