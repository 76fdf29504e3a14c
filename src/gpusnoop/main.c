/*
 * main.c - the gpusnoop program (run as `dyno gpusnoop`, or by the daemon's
 * gpusnoop RPC): watches one process's CUDA calls with eBPF uprobes,
 * without touching the process - memory (--events mem, the default),
 * kernel launches and synchronisations (launch, sync), PyTorch's caching
 * allocator (--torch) - and at the end (duration over, Ctrl-C, or the
 * process exited) prints a report; optionally a live table each second
 * and a Chrome-trace timeline.
 *
 * Steps: find the probed functions in the files of /proc/PID/maps (plus
 * --lib), per file, in .dynsym and .symtab (probes.c), each probe past a
 * leading endbr64 (probe_set_place); load gpusnoop.bpf.c with the pid
 * filter; attach an entry probe (and where needed a return probe) per
 * function and file, the launch probes for a window of each period
 * (--launch-sample, sampler.c; detached between); with --trace, drain the ring buffer into
 * the timeline (timeline.c, through its own ledger and sync table); read
 * the launch counters each second (and with the live table the kernel's
 * totals); at the end read the kernel's maps - every allocation still
 * live, the sync stacks' totals, the counters - into the ledger (ledger.c)
 * and the sync table (calls.c), and report (report.c).
 *
 * Cost while running: the probes (see gpusnoop.bpf.c); nothing per call
 * without --trace; with it one wakeup per 100 ms or per batch of records,
 * one hash operation and a ~150-byte timeline line per allocation, free or
 * sync; with the live table, one read of the totals and one frame a
 * second (live.c).
 *
 * Exit statuses: 0 report printed; 2 usage; 3 no such process; 4 not
 * permitted (BPF refused: not root, no CAP_BPF/CAP_PERFMON; or the process's
 * maps unreadable) or the kernel lacks uprobes; 5 no probed function in any
 * mapped file or --lib; 1 anything else.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/args.h"
#include "gpusnoop/calls.h"
#include "gpusnoop/ledger.h"
#include "gpusnoop/live.h"
#include "gpusnoop/probes.h"
#include "gpusnoop/report.h"
#include "gpusnoop/sampler.h"
#include "gpusnoop/symbolize.h"
#include "gpusnoop/timeline.h"
#include "gpusnoop.skel.h"

enum { EXIT_USAGE = 2, EXIT_NO_PROCESS = 3, EXIT_BPF_REFUSED = 4, EXIT_NO_CUDA = 5 };

static volatile sig_atomic_t interrupted;
static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpusnoop: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return code;
}

/* libbpf's own messages: only with --verbose, and never its debug chatter */
static bool verbose;
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* does this process hold what loading BPF takes (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)? */
static bool have_bpf_caps(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	if (syscall(SYS_capget, &h, d))
		return false;
#define HAS(c) ((d[(c) / 32].effective >> ((c) % 32)) & 1)
	return HAS(CAP_SYS_ADMIN) || (HAS(39 /* CAP_BPF */) && HAS(38 /* CAP_PERFMON */));
#undef HAS
}

/*
 * The ring buffer's records feed the timeline alone (--trace): its own
 * ledger (the outstanding bytes at each change, per device) and sync
 * table (validation).  The report and the live table read the kernel's
 * maps instead (read_live, read_syncs), so a record lost costs the
 * timeline a point and nothing else.
 */
struct run {
	struct ledger ledger;
	struct calls calls;
	struct timeline tl;
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct run *r = ctx;
	uint32_t type = 0;
	if (len >= sizeof(type))
		memcpy(&type, data, sizeof(type));
	if (type == EV_SYNC) {
		struct snoop_event ev;
		if (calls_sync_event(&r->calls, data, len, &ev) == 1)
			timeline_sync(&r->tl, &ev);
	} else if (ledger_event(&r->ledger, data, len) == 1) {
		timeline_bytes(&r->tl, &r->ledger, r->ledger.last_ts_ns);
		if (type == EV_ALLOC) { /* validated by the ledger */
			struct snoop_event ev;
			memcpy(&ev, data, sizeof(ev));
			timeline_alloc(&r->tl, &ev);
		}
	}
	return 0;
}

static int stack_of(void *ctx, int32_t id, uint64_t *ips, int max)
{
	uint64_t v[64] = {0};
	if (bpf_map_lookup_elem(*(int *)ctx, &id, v))
		return 0;
	int k = 0;
	while (k < max && k < 64 && v[k])
		ips[k] = v[k], k++;
	return sym_plausible_frames(ips, k);
}

