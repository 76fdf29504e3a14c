/*
 * main.c - the gpusnoop program (run as `dyno gpusnoop` or on its own):
 * watches one process's CUDA memory calls with eBPF uprobes, without
 * touching the process, and at the end (duration over, Ctrl-C, or the
 * process exited) prints a leak report; optionally writes a Chrome-trace
 * timeline of outstanding bytes.
 *
 * Steps: find the mapped files of /proc/PID/maps (plus --lib) that export
 * the probed functions in .dynsym (elfsym.c), load gpusnoop.bpf.c with the
 * pid filter, attach a uprobe (and for allocations a uretprobe) per
 * function and file, drain the ring buffer into the ledger (ledger.c) and
 * the timeline, then report (report.c).
 *
 * Cost while running: the probes (see gpusnoop.bpf.c), one wakeup per
 * 100 ms or per batch of records, one hash operation per record, and a
 * ~150-byte timeline line per allocation or free when --trace is given.
 *
 * Exit statuses: 0 report printed; 2 usage; 3 no such process; 4 not
 * permitted (BPF refused: not root, no CAP_BPF/CAP_PERFMON; or the process's
 * maps unreadable) or the kernel lacks uprobes;
 * 5 no probed function in any mapped file or --lib; 1 anything else.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/args.h"
#include "gpusnoop/elfsym.h"
#include "gpusnoop/ledger.h"
#include "gpusnoop/report.h"
#include "gpusnoop/symbolize.h"
#include "gpusnoop.skel.h"

enum { EXIT_USAGE = 2, EXIT_NO_PROCESS = 3, EXIT_BPF_REFUSED = 4, EXIT_NO_CUDA = 5 };
enum kind { K_ALLOC, K_MAP, K_FREE };

static const struct probe {
	uint32_t fn;
	enum kind kind;
	uint32_t space;
} probes[FN_COUNT] = {
	{FN_CUDA_MALLOC, K_ALLOC, SPACE_PTR},
	{FN_CUDA_FREE, K_FREE, SPACE_PTR},
	{FN_CUDA_MALLOC_ASYNC, K_ALLOC, SPACE_PTR},
	{FN_CUDA_FREE_ASYNC, K_FREE, SPACE_PTR},
	{FN_CUDA_MALLOC_MANAGED, K_ALLOC, SPACE_PTR},
	{FN_CUDA_MALLOC_HOST, K_ALLOC, SPACE_PTR},
	{FN_CUDA_FREE_HOST, K_FREE, SPACE_PTR},
	{FN_CU_MEM_ALLOC, K_ALLOC, SPACE_PTR},
	{FN_CU_MEM_FREE, K_FREE, SPACE_PTR},
	{FN_CU_MEM_CREATE, K_ALLOC, SPACE_HANDLE},
	{FN_CU_MEM_RELEASE, K_FREE, SPACE_HANDLE},
	{FN_CU_MEM_MAP, K_MAP, SPACE_MAP},
	{FN_CU_MEM_UNMAP, K_FREE, SPACE_MAP},
};

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

/* libbpf's own messages: only warnings, and only with --verbose */
static bool verbose;
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (!verbose && level != LIBBPF_WARN))
		return 0;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

struct files {
	char **path;
	dev_t *dev;
	ino_t *ino;
	int n;
};

/* one entry per file, however it is named: a file probed twice would count every call twice */
static void files_add(struct files *f, const char *p)
{
	struct stat st = {0};
	bool known = stat(p, &st) == 0;
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->path[i], p) == 0 || (known && f->dev[i] == st.st_dev && f->ino[i] == st.st_ino))
			return;
	f->path = xrealloc(f->path, (size_t)(f->n + 1) * sizeof(*f->path));
	f->dev = xrealloc(f->dev, (size_t)(f->n + 1) * sizeof(*f->dev));
	f->ino = xrealloc(f->ino, (size_t)(f->n + 1) * sizeof(*f->ino));
	f->path[f->n] = xstrdup(p);
	/* unknown (unstatable) files never match another by inode */
	f->dev[f->n] = known ? st.st_dev : (dev_t)-1;
	f->ino[f->n] = known ? st.st_ino : (ino_t)-1 - (ino_t)f->n;
	f->n++;
}

