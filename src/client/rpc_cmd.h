/*
 * rpc_cmd.h - what the RPC subcommands (status, version, dcgm-*, gputrace,
 * metrics) share: parsing the options and turning the host options into
 * targets (cli_start), running one request
 * against every target, and the two output shapes: upstream's
 * "response length = N / response = JSON" for one daemon, a per-host table
 * and a summary line for many.
 */
#ifndef DYNO_CLI_RPC_CMD_H
#define DYNO_CLI_RPC_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "client/hosts.h"
#include "client/rpc_client.h"
#include "core/args.h"
#include "core/json.h"

/* hosts_collect with the error printed as "PROG: ..." (PROG: "dyno status") */
bool cli_targets(const char *prog, struct host_opts *h, struct targets *t);
/* args_cmd, then cli_targets(c->prog): -1 to go on with a and t filled
 * (free with targets_free and args_free), else the exit code to return. */
int cli_start(const struct arg_cmd *c, int argc, char **argv, struct host_opts *h, struct args *a,
	      struct targets *t);
/* One request to every target; the jobs are returned (free with cli_jobs_free). */
struct rpc_job *cli_run(const struct targets *t, const struct host_opts *h, const char *req, size_t len);
void cli_jobs_free(struct rpc_job *jobs, size_t n);
/* upstream's two lines */
void cli_print_response(FILE *f, const struct rpc_job *j);
/* Many daemons' tables: the HOST column's width (at least 4), and the last
 * line "N hosts: N ok, N failed". */
int cli_host_width(const struct targets *t);
void cli_print_tally(const struct targets *t, size_t failed);

/* Judge an answer: true when it is what was asked for; detail gets a short
 * text for the table (the value, or why it is wrong). */
typedef bool (*cli_judge_fn)(const struct json_value *root, struct buf *detail);
/* status/version/dcgm shape: print, return the exit code (1 if any failed). */
int cli_simple_output(const char *prog, const struct targets *t, struct rpc_job *jobs, cli_judge_fn judge);
/* Parse j->resp as a JSON object; false with the reason in detail. */
bool cli_parse_answer(const struct rpc_job *j, struct json_doc *doc, struct buf *detail);

/* Our extensions (getProcesses, getMetrics) go only to daemons that list
 * them: getStatus with "extensions":true (ignored by upstream daemons,
 * answered by ours with the list), so an upstream daemon never logs
 * "Unknown RPC call".  These are the request and the check of its answer. */
#define GET_STATUS_EXT_REQUEST "{\"fn\":\"getStatus\",\"extensions\":true}"
bool cli_has_extension(const struct rpc_job *status_answer, const char *name);
/* Send req (an extension named ext) to the targets whose getStatus answer
 * lists ext.  st: their answers to GET_STATUS_EXT_REQUEST, one per target,
 * or NULL to ask for them here first.  One job per target comes back (free
 * with cli_jobs_free): the extension's answer where asked; else
 * RPC_ERR_NO_RESPONSE when the daemon answered without listing ext (as if
 * it closed on the request, which an upstream daemon does), or the
 * getStatus failure. */
struct rpc_job *cli_run_extension(const struct targets *t, const struct host_opts *h, const struct rpc_job *st,
				  const char *ext, const char *req, size_t len);

#endif
