/*
 * kernel.c - procfs collector (see kernel.h).
 *
 * Sources, relative to the procfs root: uptime, stat (aggregate and
 * per-CPU lines, ctxt, intr, processes, procs_running/blocked), loadavg,
 * meminfo, net/dev, diskstats; relative to the sysfs root:
 * devices/system/cpu/online.  Every file is kept open and re-read whole
 * with pread() into one reused buffer and parsed in place, so a tick costs
 * one syscall per file.
 *
 * Counters are reported as per-interval deltas between consecutive ticks,
 * as upstream reports them (counter.h decides wrap vs reset).  Things that
 * come and go are keyed by name: a CPU going offline disappears from
 * /proc/stat and stops being reported; when it comes back its first tick
 * only re-establishes the baseline.  A new network interface or disk
 * reports zero deltas in its first tick (upstream's rule for interfaces);
 * a vanished one is forgotten.  Whatever cannot be read is absent, with
 * one log line saying why.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "daemon/collect/collector.h"
#include "daemon/collect/counter.h"

enum { CPU_USER, CPU_NICE, CPU_SYS, CPU_IDLE, CPU_IOWAIT, CPU_IRQ, CPU_SOFTIRQ, CPU_STEAL, CPU_GUEST, CPU_GUEST_NICE, CPU_N };

/* One named set of counters: a CPU, an interface, a disk. */
struct ent {
	char name[32];
	uint64_t v[CPU_N];
	bool seen;
};

struct entset {
	struct ent *e;
	size_t n;
};

struct kernel_collector {
	char *root, *sysroot;
	long hz;
	bool have_cpu;
	uint64_t cpu[CPU_N];
	bool have_stat_ctr;
	uint64_t stat_ctr[3]; /* ctxt, intr, processes */
	struct entset cpus, nets, disks;
	struct buf b;
	struct kernel_options opt;
	int fd[7]; /* SRC_N cached descriptors, -1 when closed */
};

struct kernel_collector *kernel_collector_new(const char *procfs_root, const char *sysfs_root,
					      const struct kernel_options *opt)
{
	struct kernel_collector *k = xcalloc(1, sizeof *k);
	k->root = xstrdup(procfs_root ? procfs_root : "/proc");
	k->sysroot = xstrdup(sysfs_root ? sysfs_root : "/sys");
	long hz = sysconf(_SC_CLK_TCK);
	k->hz = hz > 0 ? hz : 100;
	if (opt)
		k->opt = *opt;
	else
		k->opt.per_cpu = true;
	buf_init(&k->b);
	for (int i = 0; i < 7; i++)
		k->fd[i] = -1;
	return k;
}

void kernel_collector_set_options(struct kernel_collector *k, const struct kernel_options *opt) { k->opt = *opt; }

void kernel_collector_free(struct kernel_collector *k)
{
	if (!k)
		return;
	free(k->root);
	free(k->sysroot);
	free(k->cpus.e);
	free(k->nets.e);
	free(k->disks.e);
	buf_free(&k->b);
	for (int i = 0; i < 7; i++)
		if (k->fd[i] >= 0)
			close(k->fd[i]);
	free(k);
}

/* The files read every tick.  Their descriptors stay open and are re-read
 * with pread() at offset 0 (procfs and sysfs regenerate the contents): it
 * halves the syscalls of a tick and skips the path walk.  A descriptor that
 * fails is closed and reopened next tick. */
enum { SRC_UPTIME, SRC_STAT, SRC_ONLINE, SRC_LOADAVG, SRC_MEMINFO, SRC_NETDEV, SRC_DISKSTATS, SRC_N };
static const struct {
	const char *rel;
	bool sys;
} sources[SRC_N] = {{"uptime", false},  {"stat", false},    {"devices/system/cpu/online", true},
		    {"loadavg", false}, {"meminfo", false}, {"net/dev", false},
		    {"diskstats", false}};
_Static_assert(SRC_N == 7, "kernel_collector.fd has one slot per source");

