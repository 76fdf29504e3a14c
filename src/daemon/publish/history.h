/*
 * history.h - the in-memory history sink: the last window_s seconds of
 * every numeric frame key, for the getMetrics RPC ("real-time telemetry
 * query" for load balancers and autoscalers).
 *
 * Points are held compressed (src/core/tsz.c) in blocks allocated as they
 * arrive, so memory follows what is held rather than the window.  Bounds:
 * the window holds cap_ticks ticks (every tick of every collector over the
 * window); at most max_series keys are kept (a key beyond that is dropped
 * and counted); and, when set, at most max_bytes of blocks (past it the
 * oldest points go first, said once).  A key that stops appearing is freed
 * once all its points have aged out of the window.
 */
#ifndef DYNO_PUBLISH_HISTORY_H
#define DYNO_PUBLISH_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "daemon/frame.h"

struct history;

/* interval_s is what getMetrics reports; cap_ticks: ticks the window holds
 * (0: window_s / interval_s + 1; more when several collectors tick). */
struct history *history_new(int64_t window_s, int64_t interval_s, size_t cap_ticks, size_t max_series);
void history_free(struct history *h);
/* Record the numeric values of f at f->wall_ns. */
void history_add(struct history *h, const struct frame *f);
size_t history_series(const struct history *h);
uint64_t history_dropped_series(const struct history *h);
/* The byte cap on blocks (0, the default: none); applies from the next add. */
void history_set_max_bytes(struct history *h, size_t max_bytes);
/* The bound on one getMetrics answer in bytes (0, the default: none);
 * see history_rpc. */
void history_set_max_answer(struct history *h, size_t bytes);
/* Bytes of blocks held (headers included; not the key table and names),
 * and blocks dropped by the byte cap so far. */
size_t history_bytes(const struct history *h);
uint64_t history_dropped_blocks(const struct history *h);
/* Bytes of coded blocks held for one key (0: not held): what each key
 * costs (bench/history_bench.c). */
size_t history_key_bytes(const struct history *h, const char *name);

/* The getMetrics RPC (our extension, docs/daemon.md): req is the parsed
 * request object {"fn":"getMetrics","since_s":N?,"names":[...]?,"next":{...}?};
 * the response body (compact JSON, keys in ascending byte order) is
 * appended to resp.  now_ms: wall clock in ms (tests pass a fixed one).
 * With a bound set, writing stops before a point that would take the answer
 * past it: the answer then ends with "next" (the series and tick number to
 * resume from, the end tick and from_ms of the first page: all the state,
 * so the server keeps none between pages) and "truncated":true; the client
 * sends the same request with that "next" added.  Every page holds at least
 * one point, so a bound too small for one point is exceeded by one point. */
void history_rpc(struct history *h, const struct json_value *req, int64_t now_ms, struct buf *resp);

#endif
