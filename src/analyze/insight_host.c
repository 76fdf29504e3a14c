/*
 * insight_host.c - the rules of `dyno analyze insights` on the host
 * metrics of --metrics (hostmetrics.h): CPU saturation, memory pressure,
 * network throughput and errors, GPU throttling, each over the samples in
 * the trace's window (its Unix time span, widened by one sampling interval
 * at each end so that a short trace still has its covering samples).
 * Thresholds: docs/analyze.md, "insights".  A pass over the matching
 * series per rule.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/insights.h"

/* The trace's window in Unix ms: [lo, hi].  false (with why) when the
 * trace's clock is not Unix time. */
static bool trace_window(const struct insight_eval *e, double *lo, double *hi, struct buf *why)
{
	double end = 0;
	for (size_t k = 0; k < e->view->nranks; k++) {
		const struct trace_rank *r = e->view->ranks[k];
		for (size_t i = 0; i < r->n; i++)
			end = fmax(end, r->ts[i] + r->dur[i]);
	}
	/* Kineto writes Unix µs; before 2001 it is another clock (a trace
	 * relative to baseTimeNanoseconds, or a synthetic one) */
	if (!(e->view->min_ts >= 1e15)) {
		buf_puts(why, "the trace's timestamps are not Unix time: the whole metrics file is used");
		return false;
	}
	*lo = e->view->min_ts / 1e3;
	*hi = (e->view->min_ts + end) / 1e3;
	return true;
}

/* The series of e->metrics matching key (exact, or "key.<label>" when
 * labelled), one at a time: *i is the cursor (start at 0); NULL at the end. */
static const struct host_series *next_series(const struct insight_eval *e, const char *key, bool labelled,
					     size_t *i)
{
	size_t kl = strlen(key);
	for (; *i < e->metrics->n; (*i)++) {
		const struct host_series *s = &e->metrics->s[*i];
		const char *k = host_metrics_name(e->metrics, s->key);
		if (labelled ? strncmp(k, key, kl) == 0 && k[kl] == '.' : strcmp(k, key) == 0) {
			(*i)++;
			return s;
		}
	}
	return NULL;
}

/* The points of s in the window (every point when there is none), into
 * v[] and t[] (ms); returns the count. */
static size_t in_window(const struct host_series *s, bool have, double lo, double hi, double *v, int64_t *t)
{
	double iv = 0;
	if (s->n >= 2) { /* the sampling interval: the median gap */
		double *g = xmalloc((s->n - 1) * sizeof *g);
		for (size_t i = 1; i < s->n; i++)
			g[i - 1] = (double)(s->ms[i] - s->ms[i - 1]);
		iv = fabs(insight_median(g, s->n - 1));
		free(g);
	}
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!have || ((double)s->ms[i] >= lo - iv && (double)s->ms[i] <= hi + iv)) {
			v[n] = s->v[i];
			if (t)
				t[n] = s->ms[i];
			n++;
		}
	return n;
}

/* the label of a "base.label" key ("eth0", a GPU's index); "" when none */
static const char *label_of(const struct insight_eval *e, const struct host_series *s)
{
	const char *k = host_metrics_name(e->metrics, s->key), *dot = strchr(k, '.');
	return dot ? dot + 1 : "";
}

static int need_metrics(const struct insight_eval *e, struct buf *m)
{
	if (e->metrics)
		return 0;
	buf_puts(m, e->metrics_why);
	return -1;
}

/* the host label for messages: "" or "host h1: " */
static void host_prefix(const struct insight_eval *e, const struct host_series *s, struct buf *b)
{
	const char *h = host_metrics_name(e->metrics, s->host);
	if (*h)
		buf_printf(b, "host %s: ", h);
}

static void window_note(struct buf *m, bool have, const struct buf *why)
{
	if (!have)
		buf_printf(m, " (%s)", why->data);
}

