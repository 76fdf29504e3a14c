/*
 * source.h - byte sources for the trace loader: a file or a memory block,
 * plain or gzip (detected by the magic bytes 1f 8b, not by the name), read
 * through one json_read_fn so the JSON pull reader never sees the
 * difference and never needs the whole decompressed text in memory.
 *
 * For a gzip file, inflate (ISA-L) runs in a second thread that fills a small ring
 * of blocks while the parser consumes the previous ones, so a .json.gz
 * loads at about the speed of the slower of the two (zcat vs parse), not
 * their sum.
 */
#ifndef DYNO_TRACE_SOURCE_H
#define DYNO_TRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct trace_source;

/* Open a file.  NULL with a message in errbuf on failure. */
struct trace_source *trace_source_open(const char *path, bool threaded, char *errbuf, size_t errlen);
/* A gzip source opened without its thread, nothing read from it yet:
 * start the thread now (the trace loader decides after the open whether
 * the file is parsed in parts, where every part inflates in its own
 * parser's thread).  Anything else: nothing. */
void trace_source_start_thread(struct trace_source *s);
/* A file's text from byte offset, preceded by the bytes of prefix (copied,
 * at most 16): lets a second JSON reader start in the middle of a
 * document, e.g. "[" + the second half of traceEvents.  A gzip file is
 * inflated from its start, in the caller's thread, and its first offset
 * bytes dropped; an error on the way is reported by the reads. */
struct trace_source *trace_source_open_range(const char *path, uint64_t offset, const char *prefix,
					     char *errbuf, size_t errlen);
/* Size of the file behind a source opened from a path (0 for memory). */
uint64_t trace_source_file_size(const struct trace_source *s);
/* About how many bytes of text the source will yield, for sizing buffers
 * (never for correctness): the file size of a plain file; for a gzip file,
 * the uncompressed size its trailer records (ISIZE, modulo 2^32), taken
 * past 2^32 for a file of 64 MB or more while it is below 4x the
 * compressed size (trace JSON compresses 8-30x), and capped at 64x the
 * compressed size whatever the trailer claims.  0 when unknown. */
uint64_t trace_source_text_size_hint(const struct trace_source *s);

/* A memory block (not copied; must outlive the source). */
struct trace_source *trace_source_mem(const void *data, size_t len);
/* A block of text (never inflated), taken over (freed with the source),
 * behind prefix (copied, at most 16 bytes). */
struct trace_source *trace_source_mem_prefix(char *data, size_t len, const char *prefix);
void trace_source_close(struct trace_source *s);

/* The json_read_fn: ctx is the struct trace_source. */
ssize_t trace_source_read(void *ctx, char *dst, size_t cap, const char **err);

bool trace_source_is_gzip(const struct trace_source *s);

#endif
