/*
 * prom_accept.h - the Prometheus port's own accept loop: it looks at the
 * first bytes of every connection before libmicrohttpd gets it, and turns
 * away a dynolog RPC frame (int32 length + '{', what `dyno --port` sends
 * when pointed at this port) with an immediate HTTP 400 that names the
 * port.  Without it libmicrohttpd waits for a request line that an RPC
 * frame never completes, and dyno waits its whole --timeout-s (issue #15
 * item 7).  Everything else is handed to libmicrohttpd unchanged.
 *
 * Cost: one accept and one MSG_PEEK recv per connection (HTTP clients send
 * their request line at once, so the peek sees it on the first wake-up).
 * A connection that sends too little to decide is held at most timeout_ms,
 * and at most max_pending are held at once: when all are taken, the one
 * held longest is closed for the newcomer (closing the newcomer let idle
 * connections lock every real scrape out).
 */
#ifndef DYNO_DAEMON_PROM_ACCEPT_H
#define DYNO_DAEMON_PROM_ACCEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "core/loop.h"

struct prom_accept;

/* An HTTP connection: the callee owns fd (libmicrohttpd's MHD_add_connection). */
typedef void (*prom_handoff_fn)(void *ud, int fd, const struct sockaddr *addr, socklen_t len);

/* Serve the listening socket lfd (owned from now on) on loop. */
struct prom_accept *prom_accept_new(struct ev_loop *loop, int lfd, size_t max_pending, int timeout_ms,
				    prom_handoff_fn handoff, void *ud);
/* Where the RPC port named in the 400's body is read when one is sent
 * (*port 0: not known, not named); RPC starts after the sinks. */
void prom_accept_set_rpc_port(struct prom_accept *a, const int *port);
/* Closes the listening socket and every undecided connection. */
void prom_accept_free(struct prom_accept *a);

/* What the first bytes of a connection are: exported for the unit test. */
enum prom_sniff { SNIFF_MORE, SNIFF_HTTP, SNIFF_RPC };
enum prom_sniff prom_sniff(const unsigned char *p, size_t n);

#endif
