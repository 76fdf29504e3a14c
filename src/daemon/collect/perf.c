/*
 * perf.c - perf_event collector (see perf.h).
 *
 * Per online CPU, two counting groups opened system-wide (pid = -1):
 * hardware (leader: cycles; members: instructions, cache misses, LLC read
 * misses, dTLB read misses) and software (page faults, CPU migrations).
 * Groups keep the counters of one CPU scheduled together and let one read()
 * fetch them all, so a tick costs two reads per CPU.  Counts are scaled by
 * time_enabled / time_running (multiplexing) and summed over CPUs.
 *
 * What cannot be opened is absent: on a VM without a PMU the hardware group
 * fails with ENOENT/EOPNOTSUPP, with perf_event_paranoid > 0 and no
 * CAP_PERFMON everything fails with EACCES; both are said once and nothing
 * is published for those events.  A member the PMU lacks (no LLC event,
 * say) is simply left out of its group.
 */
#include "perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "daemon/collect/collector.h"

enum { EV_CYCLES, EV_INSTRUCTIONS, EV_CACHE_MISSES, EV_LLC_MISSES, EV_DTLB_MISSES, EV_PAGE_FAULTS, EV_MIGRATIONS, EV_N };

static const struct {
	const char *key;
	uint32_t type;
	uint64_t config;
	int group; /* 0 hardware, 1 software */
} events[EV_N] = {
	[EV_CYCLES] = {"perf_cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0},
	[EV_INSTRUCTIONS] = {"perf_instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0},
	[EV_CACHE_MISSES] = {"perf_cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0},
	[EV_LLC_MISSES] = {"perf_llc_misses", PERF_TYPE_HW_CACHE,
			   PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				   (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
			   0},
	[EV_DTLB_MISSES] = {"perf_dtlb_misses", PERF_TYPE_HW_CACHE,
			    PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				    (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
			    0},
	[EV_PAGE_FAULTS] = {"perf_page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1},
	[EV_MIGRATIONS] = {"perf_cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
};

struct pgroup {
	int leader;     /* fd, -1 if the group could not be opened */
	int nmem;       /* events in the group, leader included */
	int ev[EV_N];   /* event index of each member, in read order */
	int fds[EV_N];
	bool have;      /* prev holds a reading */
	double prev[EV_N], prev_run;
};

struct perf_collector {
	struct pgroup *g; /* ncpu * 2 */
	int ncpu;
	bool present[EV_N];
};

static int perf_open(uint32_t type, uint64_t config, int cpu, int group_fd)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.disabled = group_fd < 0; /* members follow the leader */
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void open_group(struct pgroup *g, int which, int cpu, int *err)
{
	g->leader = -1;
	g->nmem = 0;
	for (int e = 0; e < EV_N; e++) {
		if (events[e].group != which)
			continue;
		int fd = perf_open(events[e].type, events[e].config, cpu, g->leader);
		if (fd < 0) {
			if (g->leader < 0 && !*err)
				*err = errno;
			if (g->leader < 0 && (e == EV_CYCLES || which == 1))
				return; /* no leader: the whole group is unavailable */
			continue;
		}
		if (g->leader < 0)
			g->leader = fd;
		g->ev[g->nmem] = e;
		g->fds[g->nmem++] = fd;
	}
}

static void close_group(struct pgroup *g)
{
	for (int i = 0; i < g->nmem; i++)
		close(g->fds[i]);
	g->nmem = 0;
	g->leader = -1;
}

static const char *why(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV: return "no PMU for these events (a VM?)";
	case EACCES:
	case EPERM: return "not permitted (kernel.perf_event_paranoid > 0 and no CAP_PERFMON)";
	default: return strerror(err);
	}
}

struct perf_collector *perf_collector_new(void)
{
	struct perf_collector *p = xcalloc(1, sizeof *p);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	p->ncpu = n > 0 && n < 65536 ? (int)n : 1;
	p->g = xcalloc((size_t)p->ncpu * 2, sizeof *p->g);
	int herr = 0, serr = 0, hw = 0, sw = 0;
	for (int c = 0; c < p->ncpu; c++) {
		open_group(&p->g[2 * c], 0, c, &herr);
		open_group(&p->g[2 * c + 1], 1, c, &serr);
		for (int k = 0; k < 2; k++) {
			struct pgroup *g = &p->g[2 * c + k];
			if (g->leader < 0)
				continue;
			if (k)
				sw++;
			else
				hw++;
			for (int i = 0; i < g->nmem; i++)
				p->present[g->ev[i]] = true;
			ioctl(g->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
		}
	}
	if (!hw)
		log_warn("perf monitor: hardware counters unavailable: %s; publishing no instruction/cycle/cache "
			 "metrics", why(herr ? herr : ENOENT));
	if (!sw)
		log_warn("perf monitor: software counters unavailable: %s", why(serr ? serr : ENOENT));
	if (hw || sw)
		log_info("perf monitor: counting on %d CPUs (%s%s%s)", hw > sw ? hw : sw, hw ? "hardware" : "",
			 hw && sw ? " + " : "", sw ? "software" : "");
	return p;
}

bool perf_collector_has(const struct perf_collector *p, const char *key)
{
	for (int e = 0; e < EV_N; e++)
		if (strcmp(events[e].key, key) == 0)
			return p->present[e];
	return false;
}

void perf_collector_free(struct perf_collector *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->ncpu * 2; i++)
		close_group(&p->g[i]);
	free(p->g);
	free(p);
}

void perf_collect(struct perf_collector *p, struct frame *f)
{
	/* deltas per group, then summed: a CPU that misses a tick (offline)
	 * only loses its own interval instead of skewing the total */
	double sum[EV_N] = {0}, run_ns = 0;
	bool got[EV_N] = {false};
	for (int i = 0; i < p->ncpu * 2; i++) {
		struct pgroup *g = &p->g[i];
		if (g->leader < 0)
			continue;
		uint64_t buf[3 + EV_N];
		ssize_t n = read(g->leader, buf, sizeof buf);
		if (n < (ssize_t)(3 * sizeof(uint64_t)) || buf[0] != (uint64_t)g->nmem ||
		    (size_t)n < (3 + (size_t)g->nmem) * sizeof(uint64_t)) {
			g->have = false; /* CPU went offline, or a short read: rebaseline */
			continue;
		}
		if (buf[2] == 0)
			continue; /* never scheduled: no information, not zero */
		double scale = (double)buf[1] / (double)buf[2];
		bool ok = g->have;
		for (int m = 0; m < g->nmem; m++) {
			double v = (double)buf[3 + m] * scale;
			if (ok && v >= g->prev[m]) {
				sum[g->ev[m]] += v - g->prev[m];
				got[g->ev[m]] = true;
			}
			g->prev[m] = v;
		}
		if (ok && i % 2 == 0 && (double)buf[2] >= g->prev_run)
			run_ns += (double)buf[2] - g->prev_run;
		g->prev_run = (double)buf[2];
		g->have = true;
	}
	for (int e = 0; e < EV_N; e++)
		if (got[e])
			frame_uint(f, events[e].key, (uint64_t)(sum[e] + 0.5));
	if (got[EV_INSTRUCTIONS] && got[EV_CYCLES] && sum[EV_CYCLES] > 0)
		frame_float(f, "ipc", sum[EV_INSTRUCTIONS] / sum[EV_CYCLES]);
	/* upstream's keys: instructions (cycles) x 1000 / running ns, averaged
	 * over CPUs (wire-protocols 7.2); ours are per interval, not since start */
	if (got[EV_INSTRUCTIONS] && got[EV_CYCLES] && run_ns > 0) {
		frame_float(f, "mips", sum[EV_INSTRUCTIONS] * 1000.0 / run_ns);
		frame_float(f, "mega_cycles_per_second", sum[EV_CYCLES] * 1000.0 / run_ns);
	}
}

/* ---------------- the collector table's row (collect/list.h) ---------------- */

struct perf_config {
	bool enable;
	int64_t interval_s;
};

static const struct arg_opt perf_opts[] = {
	MOD_OPT(struct perf_config, enable, "enable_perf_monitor", ARG_BOOL, NULL,
		"count instructions/cycles/cache misses with perf_event", 0, 0),
	MOD_OPT(struct perf_config, interval_s, "perf_monitor_reporting_interval_s", ARG_INT, "SECONDS",
		"perf collection period", 1, 86400),
	{0},
};

static const struct perf_config perf_defaults = {false, 60};

static bool perf_enabled(const void *cfg) { return ((const struct perf_config *)cfg)->enable; }
static int64_t perf_interval(const void *cfg) { return ((const struct perf_config *)cfg)->interval_s; }

static bool perf_apply(void **state, const void *old, const void *cfg, const struct collect_env *env,
		       struct buf *err)
{
	(void)old;
	(void)cfg;
	(void)env;
	(void)err;
	/* reopened on every reload: counts CPUs that came online since (the
	 * next tick sets a new baseline) */
	perf_collector_free(*state);
	*state = perf_collector_new();
	return true;
}

static enum collect_status perf_run(void *state, struct frame *f)
{
	size_t before = f->n;
	perf_collect(state, f);
	/* the first tick only sets the baseline: nothing read yet */
	return f->n > before ? COLLECT_OK : COLLECT_FAILED;
}

static void perf_close(void *state) { perf_collector_free(state); }

static void perf_describe(const void *cfg, struct buf *out)
{
	buf_printf(out, ", perf monitor every %llds", (long long)perf_interval(cfg));
}

/* The keys it emits, for Prometheus and OTLP (metric.h; docs/metrics.md).
 * key, suffixed, kind, scale, prom, label, strip, fixed_label, help, otel, unit, attr, otel_fixed */
#define G MK_GAUGE
#define C MK_COUNTER
static const struct metric_desc perf_catalog[] = {
#define PERF(k, p, h, o, u) {k, false, C, 1, p, NULL, NULL, NULL, h, o, u, NULL, NULL}
	PERF("perf_cycles", "dynolog_perf_cycles_total", "CPU cycles, all CPUs (perf_event).", "dynolog.perf.cycles",
	     "{cycle}"),
	PERF("perf_instructions", "dynolog_perf_instructions_total", "Instructions retired, all CPUs (perf_event).",
	     "dynolog.perf.instructions", "{instruction}"),
	PERF("perf_cache_misses", "dynolog_perf_cache_misses_total", "Cache misses, all CPUs (perf_event).",
	     "dynolog.perf.cache_misses", "{miss}"),
	PERF("perf_llc_misses", "dynolog_perf_llc_read_misses_total", "Last-level cache read misses (perf_event).",
	     "dynolog.perf.llc_misses", "{miss}"),
	PERF("perf_dtlb_misses", "dynolog_perf_dtlb_read_misses_total", "Data TLB read misses (perf_event).",
	     "dynolog.perf.dtlb_misses", "{miss}"),
	PERF("perf_page_faults", "dynolog_perf_page_faults_total", "Page faults, all CPUs (perf_event software).",
	     "dynolog.perf.page_faults", "{fault}"),
	PERF("perf_cpu_migrations", "dynolog_perf_cpu_migrations_total", "Task CPU migrations (perf_event software).",
	     "dynolog.perf.cpu_migrations", "{migration}"),
#undef PERF
	{"ipc", false, G, 1, "dynolog_perf_ipc", NULL, NULL, NULL, "Instructions per cycle over the last interval.",
	 "dynolog.perf.ipc", "1", NULL, NULL},
	{"mips", false, G, 1, "dynolog_perf_mips", NULL, NULL, NULL,
	 "Millions of instructions per second per CPU over the last interval (upstream key).", "dynolog.perf.mips",
	 "{instruction}/us", NULL, NULL},
	{"mega_cycles_per_second", false, G, 1, "dynolog_perf_mega_cycles_per_second", NULL, NULL, NULL,
	 "Millions of cycles per second per CPU over the last interval (upstream key).", "dynolog.perf.mhz", "MHz",
	 NULL, NULL},
};
#undef G
#undef C

const struct collector collector_perf = {
	.name = "perf",
	.catalog = perf_catalog,
	.ncatalog = sizeof perf_catalog / sizeof perf_catalog[0],
	.config = {perf_opts, sizeof(struct perf_config), &perf_defaults},
	.enabled = perf_enabled,
	.interval_s = perf_interval,
	.apply = perf_apply,
	.collect = perf_run,
	.close = perf_close,
	.describe = perf_describe,
};
