/*
 * par.h - the one small fork-join helper: run n independent tasks on a few
 * threads.  Used by the trace library (ranks loaded and filtered in
 * parallel, column merges and gathers) and src/analyze/run.c (each
 * analysis of each rank).  Tasks must not share mutable data; each writes
 * only its own result slot, which the caller reads after par_for() returns
 * (the joins order those writes before the reads).  Cost: one thread start
 * per extra thread per call, so give it tasks of a millisecond or more.
 */
#ifndef DYNO_CORE_PAR_H
#define DYNO_CORE_PAR_H

#include <stddef.h>

/* Call fn(ctx, i) once for every i in [0, n), on min(n, threads) threads
 * (threads <= 0: the number of online cores), the calling thread included.
 * Tasks are taken in ascending i, so put the longest first.  If a thread
 * cannot be started, the others (at least the caller) do its share. */
void par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx);

/* threads <= 0 -> online cores (at least 1). */
int par_threads(int threads);

#endif