/* the files the process maps, seen through its root (containers) */
static int scan_maps(int pid, struct files *f)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	FILE *m = fopen(p, "re");
	if (!m)
		return -1;
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof(line), m)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		path[strcspn(path, "\n")] = 0;
		char *del = strstr(path, " (deleted)");
		if (del)
			continue; /* replaced on disk: its symbols no longer describe the mapping */
		char full[PATH_MAX + 64];
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, path);
		files_add(f, full);
	}
	fclose(m);
	return 0;
}

struct timeline {
	FILE *f;
	int pid;
	int64_t mono_to_real_ns;
	bool first;
};

static void timeline_point(struct timeline *t, const struct ledger *l, uint64_t ts_ns)
{
	if (!t->f)
		return;
	int64_t us1000 = ((int64_t)ts_ns + t->mono_to_real_ns) / 1000; /* ns -> us, 3 decimals below */
	fprintf(t->f,
		"%s\n{\"name\":\"gpusnoop outstanding bytes\",\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"ts\":%" PRId64
		".%03d,\"args\":{\"memory\":%" PRIu64 ",\"handles\":%" PRIu64 ",\"mapped\":%" PRIu64 "}}",
		t->first ? "" : ",", t->pid, us1000 / 1000, (int)(us1000 % 1000), l->outstanding[SPACE_PTR],
		l->outstanding[SPACE_HANDLE], l->outstanding[SPACE_MAP]);
	t->first = false;
}

