/* ipc_filter.c - see ipc_filter.h. */
#include "ipc_filter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/ipc/ipc_filter_abi.h"
#include "ipc_filter.skel.h"

#ifndef SO_ATTACH_BPF
#define SO_ATTACH_BPF 50
#endif

struct uid_seen {
	uint32_t uid;
	uint64_t drops; /* the map's count at the last read */
	uint64_t total; /* dropped since attach (survives an LRU eviction) */
};

struct ipc_filter {
	struct ipc_filter_bpf *skel;
	int uid_map;
	int64_t read_at;
	uint64_t dropped;
	struct uid_seen *seen;
	size_t nseen, capseen;
};

/* The one filter attached in this process (the daemon has one IPC
 * endpoint), for the telemetry tick; loop thread only. */
static struct ipc_filter *g_active;

/* libbpf's own messages: the verifier's log on a refusal, which the
 * endpoint sums up in one line; the details only at debug level. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[n - 1] = 0;
	log_debug("libbpf: %s", line);
	return 0;
}

struct ipc_filter *ipc_filter_attach(int fd, const struct ipc_filter_opts *o, struct buf *why)
{
	if (o->uid_rate < 1 || o->proc_rate < 1 || o->uid_burst < 1 || o->proc_burst < 1) {
		buf_printf(why, "budgets must be at least 1");
		return NULL;
	}
	libbpf_set_print(libbpf_log);
	struct ipc_filter_bpf *skel = ipc_filter_bpf__open();
	if (!skel) {
		buf_printf(why, "cannot open the BPF object: %s", strerror(errno));
		return NULL;
	}
	uint64_t ui = (uint64_t)NS_PER_SEC / (uint64_t)o->uid_rate, si = (uint64_t)NS_PER_SEC / (uint64_t)o->proc_rate;
	skel->rodata->uid_interval_ns = ui ? ui : 1;
	skel->rodata->uid_window_ns = skel->rodata->uid_interval_ns * (uint64_t)o->uid_burst;
	skel->rodata->proc_interval_ns = si ? si : 1;
	skel->rodata->proc_window_ns = skel->rodata->proc_interval_ns * (uint64_t)o->proc_burst;
	if (ipc_filter_bpf__load(skel)) {
		int e = errno;
		buf_printf(why, "the kernel refused the BPF program (%s)%s", strerror(e),
			   e == EPERM || e == EACCES ? ": needs root or CAP_BPF" : "");
		ipc_filter_bpf__destroy(skel);
		return NULL;
	}
	int prog = bpf_program__fd(skel->progs.ipc_budget);
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog, sizeof prog) < 0) {
		buf_printf(why, "cannot attach the BPF program to the socket (SO_ATTACH_BPF: %s)", strerror(errno));
		ipc_filter_bpf__destroy(skel);
		return NULL;
	}
	struct ipc_filter *f = xcalloc(1, sizeof *f);
	f->skel = skel;
	f->uid_map = bpf_map__fd(skel->maps.by_uid);
	f->read_at = clock_mono_ns();
	g_active = f;
	return f;
}

static struct uid_seen *seen(struct ipc_filter *f, uint32_t uid)
{
	for (size_t i = 0; i < f->nseen; i++)
		if (f->seen[i].uid == uid)
			return &f->seen[i];
	if (f->nseen == f->capseen) {
		f->capseen = f->capseen ? 2 * f->capseen : 8;
		f->seen = xrealloc(f->seen, f->capseen * sizeof *f->seen);
	}
	f->seen[f->nseen] = (struct uid_seen){.uid = uid};
	return &f->seen[f->nseen++];
}

uint64_t ipc_filter_poll(struct ipc_filter *f, int64_t now_ns, bool force)
{
	if (!f)
		return 0;
	if (!force && now_ns - f->read_at < NS_PER_SEC)
		return f->dropped;
	double secs = (double)(now_ns - f->read_at) / 1e9;
	f->read_at = now_ns;
	uint32_t key, next;
	uint32_t *prev = NULL;
	/* At most the map's size: entries evicted while we walk can make
	 * get_next_key start over. */
	for (int n = 0; n < IPCF_MAX_UIDS && bpf_map_get_next_key(f->uid_map, prev, &next) == 0; n++) {
		key = next;
		prev = &key;
		struct ipcf_bucket b;
		if (bpf_map_lookup_elem(f->uid_map, &key, &b) != 0 || !b.drops)
			continue;
		struct uid_seen *s = seen(f, key);
		/* a count below the last one: the entry was evicted and
		 * created again since, counting from 0 */
		uint64_t delta = b.drops >= s->drops ? b.drops - s->drops : b.drops;
		s->drops = b.drops;
		if (!delta)
			continue;
		s->total += delta;
		f->dropped += delta;
		LOG_RATELIMITED(LOG_LEVEL_WARN,
				"IPC: uid %u is over its datagram budget: %llu datagrams dropped in %.1f s (%llu in all)",
				(unsigned)key, (unsigned long long)delta, secs, (unsigned long long)s->total);
	}
	return f->dropped;
}

void ipc_filter_summary(const struct ipc_filter *f, struct buf *out)
{
	for (size_t i = 0; f && i < f->nseen; i++)
		if (f->seen[i].total)
			buf_printf(out, "%suid %u: %llu", out->len ? ", " : "", (unsigned)f->seen[i].uid,
				   (unsigned long long)f->seen[i].total);
}

void ipc_filter_free(struct ipc_filter *f)
{
	if (!f)
		return;
	if (g_active == f)
		g_active = NULL;
	ipc_filter_bpf__destroy(f->skel);
	free(f->seen);
	free(f);
}

bool ipc_filter_dropped_total(int64_t now_ns, uint64_t *dropped)
{
	if (!g_active)
		return false;
	*dropped = ipc_filter_poll(g_active, now_ns, false);
	return true;
}
