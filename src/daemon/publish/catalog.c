/*
 * catalog.c - the metric catalog (see catalog.h): every collector's rows
 * gathered, looked up, and walked over a frame.  The rows' conventions:
 * Prometheus names follow node_exporter where node_exporter has the metric
 * (so existing dashboards work), dynolog_* otherwise; OTLP names follow the
 * OpenTelemetry system / process semantic conventions where they exist,
 * dynolog.* otherwise.  Cost: one copy of the rows, once per process.
 */
#include "catalog.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "daemon/collect/collector.h"

/* Every collector's rows, in table order (a family's HELP is given on its
 * first row), gathered on first use; with a lookup: row indices sorted by
 * (key, suffixed), so a tick with thousands of keys costs a binary search
 * each. */
static struct metric_desc *cat;
static size_t ncat;
static size_t *order;
static const char **help_of;
static bool ready;

static int cmp_entry(const void *a, const void *b)
{
	const struct metric_desc *x = &cat[*(const size_t *)a], *y = &cat[*(const size_t *)b];
	int c = strcmp(x->key, y->key);
	return c ? c : (int)x->suffixed - (int)y->suffixed;
}

static void init(void)
{
	for (size_t c = 0; c < ncollectors; c++)
		ncat += collectors[c]->ncatalog;
	cat = xcalloc(ncat ? ncat : 1, sizeof *cat);
	order = xcalloc(ncat ? ncat : 1, sizeof *order);
	help_of = xcalloc(ncat ? ncat : 1, sizeof *help_of);
	size_t n = 0;
	for (size_t c = 0; c < ncollectors; c++)
		for (size_t i = 0; i < collectors[c]->ncatalog; i++)
			cat[n++] = collectors[c]->catalog[i];
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		/* a family's HELP is given once, on its first entry */
		help_of[i] = cat[i].help;
		for (size_t j = 0; j < i && !help_of[i]; j++)
			if (cat[j].prom && cat[i].prom && strcmp(cat[j].prom, cat[i].prom) == 0)
				help_of[i] = cat[j].help;
	}
	qsort(order, n, sizeof order[0], cmp_entry);
	ready = true;
}

