/*
 * catalog.h - what each frame key means, for the sinks that need more than
 * a name: Prometheus (node_exporter-style family, type, base-unit scale,
 * label) and OTLP (semantic-convention name, unit, attributes).
 *
 * Frame keys are upstream's: "base" or "base.suffix", the suffix being the
 * one label (interface, disk, cpu, pid).  Each collector documents the keys
 * it emits (its `catalog` rows, metric.h) next to the code that emits them;
 * this file gathers every collector's rows into the one lookup both
 * exporting sinks use.  docs/metrics.md mirrors the rows.
 */
#ifndef DYNO_PUBLISH_CATALOG_H
#define DYNO_PUBLISH_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "daemon/frame.h"
#include "daemon/metric.h"


/* The entry for a frame key, NULL when the catalog does not know it.  On
 * success *suffix points into key (after the '.') or is NULL. */
const struct metric_desc *catalog_find(const char *key, const char **suffix);
/* The HELP text of d's Prometheus family. */
const char *catalog_help(const struct metric_desc *d);
/* Whether a Prometheus family name is used by the catalog or the sink's own
 * metrics (an uncatalogued key must not produce it a second time). */
bool catalog_prom_family_taken(const char *name, size_t len);

/* The walk both exporting sinks make over a frame: every numeric value the
 * sink exports, with its name, catalog entry, label and scaled value,
 * sorted by name (frame order within a name) so that a family's series
 * stand together.  The sinks only differ in the names they read. */
enum catalog_sink {
	CATALOG_PROM, /* d->prom; others "dynolog_<base, sanitized>", dropped
		       * when that would clash with a known family */
	CATALOG_OTLP, /* d->otel; others "dynolog.<base>" */
};

struct catalog_row {
	const char *name;            /* the sink's metric (family) name */
	const struct metric_desc *d; /* NULL: an uncatalogued key, a generic gauge */
	const char *suffix;          /* the key after its '.', NULL: none */
	const char *label;           /* suffix less d->strip: the label value */
	double value;                /* frame value * d->scale (may be NaN/Inf) */
	size_t idx;                  /* index in the frame */
};

struct catalog_rows {
	struct catalog_row *row;
	size_t n;
	struct buf names; /* storage of the generic names */
};

void catalog_rows(const struct frame *f, enum catalog_sink sink, struct catalog_rows *out);
void catalog_rows_free(struct catalog_rows *r);

#endif
