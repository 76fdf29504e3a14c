/*
 * kernel.c - procfs collector (see kernel.h).
 *
 * Sources, relative to the procfs root: uptime, stat (aggregate "cpu" line,
 * ctxt, intr), meminfo, net/dev.  CPU and network values are per-interval
 * deltas between consecutive ticks, as upstream reports them; a counter
 * that went backwards (wrap, reset, interface re-created) yields no delta
 * that tick rather than a huge bogus one.
 */
#include "kernel.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"

enum { CPU_USER, CPU_NICE, CPU_SYS, CPU_IDLE, CPU_IOWAIT, CPU_IRQ, CPU_SOFTIRQ, CPU_STEAL, CPU_GUEST, CPU_GUEST_NICE, CPU_N };

struct netdev {
	char name[32];
	uint64_t v[8]; /* rx bytes, packets, errs, drop, tx bytes, packets, errs, drop */
	bool seen;
};

struct kernel_collector {
	char *root;
	bool have_cpu;
	uint64_t cpu[CPU_N];
	struct netdev *nets;
	size_t nnets;
};

struct kernel_collector *kernel_collector_new(const char *procfs_root)
{
	struct kernel_collector *k = xcalloc(1, sizeof *k);
	k->root = xstrdup(procfs_root ? procfs_root : "/proc");
	return k;
}

void kernel_collector_free(struct kernel_collector *k)
{
	if (!k)
		return;
	free(k->root);
	free(k->nets);
	free(k);
}

static bool slurp(struct kernel_collector *k, const char *rel, struct buf *out)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", k->root, rel);
	buf_reset(out);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_append(out, tmp, n);
	fclose(f);
	return true;
}

static void collect_uptime(struct kernel_collector *k, struct frame *f, struct buf *b)
{
	double up;
	if (slurp(k, "uptime", b) && sscanf(b->data, "%lf", &up) == 1 && up >= 0)
		frame_int(f, "uptime", (int64_t)up);
	else
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/uptime: uptime unavailable", k->root);
}

static void collect_cpu(struct kernel_collector *k, struct frame *f, struct buf *b)
{
	if (!slurp(k, "stat", b)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/stat: CPU metrics unavailable", k->root);
		return;
	}
	uint64_t c[CPU_N] = {0};
	char *line = strstr(b->data, "cpu ");
	if (line != b->data && (!line || line[-1] != '\n')) {
		LOG_ONCE(LOG_LEVEL_WARN, "%s/stat has no aggregate cpu line", k->root);
		return;
	}
	int n = sscanf(line + 4, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
				 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		       &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8], &c[9]);
	if (n < 4) {
		LOG_ONCE(LOG_LEVEL_WARN, "%s/stat: malformed cpu line", k->root);
		return;
	}
	bool had = k->have_cpu;
	uint64_t prev[CPU_N];
	memcpy(prev, k->cpu, sizeof prev);
	memcpy(k->cpu, c, sizeof c);
	k->have_cpu = true;
	if (!had)
		return;
	uint64_t d[CPU_N];
	for (int i = 0; i < CPU_N; i++) {
		if (c[i] < prev[i])
			return; /* counter reset: skip this interval */
		d[i] = c[i] - prev[i];
	}
	uint64_t total = 0;
	for (int i = CPU_USER; i <= CPU_STEAL; i++)
		total += d[i];
	if (total == 0)
		return;
	double t = (double)total;
	frame_float(f, "cpu_u", 100.0 * (double)d[CPU_USER] / t);
	frame_float(f, "cpu_s", 100.0 * (double)d[CPU_SYS] / t);
	frame_float(f, "cpu_i", 100.0 * (double)d[CPU_IDLE] / t);
	frame_float(f, "cpu_util", 100.0 * (1.0 - (double)d[CPU_IDLE] / t));
	frame_float(f, "cpu_guest", 100.0 * (double)d[CPU_GUEST] / t);
	frame_float(f, "cpu_guest_nice", 100.0 * (double)d[CPU_GUEST_NICE] / t);
	static const struct {
		const char *key;
		int idx;
	} ms[] = {{"cpu_u_ms", CPU_USER},  {"cpu_s_ms", CPU_SYS},     {"cpu_n_ms", CPU_NICE},
		  {"cpu_w_ms", CPU_IOWAIT}, {"cpu_x_ms", CPU_IRQ},     {"cpu_y_ms", CPU_SOFTIRQ},
		  {"cpu_z_ms", CPU_STEAL},  {"cpu_guest_ms", CPU_GUEST}, {"cpu_guest_nice_ms", CPU_GUEST_NICE}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
		frame_int(f, ms[i].key, (int64_t)(d[ms[i].idx] * 10));
}

