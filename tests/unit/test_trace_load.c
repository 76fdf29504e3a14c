/*
 * test_trace_load.c - the trace loader against HTA's own load results
 * (conformance/<case>/results.json stages.load) on every shared trace, and
 * against hand-written bad inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test.h"
#include "test_trace_util.h"
#include "trace/model.h"

TEST(trace_load_conformance_rows)
{
	struct tt_case cases[64];
	size_t n = tt_manifest(cases, 64);
	REQUIRE(n >= 15);
	for (size_t c = 0; c < n; c++) {
		struct json_doc doc;
		REQUIRE(tt_results(cases[c].name, &doc));
		/* the alignment must not depend on the rows we drop */
		struct trace_load_opts red = {.skip_cpu_ops = true};
		struct trace_set rs;
		struct buf rerr = BUF_INIT;
		REQUIRE(trace_set_load(&rs, cases[c].input, &red, &rerr) == 0);
		double hta_min = json_value_f64(json_get(json_get(json_get(json_get(doc.root, "stages"), "load"),
								       "result"),
						      "min_ts_subtracted"));
		if (fabs(rs.min_ts - hta_min) > 0.5)
			test_fail(__FILE__, __LINE__, "%s: reduced load min_ts %.1f, HTA %.1f", cases[c].name,
				  rs.min_ts, hta_min);
		trace_set_free(&rs);
		buf_free(&rerr);
		const struct json_value *load = json_get(json_get(doc.root, "stages"), "load");
		const struct json_value *res = json_get(load, "result");
		const struct json_value *pr = json_get(res, "per_rank");
		REQUIRE(pr && pr->type == JV_OBJECT);
		struct trace_load_opts o = {.keep_python = true};
		struct trace_set set;
		struct buf err = BUF_INIT;
		int rc = trace_set_load(&set, cases[c].input, &o, &err);
		if (rc != 0) {
			test_fail(__FILE__, __LINE__, "%s: %s", cases[c].name, err.data);
			buf_free(&err);
			json_doc_free(&doc);
			continue;
		}
		buf_free(&err);
		if (set.nranks != pr->len)
			test_fail(__FILE__, __LINE__, "%s: %zu ranks, HTA %u", cases[c].name, set.nranks, pr->len);
		double min_ts = json_value_f64(json_get(res, "min_ts_subtracted"));
		if (fabs(min_ts - set.min_ts) > 0.5)
			test_fail(__FILE__, __LINE__, "%s: min_ts %.1f, HTA %.1f", cases[c].name, set.min_ts, min_ts);
		for (size_t k = 0; k < set.nranks && k < pr->len; k++) {
			struct trace_rank *r = set.ranks[k];
			const struct json_member *m = &pr->u.members[k];
			const struct json_value *v = &m->value;
			int64_t rows = -1, gpu = -1;
			json_get_i64(v, "rows_after_load", &rows);
			json_get_i64(v, "rows_gpu_stream_ne_-1", &gpu);
			size_t ngpu = 0;
			for (size_t i = 0; i < r->n; i++)
				ngpu += r->stream[i] != -1;
			char rk[16];
			snprintf(rk, sizeof rk, "%d", r->rank);
			if (strcmp(rk, m->key) != 0 || (int64_t)r->n != rows || (int64_t)ngpu != gpu)
				test_fail(__FILE__, __LINE__, "%s: rank %s rows %zu gpu %zu; HTA rank %s rows %lld gpu %lld",
					  cases[c].name, rk, r->n, ngpu, m->key, (long long)rows, (long long)gpu);
			const char *dt;
			size_t dl;
			if (json_get_str(v, "device_type", &dt, &dl) && strcmp(dt, r->device_type) != 0)
				test_fail(__FILE__, __LINE__, "%s: device %s, HTA %s", cases[c].name, r->device_type, dt);
			const struct json_value *its = json_get(v, "iterations");
			bool same = its && its->len == r->niterations;
			for (size_t i = 0; same && i < its->len; i++) {
				int64_t x;
				same = json_value_i64(&its->u.items[i], &x) && x == r->iterations[i];
			}
			if (!same)
				test_fail(__FILE__, __LINE__, "%s: iterations differ (%zu vs HTA %u)", cases[c].name,
					  r->niterations, its ? its->len : 0);
		}
		trace_set_free(&set);
		json_doc_free(&doc);
	}
}