static int eval_host_cpu(struct insight_eval *e, struct buf *m)
{
	if (need_metrics(e, m))
		return -1;
	double lo = 0, hi = 0;
	struct buf why = BUF_INIT;
	bool have = trace_window(e, &lo, &hi, &why);
	size_t cur = 0, seen = 0;
	const struct host_series *s;
	while ((s = next_series(e, "cpu_util", false, &cur))) {
		double *v = xmalloc((s->n ? s->n : 1) * sizeof *v);
		size_t n = in_window(s, have, lo, hi, v, NULL);
		if (n == 0) {
			free(v);
			continue;
		}
		seen++;
		double sum = 0, mx = 0;
		for (size_t i = 0; i < n; i++) {
			sum += v[i];
			mx = fmax(mx, v[i]);
		}
		double mean = sum / (double)n;
		if (m->len)
			buf_puts(m, "; ");
		host_prefix(e, s, m);
		buf_printf(m, "CPU utilisation mean %.1f%%, max %.1f%% over %zu samples", mean, mx, n);
		if (mean >= 90) {
			struct buf ev = BUF_INIT;
			host_prefix(e, s, &ev);
			buf_printf(&ev, "the host's CPUs were %.1f%% busy on average (max %.1f%%, %zu samples) during the "
					"trace",
				   mean, mx, n);
			struct insight_finding f = {mean >= 97 ? INSIGHT_HIGH : INSIGHT_MEDIUM, -1, -1, -1, "cpu_util",
						    mean, 90, ev.data};
			insight_add(e, &f);
			buf_free(&ev);
		}
		free(v);
	}
	window_note(m, have, &why);
	if (!seen) {
		buf_truncate(m, 0);
		buf_puts(m, "no cpu_util sample in the trace's window");
	}
	buf_free(&why);
	return seen ? 0 : -1;
}

const struct insight_rule insight_rule_host_cpu = {
	"host-cpu",
	"the host's CPU utilisation (cpu_util) in the trace's window (--metrics)",
	"mean >= 90% (high: >= 97%)",
	"The host's CPUs are saturated: fewer DataLoader workers than cores left for the training processes, pin "
	"threads (OMP_NUM_THREADS, taskset), move other load off the host",
	"cpu_util_pct",
	eval_host_cpu,
};

static int eval_host_memory(struct insight_eval *e, struct buf *m)
{
	if (need_metrics(e, m))
		return -1;
	double lo = 0, hi = 0;
	struct buf why = BUF_INIT;
	bool have = trace_window(e, &lo, &hi, &why);
	size_t cur = 0, seen = 0;
	const struct host_series *av;
	while ((av = next_series(e, "mem_available_bytes", false, &cur))) {
		/* the same host's total and swap */
		size_t c2 = 0, c3 = 0;
		const struct host_series *tot, *sw;
		while ((tot = next_series(e, "mem_total_bytes", false, &c2)) && tot->host != av->host)
			;
		while ((sw = next_series(e, "swap_used_bytes", false, &c3)) && sw->host != av->host)
			;
		if (!tot || tot->n == 0)
			continue;
		double *v = xmalloc((av->n ? av->n : 1) * sizeof *v);
		size_t n = in_window(av, have, lo, hi, v, NULL);
		double total = tot->v[tot->n - 1];
		if (n == 0 || !(total > 0)) {
			free(v);
			continue;
		}
		seen++;
		double mn = INFINITY;
		for (size_t i = 0; i < n; i++)
			mn = fmin(mn, v[i]);
		double pct = 100 * mn / total, swap_growth = 0;
		if (sw && sw->n) {
			double *w = xmalloc(sw->n * sizeof *w);
			size_t nw = in_window(sw, have, lo, hi, w, NULL);
			if (nw >= 2)
				swap_growth = w[nw - 1] - w[0];
			free(w);
		}
		free(v);
		if (m->len)
			buf_puts(m, "; ");
		host_prefix(e, av, m);
		buf_printf(m, "memory available min %.1f%% of %.1f GB, swap used %+.1f MB", pct, total / 1e9,
			   swap_growth / 1e6);
		if (pct < 10 || swap_growth > 0) {
			struct buf ev = BUF_INIT;
			host_prefix(e, av, &ev);
			buf_printf(&ev, "available memory fell to %.1f%% of %.1f GB during the trace", pct, total / 1e9);
			if (swap_growth > 0)
				buf_printf(&ev, "; swap use grew by %.1f MB (the host is swapping)", swap_growth / 1e6);
			struct insight_finding f = {pct < 5 || swap_growth > 0 ? INSIGHT_HIGH : INSIGHT_MEDIUM, -1, -1, -1,
						    "mem_available_bytes", pct, 10, ev.data};
			insight_add(e, &f);
			buf_free(&ev);
		}
	}
	window_note(m, have, &why);
	if (!seen) {
		buf_truncate(m, 0);
		buf_puts(m, "no mem_available_bytes and mem_total_bytes samples in the trace's window");
	}
	buf_free(&why);
	return seen ? 0 : -1;
}

