/*
 * jsonlog.h - the JSON metric log sink.
 *
 * Upstream-compatible mode writes, per frame, the line
 *   time = 2026-11-22T01:25:00.123Z data = {"cpu_i":"97.512",...,"uptime":86400}
 * with keys sorted, integers as JSON numbers and floats as strings with three
 * decimals, exactly as upstream's --use_JSON line after its glog prefix (so
 * scrapers that look for "data = " keep working).  "jsonl" mode writes one
 * plain JSON object per line: {"time":"...","data":{...}} with floats as
 * numbers, for tools that read JSON lines.
 */
#ifndef DYNO_PUBLISH_JSONLOG_H
#define DYNO_PUBLISH_JSONLOG_H

#include <stdbool.h>
#include <stdio.h>

#include "core/buf.h"
#include "daemon/frame.h"

enum jsonlog_mode { JSONLOG_UPSTREAM, JSONLOG_JSONL };

/* Render f (sorted in place) into out. */
void jsonlog_render(struct frame *f, enum jsonlog_mode mode, struct buf *out);

#endif
