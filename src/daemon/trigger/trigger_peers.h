/*
 * trigger_peers.h - a trigger's synchronized trace on other hosts: the
 * firing's on-demand request (the same config, the same job, one
 * PROFILE_START_TIME a few seconds ahead) is sent to the daemons of a peer
 * list, without blocking the loop: numeric addresses only (no DNS lookup
 * on the loop), non-blocking connects, upstream's framing, one deadline
 * timer per batch.  When every peer has answered, failed or timed out, the
 * batch's summary goes to a callback (the firing log).
 *
 * Cost: nothing until a trigger with peers fires; then a socket per peer
 * (at most TRIG_PEERS_MAX) for at most the deadline, and an answer of each
 * (at most TRIG_PEER_ANSWER_MAX read).
 */
#ifndef DYNO_TRIGGER_PEERS_H
#define DYNO_TRIGGER_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/loop.h"

#define TRIG_PEERS_MAX 64        /* peers of one trigger */
#define TRIG_PEERS_TEXT_MAX 2048 /* the list's text */
#define TRIG_PEER_TIMEOUT_MS 5000
/* A peer's answer read at most: a host's answer lists its few processes
 * (a thousand pids would be ~20 KB: recorded as too big, not read). */
#define TRIG_PEER_ANSWER_MAX (16u << 10)

/* "ADDR[:PORT],..." with ADDR an IPv4 or [IPv6] literal (PORT default
 * 1778).  False with the first bad entry named in err. */
bool trig_peers_check(const char *spec, size_t n, struct buf *err);

struct trig_batch;
/* summary: a JSON array, one object per peer: {"peer":...,"matched":N,
 * "triggered":[...],"busy":N} or {"peer":...,"error":...}.  Called once;
 * the batch is freed after it returns. */
typedef void (*trig_batch_done_fn)(void *ud, struct trig_batch *b, const char *summary, size_t len);

/* Send body (a setKinetOnDemandRequest object) to every peer of spec
 * (already checked).  NULL with the reason in err when the list is bad or
 * no timer could be made (done is not called); NULL with err untouched
 * when no peer could even be asked (done has been called already, with
 * each peer's error). */
struct trig_batch *trig_peers_send(struct ev_loop *l, const char *spec, const char *body, size_t len,
				   trig_batch_done_fn done, void *ud, struct buf *err);
/* Cancel a batch still running (done is not called). */
void trig_batch_free(struct trig_batch *b);

#endif