struct run {
	struct ledger ledger;
	struct timeline tl;
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct run *r = ctx;
	if (ledger_event(&r->ledger, data, len) == 1)
		timeline_point(&r->tl, &r->ledger, r->ledger.last_ts_ns);
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
	return k;
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define FAIL(...)                          \
	do {                               \
		rc = fail(__VA_ARGS__);    \
		goto out;                  \
	} while (0)

int main(int argc, char **argv)
{
	int64_t pid = 0;
	double duration = 0;
	const char *libs = NULL, *format = "table", *trace = NULL;
	int64_t ringbuf_kb = 8192;
	const struct arg_opt opts[] = {
		{"pid", 'p', ARG_INT, &pid, "PID", "the process to watch", 1, INT_MAX, NULL},
		{"duration", 'd', ARG_DOUBLE, &duration, "S", "stop after S seconds (0: at Ctrl-C or when the process exits)", 0, 0, NULL},
		{"lib", 0, ARG_STRING, &libs, "PATH[:PATH]", "also probe these libraries (e.g. one loaded later)", 0, 0, NULL},
		{"format", 0, ARG_STRING, &format, "table|json", "leak report format", 0, 0, NULL},
		{"trace", 0, ARG_STRING, &trace, "OUT.json", "write a Chrome-trace timeline of outstanding bytes", 0, 0, NULL},
		{"ringbuf-kb", 0, ARG_INT, &ringbuf_kb, "KB", "ring buffer size, a power of two >= the page size (default 8192)", 4, 1 << 20, NULL},
		{"verbose", 'v', ARG_BOOL, &verbose, NULL, "libbpf's messages", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	const struct arg_cmd cmd = {
		.prog = "gpusnoop",
		.usage = "dyno gpusnoop --pid PID [--duration S] [--lib PATH[:PATH]] [--format table|json] [--trace OUT.json]",
		.description = "Watch a process's CUDA memory calls with eBPF uprobes (root or CAP_BPF+CAP_PERFMON);\n"
			       "at the end print the allocations never freed, grouped by stack.\n"
			       "Exit: 0 report, 2 usage, 3 no such process, 4 not permitted (BPF refused), 5 no CUDA library mapped.",
		.opts = opts,
		.min_pos = 0,
		.max_pos = 0,
	};
	struct args a;
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	args_free(&a);
	bool json = strcmp(format, "json") == 0;
	if (!json && strcmp(format, "table") != 0)
		return fail(EXIT_USAGE, "--format: expected table or json, got '%s'", format);
	if (!pid)
		return fail(EXIT_USAGE, "--pid is required (see --help)");
	if (duration < 0)
		return fail(EXIT_USAGE, "--duration must be >= 0");

	/* everything main holds, released at out: whatever the exit */
	int pidfd = -1, nlinks = 0;
	struct gpusnoop_bpf *skel = NULL;
	struct files files = {0};
	uint64_t(*offs)[FN_COUNT] = NULL;
	struct bpf_link **links = NULL;
	struct run run = {.tl = {.pid = (int)pid, .first = true}};
	ledger_init(&run.ledger);
	struct ring_buffer *rb = NULL;
	struct symbolizer *sym = NULL;
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
	if ((ringbuf_kb & (ringbuf_kb - 1)) != 0 || ringbuf_kb * 1024 < getpagesize())
		FAIL(EXIT_USAGE, "--ringbuf-kb: %" PRId64 " is not a power of two of at least the page size", ringbuf_kb);
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)ringbuf_kb * 1024);
	if (gpusnoop_bpf__load(skel)) {
		int e = errno;
		if (e == EPERM || e == EACCES)
			FAIL(EXIT_BPF_REFUSED,
				    "the kernel refused to load BPF (%s): run as root or with CAP_BPF and CAP_PERFMON",
				    strerror(e));
		FAIL(EXIT_BPF_REFUSED, "cannot load the BPF program: %s", strerror(e));
	}

	if (scan_maps((int)pid, &files) != 0)
		FAIL(errno == EACCES || errno == EPERM ? EXIT_BPF_REFUSED : EXIT_NO_PROCESS,
			    "cannot read /proc/%" PRId64 "/maps: %s", pid, strerror(errno));
	int nmapped = files.n; /* the rest were named with --lib: their errors are the user's to see */
	for (const char *p = libs; p && *p;) {
		size_t n = strcspn(p, ":");
		char *one = xstrndup(p, n);
		files_add(&files, one);
		free(one);
		p += n + (p[n] == ':');
	}

	static const char *names[FN_COUNT];
	for (uint32_t i = 0; i < FN_COUNT; i++)
		names[i] = snoop_fn_name(probes[i].fn);
	offs = xcalloc((size_t)files.n + 1, sizeof(*offs));
	int nfiles = 0, nfound = 0;
	for (int i = 0; i < files.n; i++) {
		struct buf err = BUF_INIT;
		int r = elfsym_find_file(files.path[i], names, FN_COUNT, offs[i], &err);
		if (r < 0 && i >= nmapped) {
			rc = fail(1, "%s", err.data);
			buf_free(&err);
			goto out;
		}
		if (r < 0 && verbose)
			fprintf(stderr, "gpusnoop: skipping %s\n", err.data);
		if (r == 0 && i >= nmapped)
			fprintf(stderr, "gpusnoop: warning: %s exports none of the probed functions\n", files.path[i]);
		buf_free(&err);
		if (r > 0)
			nfiles++, nfound += r;
	}
	if (!nfound)
		FAIL(EXIT_NO_CUDA,
			    "process %" PRId64 " maps no library exporting CUDA memory functions (cudaMalloc, cuMemAlloc_v2, ...);"
			    " if it loads one later, name it with --lib",
			    pid);

	links = xcalloc((size_t)nfound * 2 + 1, sizeof(*links));
	for (int i = 0; i < files.n; i++)
		for (uint32_t k = 0; k < FN_COUNT; k++) {
			if (!offs[i][k])
				continue;
			const struct probe *p = &probes[k];
			uint64_t cookie = p->fn | p->space << 8;
			struct bpf_program *entry = p->kind == K_ALLOC ? skel->progs.alloc_entry
						    : p->kind == K_MAP ? skel->progs.map_entry
								       : skel->progs.free_entry;
			/* pid -1 and a filter in the program: a pid-bound uprobe follows one thread on some kernels */
			struct bpf_uprobe_opts eo = {.sz = sizeof(eo), .bpf_cookie = cookie};
			struct bpf_link *l = bpf_program__attach_uprobe_opts(entry, -1, files.path[i], offs[i][k], &eo);
			if (!l) {
				int e = errno;
				FAIL(e == EPERM || e == EACCES || e == ENOENT || e == EOPNOTSUPP ? EXIT_BPF_REFUSED : 1,
					    "cannot attach a uprobe to %s in %s: %s (is the kernel built with uprobes?)",
					    names[k], files.path[i], strerror(e));
			}
			links[nlinks++] = l;
			if (p->kind == K_FREE)
				continue;
			struct bpf_uprobe_opts ro = {.sz = sizeof(ro), .bpf_cookie = cookie, .retprobe = true};
			l = bpf_program__attach_uprobe_opts(skel->progs.alloc_return, -1, files.path[i], offs[i][k], &ro);
			if (!l)
				FAIL(1, "cannot attach a uretprobe to %s in %s: %s", names[k], files.path[i],
					    strerror(errno));
			links[nlinks++] = l;
		}

	if (trace) {
		run.tl.f = fopen(trace, "we");
		if (!run.tl.f)
			FAIL(1, "cannot write %s: %s", trace, strerror(errno));
		run.tl.mono_to_real_ns = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
		fputs("{\"traceEvents\":[", run.tl.f);
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, &run, NULL);
	if (!rb)
		FAIL(1, "cannot open the ring buffer: %s", strerror(errno));
	/* symbols are read now, while the process's maps can be read */
	sym = sym_open((pid_t)pid);

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "gpusnoop: watching pid %" PRId64 ": %d probes on %d functions in %d files\n", pid, nlinks, nfound,
		nfiles);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	int64_t end = duration > 0 ? t0 + (int64_t)(duration * 1e9) : INT64_MAX;
	const char *why = "interrupted";
	for (;;) {
		int r = ring_buffer__poll(rb, 100);
		if (r < 0 && r != -EINTR)
			FAIL(1, "ring buffer: %s", strerror(-r));
		if (interrupted)
			break;
		if (now_ns(CLOCK_MONOTONIC) >= end) {
			why = "duration";
			break;
		}
		struct pollfd pf = {.fd = pidfd, .events = POLLIN};
		if (poll(&pf, 1, 0) == 1) {
			why = "process exited";
			break;
		}
	}
	double secs = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	/* detach first, so nothing arrives after the last drain (each detach
	 * waits for an RCU grace period: ~1 s for 20 probes, not counted above) */
	int attached = nlinks;
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	nlinks = 0;
	ring_buffer__consume(rb);