/* a per-CPU array of n u64 counters, summed into out[] */
static void read_percpu(int fd, uint32_t n, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return;
	uint64_t *v = xcalloc((size_t)ncpu, sizeof(*v));
	for (uint32_t f = 0; f < n; f++) {
		if (bpf_map_lookup_elem(fd, &f, v))
			continue;
		uint64_t t = 0;
		for (int i = 0; i < ncpu; i++)
			t += v[i];
		out[f] = t;
	}
	free(v);
}

static void read_calls(int fd, struct calls *c)
{
	read_percpu(fd, FN_COUNT, c->count);
}

/*
 * Every entry of a BPF hash map, in batches (one system call per 1024
 * entries rather than two per entry: the live map may hold a million),
 * gathered first and then given to fn one by one.  Key by key where the
 * kernel cannot batch (an error before the end: what the batches gave is
 * dropped, so nothing comes twice).  Entries may come and go meanwhile
 * (the live table reads while the probes run): each one read is whole.
 */
static void map_each(int fd, size_t ksz, size_t vsz, void (*fn)(void *ctx, const void *k, const void *v), void *ctx)
{
	enum { BATCH = 1024 };
	size_t esz = ksz + vsz, n = 0, cap = BATCH;
	char *all = xcalloc(cap, esz), *keys = xcalloc(BATCH, ksz), *vals = xcalloc(BATCH, vsz);
	uint64_t in = 0, out = 0;
	bool first = true, whole = false;
	for (;;) {
		uint32_t got = BATCH;
		DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, o);
		int r = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &got, &o);
		int e = r ? errno : 0;
		if (r && e != ENOENT)
			break;
		for (uint32_t i = 0; i < got && i < BATCH; i++) {
			if (n == cap)
				all = xrealloc(all, (cap *= 2) * esz);
			memcpy(all + n * esz, keys + i * ksz, ksz);
			memcpy(all + n * esz + ksz, vals + i * vsz, vsz);
			n++;
		}
		if (r) { /* ENOENT: the last batch */
			whole = true;
			break;
		}
		in = out;
		first = false;
	}
	if (whole) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, all + i * esz, all + i * esz + ksz);
	} else {
		char *k = xcalloc(1, ksz), *nk = xcalloc(1, ksz), *v = xcalloc(1, vsz);
		void *prev = NULL;
		while (bpf_map_get_next_key(fd, prev, nk) == 0) {
			if (bpf_map_lookup_elem(fd, nk, v) == 0)
				fn(ctx, nk, v);
			memcpy(k, nk, ksz);
			prev = k;
		}
		free(k), free(nk), free(v);
	}
	free(all);
	free(keys);
	free(vals);
}

/* a live allocation from the kernel's map into a ledger (which validates it) */
static void live_entry(void *ctx, const void *kp, const void *vp)
{
	struct live_key k;
	struct live_val v;
	memcpy(&k, kp, sizeof(k));
	memcpy(&v, vp, sizeof(v));
	struct snoop_event ev = {.type = EV_ALLOC, .fn = v.fn, .stack_id = v.stack_id, .ts_ns = v.ts_ns,
				 .ptr = k.ptr, .size = v.size, .space = k.space, .device = v.device};
	ledger_event(ctx, &ev, sizeof(ev));
}

/* the kernel's state of the allocations: the counters, every allocation
 * still live, the peaks; into l (fresh) */
static void read_allocations(struct gpusnoop_bpf *skel, const uint64_t *counters, struct ledger *l)
{
	map_each(bpf_map__fd(skel->maps.live), sizeof(struct live_key), sizeof(struct live_val), live_entry, l);
	l->allocs = counters[CNT_ALLOCS];
	l->frees = counters[CNT_FREES];
	l->unmatched_frees = counters[CNT_UNMATCHED_FREES];
	l->replaced = counters[CNT_REPLACED];
	int fd = bpf_map__fd(skel->maps.space_totals);
	for (uint32_t s = 0; s < SPACE_COUNT; s++) {
		struct space_total t;
		if (bpf_map_lookup_elem(fd, &s, &t) == 0 && t.peak > l->peak[s])
			l->peak[s] = t.peak;
	}
}

struct groups {
	struct ledger_leak *g;
	size_t n, cap;
};