const struct metric_desc *catalog_find(const char *key, const char **suffix)
{
	if (!ready)
		init();
	const char *dot = strchr(key, '.');
	size_t bl = dot ? (size_t)(dot - key) : strlen(key);
	if (dot && !dot[1])
		return NULL;
	bool suffixed = dot != NULL;
	size_t lo = 0, hi = ncat;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct metric_desc *m = &cat[order[mid]];
		int c = strncmp(m->key, key, bl);
		if (c == 0)
			c = m->key[bl] ? 1 : (int)m->suffixed - (int)suffixed;
		if (c == 0) {
			*suffix = dot ? dot + 1 : NULL;
			return m;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *catalog_help(const struct metric_desc *d)
{
	if (!ready)
		init();
	const char *h = help_of[d - cat];
	return h ? h : "dynolog metric.";
}

bool catalog_prom_family_taken(const char *name, size_t len)
{
	if (!ready)
		init();
	for (size_t i = 0; i < ncat; i++)
		if (cat[i].prom && strlen(cat[i].prom) == len && memcmp(cat[i].prom, name, len) == 0)
			return true;
	/* the sink's own families */
	return len >= 8 && (strncmp(name, "dynolog_process_", 16) == 0 || strncmp(name, "dynolog_collector_", 18) == 0 ||
			    strncmp(name, "dynolog_build_info", 18) == 0 || strncmp(name, "dynolog_otlp_", 13) == 0 ||
			    strncmp(name, "dynolog_history_", 16) == 0 || strncmp(name, "dynolog_json_", 13) == 0);
}

/* ---------------- the sinks' walk over a frame ---------------- */

static int row_cmp(const void *a, const void *b)
{
	const struct catalog_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_'. */
static void put_sanitized(struct buf *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
			  (i && c >= '0' && c <= '9');
		buf_putc(o, ok ? c : '_');
	}
}

/* The name of an uncatalogued key, appended NUL-terminated to names; false
 * (names unchanged) when the sink must leave the key out. */
static bool generic_name(enum catalog_sink sink, const char *key, size_t baselen, struct buf *names)
{
	if (sink == CATALOG_OTLP) {
		buf_printf(names, "dynolog.%.*s", (int)baselen, key);
	} else {
		size_t start = names->len;
		buf_puts(names, "dynolog_");
		put_sanitized(names, key, baselen);
		if (catalog_prom_family_taken(names->data + start, names->len - start)) {
			/* would duplicate a family's HELP/TYPE and make the page invalid */
			LOG_ONCE(LOG_LEVEL_WARN, "prometheus: key '%s' clashes with a known family; not exported", key);
			buf_truncate(names, start);
			return false;
		}
	}
	buf_putc(names, 0);
	return true;
}

/* A percentage is itself a rounded quotient (100 * 3 / 20); divided by
 * 100 it is rounded a second time, which can land one or two ulps beside
 * the double nearest the short decimal (0.15000000000000002 for 0.15,
 * about one value in a thousand).  Where 15 significant digits are within
 * 2 ulps of the result - below the precision of the inputs - the 15-digit
 * value is kept, so the shortest round-trip writer prints "0.15".  Costs a
 * snprintf and a strtod per scaled non-integral value. */
static double tidy(double r)
{
	/* no libm calls: the daemon links libm statically (floor's ifunc
	 * does not link there) */
	if (!isfinite(r) || fabs(r) >= 1e15 || r == (double)(long long)r)
		return r;
	char t[32];
	snprintf(t, sizeof t, "%.15g", r);
	double s = strtod(t, NULL), a = fabs(r), next;
	uint64_t bits;
	memcpy(&bits, &a, sizeof bits);
	bits++; /* the next double away from zero */
	memcpy(&next, &bits, sizeof next);
	return fabs(s - r) <= 2 * (next - a) ? s : r;
}

/* v * scale, computed as a division when scale is 1/N (0.01, 0.001): 3530
 * ms * 0.001 is 3.5300000000000002 in binary floating point, 3530 / 1000 is
 * the double nearest 3.53, which the sinks' shortest round-trip writer
 * prints as "3.53". */
static double scaled(double v, double scale)
{
	if (scale > 0 && scale < 1) {
		double inv = (double)(long long)(1 / scale + 0.5);
		double d = 1 / inv - scale;
		if (d <= scale * 1e-12 && -d <= scale * 1e-12)
			return tidy(v / inv);
	}
	return v * scale;
}

void catalog_rows(const struct frame *f, enum catalog_sink sink, struct catalog_rows *out)
{
	out->row = xmalloc((f->n ? f->n : 1) * sizeof *out->row);
	out->n = 0;
	buf_init(&out->names);
	size_t *genoff = xmalloc((f->n ? f->n : 1) * sizeof *genoff); /* names moves as it grows */
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		if (v->type == FV_STRING)
			continue;
		const char *key = frame_key(f, v), *suffix = NULL;
		const struct metric_desc *d = catalog_find(key, &suffix);
		const char *name = d ? (sink == CATALOG_PROM ? d->prom : d->otel) : NULL;
		if (d && !name)
			continue; /* catalogued, but not exported by this sink */
		if (!d) {
			/* an uncatalogued key (e.g. another collector's): generic gauge */
			const char *dot = strchr(key, '.');
			genoff[out->n] = out->names.len;
			if (!generic_name(sink, key, dot ? (size_t)(dot - key) : strlen(key), &out->names))
				continue;
			suffix = dot && dot[1] ? dot + 1 : NULL;
		}
		struct catalog_row *r = &out->row[out->n++];
		r->name = name;
		r->d = d;
		r->suffix = suffix;
		r->label = suffix;
		if (d && suffix && d->strip && strncmp(suffix, d->strip, strlen(d->strip)) == 0)
			r->label += strlen(d->strip);
		r->value = v->type == FV_INT ? (double)v->v.i : v->type == FV_UINT ? (double)v->v.u : v->v.f;
		if (d)
			r->value = scaled(r->value, d->scale);
		r->idx = i;
	}
	for (size_t r = 0; r < out->n; r++)
		if (!out->row[r].name)
			out->row[r].name = out->names.data + genoff[r];
	free(genoff);
	qsort(out->row, out->n, sizeof *out->row, row_cmp);
}

void catalog_rows_free(struct catalog_rows *r)
{
	free(r->row);
	buf_free(&r->names);
	memset(r, 0, sizeof *r);
}
