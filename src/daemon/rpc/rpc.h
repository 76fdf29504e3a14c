/*
 * rpc.h - the daemon's TCP RPC server (upstream dyno framing) on the event
 * loop.
 *
 * Transport only: listen (dual-stack by default, or --rpc_bind), accept
 * non-blocking, refuse peers outside the allow-list, read one int32-framed
 * JSON request per connection with a size cap and a deadline, check the
 * optional shared token, dispatch on "fn" through a table of handlers,
 * write the answer without blocking, close.  Up to max_conns connections
 * wait at once; when full, the oldest is dropped for the newcomer, so slow
 * or silent clients cannot lock others out.  Upstream's error rules: bad length, bad JSON, no
 * "fn" or an unknown "fn" close the connection without an answer (counted).
 *
 * Cost per upstream request (connect, send, read, close): accept4, read,
 * sendmsg, shutdown, close - the socket never joins epoll when the request
 * is there at accept (TCP_DEFER_ACCEPT), and the answer leaves with the FIN
 * in one segment.  Extension: a request with "keepalive": true keeps the
 * connection open for the next request (at most max_requests per
 * connection, each waited for at most timeout_ms); see docs/rpc.md.
 *
 * Memory is bounded: an answer the client does not read stays in this
 * process only up to max_queued bytes (more, and the connection is
 * dropped), and everything kept for connections between events (requests
 * being read, unsent answers) up to max_held bytes in all: past it, the
 * connections holding memory longest are dropped.  A client that does not
 * read its answers costs at most that, and only until its deadline.
 *
 * Handlers (the upstream functions, getProcesses, and other modules'
 * extensions such as the telemetry getMetrics) plug in with
 * rpc_register_fn; registering a name again replaces the handler, so a
 * module can also take over getStatus or the DCGM functions.
 */
#ifndef DYNO_RPC_H
#define DYNO_RPC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/loop.h"
#include "core/net.h"

/* Write the compact JSON answer into resp and return true, or return false
 * for "no answer" (the connection is closed silently, as upstream). */
typedef bool (*rpc_fn)(const struct json_value *req, struct buf *resp, void *ud);

/* The tree of a request is built only after its "fn" and "token" are
 * checked, and only for at most this many JSON values nested at most this
 * deep (more: an error answer); ~48 bytes a value plus its strings, so a
 * tree is at most ~1.8 MiB (docs/daemon.md "Memory at the caps"). */
#define RPC_MAX_VALUES 16384u
#define RPC_MAX_DEPTH 32

struct rpc_opts {
	const char *bind;        /* NULL/"": "::" dual-stack */
	int port;                /* 0: kernel picks */
	const char *allow;       /* CIDR list; NULL/"": everyone */
	const char *token;       /* NULL: no token required */
	uint32_t max_frame;      /* default 1 MiB */
	int timeout_ms;          /* per connection, default 5000 */
	int max_conns;           /* default 256 */
	uint32_t max_requests;   /* per keep-alive connection, default 1000; 1: extension off */
	size_t max_queued;       /* unsent answer bytes per connection, default 2 MiB */
	size_t max_held;         /* bytes kept for all connections together, default 8 MiB */
	size_t turn_bytes;       /* answer bytes one wake-up builds before yielding, default 256 KiB */
	int64_t accept_serve_ns; /* an accept pass serves new connections at once for this long, then
				  * only accepts them (each served in its own callback), default 2 ms */
};

struct rpc_stats {
	uint64_t accepted, refused_peer, requests, answered, silent, bad_frame, too_big, bad_json,
		unknown_fn, unauthorized, timeouts, evicted, write_failed,
		too_many_values, /* refused with an error: over RPC_MAX_VALUES */
		reused,         /* requests after the first on a keep-alive connection */
		request_limit,  /* keep-alive connections closed at max_requests */
		overflow,       /* connections dropped for max_queued / max_held */
		yields,         /* requests left for a later wake-up (turn_bytes): pipelined ones, new connections */
		turn_peak,      /* the most answer bytes one wake-up built */
		held,           /* bytes kept for connections now */
		held_peak;      /* the most ever kept between events */
};

struct rpc_server;

struct rpc_server *rpc_start(struct ev_loop *l, const struct rpc_opts *o, struct buf *err);
void rpc_stop(struct rpc_server *s);
int rpc_port(const struct rpc_server *s);
void rpc_register_fn(struct rpc_server *s, const char *name, rpc_fn fn, void *ud);
const struct rpc_stats *rpc_get_stats(const struct rpc_server *s);

#endif
