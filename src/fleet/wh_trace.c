/*
 * wh_trace.c - one trace file's warehouse figures (wh_trace.h).
 *
 * The trace is loaded like `dyno analyze` loads it (HTA's rules, the
 * last-step filter) and the existing analyses run on it through the
 * runner (src/analyze/run.c): temporal (GPU span and idle time), idle
 * (idle time by cause: host_wait is the share the host made the GPU
 * wait) and kernels with every kernel unfolded (per-type totals, per-name
 * total/mean/min/max).  What no analysis gives -- each kernel's call
 * count and duration percentiles (p50, p95: numpy's linear quantile,
 * stats.h) and the ProfilerStep durations -- comes from one pass over the
 * rank's rows, with the kernel breakdown's own notion of a kernel (a row
 * on a stream, of a type other than OTHER).
 *
 * Cost: a load and three analyses of one rank on the calling thread
 * (the caller runs one trace per core), then the rows sorted by (name,
 * duration) once.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/run.h"
#include "analyze/stats.h"
#include "fleet/wh_trace.h"

/* ---- content hash ---- */

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t fmix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= UINT64_C(0xc4ceb9fe1a85ec53);
	return k ^ (k >> 33);
}

int wh_hash_file(const char *path, char out[33], struct buf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	const uint64_t p1 = UINT64_C(0x9e3779b97f4a7c15), p2 = UINT64_C(0xc2b2ae3d27d4eb4f);
	uint64_t h1 = 0x243f6a8885a308d3, h2 = 0x13198a2e03707344, total = 0;
	size_t cap = 1 << 20;
	unsigned char *b = xmalloc(cap);
	ssize_t n;
	int rc = 0;
	while ((n = read(fd, b, cap)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			buf_printf(err, "%s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
		/* whole words; a short read's tail is padded with zeros, its
		 * length goes into the total (chunks are 1 MiB but for the last) */
		size_t len = (size_t)n, i = 0;
		for (; i + 8 <= len; i += 8) {
			uint64_t w;
			memcpy(&w, b + i, 8);
			h1 = rotl(h1 ^ (w * p1), 31) * p2;
			h2 = rotl(h2 ^ (w * p2), 29) * p1 + h1;
		}
		if (i < len) {
			uint64_t w = 0;
			memcpy(&w, b + i, len - i);
			h1 = rotl(h1 ^ (w * p1), 31) * p2;
			h2 = rotl(h2 ^ (w * p2), 29) * p1 + h1;
		}
		total += len;
	}
	free(b);
	close(fd);
	if (rc == 0) {
		h1 = fmix(h1 ^ total);
		h2 = fmix(h2 ^ rotl(total, 17) ^ h1);
		snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
	}
	return rc;
}

int64_t wh_trace_id(const char *hash)
{
	uint64_t v = 0;
	for (int i = 0; i < 16 && hash[i]; i++) {
		char c = hash[i];
		v = v << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return (int64_t)(v >> 1);
}

int64_t wh_name_id(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return (int64_t)(fmix(h ^ strlen(name)) >> 1);
}

/* ---- the runner's tables ---- */

static long col_of(const struct atable *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].name, name) == 0)
			return (long)c;
	return -1;
}

static double num(struct atable *t, size_t row, long col)
{
	if (col < 0)
		return NAN;
	union acell *c = atable_cell(t, row, (size_t)col);
	return t->cols[col].type == ACOL_INT ? (double)c->i : t->cols[col].type == ACOL_FLOAT ? c->f : NAN;
}

static const char *str(struct atable *t, size_t row, long col)
{
	return col >= 0 && t->cols[col].type == ACOL_STR ? atable_cell(t, row, (size_t)col)->s : NULL;
}

static struct atable *table_named(const struct analyze_results *res, const char *name)
{
	for (size_t i = 0; i < res->n; i++)
		if (res->v[i].t && strcmp(res->v[i].t->name, name) == 0)
			return res->v[i].t;
	return NULL;
}

static void from_temporal(struct wh_trace *t, const struct analyze_results *res)
{
	struct atable *tb = table_named(res, "temporal_breakdown");
	if (!tb || tb->unavailable || tb->nrows != 1)
		return;
	double idle = num(tb, 0, col_of(tb, "idle_time(us)")), span = num(tb, 0, col_of(tb, "kernel_time(us)"));
	if (!isfinite(idle) || !isfinite(span) || span <= 0)
		return;
	t->has_gpu = true;
	t->kernel_us = span;
	t->idle_us = idle;
	t->idle_share = idle / span;
}

