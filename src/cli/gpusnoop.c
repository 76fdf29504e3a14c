/*
 * gpusnoop.c - `dyno gpusnoop`: runs the gpusnoop program that sits beside
 * the dyno binary (build/gpusnoop, or $DYNO_GPUSNOOP), with the same
 * arguments.  gpusnoop is a separate program so that dyno does not link
 * libbpf, libelf and libdw, and so it can be given capabilities alone
 * (CAP_BPF, CAP_PERFMON) instead of dyno.  Costs one exec.
 * See docs/gpusnoop.md.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"

int cmd_gpusnoop(int argc, char **argv)
{
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
	(void)argc;
	argv[0] = "gpusnoop";
	execv(path, argv);
	fprintf(stderr, "dyno gpusnoop: cannot run %s: %s (it is built beside dyno; DYNO_GPUSNOOP names another)\n", path,
		strerror(errno));
	return 127;
}
