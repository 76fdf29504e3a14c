/*
 * otlp.h - the OTLP/HTTP JSON push sink (--use_otlp).
 *
 * Each tick's frame becomes one ExportMetricsServiceRequest (JSON encoding)
 * queued for POST to <endpoint>/v1/metrics.  Transfers run on libcurl's
 * multi interface driven by the daemon's one loop, one at a time (so the
 * receiver sees ticks in order).  The queue is bounded in payloads and in
 * bytes: beyond either the oldest payload is dropped and counted.  429, 502, 503, 504 and transport
 * errors are retried with exponential backoff (honouring Retry-After);
 * other 4xx/5xx answers are dropped and counted as rejected.
 */
#ifndef DYNO_PUBLISH_OTLP_H
#define DYNO_PUBLISH_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/loop.h"
#include "daemon/frame.h"

struct otlp_options {
	const char *endpoint;     /* base URL ("http://localhost:4318"); /v1/metrics is appended */
	const char *metrics_url;  /* full URL, overrides endpoint (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) */
	const char *headers;      /* "k=v,k2=v2" (OTEL_EXPORTER_OTLP_HEADERS) */
	const char *service_name; /* resource service.name */
	int64_t timeout_ms;
	size_t max_queue;       /* payloads */
	size_t max_queue_bytes; /* and their bytes, the one in flight included */
	int64_t backoff_initial_ms, backoff_max_ms;
};

struct otlp_stats {
	uint64_t sent, dropped, rejected, retries, failures;
	size_t queued, queued_bytes;
};

/* 8 MiB: with the history ring and the daemon itself, well under the
 * packaged unit's MemoryHigh=32M (a payload of a big host is ~40 KB, so
 * this is ~200 ticks of a receiver outage; 1000 would be ~40 MB). */
#define OTLP_DEFAULT_QUEUE_BYTES ((size_t)8 << 20)

struct otlp_sink;

/* Fills unset options from the OTEL_EXPORTER_OTLP_* environment, then defaults. */
void otlp_options_from_env(struct otlp_options *o);
struct otlp_sink *otlp_new(struct ev_loop *loop, const struct otlp_options *opt, struct buf *err);
void otlp_free(struct otlp_sink *s);
/* Queue this tick of source src (the collector's index; any number of
 * sources, each with its own interval start).  Never blocks. */
void otlp_publish(struct otlp_sink *s, size_t src, const struct frame *f);
void otlp_get_stats(const struct otlp_sink *s, struct otlp_stats *st);
/* The JSON body for f (tests); prev_ns: start of the interval for deltas. */
void otlp_render(const struct frame *f, int64_t prev_ns, const char *service, const char *host, struct buf *out);

#endif
