/*
 * module.h - what collectors (collect/collector.h) and sinks
 * (publish/sink.h) have in common: option rows that describe the module's
 * own config struct, and the daemon's self-metrics.
 *
 * A module declares its options as ordinary arg_opt rows whose ptr is the
 * offset of the field in its config struct (MOD_OPT); telemetry.c gives
 * every module a config instance, binds the rows to it and concatenates
 * all modules' rows into the daemon's option table.  So a module's options,
 * defaults, config-file keys and --help lines live in the module's file and
 * nowhere else.  No cost at run time: the rows are read at start and reload.
 */
#ifndef DYNO_DAEMON_MODULE_H
#define DYNO_DAEMON_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/args.h"

/* An option row for field `field` of config struct `type`. */
#define MOD_OPT(type, field, name, argtype, metavar, help, lo, hi)                                       \
	{name, 0, argtype, (void *)offsetof(type, field), metavar, help, lo, hi, NULL}

/* The part every module descriptor starts with. */
struct mod_config {
	const struct arg_opt *opts; /* MOD_OPT rows, {NULL}-terminated */
	size_t size;                /* sizeof its config struct */
	const void *defaults;       /* a config struct holding every default */
};

/* One self-metric of the daemon (collector duration, queue drops...), as
 * the Prometheus page shows it. */
/* Config instances.  mod_config_new: the defaults, for the option parser to
 * fill (its strings are borrowed: from the defaults, argv or a flag file;
 * release it with free()).  mod_config_clone: a copy that owns its strings,
 * what a running module is given (so it never points into a config file's
 * parse that a reload frees); release it with mod_config_free. */
void *mod_config_new(const struct mod_config *m);
void *mod_config_clone(const struct mod_config *m, const void *cfg);
void mod_config_free(const struct mod_config *m, void *cfg);
/* Whether the field of option row `row` differs between two configs. */
bool mod_opt_changed(const struct arg_opt *row, const void *a, const void *b);
/* Copy row's field from src into the clone dst (a string is duplicated). */
void mod_opt_copy(const struct arg_opt *row, void *dst, const void *src);
/* Copy m's rows into out, pointing into cfg, each row's seen flag at seen[i].
 * Returns the number of rows. */
size_t mod_rows_bind(const struct mod_config *m, void *cfg, struct arg_opt *out, bool *seen);
size_t mod_rows_count(const struct mod_config *m);

struct self_metric {
	const char *name, *help, *type;  /* type: "gauge" or "counter" */
	const char *label, *label_value; /* optional single label */
	double value;
};

struct self_metrics {
	struct self_metric *v;
	size_t n, cap;
};

void self_add(struct self_metrics *s, const char *name, const char *help, const char *type, const char *label,
	      const char *label_value, double value);
void self_metrics_free(struct self_metrics *s);

#endif
