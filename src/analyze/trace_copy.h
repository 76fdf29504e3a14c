/*
 * trace_copy.h - a rank's trace file copied to another file with text
 * added at byte offsets (src/analyze/trace_copy.c): what every
 * `--write-trace OUT` writes (counters: counter events at the end of
 * traceEvents; critical-path: an arg in some events and flow events at the
 * end).  OUT is gzip when its name ends in ".gz".  Declarations only.
 */
#ifndef DYNO_ANALYZE_TRACE_COPY_H
#define DYNO_ANALYZE_TRACE_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* One traceEvents element the scan was asked about (by its position). */
struct tcopy_event {
	uint32_t idx;       /* position in traceEvents (in: ascending) */
	bool found;         /* the element exists and is an object */
	uint64_t args_end;  /* offset of the '}' closing its "args" object, UINT64_MAX: none */
	bool args_empty;    /* that object has no member */
	bool args_other;    /* "args" is there but no object: nothing can go into it, and a
			     * second "args" would be a duplicate key: leave the event alone */
	bool no_members;    /* the element is {}: text added at obj_end takes no comma */
	uint64_t obj_end;   /* offset of the '}' closing the element */
	bool has_ts, has_dur;
	double ts, dur;     /* as in the file (no rounding, no alignment) */
	bool device;        /* args.device is a number >= 0 (a GPU event) */
	/* pid and tid as JSON text to write back verbatim: a number's text or
	 * a string literal; offsets into the scan's text buffer */
	size_t pid_off, pid_len, tid_off, tid_len;
};

/* What one pass over the file found. */
struct tcopy_scan {
	uint64_t events_end; /* offset of the ']' closing traceEvents */
	bool nonempty;       /* traceEvents has an element */
	struct buf text;     /* pid / tid texts of the events asked about */
};

/* Reads the whole file (validating it: a file that is not a JSON object
 * with a traceEvents array is refused, "PATH: byte N: what" in err) and
 * fills ev[0..nev) (ascending idx).  0, or -1. */
int tcopy_scan(const char *path, struct tcopy_event *ev, size_t nev, struct tcopy_scan *sc, struct buf *err);
void tcopy_scan_free(struct tcopy_scan *sc);

/* The output, plain or gzip. */
struct tcopy_sink;
/* Create path for writing, gzip when gz (tcopy_out_gz: OUT's name ends in
 * ".gz").  NULL with "PATH: why" in err. */
struct tcopy_sink *tcopy_sink_open(const char *path, bool gz, struct buf *err);
bool tcopy_out_gz(const char *out);
/* Close s (NULL: nothing); ok tells whether everything written so far
 * went well.  0, or -1 with "PATH: write failed: why" in err when ok and
 * closing (gzip's last block, the disk) failed.  The file is left in place
 * either way: the caller removes it. */
int tcopy_sink_close(struct tcopy_sink *s, bool ok, const char *path, struct buf *err);
bool tcopy_write(struct tcopy_sink *s, const void *p, size_t n);
/* b's text to the sink once it holds 1 MiB (force: whatever it holds). */
bool tcopy_flush(struct tcopy_sink *s, struct buf *b, bool force);

/* Text to add before byte off of the input (ascending off). */
struct tcopy_insert {
	uint64_t off;
	const char *text;
	size_t len;
};

/* Writes the text added at tail_off (the end of traceEvents), streaming
 * it to s; first_comma: the array already has elements. */
typedef bool (*tcopy_tail_fn)(void *ctx, struct tcopy_sink *s, bool first_comma);

/* Copies in to out with ins[] and, at sc->events_end, tail's text.  0, or
 * -1 with "FILE: what" in err (out is then removed). */
int tcopy_write_trace(const char *in, const char *out, const struct tcopy_scan *sc, const struct tcopy_insert *ins,
		      size_t nins, tcopy_tail_fn tail, void *ctx, struct buf *err);

/* Can OUT be created (its directory exists and is writable)?  0, or -1
 * with "--write-trace OUT: ..." in err: asked before any loading. */
int tcopy_check_out(const char *out, struct buf *err);

#endif