static bool slurp(struct kernel_collector *k, int src)
{
	if (k->fd[src] < 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", sources[src].sys ? k->sysroot : k->root, sources[src].rel);
		k->fd[src] = open(path, O_RDONLY | O_CLOEXEC);
		if (k->fd[src] < 0) {
			buf_reset(&k->b);
			return false;
		}
	}
	/* no procfs file is 64 MiB: refuse it rather than grow forever */
	int r = buf_pread_all(&k->b, k->fd[src], 64u << 20);
	if (r < 0) {
		close(k->fd[src]);
		k->fd[src] = -1;
	}
	return r == 0;
}

/* Embedded NULs would end our string scans early; make them spaces. */
static void denul(struct buf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (!b->data[i])
			b->data[i] = ' ';
}

static void ents_unsee(struct entset *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->e[i].seen = false;
}

/* Find name; create it (zeroed, *fresh = true) if new. */
static struct ent *ents_get(struct entset *s, const char *name, bool *fresh)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].name, name) == 0) {
			*fresh = false;
			return &s->e[i];
		}
	s->e = xrealloc(s->e, (s->n + 1) * sizeof *s->e);
	struct ent *e = &s->e[s->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	*fresh = true;
	return e;
}

static void ents_sweep(struct entset *s)
{
	size_t w = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].seen)
			s->e[w++] = s->e[i];
	s->n = w;
}

/* Parse up to max unsigned decimal fields separated by blanks; returns the count. */
static int parse_u64s(const char *p, uint64_t *out, int max)
{
	int n = 0;
	while (n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		uint64_t v = 0;
		while (*p >= '0' && *p <= '9') {
			unsigned dgt = (unsigned)(*p++ - '0');
			if (v > (UINT64_MAX - dgt) / 10) { /* overflow: not a kernel counter */
				return n;
			}
			v = v * 10 + dgt;
		}
		out[n++] = v;
	}
	return n;
}

static void collect_uptime(struct kernel_collector *k, struct frame *f)
{
	double up;
	if (slurp(k, SRC_UPTIME) && sscanf(k->b.data, "%lf", &up) == 1 && up >= 0 && up < 1e12)
		frame_int(f, "uptime", (int64_t)up);
	else
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/uptime: uptime unavailable", k->root);
}

/* suffix NULL: the aggregate line (upstream's keys); else one CPU ("cpu3"). */
static void emit_cpu(struct kernel_collector *k, struct frame *f, const char *suffix, const uint64_t *d)
{
	uint64_t total = 0;
	for (int i = CPU_USER; i <= CPU_STEAL; i++)
		total += d[i];
	char key[64];
	double ms_per_tick = 1000.0 / (double)k->hz;
	if (!suffix) {
		if (total == 0)
			return; /* no time passed: a ratio would be 0/0 */
		double t = (double)total;
		frame_float(f, "cpu_u", 100.0 * (double)d[CPU_USER] / t);
		frame_float(f, "cpu_s", 100.0 * (double)d[CPU_SYS] / t);
		frame_float(f, "cpu_i", 100.0 * (double)d[CPU_IDLE] / t);
		/* (t - idle) / t: exact integers divided once, so 3/20 is 15, not
		 * the 15.000000000000002 of 1 - 0.85 */
		frame_float(f, "cpu_util", 100.0 * (double)(total - d[CPU_IDLE]) / t);
		frame_float(f, "cpu_guest", 100.0 * (double)d[CPU_GUEST] / t);
		frame_float(f, "cpu_guest_nice", 100.0 * (double)d[CPU_GUEST_NICE] / t);
		/* the modes upstream's record lacks (user + system + idle alone
		 * can be half of the time): Prometheus only, as exact ratios */
		static const struct {
			const char *key;
			int idx;
		} more[] = {{"@cpu_ratio_nice", CPU_NICE}, {"@cpu_ratio_iowait", CPU_IOWAIT},
			    {"@cpu_ratio_irq", CPU_IRQ},   {"@cpu_ratio_softirq", CPU_SOFTIRQ},
			    {"@cpu_ratio_steal", CPU_STEAL}};
		for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
			frame_float(f, more[i].key, (double)d[more[i].idx] / t);
		static const struct {
			const char *key;
			int idx;
		} ms[] = {{"cpu_u_ms", CPU_USER},  {"cpu_s_ms", CPU_SYS},     {"cpu_n_ms", CPU_NICE},
			  {"cpu_w_ms", CPU_IOWAIT}, {"cpu_x_ms", CPU_IRQ},     {"cpu_y_ms", CPU_SOFTIRQ},
			  {"cpu_z_ms", CPU_STEAL},  {"cpu_guest_ms", CPU_GUEST}, {"cpu_guest_nice_ms", CPU_GUEST_NICE}};
		for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
			frame_int(f, ms[i].key, (int64_t)((double)d[ms[i].idx] * ms_per_tick + 0.5));
		return;
	}
	/* per CPU: the time per mode (idle included, so rates add up) and the utilization */
	static const struct {
		const char *key;
		int idx;
	} ms[] = {{"cpu_u_ms", CPU_USER},  {"cpu_n_ms", CPU_NICE}, {"cpu_s_ms", CPU_SYS},
		  {"cpu_i_ms", CPU_IDLE},  {"cpu_w_ms", CPU_IOWAIT}, {"cpu_x_ms", CPU_IRQ},
		  {"cpu_y_ms", CPU_SOFTIRQ}, {"cpu_z_ms", CPU_STEAL}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		snprintf(key, sizeof key, "%s.%s", ms[i].key, suffix);
		frame_int(f, key, (int64_t)((double)d[ms[i].idx] * ms_per_tick + 0.5));
	}
	if (total) {
		snprintf(key, sizeof key, "cpu_util.%s", suffix);
		frame_float(f, key, 100.0 * (double)(total - d[CPU_IDLE]) / (double)total);
	}
}

