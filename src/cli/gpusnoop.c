/*
 * gpusnoop.c - `dyno gpusnoop`, two ways:
 * - on this host: runs the gpusnoop program that sits beside the dyno
 *   binary (build/gpusnoop, or $DYNO_GPUSNOOP) with the same arguments.
 *   gpusnoop is a separate program so that dyno does not link libbpf,
 *   libelf and libdw, and so it can be given capabilities alone (CAP_BPF,
 *   CAP_PERFMON) instead of dyno.  Costs one exec.
 * - through daemons (--hostname, --hostnames, --hostfile, --slurm-job):
 *   asks each for a bounded session (the "gpusnoop" RPC, a dynolite
 *   extension: only daemons that list it are asked); the daemon runs
 *   gpusnoop and writes the report (and the timeline) on its host, where
 *   its --trace_path_prefixes allows.  The answer says the session started.
 * See docs/gpusnoop.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "client/rpc_cmd.h"
#include "core/json.h"

/* any option that names daemons: the RPC way */
static bool names_daemons(int argc, char **argv)
{
	static const char *const opts[] = {"--hostname", "--hostnames", "--hostfile", "--slurm-job", "--slurm_job"};
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
			size_t n = strlen(opts[k]);
			if (strncmp(argv[i], opts[k], n) == 0 && (argv[i][n] == 0 || argv[i][n] == '='))
				return true;
		}
	return false;
}

static bool judge_started(const struct json_value *root, struct buf *detail)
{
	const char *st, *err, *log;
	size_t sn, en, ln;
	int64_t session = 0, snoop = 0;
	if (!json_get_str(root, "status", &st, &sn)) {
		buf_puts(detail, "answer has no \"status\"");
		return false;
	}
	if (sn != 7 || memcmp(st, "started", 7) != 0) {
		if (json_get_str(root, "error", &err, &en))
			buf_printf(detail, "refused: %.*s", (int)(en > 300 ? 300 : en), err);
		else
			buf_printf(detail, "daemon answered status \"%.*s\"", (int)(sn > 100 ? 100 : sn), st);
		return false;
	}
	json_get_i64(root, "session", &session);
	json_get_i64(root, "snoop_pid", &snoop);
	if (!json_get_str(root, "log_file", &log, &ln))
		log = "?", ln = 1;
	buf_printf(detail, "session %" PRId64 " started (gpusnoop pid %" PRId64 "): the report goes to %.*s on that host",
		   session, snoop, (int)(ln > 300 ? 300 : ln), log);
	return true;
}

static int through_daemons(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	int64_t pid = 0;
	double duration = 0;
	const char *log_file = NULL, *trace_file = NULL, *events = NULL, *format = NULL;
	bool torch = false;
	const struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"pid", 'p', ARG_INT, &pid, "PID", "the process to watch, on the daemon's host", 1, INT32_MAX, NULL},
		{"duration", 'd', ARG_DOUBLE, &duration, "S", "the session's length (required; the daemon caps it)", 0, 0, NULL},
		{"log-file", 0, ARG_STRING, &log_file, "PATH", "where the daemon writes the report (a new file)", 0, 0, NULL},
		{"trace-file", 0, ARG_STRING, &trace_file, "PATH", "and the Chrome-trace timeline (a new file)", 0, 0, NULL},
		{"events", 'e', ARG_STRING, &events, "mem,launch,sync", "what to watch (default: mem)", 0, 0, NULL},
		{"torch", 0, ARG_BOOL, &torch, NULL, "also PyTorch's caching allocator", 0, 0, NULL},
		{"format", 0, ARG_STRING, &format, "table|json", "the report's format", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "dyno gpusnoop",
		.usage = "dyno gpusnoop --hostname H --pid PID --duration S --log-file PATH [--trace-file PATH]\n"
			 "                     [--events mem,launch,sync] [--torch] [--format table|json] [host options]",
		.description = "Ask the daemon(s) to run gpusnoop on a process of their host for S seconds; the report\n"
			       "(and the timeline) are written there, where the daemon's --trace_path_prefixes allows.",
		.opts = opts,
	};
	struct args a;
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	if (!pid || !(duration > 0) || !log_file) {
		fprintf(stderr, "dyno gpusnoop: --pid, --duration and --log-file are required with a daemon (see --help)\n");
		targets_free(&t);
		args_free(&a);
		return 2;
	}
	struct buf req = BUF_INIT;
	struct jw w;
	jw_init(&w, &req);
	jw_obj_begin(&w);
	jw_key(&w, "fn"), jw_str(&w, "gpusnoop");
	jw_key(&w, "pid"), jw_i64(&w, pid);
	jw_key(&w, "duration_s"), jw_f64(&w, duration);
	jw_key(&w, "log_file"), jw_str(&w, log_file);
	if (trace_file)
		jw_key(&w, "trace_file"), jw_str(&w, trace_file);
	if (events)
		jw_key(&w, "events"), jw_str(&w, events);
	if (torch)
		jw_key(&w, "torch"), jw_bool(&w, true);
	if (format)
		jw_key(&w, "format"), jw_str(&w, format);
	jw_obj_end(&w);
	struct rpc_job *jobs = cli_run_extension(&t, &h, NULL, "gpusnoop", req.data, req.len);
	rc = cli_simple_output(cmd.prog, &t, jobs, judge_started);
	cli_jobs_free(jobs, t.n);
	targets_free(&t);
	buf_free(&req);
	args_free(&a);
	return rc;
}

int cmd_gpusnoop(int argc, char **argv)
{
	if (names_daemons(argc, argv))
		return through_daemons(argc, argv);
	char path[PATH_MAX];
	const char *env = getenv("DYNO_GPUSNOOP");
	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			fprintf(stderr, "dyno gpusnoop: cannot find dyno's own path: %s\n", strerror(errno));
			return 127;
		}
		self[n] = 0;
		snprintf(path, sizeof(path), "%s/gpusnoop", dirname(self));
	}
	argv[0] = "gpusnoop";
	execv(path, argv);
	fprintf(stderr, "dyno gpusnoop: cannot run %s: %s (it is built beside dyno; DYNO_GPUSNOOP names another)\n", path,
		strerror(errno));
	return 127;
}
