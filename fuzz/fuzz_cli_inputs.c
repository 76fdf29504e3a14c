/*
 * fuzz_cli_inputs.c - libFuzzer target for what dyno parses from outside:
 * a daemon's getProcesses answer, host files, host specs, --pids and
 * --log-file checks, the trace-path prediction, and the token put into a
 * request (a valid request object stays valid JSON with the token in it).
 * The first byte picks the parser; the rest is its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/hosts.h"
#include "client/kineto_config.h"
#include "client/processes.h"
#include "client/rpc_client.h"
#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *s = (const char *)data + 1;
	size_t n = size - 1;
	char *z = xstrndup(s, n); /* NUL-terminated copy for the string checks */
	struct buf err = BUF_INIT, out = BUF_INIT;
	struct targets t = {0};
	switch (data[0] % 5) {
	case 0: {
		struct proc_list l;
		if (processes_parse(s, n, &l, &err)) {
			processes_format(&l, "  ", &out);
			processes_explain(&l, 0, "0", "", &out);
			processes_explain(&l, 42, "1,2", "", &out);
			processes_free(&l);
		}
		break;
	}
	case 1: targets_parse_hostfile(&t, s, n, NET_RPC_PORT, "fuzz", &err); break;
	case 2:
		targets_add(&t, s, n, NET_RPC_PORT, &err);
		break;
	case 3:
		if (kineto_pids_check(z, &err)) {
			kineto_request_build("X=1", 0, z, 3, &out);
		}
		if (kineto_log_file_check(z, &err)) {
			struct trace_opts o = TRACE_OPTS_INIT;
			o.log_file = z;
			kineto_config_build(&o, &out, &err);
			kineto_trace_path(z, 4242, false, &out);
			kineto_path_allowed_default(z);
		}
		break;
	case 4: {
		/* "TOKEN\nREQUEST" */
		char *nl = strchr(z, '\n'); /* z stops at the first NUL */
		if (!nl)
			break;
		*nl = 0;
		const char *req = nl + 1;
		size_t rn = strlen(req);
		struct json_doc d;
		struct json_error je;
		bool valid = json_parse(req, rn, &d, &je);
		bool obj = valid && d.root->type == JV_OBJECT;
		if (valid)
			json_doc_free(&d);
		net_body_with_token(&out, req, rn, z);
		if (obj) {
			if (!json_parse(out.data, out.len, &d, &je) || !json_get(d.root, "token"))
				abort();
			json_doc_free(&d);
		}
		break;
	}
	}
	targets_free(&t);
	buf_free(&err);
	buf_free(&out);
	free(z);
	return 0;
}