static void from_idle(struct wh_trace *t, const struct analyze_results *res)
{
	struct atable *tb = table_named(res, "idle_time_breakdown");
	if (!tb || tb->unavailable || tb->nrows == 0)
		return;
	long cat = col_of(tb, "idle_category"), val = col_of(tb, "idle_time");
	double all = 0, host = 0;
	for (size_t i = 0; i < tb->nrows; i++) {
		const char *c = str(tb, i, cat);
		double v = num(tb, i, val);
		if (!c || !isfinite(v))
			continue;
		all += v;
		if (strcmp(c, "host_wait") == 0)
			host += v;
	}
	if (all <= 0)
		return;
	t->has_host_wait = true;
	t->host_wait_us = host;
	t->host_wait_share = host / all;
}

/* ---- what no analysis gives: calls and percentiles per kernel ---- */

struct krow {
	uint32_t name;
	double dur;
};

static int krow_cmp(const void *a, const void *b)
{
	const struct krow *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->dur < y->dur ? -1 : x->dur > y->dur;
}

struct kstat {
	uint64_t calls;
	double p50, p95;
};

/* Per name id: calls, p50, p95 of the kernel breakdown's rows. */
static struct kstat *kernel_stats(const struct trace_rank *r)
{
	struct kstat *ks = xcalloc(r->strs.n ? r->strs.n : 1, sizeof *ks);
	struct krow *rows = xmalloc((r->n ? r->n : 1) * sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->stream[i] != -1 && trace_ktype(r, i) != TRACE_KT_OTHER)
			rows[n++] = (struct krow){r->name[i], r->dur[i]};
	qsort(rows, n, sizeof *rows, krow_cmp);
	double *d = xmalloc((n ? n : 1) * sizeof *d);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && rows[j].name == rows[i].name)
			d[j - i] = rows[j].dur, j++;
		struct kstat *k = &ks[rows[i].name];
		k->calls = j - i;
		k->p50 = quantile_sorted(d, j - i, 0.5);
		k->p95 = quantile_sorted(d, j - i, 0.95);
		i = j;
	}
	free(d);
	free(rows);
	return ks;
}

static void from_kernels(struct wh_trace *t, const struct analyze_results *res, const struct trace_rank *r)
{
	struct atable *ty = table_named(res, "kernel_type_breakdown");
	if (ty && !ty->unavailable) {
		long l = col_of(ty, "kernel_type"), s = col_of(ty, "sum");
		t->types = xcalloc(ty->nrows ? ty->nrows : 1, sizeof *t->types);
		for (size_t i = 0; i < ty->nrows; i++) {
			const char *label = str(ty, i, l);
			double v = num(ty, i, s);
			if (label && isfinite(v))
				t->types[t->ntypes++] = (struct wh_ktype){xstrdup(label), v};
		}
	}
	struct atable *km = table_named(res, "kernel_metrics");
	if (!km || km->unavailable)
		return;
	struct kstat *ks = kernel_stats(r);
	long cn = col_of(km, "name"), cs = col_of(km, "sum (us)"), cx = col_of(km, "max (us)"),
	     cm = col_of(km, "min (us)"), ca = col_of(km, "mean (us)"), ct = col_of(km, "kernel_type");
	t->kernels = xcalloc(km->nrows ? km->nrows : 1, sizeof *t->kernels);
	for (size_t i = 0; i < km->nrows; i++) {
		const char *name = str(km, i, cn), *type = str(km, i, ct);
		if (!name || !type)
			continue;
		uint32_t id = trace_strtab_find(&r->strs, name, strlen(name));
		if (id == TRACE_NO_STR || ks[id].calls == 0)
			continue; /* "others": not with --all-kernels */
		struct wh_kernel *k = &t->kernels[t->nkernels++];
		k->name = xstrdup(name);
		k->type = strcmp(type, "COMPUTATION") == 0	   ? "COMPUTATION"
			  : strcmp(type, "COMMUNICATION") == 0 ? "COMMUNICATION"
			  : strcmp(type, "MEMORY") == 0	   ? "MEMORY"
							   : "OTHER";
		k->calls = ks[id].calls;
		k->total_us = num(km, i, cs);
		k->mean_us = num(km, i, ca);
		k->min_us = num(km, i, cm);
		k->max_us = num(km, i, cx);
		k->p50_us = ks[id].p50;
		k->p95_us = ks[id].p95;
	}
	free(ks);
}

/* ---- the rest from the rows ---- */

static int iter_cmp(const void *a, const void *b)
{
	const struct wh_iter *x = a, *y = b;
	return x->step < y->step ? -1 : x->step > y->step;
}

