/*
 * config.h - dynolog's JSON config file (--config=FILE): a JSON object
 * whose keys are flag names, turned into "--name=value" arguments for an
 * option table, so the file goes through the same parser, ranges and
 * checks as the command line.
 *
 * {"kernel_monitor_reporting_interval_s": 10, "use_prometheus": true}
 *   -> --kernel_monitor_reporting_interval_s=10 --use_prometheus=true
 *
 * Unknown keys are warned about and skipped (another part of the daemon
 * may own them, or a typo); a value of the wrong JSON type is an error
 * naming the key.  The key "config" itself is ignored.  Costs one parse of
 * a file of at most 1 MiB, at start and on SIGHUP.
 */
#ifndef DYNO_DAEMON_CONFIG_H
#define DYNO_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/args.h"
#include "core/buf.h"

struct config_argv {
	char **argv;
	int argc;
};

/* text (named path in messages) -> arguments for opts ({NULL}-terminated).
 * False with the reason in err. */
bool config_text_to_argv(const char *path, const char *text, size_t len, const struct arg_opt *opts,
			 struct config_argv *out, struct buf *err);
/* The same from the file at path. */
bool config_file_to_argv(const char *path, const struct arg_opt *opts, struct config_argv *out, struct buf *err);
void config_argv_free(struct config_argv *a);

#endif
