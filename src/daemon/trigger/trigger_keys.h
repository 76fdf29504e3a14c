/*
 * trigger_keys.h - whether a trigger's metric key is one the daemon can
 * publish, and the keys closest to one it cannot.
 *
 * A metric trigger whose key no collector emits can never fire, silently;
 * addTrigger refuses it instead, naming the closest keys of the catalog
 * (publish/catalog.h: every collector's rows, docs/metrics.md).  A key that
 * is known but absent on this host (a GPU key without a GPU) is accepted:
 * the hardware may appear, and its absence is not a typo.
 */
#ifndef DYNO_DAEMON_TRIGGER_KEYS_H
#define DYNO_DAEMON_TRIGGER_KEYS_H

#include <stdbool.h>

#include "core/buf.h"

/* true when some collector documents key ("base" or "base.suffix");
 * otherwise false with why set to the reason and up to three closest
 * catalog keys ("sm_active_ratio.<gpu>" for a suffixed one). */
bool trig_key_known(const char *key, struct buf *why);

#endif
