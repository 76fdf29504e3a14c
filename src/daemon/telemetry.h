/*
 * telemetry.h - the daemon's host telemetry: the collector table
 * (collect/list.h) and the sink table (publish/list.h) run on the loop.
 *
 * Each module brings its own option rows; telemetry gathers them into one
 * option table (plus its own: --procfs_root, --sysfs_root, --config,
 * --exit_after_ticks, upstream's ignored flags), works out the effective
 * configuration (command line > --config file > defaults), applies it
 * module by module, re-applies it on SIGHUP, and runs one timer per
 * collector that ticks.  Each tick fills one frame and hands it to every
 * enabled sink.  Data flows one way: timer -> collector -> frame -> sinks.
 */
#ifndef DYNO_DAEMON_TELEMETRY_H
#define DYNO_DAEMON_TELEMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/loop.h"

struct rpc_server;

/* Every module's settings, as the option parser fills them. */
struct telemetry_config;

/* The defaults; release with telemetry_config_free. */
struct telemetry_config *telemetry_config_new(void);
void telemetry_config_free(struct telemetry_config *c);
/* Telemetry's option rows ({NULL}-terminated), pointing into c: parse the
 * command line with them (they record which options were given). */
const struct arg_opt *telemetry_opts(struct telemetry_config *c);

/* Parse and validate a config file's text without applying it (fuzzing,
 * checks).  False with the reason in err. */
bool telemetry_config_check(const char *text, size_t len, struct buf *err);
/* The command line's configuration (and --config's file) read and
 * validated, nothing opened: a configuration error is told apart from a
 * listener that cannot open (dynolog exits 2 for the one, 1 for the
 * other).  False with the reason in err. */
bool telemetry_config_valid(const struct telemetry_config *cli, struct buf *err);

struct telemetry;

/* Validate the configuration, read --config if any, open the sinks and
 * collectors and arm the timers.  NULL with a message in err on a
 * configuration error.  cli is copied. */
struct telemetry *telemetry_start(struct ev_loop *loop, const struct telemetry_config *cli, struct buf *err);
/* SIGHUP: re-read the config file and apply what changed (see docs/daemon.md). */
void telemetry_reload(struct telemetry *t);
void telemetry_stop(struct telemetry *t);

/* A registered training process: every collector that follows processes
 * reports it (CPU, RSS, I/O, SLURM job).  Safe for a pid already tracked.
 * False if t is NULL or no collector took it (table full). */
bool telemetry_track_pid(struct telemetry *t, int pid);

/* Called after every tick's publish with the frame the sinks just got: src
 * is the collector whose timer ticked (0: the kernel, the main tick),
 * interval_s its period.  One hook (main.c points it at the triggers); fn
 * runs on the loop and must not block. */
struct frame;
typedef void (*telemetry_tick_fn)(const struct frame *f, size_t src, int64_t interval_s, void *ud);
void telemetry_on_tick(struct telemetry *t, telemetry_tick_fn fn, void *ud);

/* Register the sinks' RPC functions (getMetrics) with the server; they
 * answer as long as t runs (stop the server first). */
void telemetry_register_rpc(struct telemetry *t, struct rpc_server *s);
/* Answer RPC function fn as the server would: the JSON answer is appended
 * to resp.  t NULL: {"error":"<fn>: telemetry is not running"}.  False for
 * a function no sink has. */
bool telemetry_rpc_call(struct telemetry *t, const char *fn, const struct json_value *req, struct buf *resp);

#endif