/* The largest CPU-time delta (in clock ticks) one tick can really see:
 * 2^40 ticks is 348 years at 100 Hz, more than 4096 CPUs accumulate in a
 * day.  Anything above is a corrupt read (or a fuzzed file), and would
 * overflow the conversion to milliseconds (int64) and the sum of modes. */
#define CPU_MAX_TICK_DELTA (1ull << 40)

/* d = c - prev for every mode; false if any went backwards (reset / hotplug
 * glitch) or jumped by more than can be real: the tick publishes no CPU
 * times for this line rather than a wrong or overflowing number. */
static bool cpu_deltas(const uint64_t *prev, const uint64_t *c, uint64_t *d)
{
	for (int i = 0; i < CPU_N; i++) {
		if (c[i] < prev[i] || c[i] - prev[i] > CPU_MAX_TICK_DELTA)
			return false;
		d[i] = c[i] - prev[i];
	}
	return true;
}

/* A rise beyond CPU_MAX_TICK_DELTA is a corrupt read: its totals are not
 * published either.  A fall is a real restart (hotplug): published. */
static bool cpu_jumped(const uint64_t *prev, const uint64_t *c)
{
	for (int i = 0; i < CPU_N; i++)
		if (c[i] > prev[i] && c[i] - prev[i] > CPU_MAX_TICK_DELTA)
			return true;
	return false;
}

/* The kernel's own per-CPU times since boot, in seconds (clock ticks /
 * USER_HZ), for node_cpu_seconds_total / node_cpu_guest_seconds_total. */
static void emit_cpu_totals(struct kernel_collector *k, struct frame *f, const char *cpu, const uint64_t *c)
{
	static const char *const mode[CPU_N] = {"user",   "nice", "system", "idle",  "iowait",
						"irq",    "softirq", "steal", "guest", "guest_nice"};
	char key[64];
	for (int i = 0; i < CPU_N; i++) {
		snprintf(key, sizeof key, "%ccpu_%s_s.%s", FRAME_EXPORT_ONLY, mode[i], cpu);
		frame_float(f, key, (double)c[i] / (double)k->hz);
	}
}

