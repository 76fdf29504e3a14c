/*
 * kineto_config.h - the exact bytes `dyno gputrace` puts on the wire.
 *
 * The Kineto on-demand config text (wire-protocols.md §5.3), the
 * pretty-printed setKinetOnDemandRequest body upstream dyno sends (§2.6,
 * leading newline and 4-space indentation included), the trace file names
 * Kineto will write (§5.5), and the checks that keep a bad --log-file or
 * --pids from producing a request the daemon would silently drop.
 */
#ifndef DYNO_CLI_KINETO_CONFIG_H
#define DYNO_CLI_KINETO_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

struct trace_opts {
	const char *log_file;
	int64_t duration_ms;        /* default 500 */
	int64_t profile_start_time; /* ms since epoch, 0 = Kineto picks */
	int64_t iterations;         /* > 0: iteration mode */
	int64_t start_iteration_roundup; /* default 1 */
	bool record_shapes, profile_memory, with_stacks, with_flops, with_modules;
};

#define TRACE_OPTS_INIT {NULL, 500, 0, -1, 1, false, false, false, false, false}

/* Config text (lines joined by '\n', no trailing newline).  False with a
 * message when the options cannot make a config Kineto parses. */
bool kineto_config_build(const struct trace_opts *o, struct buf *out, struct buf *err);
/* --log-file must survive Kineto's KEY=VALUE parser and JSON. */
bool kineto_log_file_check(const char *path, struct buf *err);
/* --pids: integers separated by commas (upstream pastes the text verbatim
 * into "[...]"; we check it first so the result is valid JSON). */
bool kineto_pids_check(const char *pids, struct buf *err);

/* The request body, byte-identical to upstream dyno's. */
void kineto_request_build(const char *config, uint64_t job_id, const char *pids, int64_t process_limit,
			  struct buf *out);
/* dcgm-pause body (upstream's pretty-printed form). */
void dcgm_pause_request_build(int32_t duration_s, struct buf *out);

/* Where Kineto writes pid's trace for log file path (§5.5): the first
 * ".pt.trace.json" becomes "_<pid>.pt.trace.json", else the first ".json"
 * becomes "_<pid>.json", else the path is unchanged.  With profile_memory
 * Kineto writes /tmp/memory_snapshot_<pid>.pickle instead. */
void kineto_trace_path(const char *log_file, int64_t pid, bool profile_memory, struct buf *out);
/* True when newer Kineto (>= 2026-06) accepts path for on-demand traces
 * without $KINETO_ONDEMAND_TRACE_DIR: under /tmp/ and no "..". */
bool kineto_path_allowed_default(const char *path);

#endif