	struct report_in in = {.pid = (int)pid, .seconds = secs, .end_reason = why, .ledger = &run.ledger,
			       .probes = attached, .files = nfiles, .stack = stack_of, .sym = sym};
	int stacks_fd = bpf_map__fd(skel->maps.stacks);
	in.stack_ctx = &stacks_fd;
	int cfd = bpf_map__fd(skel->maps.counters);
	for (uint32_t i = 0; i < CNT_COUNT; i++)
		bpf_map_lookup_elem(cfd, &i, &in.counters[i]);
	report_write(stdout, &in, json);

	if (run.tl.f) {
		/* a last point at the end, so the timeline reaches the report's moment */
		timeline_point(&run.tl, &run.ledger, (uint64_t)now_ns(CLOCK_MONOTONIC));
		fputs("\n]}\n", run.tl.f);
		int closed = fclose(run.tl.f);
		run.tl.f = NULL;
		if (closed != 0)
			rc = fail(1, "writing %s: %s", trace, strerror(errno));
	}
out:
	if (run.tl.f)
		fclose(run.tl.f);
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	sym_close(sym);
	ring_buffer__free(rb);
	gpusnoop_bpf__destroy(skel);
	ledger_free(&run.ledger);
	for (int i = 0; i < files.n; i++)
		free(files.path[i]);
	free(files.path);
	free(files.dev);
	free(files.ino);
	free(offs);
	free(links);
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}
