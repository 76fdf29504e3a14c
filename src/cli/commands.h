/*
 * commands.h - the declarations of the dyno subcommands, made from the rows
 * of src/cli/list.h: int cmd_<fn>(int argc, char **argv) for each, where
 * argv[0] is the subcommand name.  Each lives in its own file; dyno.c only
 * dispatches (over the same rows).
 */
#ifndef DYNO_CLI_COMMANDS_H
#define DYNO_CLI_COMMANDS_H

#define COMMAND(fn, name, summary) int cmd_##fn(int argc, char **argv);
#include "cli/list.h"
#undef COMMAND

#endif