const struct insight_rule insight_rule_host_memory = {
	"host-memory",
	"the host's available memory (mem_available_bytes / mem_total_bytes, minimum) and swap growth "
	"(swap_used_bytes) in the trace's window (--metrics)",
	"available < 10% or swap use growing (high: < 5% or swapping)",
	"The host is short of memory: fewer or lighter DataLoader workers (persistent_workers, smaller "
	"prefetch_factor), smaller pinned buffers, check for a host-memory leak",
	"min_available_pct",
	eval_host_memory,
};

/* one Δ/interval key over the window: sum and peak rate (per second) */
static void delta_rates(const struct host_series *s, bool have, double lo, double hi, double *sum, double *peak,
			size_t *n)
{
	double *v = xmalloc((s->n ? s->n : 1) * sizeof *v);
	int64_t *t = xmalloc((s->n ? s->n : 1) * sizeof *t);
	*n = in_window(s, have, lo, hi, v, t);
	*sum = 0;
	*peak = 0;
	for (size_t i = 0; i < *n; i++) {
		*sum += v[i];
		if (i > 0 && t[i] > t[i - 1])
			*peak = fmax(*peak, v[i] / ((double)(t[i] - t[i - 1]) / 1e3));
	}
	free(v);
	free(t);
}

static int eval_host_network(struct insight_eval *e, struct buf *m)
{
	if (need_metrics(e, m))
		return -1;
	double lo = 0, hi = 0;
	struct buf why = BUF_INIT;
	bool have = trace_window(e, &lo, &hi, &why);
	static const char *const bytes[] = {"rx_bytes", "tx_bytes"};
	static const char *const bad[] = {"rx_errors", "tx_errors", "rx_drops", "tx_drops"};
	size_t seen = 0;
	for (size_t b = 0; b < 2; b++) {
		size_t cur = 0;
		const struct host_series *s;
		while ((s = next_series(e, bytes[b], true, &cur))) {
			const char *dev = label_of(e, s);
			if (strcmp(dev, "lo") == 0)
				continue;
			double sum, peak;
			size_t n;
			delta_rates(s, have, lo, hi, &sum, &peak, &n);
			if (n < 2)
				continue;
			seen++;
			if (m->len)
				buf_puts(m, "; ");
			host_prefix(e, s, m);
			buf_printf(m, "%s %s peak %.1f MB/s", dev, b ? "tx" : "rx", peak / 1e6);
		}
	}
	/* errors and drops in the window */
	double errs = 0;
	const char *worst = NULL;
	for (size_t b = 0; b < 4; b++) {
		size_t cur = 0;
		const struct host_series *s;
		while ((s = next_series(e, bad[b], true, &cur))) {
			double sum, peak;
			size_t n;
			delta_rates(s, have, lo, hi, &sum, &peak, &n);
			if (sum > 0 && strcmp(label_of(e, s), "lo") != 0) {
				errs += sum;
				worst = host_metrics_name(e->metrics, s->key);
			}
		}
	}
	window_note(m, have, &why);
	if (!seen) {
		buf_truncate(m, 0);
		buf_puts(m, "no rx_bytes/tx_bytes samples of an interface in the trace's window");
		buf_free(&why);
		return -1;
	}
	buf_printf(m, "; %.0f errors/drops", errs);
	if (errs > 0) {
		struct buf ev = BUF_INIT;
		buf_printf(&ev, "%.0f network errors or drops during the trace (%s among them); throughput: %s", errs,
			   worst, m->data);
		struct insight_finding f = {INSIGHT_MEDIUM, -1, -1, -1, worst, errs, 1, ev.data};
		insight_add(e, &f);
		buf_free(&ev);
	}
	buf_free(&why);
	return 0;
}

