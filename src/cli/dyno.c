/*
 * dyno.c - the dyno command line: a thin dispatcher over src/cli/<cmd>.c.
 *
 *   dyno <command> [options]      run a command
 *   dyno help <command>           same as dyno <command> --help
 *   dyno --version
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/log.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"analyze", cmd_analyze, "analyze Kineto traces like HTA: temporal, idle, launch, summary"},
	{"json", cmd_json, "check JSON files (e.g. a trace) and report the first error's position"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: dyno <command> [options]\n\n"
		   "dyno talks to dynolog daemons and analyzes Kineto traces.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-22s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'dyno <command> --help' describes a command.\n");
}

int main(int argc, char **argv)
{
	log_init("dyno", LOG_LEVEL_WARN);
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
	char *helpv[3];
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		helpv[0] = argv[2];
		helpv[1] = "--help";
		helpv[2] = NULL;
		argv = helpv - 1;
		argc = 3;
		name = argv[1];
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "dyno: unknown command '%s'\n\n", name);
	usage(stderr);
	return 2;
}
