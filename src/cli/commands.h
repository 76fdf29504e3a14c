/*
 * commands.h - the dyno subcommands.  Each lives in its own file
 * (src/cli/<name>.c) as int cmd_<name>(int argc, char **argv), where argv[0]
 * is the subcommand name; dyno.c only dispatches.
 */
#ifndef DYNO_CLI_COMMANDS_H
#define DYNO_CLI_COMMANDS_H

int cmd_json(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_gputrace(int argc, char **argv);
int cmd_dcgm_pause(int argc, char **argv);
int cmd_dcgm_resume(int argc, char **argv);
int cmd_metrics(int argc, char **argv);

#endif
