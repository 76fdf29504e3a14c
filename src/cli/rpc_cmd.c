/*
 * rpc_cmd.c - see rpc_cmd.h.
 */
#include "cli/rpc_cmd.h"

#include <stdlib.h>
#include <string.h>

bool cli_targets(const char *prog, struct host_opts *h, struct targets *t)
{
	struct buf err = BUF_INIT;
	bool ok = hosts_collect(h, t, &err);
	if (!ok)
		fprintf(stderr, "%s: %s\n", prog, err.data);
	buf_free(&err);
	return ok;
}

int cli_start(const struct arg_cmd *c, int argc, char **argv, struct host_opts *h, struct args *a,
	      struct targets *t)
{
	int rc = args_cmd(c, argc, argv, a);
	if (rc >= 0)
		return rc;
	if (!cli_targets(c->prog, h, t)) {
		args_free(a);
		return 2;
	}
	return -1;
}

struct rpc_job *cli_run(const struct targets *t, const struct host_opts *h, const char *req, size_t len)
{
	struct rpc_job *jobs = xcalloc(t->n, sizeof *jobs);
	hosts_jobs(t, jobs, req, len);
	struct rpc_client_opts o = hosts_rpc_opts(h);
	rpc_call_many(jobs, t->n, &o);
	return jobs;
}

void cli_jobs_free(struct rpc_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rpc_job_free(&jobs[i]);
	free(jobs);
}

void cli_print_response(FILE *f, const struct rpc_job *j)
{
	fprintf(f, "response length = %zu\nresponse = ", j->resp.len);
	fwrite(j->resp.data, 1, j->resp.len, f);
	fputc('\n', f);
}

int cli_host_width(const struct targets *t)
{
	size_t w = 4;
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->t[i].label) > w)
			w = strlen(t->t[i].label);
	return (int)w;
}

void cli_print_tally(const struct targets *t, size_t failed)
{
	printf("%zu host%s: %zu ok, %zu failed\n", t->n, t->n == 1 ? "" : "s", t->n - failed, failed);
}

bool cli_parse_answer(const struct rpc_job *j, struct json_doc *doc, struct buf *detail)
{
	struct json_error je;
	if (!json_parse(j->resp.data, j->resp.len, doc, &je)) {
		buf_printf(detail, "answer is not JSON (%s at byte %llu)", je.msg, (unsigned long long)je.offset);
		return false;
	}
	if (doc->root->type != JV_OBJECT) {
		buf_printf(detail, "answer is not a JSON object");
		json_doc_free(doc);
		return false;
	}
	return true;
}

static bool judge(const struct rpc_job *j, cli_judge_fn fn, struct buf *detail)
{
	if (j->status != RPC_OK) {
		buf_puts(detail, j->err);
		return false;
	}
	struct json_doc doc;
	if (!cli_parse_answer(j, &doc, detail))
		return false;
	bool ok = fn(doc.root, detail);
	json_doc_free(&doc);
	return ok;
}

int cli_simple_output(const char *prog, const struct targets *t, struct rpc_job *jobs, cli_judge_fn fn)
{
	struct buf d = BUF_INIT;
	if (!t->many) {
		bool ok = judge(&jobs[0], fn, &d);
		if (jobs[0].status == RPC_OK)
			cli_print_response(stdout, &jobs[0]);
		if (!ok)
			fprintf(stderr, "%s: %s%s%s\n", prog, jobs[0].status == RPC_OK ? jobs[0].host : "",
				jobs[0].status == RPC_OK ? ": " : "", d.data);
		buf_free(&d);
		return ok ? 0 : 1;
	}
	int w = cli_host_width(t);
	size_t failed = 0;
	printf("%-*s  %-6s  %s\n", w, "HOST", "RESULT", "ANSWER");
	for (size_t i = 0; i < t->n; i++) {
		buf_reset(&d);
		bool ok = judge(&jobs[i], fn, &d);
		failed += !ok;
		printf("%-*s  %-6s  %s\n", w, t->t[i].label, ok ? "ok" : "FAILED", d.data);
	}
	cli_print_tally(t, failed);
	buf_free(&d);
	return failed ? 1 : 0;
}
