/*
 * dyno.c - the dyno command line: a thin dispatcher over src/cli/<cmd>.c,
 * whose table is the rows of src/cli/list.h.
 *
 *   dyno <command> [options]      run a command
 *   dyno help <command>           same as dyno <command> --help
 *   dyno --version
 *
 * Upstream's dyno takes --hostname/--port BEFORE the subcommand
 * (dyno --hostname h gputrace ...); those leading options are moved behind
 * the subcommand name, where every RPC subcommand parses them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/net.h"
#include "core/buf.h"
#include "core/log.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* One row per line of cli/list.h, in its order (the order of --help). */
static const struct command commands[] = {
#define COMMAND(fn, name, summary) {name, cmd_##fn, summary},
#include "cli/list.h"
#undef COMMAND
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: dyno <command> [options]\n\n"
		   "dyno talks to dynolog daemons and analyzes Kineto traces.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-22s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nglobal options of the commands that talk to daemons (before or after the command and its\n"
		   "subcommand, as upstream's dyno takes them):\n"
		   "  --hostname HOST        the daemon to talk to (default localhost)\n"
		   "  --port PORT            its RPC port (default %d)\n"
		   "  --version              print dyno's version\n"
		   "\n'dyno <command> --help' describes a command and its other options.\n",
		NET_RPC_PORT);
}

/* The commands whose first word is a subcommand of their own (`dyno
 * trigger list`): options moved behind the command go behind that word
 * too, where the subcommand parses them. */
static bool has_subcommand(const char *cmd)
{
	return strcmp(cmd, "trigger") == 0 || strcmp(cmd, "warehouse") == 0 || strcmp(cmd, "analyze") == 0;
}

/* Move leading "--opt value" / "--opt=value" pairs behind the subcommand
 * (and behind its own subcommand word, has_subcommand).  Returns the new
 * argv (malloc'ed, argc unchanged) or NULL when there are none or no
 * subcommand follows them. */
static char **hoist_global_options(int argc, char **argv)
{
	int i = 1;
	while (i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2] && strcmp(argv[i], "--help") != 0 &&
	       strcmp(argv[i], "--version") != 0)
		i += strchr(argv[i], '=') ? 1 : 2;
	if (i == 1 || i >= argc)
		return NULL;
	/* the words that stay in front: the command, and its subcommand */
	int words = has_subcommand(argv[i]) && i + 1 < argc && argv[i + 1][0] != '-' ? 2 : 1;
	char **v = xcalloc((size_t)argc + 1, sizeof *v);
	v[0] = argv[0];
	int k = 1;
	for (int j = 0; j < words; j++)
		v[k++] = argv[i + j];
	for (int j = 1; j < i; j++)
		v[k++] = argv[j];
	for (int j = i + words; j < argc; j++)
		v[k++] = argv[j];
	return v;
}

/* Output that did not reach stdout (a full disk, `> /dev/full`, a closed
 * pipe's reader gone) is a failure, whatever the command did: exit 1 with
 * a message instead of the command's 0.  A usage error (2) stays 2. */
static int stdout_written(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	int e = errno;
	fprintf(stderr, "dyno: cannot write the output: %s\n", e ? strerror(e) : "write error");
	return rc == 2 ? 2 : 1;
}

int main(int argc, char **argv)
{
	log_init("dyno", LOG_LEVEL_WARN);
	char **hoisted = hoist_global_options(argc, argv);
	if (hoisted) {
		argv = hoisted;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(name, "--version") == 0) {
		printf("dyno %s\n", DYNO_VERSION);
		return 0;
	}
	char *helpv[4];
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		helpv[0] = argv[0];
		helpv[1] = argv[2];
		helpv[2] = "--help";
		helpv[3] = NULL;
		argv = helpv;
		argc = 3;
		name = argv[1];
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0) {
			int rc = commands[i].fn(argc - 1, argv + 1);
			free(hoisted);
			return stdout_written(rc);
		}
	fprintf(stderr, "dyno: unknown command '%s'\n\n", name);
	usage(stderr);
	free(hoisted);
	return 2;
}