static void from_rows(struct wh_trace *t, const struct trace_set *set, const struct trace_rank *r)
{
	t->events = r->stats.events;
	double lo = INFINITY, hi = -INFINITY;
	size_t cap = 0;
	for (size_t i = 0; i < r->n; i++) {
		t->gpu_rows += r->stream[i] != -1;
		if (r->ts[i] < lo)
			lo = r->ts[i];
		if (r->ts[i] + r->dur[i] > hi)
			hi = r->ts[i] + r->dur[i];
		/* ProfilerStep#N: the iterations (a step the filter kept) */
		if (r->kind[i] == TRACE_CAT_USER_ANNOTATION && r->iteration[i] >= 0 &&
		    strncmp(trace_name(r, i), "ProfilerStep#", 13) == 0) {
			if (t->niters == cap) {
				cap = cap ? cap * 2 : 16;
				t->iters = xrealloc(t->iters, cap * sizeof *t->iters);
			}
			t->iters[t->niters++] = (struct wh_iter){r->iteration[i], r->dur[i]};
		}
	}
	if (t->niters > 1) /* none: iters is NULL, which qsort must not get */
		qsort(t->iters, t->niters, sizeof *t->iters, iter_cmp);
	/* a step name twice (two threads): the first */
	size_t w = 0;
	for (size_t i = 0; i < t->niters; i++)
		if (w == 0 || t->iters[w - 1].step != t->iters[i].step)
			t->iters[w++] = t->iters[i];
	t->niters = w;
	if (r->n) {
		t->span_us = hi - lo;
		/* HTA's min_ts (what the rows were aligned on: the first
		 * event it keeps); the file's clock is baseTimeNanoseconds (+
		 * its ts) or the wall clock */
		double start_us = set->min_ts;
		t->has_start = isfinite(start_us);
		/* Kineto's ts are relative to baseTimeNanoseconds, a Unix time
		 * (~1.7e18 ns), and far below it.  When the base and the ts are
		 * both Unix times (after 2001-09-09: 1e18 ns, 1e15 us) the ts
		 * already hold the base (a writer that kept both): it is not
		 * added a second time (dates in the 2080s).  A base that is no
		 * Unix time (a shift, as trace-gen writes) is added. */
		bool absolute = r->has_base_time && r->base_time_ns >= 1000000000000000000LL && start_us >= 1e15;
		t->start_ns = (r->has_base_time && !absolute ? r->base_time_ns : 0) + (int64_t)llround(start_us * 1e3);
	}
	t->has_rank = r->rank_rule == TRACE_RANK_DISTINFO || r->rank_rule == TRACE_RANK_FILENAME;
	t->rank = r->rank;
}

static void fail(struct wh_trace *t, const char *msg)
{
	t->failed = true;
	free(t->error);
	t->error = xstrdup(msg && *msg ? msg : "unreadable");
}

void wh_trace_extract(struct wh_trace *t)
{
	const struct analysis *const run[] = {&analysis_temporal, &analysis_idle, &analysis_kernels};
	/* load what these three need, nothing more */
	struct trace_load_opts lo = {.threads = 1, .skip_cpu_ops = true, .no_flows = true, .no_counters = true};
	for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
		struct trace_load_opts one = {0};
		analysis_load_opts(run[i], &one);
		lo.skip_cpu_ops &= one.skip_cpu_ops;
		lo.no_flows &= one.no_flows;
		lo.no_counters &= one.no_counters;
		lo.keep_last_step |= one.keep_last_step;
		lo.keep_user_annotations |= one.keep_user_annotations;
	}
	struct trace_set set;
	struct buf err = BUF_INIT;
	if (trace_set_load(&set, t->path, &lo, &err) != 0) {
		fail(t, err.data);
		buf_free(&err);
		return;
	}
	buf_free(&err);
	if (set.nranks != 1) {
		fail(t, "not one trace file");
		trace_set_free(&set);
		return;
	}
	const struct trace_rank *r = set.ranks[0];
	if (r->stats.truncated) {
		/* a damaged trace is recorded as failed, not as half a trace */
		fail(t, r->stats.truncated_msg);
		trace_set_free(&set);
		return;
	}
	from_rows(t, &set, r);
	struct analysis_config cfg;
	analysis_config_init(&cfg);
	struct kernel_step_options *ko = analysis_config_opts(&cfg, &analysis_step_kernel_breakdown.opts);
	ko->all_kernels = true;
	struct analyze_run_opts ro = {.config = &cfg, .fmt = AFMT_JSON, .every_table = true, .threads = 1};
	for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
		struct analyze_results res;
		ro.only = run[i];
		analyze_run(&set, NULL, &ro, &res);
		if (run[i] == &analysis_temporal)
			from_temporal(t, &res);
		else if (run[i] == &analysis_idle)
			from_idle(t, &res);
		else
			from_kernels(t, &res, r);
		analyze_results_free(&res);
	}
	analysis_config_free(&cfg);
	trace_set_free(&set);
}

void wh_trace_free(struct wh_trace *t)
{
	free(t->path);
	free(t->job);
	free(t->host);
	free(t->error);
	free(t->iters);
	for (size_t i = 0; i < t->nkernels; i++)
		free(t->kernels[i].name);
	free(t->kernels);
	for (size_t i = 0; i < t->ntypes; i++)
		free(t->types[i].label);
	free(t->types);
	memset(t, 0, sizeof *t);
}
