/*
 * trace_out.h - the output side of the trace writers of `dyno analyze`
 * (`counters --write-trace`, `patterns --patterns-trace`): a file, gzip
 * when its name ends in ".gz", written in pieces, removed again when the
 * write failed.  Costs a FILE or a gzFile; nothing per event.
 */
#ifndef DYNO_ANALYZE_TRACE_OUT_H
#define DYNO_ANALYZE_TRACE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <zlib.h>

#include "core/buf.h"

struct trace_out {
	const char *path;
	FILE *f;
	gzFile gz;
};

/* 0, or -1 with "PATH: why" in err */
int trace_out_open(struct trace_out *o, const char *path, struct buf *err);
bool trace_out_write(struct trace_out *o, const void *p, size_t n);
/* b's text to the file once it holds 1 MiB (force: whatever it holds) */
bool trace_out_flush(struct trace_out *o, struct buf *b, bool force);
/* Close; when ok is false (or closing fails: message in err) the file is
 * removed.  0, or -1. */
int trace_out_close(struct trace_out *o, bool ok, struct buf *err);

#endif