const struct insight_rule insight_rule_host_network = {
	"host-network",
	"network throughput per interface (rx_bytes/tx_bytes, peak per sample) and errors/drops in the trace's window "
	"(--metrics)",
	"any receive/transmit error or drop (throughput is shown as evidence)",
	"Packets are lost or refused: check the NIC and switch (ethtool -S), MTU, and NCCL's transport "
	"(NCCL_IB_*, NCCL_SOCKET_IFNAME); retransmissions slow collectives",
	"errors_and_drops",
	eval_host_network,
};

static int eval_host_gpu(struct insight_eval *e, struct buf *m)
{
	if (need_metrics(e, m))
		return -1;
	double lo = 0, hi = 0;
	struct buf why = BUF_INIT;
	bool have = trace_window(e, &lo, &hi, &why);
	size_t cur = 0, seen = 0;
	const struct host_series *s;
	/* HW slowdown, SW power cap, SW/HW thermal, HW power brake
	 * (NVML's clocks throttle reasons; 0x1 idle and 0x2 application
	 * clocks are not a problem) */
	const uint64_t mask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
	while ((s = next_series(e, "gpu_throttle_reasons", true, &cur))) {
		double *v = xmalloc((s->n ? s->n : 1) * sizeof *v);
		size_t n = in_window(s, have, lo, hi, v, NULL), hit = 0;
		uint64_t bits = 0;
		for (size_t i = 0; i < n; i++)
			if (v[i] >= 0 && v[i] < 1e18 && ((uint64_t)v[i] & mask)) {
				hit++;
				bits |= (uint64_t)v[i] & mask;
			}
		free(v);
		if (n == 0)
			continue;
		seen++;
		const char *gpu = label_of(e, s);
		/* its utilisation, as evidence */
		struct buf util = BUF_INIT;
		buf_printf(&util, "gpu_device_utilization.%s", gpu);
		size_t c2 = 0;
		const struct host_series *u;
		double umean = NAN;
		while ((u = next_series(e, util.data, false, &c2)) && u->host != s->host)
			;
		if (u) {
			double *w = xmalloc((u->n ? u->n : 1) * sizeof *w);
			size_t nw = in_window(u, have, lo, hi, w, NULL);
			double sum = 0;
			for (size_t i = 0; i < nw; i++)
				sum += w[i];
			umean = nw ? sum / (double)nw : NAN;
			free(w);
		}
		double pct = 100 * (double)hit / (double)n;
		if (m->len)
			buf_puts(m, "; ");
		host_prefix(e, s, m);
		buf_printf(m, "GPU %s throttled in %.0f%% of %zu samples, utilisation %.0f%%", gpu, pct, n, umean);
		if (pct >= 10) {
			struct buf ev = BUF_INIT;
			host_prefix(e, s, &ev);
			buf_printf(&ev, "GPU %s was slowed down (throttle reasons 0x%llx: %s%s%s%s) in %.0f%% of the %zu samples "
					"during the trace; utilisation %.0f%%",
				   gpu, (unsigned long long)bits, bits & 0x4 ? "power cap " : "",
				   bits & 0x8 ? "HW slowdown " : "", bits & 0x60 ? "thermal " : "",
				   bits & 0x80 ? "power brake " : "", pct, n, umean);
			struct insight_finding f = {pct >= 50 ? INSIGHT_HIGH : INSIGHT_MEDIUM, -1, -1, -1, gpu, pct,
						    10, ev.data};
			insight_add(e, &f);
			buf_free(&ev);
		}
		buf_free(&util);
	}
	window_note(m, have, &why);
	if (!seen) {
		buf_truncate(m, 0);
		buf_puts(m, "no gpu_throttle_reasons samples in the trace's window (no GPU collector in the metrics)");
	}
	buf_free(&why);
	return seen ? 0 : -1;
}

const struct insight_rule insight_rule_host_gpu = {
	"host-gpu",
	"the GPUs' clock throttle reasons (gpu_throttle_reasons: power cap, thermal, HW slowdown) and utilisation in "
	"the trace's window (--metrics, a daemon with the GPU collector)",
	">= 10% of the samples throttled (high: >= 50%)",
	"A GPU runs below its clocks: check cooling and power limits (nvidia-smi -q -d PERFORMANCE), the power cap, "
	"and whether this GPU is the straggler's",
	"throttled_pct",
	eval_host_gpu,
};
