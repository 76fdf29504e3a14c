/*
 * catalog.c - the metric catalog (see catalog.h).  Prometheus names follow
 * node_exporter where node_exporter has the metric (so existing dashboards
 * work), dynolog_* otherwise; OTLP names follow the OpenTelemetry system /
 * process semantic conventions where they exist, dynolog.* otherwise.
 */
#include "catalog.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define G MK_GAUGE
#define C MK_COUNTER

/* key, suffixed, kind, scale, prom, label, strip, fixed_label, help, otel, unit, attr, otel_fixed */
static const struct metric_desc cat[] = {
	{"uptime", false, G, 1, "dynolog_host_uptime_seconds", NULL, NULL, NULL, "Seconds since the host booted.",
	 "system.uptime", "s", NULL, NULL},
	{"cpu_util", false, G, 0.01, "dynolog_cpu_utilization_ratio", NULL, NULL, NULL,
	 "Share of CPU time not idle over the last interval, all CPUs (0-1).", "system.cpu.utilization", "1", NULL,
	 NULL},
	{"cpu_u", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=user",
	 "Share of CPU time per mode over the last interval, all CPUs (0-1).", "system.cpu.utilization", "1", NULL,
	 "cpu.mode=user"},
	{"cpu_s", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=system", NULL, "system.cpu.utilization",
	 "1", NULL, "cpu.mode=system"},
	{"cpu_i", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=idle", NULL, "system.cpu.utilization",
	 "1", NULL, "cpu.mode=idle"},
	{"cpu_guest", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=guest", NULL,
	 "system.cpu.utilization", "1", NULL, "cpu.mode=guest"},
	{"cpu_guest_nice", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=guest_nice", NULL,
	 "system.cpu.utilization", "1", NULL, "cpu.mode=guest_nice"},
	{"cpu_util", true, G, 0.01, "dynolog_cpu_core_utilization_ratio", "cpu", "cpu", NULL,
	 "Share of time not idle over the last interval, per CPU (0-1).", "dynolog.cpu.core.utilization", "1",
	 "cpu.logical_number", NULL},
#define CPU_MODE(k, m)                                                                                         \
	{k, true, C, 0.001, "node_cpu_seconds_total", "cpu", "cpu", "mode=" m,                                 \
	 "Seconds the CPUs spent in each mode.", "system.cpu.time", "s", "cpu.logical_number", "cpu.mode=" m}
	CPU_MODE("cpu_u_ms", "user"),
	CPU_MODE("cpu_n_ms", "nice"),
	CPU_MODE("cpu_s_ms", "system"),
	CPU_MODE("cpu_i_ms", "idle"),
	CPU_MODE("cpu_w_ms", "iowait"),
	CPU_MODE("cpu_x_ms", "irq"),
	CPU_MODE("cpu_y_ms", "softirq"),
	CPU_MODE("cpu_z_ms", "steal"),
#undef CPU_MODE
	/* upstream's all-CPU times per interval: JSON and history only; the
	 * per-CPU counters above carry the same information for the others */
#define CPU_AGG(k) {k, false, C, 0.001, NULL, NULL, NULL, NULL, NULL, NULL, "s", NULL, NULL}
	CPU_AGG("cpu_u_ms"), CPU_AGG("cpu_s_ms"), CPU_AGG("cpu_n_ms"), CPU_AGG("cpu_w_ms"), CPU_AGG("cpu_x_ms"),
	CPU_AGG("cpu_y_ms"), CPU_AGG("cpu_z_ms"), CPU_AGG("cpu_guest_ms"), CPU_AGG("cpu_guest_nice_ms"),
#undef CPU_AGG
	{"cpus_online", false, G, 1, "dynolog_cpus_online", NULL, NULL, NULL, "CPUs online (sysfs).",
	 "dynolog.cpu.online", "{cpu}", NULL, NULL},
	{"cpus_present", false, G, 1, "dynolog_cpus_in_stat", NULL, NULL, NULL, "CPUs listed in /proc/stat.",
	 "dynolog.cpu.present", "{cpu}", NULL, NULL},
	{"ctxt", false, C, 1, "node_context_switches_total", NULL, NULL, NULL, "Context switches.",
	 "dynolog.context_switches", "{switch}", NULL, NULL},
	{"intr", false, C, 1, "node_intr_total", NULL, NULL, NULL, "Interrupts serviced.", "dynolog.interrupts",
	 "{interrupt}", NULL, NULL},
	{"forks", false, C, 1, "node_forks_total", NULL, NULL, NULL, "Processes and threads created.",
	 "system.process.created", "{process}", NULL, NULL},
	{"procs_running", false, G, 1, "node_procs_running", NULL, NULL, NULL, "Runnable tasks.",
	 "system.process.count", "{process}", NULL, "process.state=running"},
	{"procs_blocked", false, G, 1, "node_procs_blocked", NULL, NULL, NULL, "Tasks blocked on I/O.",
	 "system.process.count", "{process}", NULL, "process.state=blocked"},
	{"load1", false, G, 1, "node_load1", NULL, NULL, NULL, "1-minute load average.",
	 "system.cpu.load_average.1m", "{thread}", NULL, NULL},
	{"load5", false, G, 1, "node_load5", NULL, NULL, NULL, "5-minute load average.",
	 "system.cpu.load_average.5m", "{thread}", NULL, NULL},
	{"load15", false, G, 1, "node_load15", NULL, NULL, NULL, "15-minute load average.",
	 "system.cpu.load_average.15m", "{thread}", NULL, NULL},
#define MEM(k, p, h, o, f) {k, false, G, 1, p, NULL, NULL, NULL, h, o, "By", NULL, f}
	MEM("mem_total_bytes", "dynolog_memory_total_bytes", "MemTotal of /proc/meminfo.", "system.memory.limit", NULL),
	MEM("mem_free_bytes", "dynolog_memory_free_bytes", "MemFree of /proc/meminfo.", "system.memory.usage",
	    "system.memory.state=free"),
	MEM("mem_available_bytes", "dynolog_memory_available_bytes", "MemAvailable of /proc/meminfo.",
	    "dynolog.memory.available", NULL),
	MEM("mem_buffers_bytes", "dynolog_memory_buffers_bytes", "Buffers of /proc/meminfo.", "system.memory.usage",
	    "system.memory.state=buffers"),
	MEM("mem_cached_bytes", "dynolog_memory_cached_bytes", "Cached of /proc/meminfo.", "system.memory.usage",
	    "system.memory.state=cached"),
	MEM("mem_shmem_bytes", "dynolog_memory_shmem_bytes", "Shmem of /proc/meminfo.", "dynolog.memory.shmem", NULL),
	MEM("mem_dirty_bytes", "dynolog_memory_dirty_bytes", "Dirty of /proc/meminfo.", "dynolog.memory.dirty", NULL),
	MEM("swap_total_bytes", "dynolog_swap_total_bytes", "SwapTotal of /proc/meminfo.", "dynolog.swap.limit",
	    NULL),
	MEM("swap_free_bytes", "dynolog_swap_free_bytes", "SwapFree of /proc/meminfo.", "system.paging.usage",
	    "system.paging.state=free"),
	MEM("swap_used_bytes", "dynolog_swap_used_bytes", "SwapTotal - SwapFree.", "system.paging.usage",
	    "system.paging.state=used"),
#undef MEM
#define NET(k, p, h, o, u, dir)                                                                                \
	{k, true, C, 1, p, "device", NULL, NULL, h, o, u, "network.interface.name", "network.io.direction=" dir}
	NET("rx_bytes", "node_network_receive_bytes_total", "Bytes received per interface.", "system.network.io",
	    "By", "receive"),
	NET("rx_packets", "node_network_receive_packets_total", "Packets received per interface.",
	    "system.network.packets", "{packet}", "receive"),
	NET("rx_errors", "node_network_receive_errs_total", "Receive errors per interface.", "system.network.errors",
	    "{error}", "receive"),
	NET("rx_drops", "node_network_receive_drop_total", "Received packets dropped per interface.",
	    "system.network.dropped", "{packet}", "receive"),
	NET("tx_bytes", "node_network_transmit_bytes_total", "Bytes sent per interface.", "system.network.io", "By",
	    "transmit"),
	NET("tx_packets", "node_network_transmit_packets_total", "Packets sent per interface.",
	    "system.network.packets", "{packet}", "transmit"),
	NET("tx_errors", "node_network_transmit_errs_total", "Transmit errors per interface.",
	    "system.network.errors", "{error}", "transmit"),
	NET("tx_drops", "node_network_transmit_drop_total", "Transmitted packets dropped per interface.",
	    "system.network.dropped", "{packet}", "transmit"),
#undef NET
#define DISK(k, kind, sc, p, h, o, u, f) {k, true, kind, sc, p, "device", NULL, NULL, h, o, u, "system.device", f}
	DISK("disk_reads", C, 1, "node_disk_reads_completed_total", "Reads completed per disk.",
	     "system.disk.operations", "{operation}", "disk.io.direction=read"),
	DISK("disk_writes", C, 1, "node_disk_writes_completed_total", "Writes completed per disk.",
	     "system.disk.operations", "{operation}", "disk.io.direction=write"),
	DISK("disk_read_bytes", C, 1, "node_disk_read_bytes_total", "Bytes read per disk.", "system.disk.io", "By",
	     "disk.io.direction=read"),
	DISK("disk_written_bytes", C, 1, "node_disk_written_bytes_total", "Bytes written per disk.",
	     "system.disk.io", "By", "disk.io.direction=write"),
	DISK("disk_read_ms", C, 0.001, "node_disk_read_time_seconds_total", "Seconds spent reading per disk.",
	     "system.disk.operation_time", "s", "disk.io.direction=read"),
	DISK("disk_write_ms", C, 0.001, "node_disk_write_time_seconds_total", "Seconds spent writing per disk.",
	     "system.disk.operation_time", "s", "disk.io.direction=write"),
	DISK("disk_io_ms", C, 0.001, "node_disk_io_time_seconds_total", "Seconds the disk had I/O in flight.",
	     "system.disk.io_time", "s", NULL),
	DISK("disk_io_in_progress", G, 1, "node_disk_io_now", "I/Os in flight per disk.", "dynolog.disk.pending",
	     "{operation}", NULL),
#undef DISK
#define PROC(k, kind, sc, p, h, o, u, f) {k, true, kind, sc, p, "pid", NULL, NULL, h, o, u, "process.pid", f}
	PROC("proc_cpu_ms", C, 0.001, "dynolog_process_cpu_seconds_total", "CPU seconds (user+system) per tracked process.",
	     "process.cpu.time", "s", NULL),
	PROC("proc_rss_bytes", G, 1, "dynolog_process_resident_memory_bytes", "Resident memory per tracked process.",
	     "process.memory.usage", "By", NULL),
	PROC("proc_threads", G, 1, "dynolog_process_threads", "Threads per tracked process.", "process.thread.count",
	     "{thread}", NULL),
	PROC("proc_read_bytes", C, 1, "dynolog_process_read_bytes_total", "Storage bytes read per tracked process.",
	     "process.disk.io", "By", "disk.io.direction=read"),
	PROC("proc_written_bytes", C, 1, "dynolog_process_written_bytes_total",
	     "Storage bytes written per tracked process.", "process.disk.io", "By", "disk.io.direction=write"),
#undef PROC
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

/* Lookup: entry indices sorted by (key, suffixed), built on first use, so a
 * tick with thousands of keys costs a binary search each. */
static size_t order[sizeof cat / sizeof cat[0]];
static const char *help_of[sizeof cat / sizeof cat[0]];
static bool ready;

static int cmp_entry(const void *a, const void *b)
{
	const struct metric_desc *x = &cat[*(const size_t *)a], *y = &cat[*(const size_t *)b];
	int c = strcmp(x->key, y->key);
	return c ? c : (int)x->suffixed - (int)y->suffixed;
}

static void init(void)
{
	size_t n = sizeof cat / sizeof cat[0];
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		/* a family's HELP is given once, on its first entry */
		help_of[i] = cat[i].help;
		for (size_t j = 0; j < i && !help_of[i]; j++)
			if (cat[j].prom && cat[i].prom && strcmp(cat[j].prom, cat[i].prom) == 0)
				help_of[i] = cat[j].help;
	}
	qsort(order, n, sizeof order[0], cmp_entry);
	ready = true;
}

