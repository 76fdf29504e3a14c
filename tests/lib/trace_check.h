/*
 * trace_check.h - does a trace file we write follow the rules Perfetto's
 * JSON trace importer relies on?  Used by the tests of every analysis that
 * writes a trace (--write-trace).  The rules checked:
 *   - the file (plain or gzip) is valid JSON by our one JSON reader, an
 *     object with a "traceEvents" array (or a bare array of events), every
 *     event an object with a string "ph";
 *   - complete events (ph "X") have numeric ts and dur >= 0, and the ones on
 *     one (pid, tid) nest: two of them are either disjoint or one holds the
 *     other (times compared in whole ns, as Perfetto stores them);
 *   - counter events (ph "C") have a name, a numeric ts and an "args" object
 *     whose every value is a number.
 * Test code, not part of the project's libraries.
 */
#ifndef DYNO_TESTS_TRACE_CHECK_H
#define DYNO_TESTS_TRACE_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

struct trace_check_stats {
	size_t events, complete, counters;
};

/* True when the text follows the rules; else false with the first broken
 * rule (and the event's position in traceEvents) in why (may be NULL). */
bool trace_check_mem(const char *text, size_t len, struct trace_check_stats *st, struct buf *why);
/* The same for a file, plain or gzip (by its magic bytes). */
bool trace_check_file(const char *path, struct trace_check_stats *st, struct buf *why);

#endif
