/*
 * net.h - socket helpers shared by the daemon's RPC server, the dyno CLI,
 * tests and benches.
 *
 * - TCP listening socket: IPv6 dual-stack ("::" also accepts IPv4 through
 *   v4-mapped addresses), falling back to IPv4 when the kernel has no IPv6;
 *   or bound to one given address.  Non-blocking, close-on-exec.
 * - The RPC frame: int32 native-endian length + body, as upstream dyno.
 *   struct net_frame is the one frame reader of both programs: it reads a
 *   frame incrementally from a non-blocking socket with a size cap (the
 *   daemon's server, dyno's fan-out and the blocking call below all use
 *   it), keeping bytes read past a frame for the next one (keep-alive
 *   clients pipeline); net_frame_feed takes bytes from memory (what the
 *   fuzzer drives).
 * - Network allow-lists: "10.0.0.0/8,::1,127.0.0.1/32" parsed once and
 *   matched against a peer address (v4-mapped IPv6 peers match IPv4 rules).
 * - A blocking client call with a deadline (connect, send frame, read frame).
 *
 * Errors come back as -1 with a message in a struct buf, never as a crash.
 */
#ifndef DYNO_NET_H
#define DYNO_NET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "buf.h"

/* Upstream dyno's and dynolog's RPC port. */
#define NET_RPC_PORT 1778

/* Listen on addr ("" or NULL or "::": every address, dual-stack) and port
 * (0: kernel picks; *bound_port receives the port).  Returns the fd or -1
 * with a message in err. */
int net_listen_tcp(const char *addr, int port, int backlog, int *bound_port, struct buf *err);

/* "[::1]:1778" / "127.0.0.1:1778" into out (>= 64 bytes).  v4-mapped
 * addresses are shown as IPv4. */
const char *net_addr_str(const struct sockaddr *sa, socklen_t len, char *out, size_t cap);

/* The request body req with "token":TOKEN inserted as the first member of
 * its object, appended to out (req unchanged when it has no '{'): how dyno
 * (--token-file) and the daemon's trigger peers (--trigger_peer_token_file)
 * give a daemon its --rpc_token_file secret. */
void net_body_with_token(struct buf *out, const char *req, size_t n, const char *token);

/* ---- frames: int32 native length + body ---- */

enum net_frame_status {
	NET_FRAME_MORE = 0, /* need more bytes */
	NET_FRAME_DONE,     /* body complete */
	NET_FRAME_EOF,      /* peer closed before a complete frame */
	NET_FRAME_BAD_LEN,  /* length <= 0 */
	NET_FRAME_TOO_BIG,  /* length > max */
	NET_FRAME_IO_ERROR, /* read error (errno kept) */
};

struct net_frame {
	uint8_t hdr[4];
	uint32_t nhdr;
	int32_t len; /* valid once nhdr == 4 */
	struct buf body;
	uint32_t max;
	struct buf rest; /* bytes read past the frame: the start of the next */
	size_t rest_off;
};

void net_frame_init(struct net_frame *f, uint32_t max);
void net_frame_free(struct net_frame *f);
/* Ready f for the next frame on the same stream (bytes already read past
 * the last frame stay); the body's memory is kept when it is at most
 * keep_cap bytes, freed otherwise (so an idle connection does not hold a
 * big request's buffer). */
void net_frame_reset(struct net_frame *f, size_t keep_cap);
/* Read the frame: first from the bytes kept past the previous frame, then
 * from the socket until the frame is complete or the socket has nothing
 * more (NET_FRAME_MORE).  Never blocks (MSG_DONTWAIT), so a blocking
 * socket works too, after poll() says it is readable. */
enum net_frame_status net_frame_read(struct net_frame *f, int fd);
/* Bytes past the last frame are waiting (a pipelined next request). */
static inline bool net_frame_pending(const struct net_frame *f) { return f->rest_off < f->rest.len; }
/* Forget them (and their memory). */
void net_frame_drop_pending(struct net_frame *f);
/* Heap bytes the frame holds (body and kept bytes), for memory budgets. */
static inline size_t net_frame_held(const struct net_frame *f) { return f->body.cap + f->rest.cap; }
/* Feed bytes from memory (used by net_frame_read and the fuzzer); *used
 * receives how many bytes were consumed (a frame never eats past its end). */
enum net_frame_status net_frame_feed(struct net_frame *f, const void *p, size_t n, size_t *used);
const char *net_frame_status_str(enum net_frame_status s);
/* Append prefix + body to out. */
void net_frame_put(struct buf *out, const void *body, size_t n);

/* ---- allow-lists ---- */

struct net_rule {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	int prefix;
};
struct net_acl {
	struct net_rule *rules;
	size_t n;
};

/* Parse "CIDR[,CIDR...]" (an address without /len is a single host).
 * Returns false with a message on the first bad entry. */
bool net_acl_parse(struct net_acl *acl, const char *spec, struct buf *err);
void net_acl_free(struct net_acl *acl);
/* An empty list allows everything. */
bool net_acl_allows(const struct net_acl *acl, const struct sockaddr *sa, socklen_t len);

/* ---- blocking client ---- */

/* Connect to host:port (first resolver answer, as upstream dyno) within
 * timeout_ms.  Returns a blocking fd or -1 with a message. */
int net_connect_tcp(const char *host, int port, int timeout_ms, struct buf *err);
/* Send one frame and read the answer frame within timeout_ms.  Returns 0
 * with the body in resp, 1 when the server closed without answering, -1 on
 * error (message in err). */
int net_rpc_call(int fd, const void *req, size_t n, struct buf *resp, uint32_t max, int timeout_ms,
		 struct buf *err);

#endif
