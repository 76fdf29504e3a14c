/*
 * wh_ingest.h - traces into the warehouse, as `dyno warehouse ingest` does
 * it (wh_ingest.c, docs/fleet.md).
 */
#ifndef DYNO_FLEET_WH_INGEST_H
#define DYNO_FLEET_WH_INGEST_H

#include <stdbool.h>
#include <stdint.h>

/* Ingest the traces pos[0..npos) (files, or directories walked for their
 * *.json / *.json.gz) into db_spec (a SQLite file or a postgresql:// URL),
 * job and host (NULL: from the directories) for every one, threads traces
 * analysed at once (0: one per core).  Failed traces and errors go to
 * stderr, the totals line to stdout unless quiet.  Returns the command's
 * exit status: 0, or 1 (an input could not be listed or read, or the
 * database failed). */
int wh_ingest(char **pos, int npos, const char *db_spec, const char *job, const char *host, int64_t threads,
	      bool quiet);

#endif