static void collect_stat(struct kernel_collector *k, struct frame *f)
{
	if (!slurp(k, SRC_STAT)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/stat: CPU metrics unavailable", k->root);
		return;
	}
	denul(&k->b);
	bool got_agg = false, got_ctr[3] = {false, false, false};
	uint64_t ctr[3] = {0, 0, 0};
	int ncpu = 0;
	ents_unsee(&k->cpus);
	char *save = NULL;
	for (char *line = strtok_r(k->b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "cpu", 3) == 0) {
			char *p = line + 3;
			char name[32] = "cpu";
			bool agg = *p == ' ';
			if (!agg) {
				size_t j = 3;
				while (*p >= '0' && *p <= '9' && j < 12)
					name[j++] = *p++;
				name[j] = 0;
				if (j == 3 || *p != ' ')
					continue; /* not "cpuN " */
			}
			uint64_t c[CPU_N] = {0};
			if (parse_u64s(p, c, CPU_N) < 4)
				continue; /* malformed: skip the line, keep the rest */
			if (agg) {
				if (got_agg)
					continue;
				got_agg = true;
				uint64_t d[CPU_N];
				bool ok = k->have_cpu && cpu_deltas(k->cpu, c, d);
				memcpy(k->cpu, c, sizeof c);
				k->have_cpu = true;
				if (ok)
					emit_cpu(k, f, NULL, d);
			} else {
				ncpu++;
				if (!k->opt.per_cpu)
					continue;
				bool fresh;
				struct ent *e = ents_get(&k->cpus, name, &fresh);
				if (e->seen)
					continue; /* duplicate line */
				e->seen = true;
				uint64_t d[CPU_N];
				if (!fresh && cpu_deltas(e->v, c, d))
					emit_cpu(k, f, name, d);
				if (fresh || !cpu_jumped(e->v, c))
					emit_cpu_totals(k, f, name, c);
				memcpy(e->v, c, sizeof c);
			}
			continue;
		}
		static const char *ctr_names[3] = {"ctxt ", "intr ", "processes "};
		for (int i = 0; i < 3; i++) {
			size_t l = strlen(ctr_names[i]);
			if (strncmp(line, ctr_names[i], l) == 0 && parse_u64s(line + l, &ctr[i], 1) == 1)
				got_ctr[i] = true;
		}
		uint64_t g;
		if (strncmp(line, "procs_running ", 14) == 0 && parse_u64s(line + 14, &g, 1) == 1)
			frame_uint(f, "procs_running", g);
		if (strncmp(line, "procs_blocked ", 14) == 0 && parse_u64s(line + 14, &g, 1) == 1)
			frame_uint(f, "procs_blocked", g);
	}
	ents_sweep(&k->cpus); /* offline CPUs are forgotten; they rebaseline when back */
	if (!got_agg)
		LOG_ONCE(LOG_LEVEL_WARN, "%s/stat has no aggregate cpu line", k->root);
	if (ncpu)
		frame_uint(f, "cpus_present", (uint64_t)ncpu);
	static const char *keys[3] = {"ctxt", "intr", "forks"};
	bool all = got_ctr[0] && got_ctr[1] && got_ctr[2];
	for (int i = 0; i < 3; i++) {
		uint64_t d;
		if (got_ctr[i] && k->have_stat_ctr && counter_delta(k->stat_ctr[i], ctr[i], &d))
			frame_uint(f, keys[i], d);
		if (got_ctr[i]) {
			k->stat_ctr[i] = ctr[i];
			char key[16];
			snprintf(key, sizeof key, "%c%s", FRAME_EXPORT_ONLY, keys[i]);
			frame_uint(f, key, ctr[i]);
		}
	}
	k->have_stat_ctr = all;
}