static void collect_mem(struct kernel_collector *k, struct frame *f, struct buf *b)
{
	if (!slurp(k, "meminfo", b)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/meminfo: memory metrics unavailable", k->root);
		return;
	}
	static const struct {
		const char *field, *key;
	} map[] = {{"MemTotal:", "mem_total_bytes"},         {"MemFree:", "mem_free_bytes"},
		   {"MemAvailable:", "mem_available_bytes"}, {"Buffers:", "mem_buffers_bytes"},
		   {"Cached:", "mem_cached_bytes"},          {"SwapTotal:", "swap_total_bytes"},
		   {"SwapFree:", "swap_free_bytes"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		size_t fl = strlen(map[i].field);
		for (const char *p = b->data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
			if (strncmp(p, map[i].field, fl) != 0)
				continue;
			unsigned long long kb;
			if (sscanf(p + fl, "%llu", &kb) == 1)
				frame_uint(f, map[i].key, (uint64_t)kb * 1024);
			break;
		}
	}
}

static struct netdev *net_find(struct kernel_collector *k, const char *name)
{
	for (size_t i = 0; i < k->nnets; i++)
		if (strcmp(k->nets[i].name, name) == 0)
			return &k->nets[i];
	return NULL;
}

static void collect_net(struct kernel_collector *k, struct frame *f, struct buf *b)
{
	if (!slurp(k, "net/dev", b)) {
		LOG_ONCE(LOG_LEVEL_WARN, "cannot read %s/net/dev: network metrics unavailable", k->root);
		return;
	}
	for (size_t i = 0; i < k->nnets; i++)
		k->nets[i].seen = false;
	static const char *keys[8] = {"rx_bytes", "rx_packets", "rx_errors", "rx_drops",
				      "tx_bytes", "tx_packets", "tx_errors", "tx_drops"};
	char *save = NULL;
	for (char *line = strtok_r(b->data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue; /* header lines */
		*colon = 0;
		char *name = line;
		while (*name == ' ')
			name++;
		if (!*name || strlen(name) >= 16)
			continue; /* IFNAMSIZ, as upstream */
		uint64_t c[16];
		int n = sscanf(colon + 1,
			       "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			       " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			       &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8], &c[9], &c[10], &c[11]);
		if (n < 12)
			continue;
		uint64_t v[8] = {c[0], c[1], c[2], c[3], c[8], c[9], c[10], c[11]};
		struct netdev *d = net_find(k, name);
		bool fresh = !d;
		if (!d) {
			k->nets = xrealloc(k->nets, (k->nnets + 1) * sizeof *k->nets);
			d = &k->nets[k->nnets++];
			memset(d, 0, sizeof *d);
			snprintf(d->name, sizeof d->name, "%s", name);
		}
		d->seen = true;
		for (int i = 0; i < 8; i++) {
			char key[64];
			snprintf(key, sizeof key, "%s.%s", keys[i], name);
			if (fresh)
				frame_uint(f, key, 0); /* upstream: a new interface reports zero deltas */
			else if (v[i] >= d->v[i])
				frame_uint(f, key, v[i] - d->v[i]);
			/* else: counter wrapped or reset; no delta this tick */
			d->v[i] = v[i];
		}
	}
	/* forget vanished interfaces */
	size_t w = 0;
	for (size_t i = 0; i < k->nnets; i++)
		if (k->nets[i].seen)
			k->nets[w++] = k->nets[i];
	k->nnets = w;
}

bool kernel_collect(struct kernel_collector *k, struct frame *f)
{
	struct buf b = BUF_INIT;
	size_t before = f->n;
	collect_uptime(k, f, &b);
	collect_cpu(k, f, &b);
	collect_mem(k, f, &b);
	collect_net(k, f, &b);
	buf_free(&b);
	return f->n > before || k->have_cpu;
}
