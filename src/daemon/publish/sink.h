/*
 * sink.h - what a sink is to the daemon: one ops table per module, listed
 * once in publish/list.h.
 *
 * A sink has a name, its own option rows and config struct (module.h), a
 * check of that config, and apply() which opens it at start and, on
 * SIGHUP, applies only what changed (or closes it: a sink whose enabled()
 * turns false is closed by telemetry.c).  Every tick's frame is handed to
 * publish() with the index of the collector that produced it (a sink that
 * keeps per-source state grows it on demand: there is no fixed number of
 * sources).  stats() adds the sink's self-metrics; a sink may answer one
 * RPC function (history: getMetrics).  publish() must never block.
 *
 * Adding a sink: one file in src/daemon/publish/ defining
 * `const struct sink sink_<name>`, and one SINK(<name>) row in
 * publish/list.h.
 */
#ifndef DYNO_PUBLISH_SINK_H
#define DYNO_PUBLISH_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/loop.h"
#include "daemon/frame.h"
#include "daemon/module.h"

/* What a sink may need to know of the rest of the daemon. */
struct sink_env {
	struct ev_loop *loop;
	/* periods of the collectors that tick, in table order (the first is
	 * the main tick's) */
	const int64_t *intervals_s;
	size_t nintervals;
};

struct sink {
	const char *name;
	struct mod_config config;
	bool (*validate)(const void *cfg, struct buf *err); /* NULL: nothing to check */
	bool (*enabled)(const void *cfg);                   /* NULL: always */
	/* Open (*state NULL, old NULL) or reconfigure from old to cfg.  False
	 * with err when it cannot (the sink may then be closed: *state NULL). */
	bool (*apply)(void **state, const void *old, const void *cfg, const struct sink_env *env, struct buf *err);
	/* self: the daemon's self-metrics at this moment, when wants_self */
	void (*publish)(void *state, size_t src, struct frame *f, const struct self_metrics *self);
	bool wants_self;
	void (*stats)(void *state, struct self_metrics *out); /* optional */
	void (*close)(void *state);
	/* optional RPC function: rpc_name answered by rpc() */
	const char *rpc_name;
	void (*rpc)(void *state, const struct json_value *req, struct buf *resp);
	/* optional: append ", <what it does>" to the start-up log line */
	void (*describe)(const void *cfg, struct buf *out);
};

/* The table, in publish/list.h order: publish order and self-metrics order. */
extern const struct sink *const sinks[];
extern const size_t nsinks;

#endif
