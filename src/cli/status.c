/*
 * status.c - `dyno status`: the daemons' getStatus answer (upstream bytes
 * and output), then - better than upstream - the Kineto processes each
 * daemon has registered (the getProcesses extension).  getStatus carries
 * "extensions":true, which upstream daemons ignore and ours answer with the
 * list of their extensions; getProcesses goes only to daemons that list it,
 * so an upstream daemon never logs "Unknown RPC call getProcesses".  A
 * daemon without it is reported as "not listed", not as a failure.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "client/processes.h"
#include "client/rpc_cmd.h"

static bool judge_status(const struct json_value *root, struct buf *detail)
{
	int64_t v;
	if (!json_get_i64(root, "status", &v)) {
		buf_puts(detail, "answer has no integer \"status\"");
		return false;
	}
	buf_printf(detail, "%lld", (long long)v);
	return true;
}

/* Process summary for one host: "3 (2 idle, 1 busy)", "not supported", ... */
static void proc_summary(const struct rpc_job *j, struct buf *out, struct proc_list *pl, bool *have)
{
	*have = false;
	if (j->status == RPC_ERR_NO_RESPONSE) {
		buf_puts(out, "not listed (daemon without the getProcesses extension)");
		return;
	}
	if (j->status != RPC_OK) {
		buf_printf(out, "unknown (%s)", j->err);
		return;
	}
	struct buf err = BUF_INIT;
	if (!processes_parse(j->resp.data, j->resp.len, pl, &err)) {
		buf_printf(out, "unknown (%s)", err.data);
		buf_free(&err);
		return;
	}
	buf_free(&err);
	*have = true;
	size_t idle = 0, pending = 0, busy = 0;
	for (size_t i = 0; i < pl->n; i++) {
		idle += strcmp(pl->p[i].state, "idle") == 0;
		pending += strcmp(pl->p[i].state, "pending") == 0;
		busy += strcmp(pl->p[i].state, "busy") == 0;
	}
	if (pl->truncated)
		buf_printf(out, "%zu registered, %zu listed (the daemon truncated its list; of those: %zu idle, "
				"%zu pending, %zu busy)",
			   pl->total, pl->n, idle, pending, busy);
	else
		buf_printf(out, "%zu registered (%zu idle, %zu pending, %zu busy)", pl->n, idle, pending, busy);
}

int cmd_status(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	bool no_processes = false;
	const struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"no-processes", 0, ARG_BOOL, &no_processes, NULL,
		 "only getStatus, like upstream (do not list registered processes)", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dyno status",
		.usage = "dyno status [host options]",
		.description = "Print the daemon status (upstream getStatus: 1 = fine, 0 = DCGM saw blank values)\n"
			       "and the Kineto (PyTorch) processes registered with each daemon.",
		.opts = opts,
	};
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	/* --no-processes: upstream's bytes exactly */
	static const char plain[] = "{\"fn\":\"getStatus\"}";
	struct rpc_job *jobs = no_processes ? cli_run(&t, &h, plain, sizeof plain - 1)
					    : cli_run(&t, &h, GET_STATUS_EXT_REQUEST, sizeof GET_STATUS_EXT_REQUEST - 1);
	/* getProcesses only where getStatus worked and listed it: a dead
	 * daemon costs one timeout, not two. */
	struct rpc_job *pj = no_processes ? NULL
					  : cli_run_extension(&t, &h, jobs, "getProcesses", GET_PROCESSES_REQUEST,
							      sizeof GET_PROCESSES_REQUEST - 1);
	struct buf d = BUF_INIT;
	if (!t.many) {
		rc = cli_simple_output(cmd.prog, &t, jobs, judge_status);
		if (pj && rc == 0) {
			struct proc_list pl = {0};
			bool have;
			proc_summary(&pj[0], &d, &pl, &have);
			printf("\nprocesses: %s\n", d.data);
			if (have && pl.n) {
				buf_reset(&d);
				processes_format(&pl, "  ", &d);
				fputs(d.data, stdout);
			}
			processes_free(&pl);
		}
	} else {
		int w = cli_host_width(&t);
		size_t failed = 0;
		printf("%-*s  %-6s  %-6s  %s\n", w, "HOST", "RESULT", "STATUS", pj ? "PROCESSES" : "");
		for (size_t i = 0; i < t.n; i++) {
			buf_reset(&d);
			struct json_doc doc;
			bool ok = jobs[i].status == RPC_OK;
			if (!ok)
				buf_puts(&d, jobs[i].err);
			else if ((ok = cli_parse_answer(&jobs[i], &doc, &d))) {
				ok = judge_status(doc.root, &d);
				json_doc_free(&doc);
			}
			failed += !ok;
			if (!ok) {
				printf("%-*s  %-6s  %s\n", w, t.t[i].label, "FAILED", d.data);
				continue;
			}
			printf("%-*s  %-6s  %-6s  ", w, t.t[i].label, "ok", d.data);
			if (pj) {
				buf_reset(&d);
				struct proc_list pl = {0};
				bool have;
				proc_summary(&pj[i], &d, &pl, &have);
				processes_free(&pl);
				fputs(d.data, stdout);
			}
			putchar('\n');
		}
		cli_print_tally(&t, failed);
		rc = failed ? 1 : 0;
	}
	buf_free(&d);
	if (pj)
		cli_jobs_free(pj, t.n);
	cli_jobs_free(jobs, t.n);
	targets_free(&t);
	args_free(&a);
	return rc;
}
