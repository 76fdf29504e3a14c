/*
 * dcgm.c - `dyno dcgm-pause [--duration-s N]` and `dyno dcgm-resume`: pause
 * or resume the daemons' DCGM profiling-metric collection (so another
 * profiler, e.g. Nsight, can use the GPU counters).  Requests are byte-
 * identical to upstream dyno's (the pause body is its pretty-printed form).
 * Unlike upstream, an answer of {"status":false} (no GPU monitor, DCGM
 * refused) is reported as a failure.
 */
#include "cli/commands.h"
#include "client/kineto_config.h"
#include "client/rpc_cmd.h"

static bool judge_bool(const struct json_value *root, struct buf *detail)
{
	bool b;
	if (!json_get_bool(root, "status", &b)) {
		const char *s;
		size_t n;
		if (json_get_str(root, "status", &s, &n))
			buf_printf(detail, "daemon answered status \"%.*s\"", (int)(n > 200 ? 200 : n), s);
		else
			buf_puts(detail, "answer has no boolean \"status\"");
		return false;
	}
	if (!b)
		buf_puts(detail, "daemon answered false (GPU monitor not enabled, or DCGM refused)");
	else
		buf_puts(detail, "done");
	return b;
}

static int run(int argc, char **argv, bool pause)
{
	struct host_opts h = HOST_OPTS_INIT;
	int64_t duration_s = 300;
	struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"duration-s", 0, ARG_INT, &duration_s, "SECONDS",
		 "pause for this long; the daemon resumes by itself afterwards", 1, INT32_MAX, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	if (!pause) /* resume takes the host options only */
		opts[HOST_ARG_COUNT] = (struct arg_opt){0};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = pause ? "dyno dcgm-pause" : "dyno dcgm-resume",
		.usage = pause ? "dyno dcgm-pause [--duration-s N] [host options]" : "dyno dcgm-resume [host options]",
		.description = pause ? "Pause DCGM profiling metrics on the daemon(s) for N seconds (default 300)."
				     : "Resume DCGM profiling metrics on the daemon(s).",
		.opts = opts,
	};
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	struct buf req = BUF_INIT;
	if (pause)
		dcgm_pause_request_build((int32_t)duration_s, &req);
	else
		buf_puts(&req, "{\"fn\":\"dcgmProfResume\"}");
	struct rpc_job *jobs = cli_run(&t, &h, req.data, req.len);
	rc = cli_simple_output(cmd.prog, &t, jobs, judge_bool);
	cli_jobs_free(jobs, t.n);
	targets_free(&t);
	buf_free(&req);
	args_free(&a);
	return rc;
}

int cmd_dcgm_pause(int argc, char **argv) { return run(argc, argv, true); }
int cmd_dcgm_resume(int argc, char **argv) { return run(argc, argv, false); }