/* Count CPUs in a sysfs cpu list such as "0-3,6,8-9"; -1 if malformed. */
static long cpulist_count(const char *s)
{
	long n = 0;
	while (*s && *s != '\n') {
		char *end;
		errno = 0;
		long a = strtol(s, &end, 10);
		if (end == s || a < 0 || errno)
			return -1;
		long b = a;
		s = end;
		if (*s == '-') {
			s++;
			b = strtol(s, &end, 10);
			if (end == s || b < a || errno)
				return -1;
			s = end;
		}
		if (b - a > 1000000)
			return -1;
		n += b - a + 1;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return n;
}

static void collect_cpus_online(struct kernel_collector *k, struct frame *f)
{
	if (!slurp(k, SRC_ONLINE)) {
		LOG_ONCE(LOG_LEVEL_INFO, "cannot read %s/devices/system/cpu/online: cpus_online unavailable", k->sysroot);
		return;
	}
	long n = cpulist_count(k->b.data);
	if (n > 0)
		frame_uint(f, "cpus_online", (uint64_t)n);
	else
		LOG_ONCE(LOG_LEVEL_WARN, "%s/devices/system/cpu/online: malformed cpu list", k->sysroot);
}

static void collect_load(struct kernel_collector *k, struct frame *f)
{
	double l[3];
	if (slurp(k, SRC_LOADAVG) && sscanf(k->b.data, "%lf %lf %lf", &l[0], &l[1], &l[2]) == 3 && l[0] >= 0 &&
	    l[1] >= 0 && l[2] >= 0) {
		frame_float(f, "load1", l[0]);
		frame_float(f, "load5", l[1]);
		frame_float(f, "load15", l[2]);
	} else {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/loadavg: load unavailable", k->root);
	}
}

static void collect_mem(struct kernel_collector *k, struct frame *f)
{
	if (!slurp(k, SRC_MEMINFO)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/meminfo: memory metrics unavailable", k->root);
		return;
	}
	denul(&k->b);
	static const struct {
		const char *field, *key;
	} map[] = {{"MemTotal:", "mem_total_bytes"},         {"MemFree:", "mem_free_bytes"},
		   {"MemAvailable:", "mem_available_bytes"}, {"Buffers:", "mem_buffers_bytes"},
		   {"Cached:", "mem_cached_bytes"},          {"Shmem:", "mem_shmem_bytes"},
		   {"Dirty:", "mem_dirty_bytes"},            {"SwapTotal:", "swap_total_bytes"},
		   {"SwapFree:", "swap_free_bytes"}};
	uint64_t st = 0, sf = 0;
	bool hst = false, hsf = false;
	for (const char *p = k->b.data; *p;) {
		for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
			size_t fl = strlen(map[i].field);
			if (strncmp(p, map[i].field, fl) != 0)
				continue;
			uint64_t kb;
			if (parse_u64s(p + fl, &kb, 1) == 1 && kb < (UINT64_MAX >> 10)) {
				frame_uint(f, map[i].key, kb << 10);
				if (i == 7)
					st = kb, hst = true;
				if (i == 8)
					sf = kb, hsf = true;
			}
			break;
		}
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	if (hst && hsf && sf <= st)
		frame_uint(f, "swap_used_bytes", (st - sf) << 10);
}

static bool nic_allowed(const struct kernel_collector *k, const char *name)
{
	if (!k->opt.filter_nics || !k->opt.nic_prefixes)
		return true;
	const char *p = k->opt.nic_prefixes;
	while (*p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l && strncmp(name, p, l) == 0)
			return true;
		if (!c)
			break;
		p = c + 1;
	}
	return false;
}

/* Emit n deltas under keys[i].name.  A fresh entity (every one at start,
 * an interface or disk that appeared) has no previous value: its first
 * tick only sets the baseline, the deltas are absent (never 0: nothing was
 * measured). */
static void emit_deltas(struct frame *f, struct ent *e, bool fresh, const uint64_t *v, int n, const char *const *keys,
			const uint64_t *scale)
{
	for (int i = 0; i < n; i++) {
		char key[96];
		snprintf(key, sizeof key, "%s.%s", keys[i], e->name);
		uint64_t d;
		if (!fresh && counter_delta(e->v[i], v[i], &d))
			frame_uint(f, key, scale ? d * scale[i] : d);
		/* else: reset, no delta this tick */
		e->v[i] = v[i];
		/* the kernel's own total (sectors * 512 fits: a sector count
		 * near 2^55 is 16 EiB), for the node_exporter-named families */
		snprintf(key, sizeof key, "%c%s.%s", FRAME_EXPORT_ONLY, keys[i], e->name);
		if (!scale || v[i] <= UINT64_MAX / scale[i])
			frame_uint(f, key, scale ? v[i] * scale[i] : v[i]);
	}
}

