/*
 * hostmetrics.h - the host metrics `dyno analyze insights --metrics FILE`
 * reads (hostmetrics.c): the output of `dyno metrics --json` (the daemon's
 * getMetrics answers, one per line, "HOST " before each when several
 * daemons answered) or the daemon's JSON log (upstream's
 * `time = T data = {...}` lines or JSONL `{"time":T,"data":{...}}`), as
 * numeric series per host and key.  A boundary: every line is validated;
 * a bad line is skipped and counted (the first one named by line and byte
 * offset), a file with no good line is an error.  Memory: 16 bytes a point,
 * at most HOST_METRICS_MAX_POINTS points.
 */
#ifndef DYNO_ANALYZE_HOSTMETRICS_H
#define DYNO_ANALYZE_HOSTMETRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "trace/model.h"

#define HOST_METRICS_MAX_BYTES ((size_t)512 << 20)
#define HOST_METRICS_MAX_POINTS ((size_t)8 << 20)

struct host_series {
	uint32_t host, key; /* ids in host_metrics.names ("" host: one host) */
	size_t n, cap;
	int64_t *ms; /* unix ms, in file order */
	double *v;
};

struct host_metrics {
	struct trace_strtab names; /* host and key names; "host\x1fkey" for the lookup */
	struct host_series *s;
	size_t n, cap;
	uint32_t *by_id; /* series index + 1 by the id of "host\x1fkey" */
	size_t by_id_cap;
	size_t lines, bad_lines, points;
	bool capped;        /* stopped at HOST_METRICS_MAX_POINTS */
	char first_bad[240]; /* "line N (byte OFFSET): what" of the first bad line */
	int64_t min_ms, max_ms;
};

/* Parse text (name is used in messages).  0, or -1 with "NAME: ..." in err
 * (nothing usable).  m is to be freed either way. */
int host_metrics_parse(const char *name, const char *data, size_t len, struct host_metrics *m, struct buf *err);
/* Read and parse a file (at most HOST_METRICS_MAX_BYTES). */
int host_metrics_load(const char *path, struct host_metrics *m, struct buf *err);
void host_metrics_free(struct host_metrics *m);
static inline const char *host_metrics_name(const struct host_metrics *m, uint32_t id)
{
	return trace_strtab_get(&m->names, id);
}

#endif
