/*
 * telemetry.h - the daemon's host telemetry, wired: configuration (flags
 * with upstream names, our JSON config file, SIGHUP reload), collector
 * timers, and the sinks every frame goes to (JSON log, Prometheus, OTLP,
 * history).  main.c only adds the flag rows, starts it and stops it.
 *
 * Data flows one way: timer -> collector -> frame -> every enabled sink.
 */
#ifndef DYNO_DAEMON_TELEMETRY_H
#define DYNO_DAEMON_TELEMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/loop.h"

#define TELEMETRY_MAX_OPTS 48

/* Every telemetry setting.  Strings are not owned (argv, flag file, or the
 * config file's parse kept alive by telemetry). */
struct telemetry_config {
	int64_t kernel_interval_s, perf_interval_s;
	bool use_json;
	const char *json_format, *json_file;
	const char *procfs_root, *sysfs_root;
	bool per_cpu, filter_nics;
	const char *nic_prefixes;
	const char *track_pids;
	bool enable_perf;
	bool use_prometheus;
	const char *prom_address;
	int64_t prom_port, prom_max_conn, prom_timeout_s;
	bool use_otlp;
	const char *otlp_endpoint, *otlp_headers, *otlp_service;
	int64_t otlp_timeout_ms, otlp_max_queue;
	int64_t history_window_s, history_max_series, history_max_mb;
	const char *config_file;
	int64_t exit_after_ticks;
	/* upstream flags accepted so existing unit files keep working */
	bool compat_bool[5];
	int64_t compat_int[1];
	const char *compat_str[3];
	bool seen[TELEMETRY_MAX_OPTS]; /* set by the command-line parse */
};

void telemetry_config_defaults(struct telemetry_config *c);
/* Append telemetry's option rows to out (room for TELEMETRY_MAX_OPTS);
 * returns how many.  The rows point into c. */
int telemetry_opts(struct telemetry_config *c, struct arg_opt *out);

/* Parse and validate a config file's text without applying it (fuzzing,
 * checks).  False with the reason in err. */
bool telemetry_config_check(const char *text, size_t len, struct buf *err);

struct telemetry;

/* Validate the configuration, read --config if any, open the sinks and arm
 * the timers.  NULL with a message in err on a configuration error. */
struct telemetry *telemetry_start(struct ev_loop *loop, const struct telemetry_config *cli, struct buf *err);
/* SIGHUP: re-read the config file and apply what changed (see docs/daemon.md). */
void telemetry_reload(struct telemetry *t);
void telemetry_stop(struct telemetry *t);

/* For the tracing registry: track a registered training process (CPU, RSS,
 * I/O, SLURM job).  Safe to call for a pid already tracked.  Uses the
 * running instance; false if there is none or the table is full. */
bool telemetry_track_pid(int pid);

/* The getMetrics RPC handler: req is the parsed request object, the JSON
 * response body is appended to resp (see docs/daemon.md). */
void metrics_rpc_handle(const struct json_value *req, struct buf *resp);

#endif
