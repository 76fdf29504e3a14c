/*
 * prometheus.h - the Prometheus sink: text exposition (format 0.0.4) on
 * http://ADDRESS:PORT/metrics, served by libmicrohttpd from the daemon's
 * one event loop.
 *
 * The page is rendered once per collection tick, not per scrape: a scrape
 * only hands out the current immutable page (a reference-counted MHD
 * response), so a thousand scrapers cost a thousand socket writes and no
 * rendering, and nothing a client does can delay collection.
 */
#ifndef DYNO_PUBLISH_PROMETHEUS_H
#define DYNO_PUBLISH_PROMETHEUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/loop.h"
#include "daemon/frame.h"
#include "daemon/module.h"

struct prom_sink;

struct prom_options {
	const char *address;    /* IPv4 or IPv6 literal; default 127.0.0.1 */
	int port;               /* 0: let the kernel choose (tests) */
	unsigned max_connections;
	unsigned timeout_s;     /* idle connection timeout */
};

/* Listen and join the loop.  NULL (with the reason in err) on failure. */
struct prom_sink *prom_new(struct ev_loop *loop, const struct prom_options *opt, struct buf *err);
void prom_free(struct prom_sink *p);
int prom_port(const struct prom_sink *p);
/* The daemon's RPC port (0: none), named in the HTTP 400 that answers a
 * dynolog RPC request sent to the Prometheus port. */
void prom_note_rpc_port(int port);
/* Take the latest frame of source src (the collector's index; any number of
 * sources); counters are accumulated here, once per call. */
void prom_update(struct prom_sink *p, size_t src, const struct frame *f);
/* Render the page from every source's latest frame plus the self metrics,
 * and serve it from now on. */
void prom_publish(struct prom_sink *p, const struct self_metric *self, size_t nself);
/* Render into out without serving (tests, `promtool check metrics`). */
void prom_render(struct prom_sink *p, const struct self_metric *self, size_t nself, struct buf *out);
/* A sink that only renders (no socket): for unit tests. */
struct prom_sink *prom_new_offline(void);
uint64_t prom_requests(const struct prom_sink *p);
/* GPU series under dcgm-exporter's names, labels and units (prom_dcgm.h). */
void prom_set_dcgm_names(struct prom_sink *p, bool on);

#endif
