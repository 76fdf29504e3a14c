/*
 * fuzz_host_metrics.c - libFuzzer target for the host metrics file of
 * `dyno analyze insights --metrics` (src/analyze/hostmetrics.c, a file from
 * another program): any bytes either give series whose every point is a
 * finite number at a non-negative time, each series named, with counts that
 * add up, or fail with a "NAME: " message; a bad line's report names a line
 * and a byte inside the input.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/hostmetrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct host_metrics m;
	struct buf err = BUF_INIT;
	int rc = host_metrics_parse("m.json", (const char *)data, size, &m, &err);
	if (rc != 0 && strncmp(err.data, "m.json: ", 8) != 0)
		abort();
	if (rc == 0 && m.points == 0)
		abort();
	size_t points = 0;
	for (size_t i = 0; i < m.n; i++) {
		const struct host_series *s = &m.s[i];
		if (!*host_metrics_name(&m, s->key) || s->n == 0)
			abort();
		for (size_t k = 0; k < s->n; k++)
			if (!isfinite(s->v[k]) || s->ms[k] < 0 || s->ms[k] < m.min_ms || s->ms[k] > m.max_ms)
				abort();
		points += s->n;
	}
	if (points != m.points || m.bad_lines > m.lines)
		abort();
	if (m.bad_lines) {
		size_t line = 0, byte = 0;
		if (sscanf(m.first_bad, "line %zu (byte %zu)", &line, &byte) != 2 || line == 0 || byte > size)
			abort();
	}
	host_metrics_free(&m);
	buf_free(&err);
	return 0;
}
