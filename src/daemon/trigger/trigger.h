/*
 * trigger.h - triggers in the daemon: a trace is asked for on its own when
 * a metric condition holds over a window ("sm_active_ratio.0 < 0.2 for
 * 60s", optionally only while a registered job runs), on a cadence (every
 * N seconds per job), or when the fireTrigger RPC says so.  A firing hands
 * the trigger's Kineto config to the matching registered processes
 * through the on-demand path of setKinetOnDemandRequest (tracing.h), and
 * optionally starts a gpusnoop session per triggered process
 * (gpusnoop_rpc.h); each (trigger, job) fires at most once per
 * min_interval_s.  Every firing is recorded (time, trigger, values, what
 * was asked, the answer) in a bounded log that listTriggers returns.
 *
 * Evaluated on the telemetry tick from the frame just published
 * (telemetry_on_tick): no timer of its own.  Time is the ticks' time: the
 * sum of the kernel collector's intervals since start (trigger_cond.h), so
 * windows, cadences and rate limits are counted in ticks.  The triggers
 * persist in --trigger_file (trigger_store.h); the firing log and the rate
 * limits' state live in memory (a restart forgets them).
 *
 * Cost: per tick, for each metric trigger one key comparison (where the
 * key was in its collector's previous frame; a scan when it moved), ~8 ns
 * (bench/trigger_tick.sh); per firing one on-demand request, a log record
 * (at most ~3.3 KB) and a rewrite of the trigger file.  Memory at
 * the caps: docs/daemon.md.
 */
#ifndef DYNO_TRIGGER_H
#define DYNO_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/loop.h"
#include "daemon/frame.h"
#include "daemon/rpc/rpc.h"
#include "daemon/trigger/trigger_store.h"

#define TRIG_FIRINGS_MAX 256     /* --trigger_max_firings' upper bound (listTriggers < 2 MiB) */
#define TRIG_JOBS_PER_TRIGGER 64 /* jobs whose rate limit one trigger remembers */
#define TRIG_SNOOPS_PER_FIRING 4 /* gpusnoop sessions one firing may start */

struct trigger_flags {
	const char *file; /* "": triggers in memory only */
	const char *peer_token_file; /* "": peer requests carry no token */
	int64_t max, max_firings;
};

#define TRIGGER_FLAGS_DEFAULT {.file = "", .peer_token_file = "", .max = 64, .max_firings = 128}

#define TRIGGER_FLAG_ROWS(f)                                                                          \
	{"trigger_file", 0, ARG_STRING, &(f)->file, "PATH",                                             \
	 "keep the triggers (dyno trigger add) in this file, read at start (default: in memory only)", 0, 0, \
	 NULL},                                                                                          \
	{"trigger_peer_token_file", 0, ARG_STRING, &(f)->peer_token_file, "PATH",                       \
	 "send this secret (the peers' --rpc_token_file) with a trigger's requests to its peers", 0, 0,   \
	 NULL},                                                                                          \
	{"trigger_max", 0, ARG_INT, &(f)->max, "N", "most triggers kept", 0, TRIG_MAX_TRIGGERS, NULL},   \
	{"trigger_max_firings", 0, ARG_INT, &(f)->max_firings, "N",                                    \
	 "trigger firings remembered for listTriggers (the oldest go first)", 1, TRIG_FIRINGS_MAX, NULL}

struct tracing;
struct gpusnoop_rpc;
struct triggers;

/* Load --trigger_file.  NULL with a message when it cannot be read or does
 * not parse (the daemon does not start: it would overwrite the file).
 * snoop may be NULL (the triggers' gpusnoop sessions are then refused); l
 * NULL: peers are not asked (tests). */
struct triggers *triggers_start(struct ev_loop *l, const struct trigger_flags *f, struct tracing *tr,
				struct gpusnoop_rpc *snoop, struct buf *err);
void triggers_stop(struct triggers *t);
/* telemetry_on_tick's hook (ud: the triggers). */
void triggers_on_tick(const struct frame *f, size_t src, int64_t interval_s, void *ud);
/* addTrigger, listTriggers, removeTrigger, fireTrigger. */
void triggers_register_rpc(struct triggers *t, struct rpc_server *s);
/* Answer fn as the server would (tests); false for another fn. */
bool triggers_rpc_call(struct triggers *t, const char *fn, const struct json_value *req, struct buf *resp);

#endif
