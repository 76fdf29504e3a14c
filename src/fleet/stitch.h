/*
 * stitch.h - the engine of `dyno stitch` (stitch.c; the command's options
 * are src/cli/stitch_cmd.c): the per-rank traces of one collection merged
 * into one trace Perfetto opens (docs/fleet.md).
 */
#ifndef DYNO_FLEET_STITCH_H
#define DYNO_FLEET_STITCH_H

#include <stdbool.h>

/* Stitch the traces named by pos[0..npos) (files, or directories standing
 * for their *.json / *.json.gz files) into out (gzip when it ends in .gz),
 * each input's events moved as offsets ("FILE=US,...", or NULL) says.
 * Prints the table of inputs on stdout unless quiet, and every error on
 * stderr prefixed "dyno stitch: ".  Returns the command's exit status: 0,
 * 1 (an input or OUT failed), 2 (a usage error: no OUT, '-', a bad
 * --offset). */
int stitch_run(char *const *pos, int npos, const char *out, const char *offsets, bool quiet);

#endif
