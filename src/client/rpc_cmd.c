/*
 * rpc_cmd.c - see rpc_cmd.h.
 */
#include "client/rpc_cmd.h"

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

bool cli_has_extension(const struct rpc_job *j, const char *name)
{
	struct json_doc doc;
	struct json_error je;
	if (j->status != RPC_OK || !json_parse(j->resp.data, j->resp.len, &doc, &je))
		return false;
	const struct json_value *a = json_get(doc.root, "extensions");
	bool found = false;
	for (uint32_t i = 0; a && a->type == JV_ARRAY && i < a->len && !found; i++)
		found = a->u.items[i].type == JV_STRING && strcmp(a->u.items[i].u.str, name) == 0;
	json_doc_free(&doc);
	return found;
}

struct rpc_job *cli_run_extension(const struct targets *t, const struct host_opts *h, const struct rpc_job *st,
				  const char *ext, const char *req, size_t len)
{
	struct rpc_job *own = NULL;
	if (!st)
		st = own = cli_run(t, h, GET_STATUS_EXT_REQUEST, sizeof GET_STATUS_EXT_REQUEST - 1);
	struct targets ok = {0};
	size_t *idx = xcalloc(t->n ? t->n : 1, sizeof *idx);
	ok.t = xcalloc(t->n ? t->n : 1, sizeof *ok.t);
	for (size_t i = 0; i < t->n; i++)
		if (cli_has_extension(&st[i], ext)) {
			idx[ok.n] = i;
			ok.t[ok.n++] = t->t[i];
		}
	struct rpc_job *sub = ok.n ? cli_run(&ok, h, req, len) : NULL;
	struct rpc_job *out = xcalloc(t->n ? t->n : 1, sizeof *out);
	for (size_t i = 0; i < t->n; i++) {
		rpc_job_init(&out[i], t->t[i].host, t->t[i].port, NULL, 0);
		struct json_doc doc;
		struct buf why = BUF_INIT;
		if (st[i].status == RPC_OK && !cli_parse_answer(&st[i], &doc, &why)) {
			/* garbage is a failure, not an upstream daemon */
			out[i].status = RPC_ERR_IO;
			snprintf(out[i].err, sizeof out[i].err, "getStatus: %s", why.data);
		} else if (st[i].status == RPC_OK) {
			json_doc_free(&doc);
			out[i].status = RPC_ERR_NO_RESPONSE;
			snprintf(out[i].err, sizeof out[i].err, "the daemon does not list the %s extension", ext);
		} else {
			/* NO_RESPONSE means "no such extension" to the caller;
			 * a daemon that closes on getStatus is a failure */
			out[i].status = st[i].status == RPC_ERR_NO_RESPONSE ? RPC_ERR_IO : st[i].status;
			snprintf(out[i].err, sizeof out[i].err, "getStatus: %s", st[i].err);
		}
		buf_free(&why);
	}
	for (size_t k = 0; k < ok.n; k++) {
		rpc_job_free(&out[idx[k]]);
		out[idx[k]] = sub[k]; /* moves the response buffer */
	}
	free(sub);
	free(ok.t);
	free(idx);
	if (own)
		cli_jobs_free(own, t->n);
	return out;
}
