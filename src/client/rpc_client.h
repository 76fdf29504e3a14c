/*
 * rpc_client.h - dyno's client side of the daemon RPC (wire-protocols.md §2).
 *
 * One request per TCP connection: an int32 native-endian length, the JSON
 * body, then the daemon's answer in the same framing.  Like upstream dyno,
 * a host name is resolved together with the port and only the FIRST address
 * the resolver returns is tried.
 *
 * rpc_call_many() talks to many daemons at once: names are resolved by a
 * small thread pool (getaddrinfo is the only blocking step), then every
 * exchange runs as a non-blocking socket on one event loop (core/loop.h),
 * at most max_parallel at a time, each bounded by timeout_ms.  Every
 * failure ends as a one-line message in the result (refused, timed out,
 * closed without answering, bad length, truncated, token refused); nothing
 * here prints or exits.  Frames are read by core/net.h's one reader.
 *
 * With a token (the daemon's --rpc_token_file), every request gets it as
 * its first member, "token", which is where the daemon looks; a daemon
 * that refuses a request for its token answers
 * {"error":"unauthorized: ...","status":"failed"}, which ends here as
 * RPC_ERR_UNAUTHORIZED with a message naming --token-file.
 */
#ifndef DYNO_CLI_RPC_CLIENT_H
#define DYNO_CLI_RPC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/net.h"

#define RPC_DEFAULT_TIMEOUT_MS 10000
#define RPC_DEFAULT_PARALLEL 256
/* Largest response accepted; getMetrics answers are the big ones. */
#define RPC_MAX_RESPONSE (64u << 20)

enum rpc_status {
	RPC_OK = 0,
	RPC_ERR_RESOLVE,
	RPC_ERR_CONNECT,
	RPC_ERR_TIMEOUT,
	RPC_ERR_IO,
	/* the daemon closed the connection without writing a byte: upstream
	 * daemons do this for requests they do not understand (unknown fn) */
	RPC_ERR_NO_RESPONSE,
	RPC_ERR_BAD_LENGTH, /* length prefix <= 0 or over the limit */
	RPC_ERR_TRUNCATED,  /* closed in the middle of the answer */
	RPC_ERR_UNAUTHORIZED, /* the daemon wants a (different) token */
};

struct rpc_job {
	/* input */
	const char *host;  /* name or address (IPv6 without brackets) */
	const char *port;  /* decimal */
	const char *req;   /* request body, without the length prefix */
	size_t req_len;
	/* output */
	enum rpc_status status;
	char err[512];      /* one line, when status != RPC_OK */
	char addr[64];      /* the address connected to, "[::1]:1778" */
	struct buf resp;    /* response body (no prefix) when RPC_OK */
	double elapsed_ms;  /* resolution excluded */
};

struct rpc_client_opts {
	int64_t timeout_ms; /* per host: connect + send + answer; <= 0: default */
	int max_parallel;   /* connections in flight; <= 0: default */
	const char *token;  /* NULL: none; else sent in every request */
};

/* Run every job; returns the number that failed.  Jobs must have their
 * output fields zeroed or set by rpc_job_init. */
size_t rpc_call_many(struct rpc_job *jobs, size_t n, const struct rpc_client_opts *o);
void rpc_job_init(struct rpc_job *j, const char *host, const char *port, const char *req, size_t req_len);
void rpc_job_free(struct rpc_job *j);
const char *rpc_status_name(enum rpc_status s);

#endif
