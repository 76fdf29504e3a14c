/*
 * version.c - `dyno version`: ask daemons for their version (getVersion,
 * request bytes identical to upstream dyno's).
 */
#include "cli/commands.h"
#include "client/rpc_cmd.h"

static bool judge_version(const struct json_value *root, struct buf *detail)
{
	const char *v;
	size_t n;
	if (!json_get_str(root, "version", &v, &n)) {
		buf_puts(detail, "answer has no \"version\" string");
		return false;
	}
	buf_append(detail, v, n);
	return true;
}

int cmd_version(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	const struct arg_opt opts[] = {HOST_ARG_OPTS(&h), {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL}};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dyno version",
		.usage = "dyno version [--hostname H] [--port P] [--hostnames ...]",
		.description = "Print the version of the dynolog daemon(s).",
		.opts = opts,
	};
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	static const char req[] = "{\"fn\":\"getVersion\"}";
	struct rpc_job *jobs = cli_run(&t, &h, req, sizeof req - 1);
	rc = cli_simple_output(cmd.prog, &t, jobs, judge_version);
	cli_jobs_free(jobs, t.n);
	targets_free(&t);
	args_free(&a);
	return rc;
}
