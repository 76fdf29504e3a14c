/*
 * peers.h - a trigger's peers as the daemon takes them (peers.c).
 */
#ifndef DYNO_CLI_PEERS_H
#define DYNO_CLI_PEERS_H

#include <stdint.h>

#include "client/hosts.h"
#include "core/buf.h"

/*
 * The peers of `dyno trigger add` -- list (HOST[:PORT],..., names or
 * literals; NULL: none) and the nodes of SLURM job slurm_job (NULL: none),
 * default_port where an entry names none -- resolved here to the numeric
 * "ADDR:PORT,[V6]:PORT,..." the daemon accepts (it does no DNS lookups on
 * its loop).  A peer that is one of the daemons the trigger is added to
 * (self: same address and port, or this host's name while a target is a
 * loopback address) is left out and named in note; duplicates are merged.
 * False with the reason in err (a name that does not resolve, no peer
 * left).
 */
bool peers_resolve(const char *list, const char *slurm_job, int64_t default_port, const struct targets *self,
		   struct buf *out, struct buf *note, struct buf *err);

#endif
