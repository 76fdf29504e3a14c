/*
 * test_trace_select.c - trace_set_select (--iterations, --time-range) on a
 * real six-step trace, against counts made another way from the unselected
 * set: CPU rows by the ProfilerStep rows' own [ts, ts+dur) windows, GPU
 * rows by their CPU partner's window, rows of a time range by their ts;
 * the links stay pairs, the iteration list shrinks, and an empty selection
 * is refused with the set unchanged.
 */
#include <stdio.h>
#include <string.h>

#include "analyze/analysis.h"
#include "test.h"

static void load(struct trace_set *s)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/traces/trace_diff/control/control.json.gz", test_data_dir());
	struct trace_load_opts o = {.threads = 2, .keep_last_step = true};
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_load(s, path, &o, &err) == 0);
	buf_free(&err);
	REQUIRE(s->nranks == 1);
}

/* the [ts, ts+dur) of ProfilerStep#n, from its row */
static bool step_window(const struct trace_rank *r, int n, double *lo, double *hi)
{
	char name[64];
	snprintf(name, sizeof name, "ProfilerStep#%d", n);
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(trace_name(r, i), name) == 0) {
			*lo = r->ts[i];
			*hi = r->ts[i] + r->dur[i];
			return true;
		}
	return false;
}

static bool in_steps(const struct trace_rank *r, double ts, int a, int b)
{
	for (int n = a; n <= b; n++) {
		double lo, hi;
		if (step_window(r, n, &lo, &hi) && ts >= lo && ts < hi)
			return true;
	}
	return false;
}

TEST(trace_select_iterations)
{
	struct trace_set s;
	load(&s);
	const struct trace_rank *r = s.ranks[0];
	REQUIRE(r->niterations == 6 && r->iterations[0] == 1009);
	/* counted from the step windows: CPU rows by their ts, GPU rows by
	 * their launch's */
	size_t cpu = 0, gpu = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!trace_is_gpu(r, i))
			cpu += in_steps(r, r->ts[i], 1010, 1012);
		else if (r->stream[i] > 0 && r->link[i] >= 0)
			gpu += in_steps(r, r->ts[r->link[i]], 1010, 1012);
	}
	CHECK(cpu > 100 && gpu > 100);
	struct trace_select sel = {.iterations = true, .iter_lo = 1010, .iter_hi = 1012};
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_select(&s, &sel, &err) == 0);
	r = s.ranks[0];
	size_t cpu2 = 0, gpu2 = 0;
	for (size_t i = 0; i < r->n; i++) {
		CHECK(r->iteration[i] >= 1010 && r->iteration[i] <= 1012);
		if (trace_is_gpu(r, i))
			gpu2++;
		else
			cpu2++;
		/* links pair kept rows */
		if (r->link[i] >= 0)
			CHECK(r->link[r->link[i]] == (int32_t)i);
	}
	CHECK_INT(cpu2, cpu);
	CHECK_INT(gpu2, gpu);
	REQUIRE(r->niterations == 3);
	CHECK(r->iterations[0] == 1010 && r->iterations[2] == 1012);
	/* what every analysis now sees: the temporal breakdown spans only
	 * these steps' GPU rows */
	struct atable *t = analyze_temporal(&s, NULL);
	CHECK_INT(t->nrows, 1);
	atable_free(t);
	buf_free(&err);
	trace_set_free(&s);
}

TEST(trace_select_time_range)
{
	struct trace_set s;
	load(&s);
	const struct trace_rank *r = s.ranks[0];
	double a = 100000, b = 250000;
	size_t want = 0, n0 = r->n;
	for (size_t i = 0; i < r->n; i++)
		want += r->ts[i] >= a && r->ts[i] < b;
	CHECK(want > 100 && want < n0);
	struct trace_select sel = {.time_range = true, .start = a, .end = b};
	struct buf err = BUF_INIT;
	REQUIRE(trace_set_select(&s, &sel, &err) == 0);
	r = s.ranks[0];
	CHECK_INT(r->n, want);
	for (size_t i = 0; i < r->n; i++)
		CHECK(r->ts[i] >= a && r->ts[i] < b);
	for (size_t i = 0; i < r->nflows; i++)
		CHECK(r->flows[i].ts >= a);
	buf_free(&err);
	trace_set_free(&s);
}

TEST(trace_select_empty_refused)
{
	struct trace_set s;
	load(&s);
	size_t n0 = s.ranks[0]->n;
	struct buf err = BUF_INIT;
	struct trace_select sel = {.iterations = true, .iter_lo = 3, .iter_hi = 5};
	CHECK(trace_set_select(&s, &sel, &err) == -1);
	CHECK(strstr(err.data, "--iterations 3-5; the trace has ProfilerStep#1009..1014") != NULL);
	CHECK_INT(s.ranks[0]->n, n0);
	buf_free(&err);
	buf_init(&err);
	struct trace_select tr = {.time_range = true, .start = 1e12, .end = 2e12};
	CHECK(trace_set_select(&s, &tr, &err) == -1);
	CHECK(strstr(err.data, "the trace spans 0..") != NULL);
	CHECK_INT(s.ranks[0]->n, n0);
	/* no selection: nothing changes */
	struct trace_select none = {0};
	CHECK(trace_set_select(&s, &none, &err) == 0);
	CHECK_INT(s.ranks[0]->n, n0);
	buf_free(&err);
	trace_set_free(&s);
}
