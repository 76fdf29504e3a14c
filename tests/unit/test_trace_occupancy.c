/*
 * test_trace_occupancy.c - the optional occupancy column (Kineto's "est.
 * achieved occupancy %" kernel arg, trace_load_opts.keep_kernel_occupancy)
 * on a real trace: absent and unallocated unless asked for; when kept,
 * every kernel row has its value and no other row has one; and the
 * after-load steps that rebuild the columns (the last-step filter, the
 * --iterations selection) keep each value with its row, checked against
 * the file's own event ids in an unfiltered load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "trace/model.h"

static void trace_path(char *out, size_t len)
{
	snprintf(out, len, "%s/traces/trace_diff/control/control.json.gz", test_data_dir());
}

/* Every row of r has the occupancy of its event id in the raw load (NaN
 * for rows that have none), and the kernels are exactly the rows that do. */
static void check_rows(const struct trace_rank *raw, const struct trace_rank *r, size_t *kernels)
{
	uint32_t maxidx = 0;
	for (size_t i = 0; i < raw->n; i++)
		maxidx = raw->idx[i] > maxidx ? raw->idx[i] : maxidx;
	float *by_idx = malloc(((size_t)maxidx + 1) * sizeof *by_idx);
	for (size_t i = 0; i <= maxidx; i++)
		by_idx[i] = NAN;
	for (size_t i = 0; i < raw->n; i++)
		by_idx[raw->idx[i]] = raw->occupancy[i];
	size_t wrong = 0, k = 0;
	for (size_t i = 0; i < r->n; i++) {
		float want = r->idx[i] <= maxidx ? by_idx[r->idx[i]] : NAN, got = r->occupancy[i];
		bool kernel = r->kind[i] == TRACE_CAT_KERNEL;
		k += kernel;
		if (!(isnan(want) ? isnan(got) : got == want) || kernel != !isnan(got) ||
		    (kernel && !(got >= 0 && got <= 100)))
			wrong++;
	}
	free(by_idx);
	CHECK_INT(wrong, 0);
	*kernels = k;
}

TEST(trace_occupancy_column_optional)
{
	char path[1024];
	trace_path(path, sizeof path);
	struct buf err = BUF_INIT;
	/* not asked for: no column */
	struct trace_load_opts plain = {.threads = 1};
	struct trace_rank *a = trace_rank_load(path, &plain, &err);
	REQUIRE(a && a->n > 1000);
	CHECK(!a->occupancy_kept);
	CHECK(a->occupancy == NULL);
	trace_rank_free(a);

	struct trace_load_opts keep = {.threads = 1, .keep_kernel_occupancy = true};
	struct trace_rank *raw = trace_rank_load(path, &keep, &err);
	REQUIRE(raw && raw->occupancy_kept && raw->occupancy);
	size_t k_raw;
	check_rows(raw, raw, &k_raw);
	CHECK(k_raw > 1000);

	/* the set: aligned, last step dropped (rows gathered) */
	struct trace_set s;
	REQUIRE(trace_set_load(&s, path, &keep, &err) == 0);
	REQUIRE(s.nranks == 1 && s.filtered);
	size_t k_set;
	check_rows(raw, s.ranks[0], &k_set);
	CHECK(k_set > 0 && k_set < k_raw);

	/* a selection of two steps: gathered again */
	struct trace_select sel = {0};
	REQUIRE(trace_select_parse_iterations("1010-1011", &sel) == 0);
	REQUIRE(trace_set_select(&s, &sel, &err) == 0);
	size_t k_sel;
	check_rows(raw, s.ranks[0], &k_sel);
	CHECK(k_sel > 0 && k_sel < k_set);
	trace_set_free(&s);
	trace_rank_free(raw);
	buf_free(&err);
}
