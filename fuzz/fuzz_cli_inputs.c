/*
 * fuzz_cli_inputs.c - libFuzzer target for what dyno parses from outside:
 * a daemon's getProcesses answer, host files, host specs, --pids and
 * --log-file checks and the trace-path prediction.  The first byte picks
 * the parser; the rest is its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/hosts.h"
#include "cli/kineto_config.h"
#include "cli/processes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *s = (const char *)data + 1;
	size_t n = size - 1;
	char *z = xstrndup(s, n); /* NUL-terminated copy for the string checks */
	struct buf err = BUF_INIT, out = BUF_INIT;
	struct targets t = {0};
	switch (data[0] % 4) {
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
	}
	targets_free(&t);
	buf_free(&err);
	buf_free(&out);
	free(z);
	return 0;
}
