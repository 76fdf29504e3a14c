/*
 * metric.h - the description of a frame key: what it means and how each
 * exporting sink names it (Prometheus family, type, base-unit scale, label;
 * OTLP semantic-convention name, unit, attributes).
 *
 * A collector lists the keys it emits as metric_desc rows in its own file
 * (struct collector's `catalog`); publish/catalog.c gathers them.  Plain
 * data: no code, no cost.
 */
#ifndef DYNO_DAEMON_METRIC_H
#define DYNO_DAEMON_METRIC_H

#include <stdbool.h>

enum metric_kind {
	MK_GAUGE,   /* the frame value is the current level */
	MK_COUNTER, /* the frame value is the increase over the last interval */
	MK_TOTAL,   /* the frame value is the kernel's own running total (a
		     * counter since boot, node_exporter's value); its key starts
		     * with FRAME_EXPORT_ONLY: JSON log and history leave it out */
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

#endif