static void collect_net(struct kernel_collector *k, struct frame *f)
{
	if (!slurp(k, SRC_NETDEV)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/net/dev: network metrics unavailable", k->root);
		return;
	}
	denul(&k->b);
	ents_unsee(&k->nets);
	static const char *const keys[8] = {"rx_bytes", "rx_packets", "rx_errors", "rx_drops",
					    "tx_bytes", "tx_packets", "tx_errors", "tx_drops"};
	char *save = NULL;
	for (char *line = strtok_r(k->b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue; /* header lines */
		*colon = 0;
		char *name = line;
		while (*name == ' ')
			name++;
		if (!*name || strlen(name) >= 16 || strchr(name, ' ') || strchr(name, '.'))
			continue; /* IFNAMSIZ, as upstream; '.' would break the key's label split */
		if (!nic_allowed(k, name))
			continue;
		uint64_t c[16];
		if (parse_u64s(colon + 1, c, 16) < 12)
			continue;
		uint64_t v[8] = {c[0], c[1], c[2], c[3], c[8], c[9], c[10], c[11]};
		bool fresh;
		struct ent *e = ents_get(&k->nets, name, &fresh);
		if (e->seen)
			continue;
		e->seen = true;
		emit_deltas(f, e, fresh, v, 8, keys, NULL);
	}
	ents_sweep(&k->nets);
}

static bool disk_wanted(const char *name)
{
	/* RAM disks and loop devices are not storage; they only add noise */
	return strncmp(name, "loop", 4) != 0 && strncmp(name, "ram", 3) != 0 && strncmp(name, "zram", 4) != 0;
}

static void collect_disk(struct kernel_collector *k, struct frame *f)
{
	if (!slurp(k, SRC_DISKSTATS)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/diskstats: disk metrics unavailable", k->root);
		return;
	}
	denul(&k->b);
	ents_unsee(&k->disks);
	/* diskstats: major minor name reads merged sectors ms_read writes merged sectors ms_write
	 * in_flight ms_io weighted_ms ...; sectors are 512 bytes whatever the device */
	static const char *const keys[7] = {"disk_reads",         "disk_read_bytes", "disk_read_ms", "disk_writes",
					    "disk_written_bytes", "disk_write_ms",   "disk_io_ms"};
	static const uint64_t scale[7] = {1, 512, 1, 1, 512, 1, 1};
	char *save = NULL;
	for (char *line = strtok_r(k->b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned maj, min;
		char name[33];
		int off = 0;
		if (sscanf(line, " %u %u %32s %n", &maj, &min, name, &off) != 3 || off == 0)
			continue;
		if (strlen(name) >= 32 || strchr(name, '.') || !disk_wanted(name))
			continue;
		uint64_t c[11];
		if (parse_u64s(line + off, c, 11) < 11)
			continue;
		uint64_t v[7] = {c[0], c[2], c[3], c[4], c[6], c[7], c[9]};
		bool fresh;
		struct ent *e = ents_get(&k->disks, name, &fresh);
		if (e->seen)
			continue;
		e->seen = true;
		emit_deltas(f, e, fresh, v, 7, keys, scale);
		char key[64];
		snprintf(key, sizeof key, "disk_io_in_progress.%s", name);
		frame_uint(f, key, c[8]);
	}
	ents_sweep(&k->disks);
}

bool kernel_collect(struct kernel_collector *k, struct frame *f)
{
	size_t before = f->n;
	collect_uptime(k, f);
	collect_stat(k, f);
	collect_cpus_online(k, f);
	collect_load(k, f);
	collect_mem(k, f);
	collect_net(k, f);
	collect_disk(k, f);
	/* keep a big buffer from a one-off huge file from being held forever */
	if (k->b.cap > (1u << 20))
		buf_free(&k->b);
	return f->n > before || k->have_cpu;
}

/* ---------------- the collector table's row (collect/list.h) ---------------- */

struct kernel_config {
	int64_t interval_s;
	struct kernel_options o;
};

#define K(field, name, type, mv, help, lo, hi) MOD_OPT(struct kernel_config, field, name, type, mv, help, lo, hi)
static const struct arg_opt kernel_opts[] = {
	K(interval_s, "kernel_monitor_reporting_interval_s", ARG_INT, "SECONDS", "kernel (procfs) collection period", 1,
	  86400),
	K(o.per_cpu, "per_cpu_metrics", ARG_BOOL, NULL, "also report CPU time per CPU", 0, 0),
	K(o.filter_nics, "filter_nic_interfaces", ARG_BOOL, NULL,
	  "only report interfaces matching --allow_interface_prefixes", 0, 0),
	K(o.nic_prefixes, "allow_interface_prefixes", ARG_STRING, "LIST", "comma-separated interface name prefixes",
	  0, 0),
	{0},
};
#undef K

static const struct kernel_config kernel_defaults = {60, {true, false, "eno,ens,enp,enx,eth"}};

static int64_t kernel_interval(const void *cfg) { return ((const struct kernel_config *)cfg)->interval_s; }

static bool kernel_apply(void **state, const void *old, const void *cfg, const struct collect_env *env,
			 struct buf *err)
{
	(void)old;
	(void)err;
	/* the options point into cfg, which the daemon keeps until the next apply */
	const struct kernel_config *c = cfg;
	if (!*state)
		*state = kernel_collector_new(env->procfs_root, env->sysfs_root, &c->o);
	else
		kernel_collector_set_options(*state, &c->o);
	return true;
}

static enum collect_status kernel_run(void *state, struct frame *f)
{
	return kernel_collect(state, f) ? COLLECT_OK : COLLECT_FAILED;
}

static void kernel_close(void *state) { kernel_collector_free(state); }

static void kernel_describe(const void *cfg, struct buf *out)
{
	buf_printf(out, ", kernel monitor every %llds", (long long)kernel_interval(cfg));
}

/* The keys it emits, for Prometheus and OTLP (metric.h; docs/metrics.md).
 * key, suffixed, kind, scale, prom, label, strip, fixed_label, help, otel, unit, attr, otel_fixed */
#define G MK_GAUGE
#define C MK_COUNTER
#define T MK_TOTAL
static const struct metric_desc kernel_catalog[] = {
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
#define MODE_RATIO(m) {"@cpu_ratio_" m, false, G, 1, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=" m, NULL, NULL, NULL, NULL, NULL}
	MODE_RATIO("nice"),
	MODE_RATIO("iowait"),
	MODE_RATIO("irq"),
	MODE_RATIO("softirq"),
	MODE_RATIO("steal"),
#undef MODE_RATIO
	{"cpu_guest", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=guest", NULL,
	 "system.cpu.utilization", "1", NULL, "cpu.mode=guest"},
	{"cpu_guest_nice", false, G, 0.01, "dynolog_cpu_mode_ratio", NULL, NULL, "mode=guest_nice", NULL,
	 "system.cpu.utilization", "1", NULL, "cpu.mode=guest_nice"},
	{"cpu_util", true, G, 0.01, "dynolog_cpu_core_utilization_ratio", "cpu", "cpu", NULL,
	 "Share of time not idle over the last interval, per CPU (0-1).", "dynolog.cpu.core.utilization", "1",
	 "cpu.logical_number", NULL},
	/* per-interval CPU times: OTLP (and JSON, history); Prometheus gets
	 * the kernel's totals below, as node_exporter publishes them */
#define CPU_MODE(k, m)                                                                                         \
	{k, true, C, 0.001, NULL, "cpu", "cpu", "mode=" m, NULL, "system.cpu.time", "s", "cpu.logical_number",  \
	 "cpu.mode=" m}
	CPU_MODE("cpu_u_ms", "user"),
	CPU_MODE("cpu_n_ms", "nice"),
	CPU_MODE("cpu_s_ms", "system"),
	CPU_MODE("cpu_i_ms", "idle"),
	CPU_MODE("cpu_w_ms", "iowait"),
	CPU_MODE("cpu_x_ms", "irq"),
	CPU_MODE("cpu_y_ms", "softirq"),
	CPU_MODE("cpu_z_ms", "steal"),
#undef CPU_MODE
#define CPU_TOTAL(m, fam, lab)                                                                                 \
	{"@cpu_" m "_s", true, T, 1, fam, "cpu", "cpu", "mode=" lab,                                           \
	 "Seconds the CPUs spent in each mode, since boot (/proc/stat).", NULL, NULL, NULL, NULL}
	CPU_TOTAL("user", "node_cpu_seconds_total", "user"),
	CPU_TOTAL("nice", "node_cpu_seconds_total", "nice"),
	CPU_TOTAL("system", "node_cpu_seconds_total", "system"),
	CPU_TOTAL("idle", "node_cpu_seconds_total", "idle"),
	CPU_TOTAL("iowait", "node_cpu_seconds_total", "iowait"),
	CPU_TOTAL("irq", "node_cpu_seconds_total", "irq"),
	CPU_TOTAL("softirq", "node_cpu_seconds_total", "softirq"),
	CPU_TOTAL("steal", "node_cpu_seconds_total", "steal"),
	/* node_exporter: guest time is also in user (nice), so its own family */
	CPU_TOTAL("guest", "node_cpu_guest_seconds_total", "user"),
	CPU_TOTAL("guest_nice", "node_cpu_guest_seconds_total", "nice"),
#undef CPU_TOTAL
	/* upstream's all-CPU times per interval: JSON and history only; the
	 * per-CPU counters above carry the same information for the others */
#define CPU_AGG(k) {k, false, C, 0.001, NULL, NULL, NULL, NULL, NULL, NULL, "s", NULL, NULL}
	CPU_AGG("cpu_u_ms"), CPU_AGG("cpu_s_ms"), CPU_AGG("cpu_n_ms"), CPU_AGG("cpu_w_ms"), CPU_AGG("cpu_x_ms"),
	CPU_AGG("cpu_y_ms"), CPU_AGG("cpu_z_ms"), CPU_AGG("cpu_guest_ms"), CPU_AGG("cpu_guest_nice_ms"),
#undef CPU_AGG
	{"cpus_online", false, G, 1, "dynolog_cpus_online", NULL, NULL, NULL, "CPUs online (sysfs).",
	 "dynolog.cpu.online", "{cpu}", NULL, NULL},
	{"cpus_present", false, G, 1, "dynolog_cpus_present", NULL, NULL, NULL, "CPUs with a line in /proc/stat (online ones).",
	 "dynolog.cpu.present", "{cpu}", NULL, NULL},
	{"ctxt", false, C, 1, NULL, NULL, NULL, NULL, NULL, "dynolog.context_switches", "{switch}", NULL, NULL},
	{"intr", false, C, 1, NULL, NULL, NULL, NULL, NULL, "dynolog.interrupts", "{interrupt}", NULL, NULL},
	{"forks", false, C, 1, NULL, NULL, NULL, NULL, NULL, "system.process.created", "{process}", NULL, NULL},
	{"@ctxt", false, T, 1, "node_context_switches_total", NULL, NULL, NULL, "Context switches since boot.", NULL,
	 NULL, NULL, NULL},
	{"@intr", false, T, 1, "node_intr_total", NULL, NULL, NULL, "Interrupts serviced since boot.", NULL, NULL,
	 NULL, NULL},
	{"@forks", false, T, 1, "node_forks_total", NULL, NULL, NULL, "Processes and threads created since boot.",
	 NULL, NULL, NULL, NULL},
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
	{k, true, C, 1, NULL, "device", NULL, NULL, NULL, o, u, "network.interface.name", "network.io.direction=" dir}, \
	{"@" k, true, T, 1, p, "device", NULL, NULL, h, NULL, NULL, NULL, NULL}
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
#define DISK(k, kind, sc, p, h, o, u, f)                                                                       \
	{k, true, kind, sc, NULL, "device", NULL, NULL, NULL, o, u, "system.device", f},                          \
	{"@" k, true, T, sc, p, "device", NULL, NULL, h, NULL, NULL, NULL, NULL}
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
#undef DISK
	{"disk_io_in_progress", true, G, 1, "node_disk_io_now", "device", NULL, NULL, "I/Os in flight per disk.",
	 "dynolog.disk.pending", "{operation}", "system.device", NULL},
};
#undef G
#undef C
#undef T

const struct collector collector_kernel = {
	.name = "kernel",
	.catalog = kernel_catalog,
	.ncatalog = sizeof kernel_catalog / sizeof kernel_catalog[0],
	.config = {kernel_opts, sizeof(struct kernel_config), &kernel_defaults},
	.interval_s = kernel_interval,
	.publish_empty = true, /* nothing read at all: the sinks forget the last values */
	.apply = kernel_apply,
	.collect = kernel_run,
	.close = kernel_close,
	.describe = kernel_describe,
};
