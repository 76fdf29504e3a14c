/*
 * collector.h - what a collector is to the daemon: one ops table per
 * module, listed once in collect/list.h.
 *
 * A collector has a name (the collector="..." label of its self-metrics),
 * its own option rows and config struct (module.h), a check of that config,
 * and apply() which opens it at start and, on SIGHUP, applies only what
 * changed.  It either has its own period (interval_s: telemetry.c gives it
 * a timer and a frame of its own, published as source <its table index>)
 * or rides on another collector's tick (rides_on: it appends to that
 * collector's frame, after it).  It appends values to the frame and knows
 * nothing of the sinks.
 *
 * Adding a collector: one file in src/daemon/collect/ defining
 * `const struct collector collector_<name>`, and one COLLECTOR(<name>) row
 * in collect/list.h.
 */
#ifndef DYNO_COLLECT_COLLECTOR_H
#define DYNO_COLLECT_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "daemon/frame.h"
#include "daemon/metric.h"
#include "daemon/module.h"

/* What every collector shares: where the machine's files are. */
struct collect_env {
	const char *procfs_root, *sysfs_root;
};

enum collect_status {
	COLLECT_IDLE = -1,  /* nothing to collect (no tracked process): not run, not counted */
	COLLECT_FAILED = 0, /* its sources could not be read (dynolog_collector_success 0) */
	COLLECT_OK = 1,
};

struct collector {
	const char *name;
	struct mod_config config;
	/* beyond the rows' ranges; NULL: nothing to check */
	bool (*validate)(const void *cfg, struct buf *err);
	/* whether it runs under cfg; NULL: always */
	bool (*enabled)(const void *cfg);
	/* its period; NULL: it runs in the tick of the collector named rides_on */
	int64_t (*interval_s)(const void *cfg);
	const char *rides_on;
	/* a frame left empty by its tick is still published (false: skipped,
	 * e.g. perf's first tick, which only sets the baseline) */
	bool publish_empty;
	/* Open (*state NULL, old NULL: start, or the environment changed) or
	 * reconfigure from old to cfg.  False with err on a configuration error
	 * (state left as it was). */
	bool (*apply)(void **state, const void *old, const void *cfg, const struct collect_env *env,
		      struct buf *err);
	enum collect_status (*collect)(void *state, struct frame *f);
	void (*close)(void *state);
	/* optional: also report process pid (a registered training process) */
	bool (*track_pid)(void *state, int pid);
	/* optional: append ", <what it does>" to the start-up log line */
	void (*describe)(const void *cfg, struct buf *out);
	/* the keys it emits, for the exporting sinks (publish/catalog.c) */
	const struct metric_desc *catalog;
	size_t ncatalog;
};

/* The table, in collect/list.h order (kernel first: its tick is the
 * daemon's main one, counted by --exit_after_ticks and reported by
 * getMetrics). */
extern const struct collector *const collectors[];
extern const size_t ncollectors;

#endif
