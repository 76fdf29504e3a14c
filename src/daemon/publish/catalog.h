/*
 * catalog.h - what each frame key means, for the sinks that need more than
 * a name: Prometheus (node_exporter-style family, type, base-unit scale,
 * label) and OTLP (semantic-convention name, unit, attributes).
 *
 * Frame keys are upstream's: "base" or "base.suffix", the suffix being the
 * one label (interface, disk, cpu, pid).  Collectors stay ignorant of sinks;
 * this table is the one place that maps between the two worlds, and
 * docs/metrics.md mirrors it.
 */
#ifndef DYNO_PUBLISH_CATALOG_H
#define DYNO_PUBLISH_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

enum metric_kind {
	MK_GAUGE,   /* the frame value is the current level */
	MK_COUNTER, /* the frame value is the increase over the last interval */
};

struct metric_desc {
	const char *key;         /* base key */
	bool suffixed;           /* matches "key.suffix" (true) or plain "key" (false) */
	enum metric_kind kind;
	double scale;            /* frame value * scale = base unit (seconds, bytes, ratio) */
	const char *prom;        /* Prometheus family name, NULL: not exported there */
	const char *label;       /* label name for the suffix */
	const char *strip;       /* prefix removed from the suffix ("cpu" of "cpu3") */
	const char *fixed_label; /* one constant label, "name=value", or NULL */
	const char *help;
	const char *otel;        /* OTLP metric name */
	const char *otel_unit;   /* UCUM */
	const char *otel_attr;   /* attribute for the suffix */
	const char *otel_fixed;  /* one constant attribute "name=value", or NULL */
};

/* The entry for a frame key, NULL when the catalog does not know it.  On
 * success *suffix points into key (after the '.') or is NULL. */
const struct metric_desc *catalog_find(const char *key, const char **suffix);
/* The HELP text of d's Prometheus family. */
const char *catalog_help(const struct metric_desc *d);
/* Whether a Prometheus family name is used by the catalog or the sink's own
 * metrics (an uncatalogued key must not produce it a second time). */
bool catalog_prom_family_taken(const char *name, size_t len);
/* All entries, for docs and tests. */
const struct metric_desc *catalog_all(size_t *n);

#endif