const struct metric_desc *catalog_find(const char *key, const char **suffix)
{
	if (!ready)
		init();
	const char *dot = strchr(key, '.');
	size_t bl = dot ? (size_t)(dot - key) : strlen(key);
	if (dot && !dot[1])
		return NULL;
	bool suffixed = dot != NULL;
	size_t lo = 0, hi = sizeof cat / sizeof cat[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct metric_desc *m = &cat[order[mid]];
		int c = strncmp(m->key, key, bl);
		if (c == 0)
			c = m->key[bl] ? 1 : (int)m->suffixed - (int)suffixed;
		if (c == 0) {
			*suffix = dot ? dot + 1 : NULL;
			return m;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *catalog_help(const struct metric_desc *d)
{
	if (!ready)
		init();
	const char *h = help_of[d - cat];
	return h ? h : "dynolog metric.";
}

bool catalog_prom_family_taken(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof cat / sizeof cat[0]; i++)
		if (cat[i].prom && strlen(cat[i].prom) == len && memcmp(cat[i].prom, name, len) == 0)
			return true;
	/* the sink's own families */
	return len >= 8 && (strncmp(name, "dynolog_process_", 16) == 0 || strncmp(name, "dynolog_collector_", 18) == 0 ||
			    strncmp(name, "dynolog_build_info", 18) == 0 || strncmp(name, "dynolog_otlp_", 13) == 0 ||
			    strncmp(name, "dynolog_history_", 16) == 0 || strncmp(name, "dynolog_json_", 13) == 0);
}

/* ---------------- the sinks' walk over a frame ---------------- */

static int row_cmp(const void *a, const void *b)
{
	const struct catalog_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_'. */
static void put_sanitized(struct buf *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
			  (i && c >= '0' && c <= '9');
		buf_putc(o, ok ? c : '_');
	}
}

/* The name of an uncatalogued key, appended NUL-terminated to names; false
 * (names unchanged) when the sink must leave the key out. */
static bool generic_name(enum catalog_sink sink, const char *key, size_t baselen, struct buf *names)
{
	if (sink == CATALOG_OTLP) {
		buf_printf(names, "dynolog.%.*s", (int)baselen, key);
	} else {
		size_t start = names->len;
		buf_puts(names, "dynolog_");
		put_sanitized(names, key, baselen);
		if (catalog_prom_family_taken(names->data + start, names->len - start)) {
			/* would duplicate a family's HELP/TYPE and make the page invalid */
			LOG_ONCE(LOG_LEVEL_WARN, "prometheus: key '%s' clashes with a known family; not exported", key);
			buf_truncate(names, start);
			return false;
		}
	}
	buf_putc(names, 0);
	return true;
}

void catalog_rows(const struct frame *f, enum catalog_sink sink, struct catalog_rows *out)
{
	out->row = xmalloc((f->n ? f->n : 1) * sizeof *out->row);
	out->n = 0;
	buf_init(&out->names);
	size_t *genoff = xmalloc((f->n ? f->n : 1) * sizeof *genoff); /* names moves as it grows */
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		if (v->type == FV_STRING)
			continue;
		const char *key = frame_key(f, v), *suffix = NULL;
		const struct metric_desc *d = catalog_find(key, &suffix);
		const char *name = d ? (sink == CATALOG_PROM ? d->prom : d->otel) : NULL;
		if (d && !name)
			continue; /* catalogued, but not exported by this sink */
		if (!d) {
			/* an uncatalogued key (e.g. another collector's): generic gauge */
			const char *dot = strchr(key, '.');
			genoff[out->n] = out->names.len;
			if (!generic_name(sink, key, dot ? (size_t)(dot - key) : strlen(key), &out->names))
				continue;
			suffix = dot && dot[1] ? dot + 1 : NULL;
		}
		struct catalog_row *r = &out->row[out->n++];
		r->name = name;
		r->d = d;
		r->suffix = suffix;
		r->label = suffix;
		if (d && suffix && d->strip && strncmp(suffix, d->strip, strlen(d->strip)) == 0)
			r->label += strlen(d->strip);
		r->value = v->type == FV_INT ? (double)v->v.i : v->type == FV_UINT ? (double)v->v.u : v->v.f;
		if (d)
			r->value *= d->scale;
		r->idx = i;
	}
	for (size_t r = 0; r < out->n; r++)
		if (!out->row[r].name)
			out->row[r].name = out->names.data + genoff[r];
	free(genoff);
	qsort(out->row, out->n, sizeof *out->row, row_cmp);
}

void catalog_rows_free(struct catalog_rows *r)
{
	free(r->row);
	buf_free(&r->names);
	memset(r, 0, sizeof *r);
}