static void stack_entry(void *ctx, const void *kp, const void *vp)
{
	struct groups *gs = ctx;
	struct stack_key k;
	struct stack_total v;
	memcpy(&k, kp, sizeof(k));
	memcpy(&v, vp, sizeof(v));
	/* a stack whose allocations are all freed keeps its entry, at 0;
	 * a negative total (a free and its allocation read mid-update) is
	 * left out too; a live 0-byte allocation is shown */
	if (v.count <= 0 || v.bytes < 0 || k.space >= SPACE_COUNT || k.stack_id < -1)
		return;
	if (gs->n == gs->cap) {
		gs->cap = gs->cap ? 2 * gs->cap : 64;
		gs->g = xrealloc(gs->g, gs->cap * sizeof(*gs->g));
	}
	gs->g[gs->n++] = (struct ledger_leak){.stack_id = k.stack_id, .space = k.space, .bytes = (uint64_t)v.bytes,
					      .count = (uint64_t)v.count};
}

static int by_bytes(const void *a, const void *b)
{
	const struct ledger_leak *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* the live table's state, once a second: the outstanding bytes per space
 * and per (stack, space), from the kernel's totals - not a walk of every
 * live allocation */
static void read_live(struct gpusnoop_bpf *skel, struct ledger *l, struct groups *gs)
{
	int fd = bpf_map__fd(skel->maps.space_totals);
	for (uint32_t s = 0; s < SPACE_COUNT; s++) {
		struct space_total t;
		if (bpf_map_lookup_elem(fd, &s, &t) == 0)
			l->outstanding[s] = t.bytes > 0 ? (uint64_t)t.bytes : 0;
	}
	gs->n = 0;
	map_each(bpf_map__fd(skel->maps.stack_totals), sizeof(struct stack_key), sizeof(struct stack_total),
		 stack_entry, gs);
	qsort(gs->g, gs->n, sizeof(*gs->g), by_bytes);
}

static void sync_entry(void *ctx, const void *kp, const void *vp)
{
	int32_t id;
	struct sync_total v;
	memcpy(&id, kp, sizeof(id));
	memcpy(&v, vp, sizeof(v));
	struct sync_group g = {.stack_id = id, .fn_mask = v.fn_mask, .count = v.count, .total_ns = v.total_ns,
			       .max_ns = v.max_ns};
	calls_sync_group(ctx, &g);
}

/* the sync stacks' totals as the kernel keeps them */
static void read_syncs(struct gpusnoop_bpf *skel, struct calls *c)
{
	calls_sync_reset(c);
	map_each(bpf_map__fd(skel->maps.sync_totals), sizeof(int32_t), sizeof(struct sync_total), sync_entry, c);
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One probe (entry or return) of a found function; NULL with errno set. */
static struct bpf_link *attach_probe(struct gpusnoop_bpf *skel, const struct probe_file *f, uint32_t k, bool ret)
{
	const struct probe_def *p = &probe_defs[k];
	struct bpf_program *prog;
	if (!ret)
		prog = p->prog == PROG_ALLOC    ? skel->progs.alloc_entry
		       : p->prog == PROG_FREE   ? skel->progs.free_entry
		       : p->prog == PROG_LAUNCH ? skel->progs.launch_entry
		       : p->prog == PROG_DEV    ? skel->progs.dev_entry
						: skel->progs.sync_entry;
	else
		prog = p->prog == PROG_ALLOC    ? skel->progs.alloc_return
		       : p->prog == PROG_LAUNCH ? skel->progs.launch_return
		       : p->prog == PROG_DEV    ? skel->progs.dev_return
						: skel->progs.sync_return;
	/* pid -1 and a filter in the program: a pid-bound uprobe follows one thread on some kernels */
	struct bpf_uprobe_opts o = {.sz = sizeof(o), .bpf_cookie = p->cookie, .retprobe = ret};
	return bpf_program__attach_uprobe_opts(prog, -1, f->path, f->off[k], &o);
}

/*
 * The launch probes under --launch-sample (sampler.h): attached for a
 * window, detached between.  A detach waits for the kernel's grace period
 * (~0.1 s each); the window's end must not wait for it (the counting has
 * stopped: launch_on), so each link is destroyed on its own thread, all at
 * once, and the threads are joined before the next window or at the end.
 */
struct launch_probes {
	struct gpusnoop_bpf *skel;
	const struct probe_set *set;
	struct sampler *samp;     /* told when the counting starts and stops */
	int n;                    /* links per window */
	struct bpf_link **links;  /* this window's */
	pthread_t *dying;         /* threads destroying the last window's */
	int ndying;
};

static void *destroy_link(void *l)
{
	bpf_link__destroy(l);
	return NULL;
}

static void launch_join(struct launch_probes *lp)
{
	for (int i = 0; i < lp->ndying; i++)
		pthread_join(lp->dying[i], NULL);
	lp->ndying = 0;
}

/* Attaches every launch probe (the outer cudaLaunchKernel before the
 * driver's), then counts from now; false with a message (errno the
 * attach's), what was attached detached again. */
static bool launch_attach(struct launch_probes *lp, struct buf *err)
{
	launch_join(lp);
	int m = 0;
	for (uint32_t k = 0; k < FN_COUNT; k++)
		for (int i = 0; i < lp->set->n; i++) {
			const struct probe_file *f = &lp->set->f[i];
			if (!f->off[k] || probe_defs[k].group != GROUP_LAUNCH)
				continue;
			for (int r = 0; r <= (int)probe_defs[k].ret; r++) {
				struct bpf_link *l = m < lp->n ? attach_probe(lp->skel, f, k, r) : NULL;
				if (!l) {
					int e = m < lp->n ? errno : EINVAL;
					buf_printf(err, "cannot attach a %s to %s in %s: %s", r ? "uretprobe" : "uprobe",
						   probe_defs[k].name, f->path, m < lp->n ? strerror(e) : "more probes than counted");
					while (m > 0) {
						bpf_link__destroy(lp->links[--m]);
						lp->links[m] = NULL;
					}
					errno = e; /* the attach's, for the exit status */
					return false;
				}
				lp->links[m++] = l;
			}
		}
	lp->n = m;
	lp->skel->data->launch_on = 1;
	sampler_mark(lp->samp, true, now_ns(CLOCK_MONOTONIC));
	return true;
}

/* Stops the counting at t (now), the detaching on threads (or here, if no thread). */
static void launch_detach(struct launch_probes *lp, int64_t t)
{
	lp->skel->data->launch_on = 0;
	sampler_mark(lp->samp, false, t);
	launch_join(lp);
	for (int i = 0; i < lp->n; i++) {
		if (!lp->links[i])
			continue;
		if (pthread_create(&lp->dying[lp->ndying], NULL, destroy_link, lp->links[i]) == 0)
			lp->ndying++;
		else
			bpf_link__destroy(lp->links[i]);
		lp->links[i] = NULL;
	}
}

/* A point of the timeline's launch rate at now: the launches counted since
 * the last point over the time the probes counted (without sampling, all
 * of it); none before 50 ms of counting.  Moves the last point on. */
static void launch_point(struct timeline *tl, const struct calls *c, const struct sampler *samp, int64_t now,
			 uint64_t *prev_n, int64_t *prev_on)
{
	uint64_t n = calls_sum(c, FN_CUDA_LAUNCH_KERNEL, FN_CUDA_GRAPH_LAUNCH);
	int64_t on = sampler_on_ns(samp, now);
	if (on - *prev_on < 50000000)
		return;
	timeline_launches(tl, (uint64_t)now, (double)(n - *prev_n) * 1e9 / (double)(on - *prev_on));
	*prev_n = n;
	*prev_on = on;
}

#define FAIL(...)                          \
	do {                               \
		rc = fail(__VA_ARGS__);    \
		goto out;                  \
	} while (0)

int main(int argc, char **argv)
{
	int64_t pid = 0, top = 10;
	double duration = 0;
	const char *libs = NULL, *format = "table", *trace = NULL, *events = "mem";
	int64_t ringbuf_kb = 8192, max_live = 1 << 20, trace_min = TIMELINE_MIN_BYTES, trace_max = TIMELINE_MAX_INSTANTS;
	int64_t launch_pct = 10;
	double launch_period = 10;
	bool torch = false, live_flag = false, at_entry = false;
	const struct arg_opt opts[] = {
		{"pid", 'p', ARG_INT, &pid, "PID", "the process to watch", 1, INT_MAX, NULL},
		{"duration", 'd', ARG_DOUBLE, &duration, "S", "stop after S seconds (0: at Ctrl-C or when the process exits)", 0, 0, NULL},
		{"events", 'e', ARG_STRING, &events, "mem,launch,sync", "what to watch: memory calls, kernel launches, synchronisations", 0, 0, NULL},
		{"torch", 0, ARG_BOOL, &torch, NULL, "also PyTorch's caching allocator (block-level allocations, by symbol)", 0, 0, NULL},
		{"lib", 0, ARG_STRING, &libs, "PATH[:PATH]", "also probe these libraries (e.g. one loaded later)", 0, 0, NULL},
		{"format", 0, ARG_STRING, &format, "table|json", "report format", 0, 0, NULL},
		{"trace", 0, ARG_STRING, &trace, "OUT.json", "write a Chrome-trace timeline", 0, 0, NULL},
		{"trace-min-bytes", 0, ARG_INT, &trace_min, "N", "an instant event in the timeline per allocation of at least N bytes (default 16 MiB)", 1, INT64_MAX, NULL},
		{"trace-max-instants", 0, ARG_INT, &trace_max, "N", "at most N such events (default 10000; the rest are counted)", 0, INT64_MAX, NULL},
		{"live", 0, ARG_BOOL, &live_flag, NULL, "a live table each second even when stdout is not a terminal (stderr with --format json)", 0, 0, NULL},
		{"launch-sample", 0, ARG_INT, &launch_pct, "PCT", "launch probes attached PCT% of the time, the counts scaled (default 10; 100: every launch)", 1, 100, NULL},
		{"launch-period", 0, ARG_DOUBLE, &launch_period, "S", "--launch-sample's period: a window at the start of every S seconds (default 10)", 0, 0, NULL},
		{"top", 0, ARG_INT, &top, "N", "stacks in the live table and sync stacks in the report", 1, 10000, NULL},
		{"ringbuf-kb", 0, ARG_INT, &ringbuf_kb, "KB", "ring buffer size (the timeline's records), a power of two >= the page size", 4, 1 << 20, NULL},
		{"max-live", 0, ARG_INT, &max_live, "N", "allocations followed at once (default 1048576; beyond, counted and said)", 1, 1 << 26, NULL},
		{"probe-at-entry", 0, ARG_BOOL, &at_entry, NULL, "probes on each function's first byte, even an endbr64 the kernel must single-step (default: after it)", 0, 0, NULL},
		{"verbose", 'v', ARG_BOOL, &verbose, NULL, "libbpf's messages, the mapped files skipped as not ELF, where each probe sits", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "gpusnoop",
		.usage = "dyno gpusnoop --pid PID [--duration S] [--events mem,launch,sync] [--torch] [--lib PATH[:PATH]]\n"
			 "                     [--format table|json] [--trace OUT.json [--trace-min-bytes N]] [--live] [--top N]\n"
			 "       dyno gpusnoop --hostname H --pid PID --duration S --log-file OUT [...]  (a daemon runs it)",
		.description = "Watch a process's CUDA calls with eBPF uprobes (root or CAP_BPF+CAP_PERFMON): memory never\n"
			       "freed, grouped by stack; kernel launches; the stacks that synchronise most.\n"
			       "Exit: 0 report, 2 usage, 3 no such process, 4 not permitted (BPF refused) or no uprobes,\n"
			       "5 no CUDA library mapped.",
		.opts = opts,
		.min_pos = 0,
		.max_pos = 0,
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	bool json = strcmp(format, "json") == 0;
	unsigned groups = 0;
	struct buf perr = BUF_INIT;
	if (!json && strcmp(format, "table") != 0)
		rc = fail(EXIT_USAGE, "--format: expected table or json, got '%s'", format);
	else if (!probe_parse_events(events, &groups, &perr))
		rc = fail(EXIT_USAGE, "%s", perr.data);
	else if (!pid)
		rc = fail(EXIT_USAGE, "--pid is required (see --help)");
	else if (duration < 0)
		rc = fail(EXIT_USAGE, "--duration must be >= 0");
	else if (!(launch_period >= 0.2 && launch_period <= 3600))
		rc = fail(EXIT_USAGE, "--launch-period must be within 0.2 and 3600 s");
	else if ((ringbuf_kb & (ringbuf_kb - 1)) != 0 || ringbuf_kb * 1024 < getpagesize())
		rc = fail(EXIT_USAGE, "--ringbuf-kb: %" PRId64 " is not a power of two of at least the page size", ringbuf_kb);
	buf_free(&perr);
	if (rc >= 0) {
		args_free(&a);
		return rc;
	}
	if (torch)
		groups |= GROUP_TORCH;
	/* the thread's current device: only the timeline's per-device bytes use
	 * it, and cudaGetDevice is called often (PyTorch: per operation) */
	if (trace && (groups & GROUP_MEM))
		groups |= GROUP_DEVICE;

	/* everything main holds, released at out: whatever the exit */
	int pidfd = -1, nlinks = 0;
	struct gpusnoop_bpf *skel = NULL;
	struct probe_set set = {0};
	struct bpf_link **links = NULL;
	struct launch_probes lp = {0};
	struct sampler samp = {0};
	struct run run = {0};
	ledger_init(&run.ledger);
	calls_init(&run.calls);
	/* what the kernel's maps hold: the report's (and the live table's) */
	struct ledger state;
	struct calls syncs;
	struct groups live_groups = {0};
	ledger_init(&state);
	calls_init(&syncs);
	struct ring_buffer *rb = NULL;
	struct symbolizer *sym = NULL;
	struct buf msg = BUF_INIT;
	rc = 0;

	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0)
		FAIL(EXIT_NO_PROCESS, "no process %" PRId64 ": %s", pid, strerror(errno));

	/* BPF first: without the right to load it nothing else matters */
	libbpf_set_print(libbpf_log);
	skel = gpusnoop_bpf__open();
	if (!skel)
		FAIL(1, "cannot open the BPF object: %s", strerror(errno));
	skel->rodata->target_tgid = (uint32_t)pid;
	skel->rodata->want_records = trace != NULL;
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)ringbuf_kb * 1024);
	bpf_map__set_max_entries(skel->maps.live, (uint32_t)max_live);
	if (gpusnoop_bpf__load(skel)) {
		int e = errno;
		if ((e == EPERM || e == EACCES) && !have_bpf_caps())
			FAIL(EXIT_BPF_REFUSED,
			     "the kernel refused to load BPF (%s): run as root or with CAP_BPF and CAP_PERFMON", strerror(e));
		if (e == EPERM || e == EACCES) /* with the capabilities: the verifier said no, or a lockdown */
			FAIL(1, "the kernel rejected gpusnoop's BPF program (%s): -v shows the verifier's log", strerror(e));
		FAIL(EXIT_BPF_REFUSED, "cannot load the BPF program: %s (BPF ring buffers need Linux 5.8+)", strerror(e));
	}
	if (!probe_kernel_has_uprobes("", &msg))
		FAIL(EXIT_BPF_REFUSED, "%s", msg.data);

	if (probe_set_add_maps(&set, (pid_t)pid) != 0)
		FAIL(errno == EACCES || errno == EPERM ? EXIT_BPF_REFUSED : EXIT_NO_PROCESS,
		     "cannot read /proc/%" PRId64 "/maps: %s", pid, strerror(errno));
	for (const char *p = libs; p && *p;) {
		size_t n = strcspn(p, ":");
		char *one = xstrndup(p, n);
		probe_set_add(&set, one, true);
		free(one);
		p += n + (p[n] == ':');
	}
	struct buf skipped = BUF_INIT;
	int found = probe_set_find(&set, groups, verbose ? &skipped : NULL, &msg);
	fputs(skipped.data ? skipped.data : "", stderr); /* the files skipped, with -v */
	buf_free(&skipped);
	if (found < 0)
		FAIL(1, "%s", msg.data);
	fputs(set.warnings.data ? set.warnings.data : "", stderr);
	if (!set.nfound && set.nstripped)
		FAIL(EXIT_NO_CUDA,
		     "process %" PRId64 " maps no file holding the probed CUDA functions (cudaMalloc, cuMemAlloc_v2, ...)"
		     " that can be found: %d stripped file(s) named like CUDA libraries may hold them without their"
		     " names (see above); the process must run with an unstripped build of that library",
		     pid, set.nstripped);
	if (!set.nfound)
		FAIL(EXIT_NO_CUDA,
		     "process %" PRId64 " maps no file holding the probed CUDA functions (cudaMalloc, cuMemAlloc_v2, ...);"
		     " if it loads one later, name it with --lib",
		     pid);

	/* each probe where the kernel can emulate the instruction it replaces */
	probe_set_place(&set, at_entry);
	if (verbose)
		fputs(set.placement.data ? set.placement.data : "", stderr);

	links = xcalloc((size_t)set.nfound * 2 + 1, sizeof(*links));
	lp.skel = skel;
	lp.set = &set;
	lp.samp = &samp;
	for (int i = 0; i < set.n; i++)
		for (uint32_t k = 0; k < FN_COUNT; k++) {
			const struct probe_file *f = &set.f[i];
			if (!f->off[k])
				continue;
			const struct probe_def *p = &probe_defs[k];
			if (p->group == GROUP_LAUNCH) { /* attached by launch_attach, for the sampler */
				lp.n += 1 + p->ret;
				continue;
			}
			struct bpf_link *l = attach_probe(skel, f, k, false);
			if (!l) {
				int e = errno;
				FAIL(e == EPERM || e == EACCES || e == ENOENT || e == EOPNOTSUPP || e == EINVAL ? EXIT_BPF_REFUSED : 1,
				     "cannot attach a uprobe to %s in %s: %s%s", p->name, f->path, strerror(e),
				     e == EOPNOTSUPP || e == EINVAL ? " (BPF cookies on uprobes need Linux 5.15+)" : "");
			}
			links[nlinks++] = l;
			if (!p->ret)
				continue;
			l = attach_probe(skel, f, k, true);
			if (!l)
				FAIL(1, "cannot attach a uretprobe to %s in %s: %s", p->name, f->path, strerror(errno));
			links[nlinks++] = l;
		}
	/* the launch probes: the first window now, before "watching" is said */
	if (lp.n) {
		lp.links = xcalloc((size_t)lp.n, sizeof(*lp.links));
		lp.dying = xcalloc((size_t)lp.n, sizeof(*lp.dying));
		sampler_init(&samp, (int)launch_pct, (int64_t)(launch_period * 1e9), now_ns(CLOCK_MONOTONIC));
		sampler_due(&samp, now_ns(CLOCK_MONOTONIC));
		if (!launch_attach(&lp, &msg)) {
			int e = errno; /* as for the other probes above */
			FAIL(e == EPERM || e == EACCES || e == ENOENT || e == EOPNOTSUPP || e == EINVAL ? EXIT_BPF_REFUSED : 1,
			     "%s%s", msg.data, e == EOPNOTSUPP || e == EINVAL ? " (BPF cookies on uprobes need Linux 5.15+)" : "");
		}
	}

	/* what is watched: what was asked for and found (the rest was said above, and stays absent) */
	groups &= set.found_groups;
	unsigned spaces = probe_spaces(groups);
	if (trace && !timeline_open(&run.tl, trace, (int)pid, spaces))
		FAIL(1, "cannot write %s: %s", trace, strerror(errno));
	run.tl.devices = (groups & GROUP_MEM) != 0;
	run.tl.min_bytes = (uint64_t)trace_min;
	run.tl.max_instants = (uint64_t)trace_max;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, &run, NULL);
	if (!rb)
		FAIL(1, "cannot open the ring buffer: %s", strerror(errno));
	/* symbols are read now, while the process's maps can be read */
	sym = sym_open((pid_t)pid);

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "gpusnoop: watching pid %" PRId64 ": %d probes on %d functions in %d files\n", pid, nlinks + lp.n,
		set.nfound, set.nfiles);
	int calls_fd = bpf_map__fd(skel->maps.calls);
	int stacks_fd = bpf_map__fd(skel->maps.stacks);
	struct report_in in = {.pid = (int)pid, .groups = groups, .ledger = &state, .calls = &syncs,
			       .files = set.nfiles, .top = (size_t)top, .stack = stack_of, .stack_ctx = &stacks_fd,
			       .sym = sym};
	/* frames replace one another on a terminal; with --format json they go to stderr */
	struct live live = {.out = json ? stderr : stdout};
	live.tty = isatty(fileno(live.out));
	bool want_live = live_flag || (!json && live.tty);
	int64_t t0 = now_ns(CLOCK_MONOTONIC), next_tick = t0 + 1000000000;
	int64_t end = duration > 0 ? t0 + (int64_t)(duration * 1e9) : INT64_MAX;
	uint64_t prev_launches = 0;
	int64_t prev_on = lp.n ? sampler_on_ns(&samp, t0) : 0;
	const char *why = "interrupted";
	for (;;) {
		/* records are submitted without a wakeup until the buffer is a
		 * quarter full: after a quiet 100 ms, take what is there (or at
		 * the launch sampler's next toggle) */
		int64_t wait_ms = 100;
		if (lp.n) {
			int64_t w = sampler_wait_ns(&samp, now_ns(CLOCK_MONOTONIC));
			if (w / 1000000 < wait_ms)
				wait_ms = w / 1000000;
		}
		int r = ring_buffer__poll(rb, (int)wait_ms);
		if (r == 0)
			r = ring_buffer__consume(rb);
		if (r < 0 && r != -EINTR)
			FAIL(1, "ring buffer: %s", strerror(-r));
		if (interrupted)
			break;
		int64_t now = now_ns(CLOCK_MONOTONIC);
		if (now >= end) {
			why = "duration";
			break;
		}
		struct pollfd pf = {.fd = pidfd, .events = POLLIN};
		if (poll(&pf, 1, 0) == 1) {
			why = "process exited";
			break;
		}
		if (lp.n) {
			enum sampler_action act = sampler_due(&samp, now);
			if (act == SAMPLER_OFF) {
				launch_detach(&lp, now_ns(CLOCK_MONOTONIC));
			} else if (act == SAMPLER_ON && !launch_attach(&lp, &msg)) {
				/* the counts so far stand, scaled by the time they had */
				fprintf(stderr, "gpusnoop: launch sampling stopped: %s\n", msg.data);
				buf_reset(&msg);
				samp.next = INT64_MAX;
			}
		}
		if (now >= next_tick) {
			/* once a second: the launch counters, the live table */
			next_tick = now + 1000000000;
			read_calls(calls_fd, &syncs);
			if (groups & GROUP_LAUNCH) {
				launch_point(&run.tl, &syncs, &samp, now, &prev_launches, &prev_on);
				in.launch_on_s = (double)sampler_on_ns(&samp, now) / 1e9;
			}
			if (want_live) {
				in.seconds = (double)(now - t0) / 1e9;
				read_live(skel, &state, &live_groups);
				if (groups & GROUP_SYNC)
					read_syncs(skel, &syncs);
				in.live_groups = live_groups.g;
				in.nlive_groups = live_groups.n;
				live_frame(&live, &in);
			}
		}
	}
	int64_t t_end = now_ns(CLOCK_MONOTONIC);
	double secs = (double)(t_end - t0) / 1e9;
	if (lp.n) { /* the launches stop counting with the run */
		launch_detach(&lp, t_end);
		launch_join(&lp);
		in.launch_pct = (int)launch_pct;
		in.launch_on_s = (double)sampler_on_ns(&samp, t_end) / 1e9;
		in.launch_sampled = sampler_partial(&samp, t_end);
	}
	/* detach first, so nothing arrives after the last drain (each detach
	 * waits for an RCU grace period: ~1 s for 20 probes, not counted above) */
	in.probes = nlinks + lp.n;
	in.probes_stepped = set.nstepped;
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	nlinks = 0;
	ring_buffer__consume(rb);
	read_calls(calls_fd, &syncs);
	if (groups & GROUP_LAUNCH) /* the launch rate over the last (partial) second */
		launch_point(&run.tl, &syncs, &samp, t_end, &prev_launches, &prev_on);

	in.seconds = secs;
	in.end_reason = why;
	read_percpu(bpf_map__fd(skel->maps.counters), CNT_COUNT, in.counters);
	/* the report: from the kernel's maps, whole, whatever the ring buffer lost */
	ledger_free(&state);
	ledger_init(&state);
	read_allocations(skel, in.counters, &state);
	read_syncs(skel, &syncs);
	/* records that failed validation: the timeline's, and the maps' */
	in.timeline_invalid = run.ledger.invalid + run.calls.invalid;
	in.live_groups = NULL;
	report_write(stdout, &in, json);
	if (run.tl.left_out)
		fprintf(stderr, "gpusnoop: %s: %" PRIu64 " allocations of at least %" PRIu64 " bytes left out of the timeline"
				" (it shows the first %" PRIu64 ", --trace-max-instants)\n",
			trace, run.tl.left_out, run.tl.min_bytes, run.tl.instants);
	if (trace && !timeline_close(&run.tl, &run.ledger, (uint64_t)now_ns(CLOCK_MONOTONIC)))
		rc = fail(1, "writing %s: %s", trace, strerror(errno));
out:
	if (run.tl.f)
		timeline_close(&run.tl, &run.ledger, (uint64_t)now_ns(CLOCK_MONOTONIC));
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	launch_join(&lp);
	for (int i = 0; lp.links && i < lp.n; i++)
		if (lp.links[i])
			bpf_link__destroy(lp.links[i]);
	free(lp.links);
	free(lp.dying);
	sym_close(sym);
	ring_buffer__free(rb);
	gpusnoop_bpf__destroy(skel);
	ledger_free(&run.ledger);
	calls_free(&run.calls);
	ledger_free(&state);
	calls_free(&syncs);
	free(live_groups.g);
	probe_set_free(&set);
	buf_free(&msg);
	free(links);
	if (pidfd >= 0)
		close(pidfd);
	args_free(&a);
	return rc;
}
