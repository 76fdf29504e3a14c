/*
 * frame.h - one collection tick's samples, handed from collectors to sinks.
 *
 * A collector appends named values to a frame; it does not know where they
 * go.  At the end of the tick the daemon passes the frame to every enabled
 * sink (publish/list.h: JSON log, history, OTLP, Prometheus).  Names are
 * upstream Dynolog's metric keys ("cpu_util", "rx_bytes.eth0").  A metric
 * the machine cannot provide is simply not added: absent, never 0.
 */
#ifndef DYNO_FRAME_H
#define DYNO_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum fv_type { FV_INT, FV_UINT, FV_FLOAT, FV_STRING };

struct frame_value {
	uint32_t key;  /* offset into frame.names */
	uint32_t sval; /* FV_STRING: offset into frame.names */
	enum fv_type type;
	union {
		int64_t i;
		uint64_t u;
		double f;
	} v;
};

struct frame {
	int64_t wall_ns; /* sample time */
	struct frame_value *vals;
	size_t n, cap;
	struct buf names; /* NUL-separated keys and string values */
};

void frame_init(struct frame *f);
void frame_reset(struct frame *f, int64_t wall_ns);
void frame_free(struct frame *f);
void frame_int(struct frame *f, const char *key, int64_t v);
void frame_uint(struct frame *f, const char *key, uint64_t v);
void frame_float(struct frame *f, const char *key, double v);
void frame_str(struct frame *f, const char *key, const char *v);
/* Append every value of from to to (a worker thread's frame handed over). */
void frame_append(struct frame *to, const struct frame *from);
static inline const char *frame_key(const struct frame *f, const struct frame_value *v)
{
	return f->names.data + v->key;
}
/* Keys starting with this are for the exporting sinks only (Prometheus):
 * the kernel's absolute counters under node_exporter's names.  The JSON
 * log and the history (upstream's keys and per-interval values) skip
 * them, so their records stay upstream's. */
#define FRAME_EXPORT_ONLY '@'
static inline bool frame_key_export_only(const char *key) { return key[0] == FRAME_EXPORT_ONLY; }
/* Sort values by key (byte order), as upstream's JSON line has them. */
void frame_sort(struct frame *f);

#endif
