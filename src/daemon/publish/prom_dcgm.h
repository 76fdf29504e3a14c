/*
 * prom_dcgm.h - the Prometheus page under dcgm-exporter's names
 * (--prometheus_names=dcgm): GPU frame keys become DCGM_FI_* families with
 * dcgm-exporter's labels (gpu, UUID, device, modelName, Hostname; GPU_I_ID
 * and GPU_I_PROFILE for MIG instances) and units (MiB, MHz, %, W, mJ,
 * ratios), so Grafana dashboards built for dcgm-exporter read dynolog's
 * page unchanged.  docs/metrics.md maps each key to its three names.
 * Cost: one pass over the frame and a sort of the GPU values per render.
 */
#ifndef DYNO_PUBLISH_PROM_DCGM_H
#define DYNO_PUBLISH_PROM_DCGM_H

#include <stdbool.h>

#include "core/buf.h"
#include "daemon/frame.h"

/* Whether the frame key (base.suffix) is rendered by prom_dcgm_render
 * (the dynolog-named rendering then leaves it out). */
bool prom_dcgm_covers(const char *key);
/* Appends the DCGM_FI_* families of f's GPU values to o. */
void prom_dcgm_render(const struct frame *f, const char *hostname, struct buf *o);

#endif
