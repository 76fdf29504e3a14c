/*
 * fuzz_gpu_scrape.c - libFuzzer target for what `dyno warehouse gpu-hours
 * --ingest` parses (src/fleet/wh_gpu.c): `dyno metrics --json` output, one
 * getMetrics answer per line.  The bytes go into an in-memory SQLite
 * warehouse: refused (nothing of them stored: the transaction is rolled
 * back) or stored; either way the database answers the report after.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/wh_gpu.h"

static struct wh_db db;
static bool opened;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf err = BUF_INIT;
	if (!opened) {
		if (wh_db_open(&db, ":memory:", &err) != 0)
			abort();
		opened = true;
	}
	struct wh_rows before, after;
	if (wh_db_exec(&db, "SELECT COUNT(*) FROM gpu_usage", NULL, 0, &before, &err) != 0)
		abort();
	size_t rows = 0;
	int rc = wh_gpu_ingest(&db, (const char *)data, size, "fuzz", "h", &rows, &err);
	if (wh_db_exec(&db, "SELECT COUNT(*) FROM gpu_usage", NULL, 0, &after, &err) != 0)
		abort();
	/* refused: not one row of it stays */
	if (rc != 0 && strcmp(wh_cell(&before, 0, 0), wh_cell(&after, 0, 0)) != 0)
		abort();
	struct atable *t = wh_gpu_report(&db, WH_GPU_BY_MODEL, 0, INT64_MAX / 1000, &err);
	if (!t)
		abort();
	atable_free(t);
	wh_rows_free(&before);
	wh_rows_free(&after);
	buf_free(&err);
	return 0;
}
