/*
 * wh_gpu.h - GPU-hours in the trace warehouse (wh_gpu.c): the daemons'
 * per-job and per-user GPU accounting scraped with `dyno metrics --json`,
 * stored per sample and rolled up per job, user or model.  Declarations
 * only.
 */
#ifndef DYNO_CLI_WH_GPU_H
#define DYNO_CLI_WH_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/table.h"
#include "fleet/wh_db.h"

/* The samples of text (name: for messages; host: the host of an answer
 * without a label) into db, in one transaction; *rows: rows offered (a
 * row already there is not added twice).  0, or -1 with "NAME: line N:
 * what" or the database's message in err. */
int wh_gpu_ingest(struct wh_db *db, const char *text, size_t len, const char *name, const char *host,
		  size_t *rows, struct buf *err);
/* Job job's model label (replacing one it had). */
int wh_gpu_label(struct wh_db *db, const char *job, const char *model, struct buf *err);

enum wh_gpu_by { WH_GPU_BY_JOB, WH_GPU_BY_USER, WH_GPU_BY_MODEL };
/* GPU hours and energy per job, user or model, samples in [from_s, to_s). */
struct atable *wh_gpu_report(struct wh_db *db, enum wh_gpu_by by, int64_t from_s, int64_t to_s, struct buf *err);

#endif
