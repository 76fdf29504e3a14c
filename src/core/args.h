/*
 * args.h - the command-line parser shared by dynolog and dyno.
 *
 * Options are declared in a table.  Accepted forms: --name=value,
 * --name value, -n value, boolean --name / --noname / --no-name /
 * --name=true|false, "--" to end options, and gflags' --flagfile=FILE
 * (one option per line, '#' comments), so upstream dynolog unit files keep
 * working.  '-' and '_' are interchangeable in long names: upstream's
 * daemon spells --enable_ipc_monitor, its CLI --job-id.  Positional
 * arguments may appear anywhere.
 */
#ifndef DYNO_ARGS_H
#define DYNO_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

enum arg_type { ARG_BOOL, ARG_INT, ARG_DOUBLE, ARG_STRING };

struct arg_opt {
	const char *name; /* long name, NULL ends the table */
	char short_name;  /* 0: none */
	enum arg_type type;
	void *ptr;           /* bool *, int64_t *, double *, const char ** */
	const char *metavar; /* shown in help: "N", "PATH" */
	const char *help;
	int64_t min, max;    /* ARG_INT range; both 0: any int64 */
	bool *seen;          /* optional: set to true when given */
};

enum { ARGS_OK = 0, ARGS_HELP = 1, ARGS_ERROR = -1 };

struct args {
	int npos;
	char **pos;       /* positional arguments */
	/* per positional: the boolean option it came right after ("top" for
	 * "--top 3"), else NULL -- so a stray value can be explained */
	const char **pos_after_bool;
	struct buf error; /* message when ARGS_ERROR */
	/* storage for strings read from flag files */
	char **owned;
	int nowned;
};

int args_parse(const struct arg_opt *opts, int argc, char **argv, struct args *out);
void args_free(struct args *a);
/* Print "usage: ..." then the description and one line per option. */
void args_help(FILE *f, const char *usage, const char *description, const struct arg_opt *opts);

/* What every command does with its arguments, in one place: parse, print
 * the help, reject a bad option or a wrong number of positional arguments. */
enum { ARGS_ANY = -1 }; /* max_pos: no upper limit */
struct arg_cmd {
	const char *prog;        /* message prefix: "dyno json" -> "dyno json: ..." */
	const char *usage;       /* for args_help */
	const char *description; /* for args_help */
	const struct arg_opt *opts;
	int min_pos, max_pos;    /* positional arguments allowed; max_pos ARGS_ANY: no limit */
	/* message when there are too few; NULL: "missing argument (see --help)".
	 * Too many always names the stray argument: "unexpected argument 'X'",
	 * and "--top takes no value" when X came right after a boolean option
	 * (the usual cause: "--top 3"). */
	const char *missing_error;
};
/* args_parse(opts, argc - 1, argv + 1, out) (argv[0] is the command's
 * name).  Returns -1 to go on (out is filled; the caller frees it), else the
 * exit code to return with out already freed: 0 after --help (printed to
 * stdout), 2 on a usage error (printed to stderr as "PROG: message"). */
int args_cmd(const struct arg_cmd *c, int argc, char **argv, struct args *out);

#endif
