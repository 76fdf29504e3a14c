/*
 * proc.c - per-process collector (see proc.h).
 *
 * For every tracked pid it reads <procfs>/<pid>/stat (CPU time, threads,
 * RSS, start time), <pid>/io (storage bytes; needs privileges, absent
 * otherwise) and, once per process, <pid>/cgroup and <pid>/environ for
 * attribution.  A pid is identified by (pid, start time) so a recycled pid
 * is a new process, not a continuation; a process that exited is dropped
 * with one info line.  The set is bounded (PROC_MAX_TRACKED) because
 * registrations come from outside.
 */
#include "proc.h"

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

struct tproc {
	int pid;
	bool have;         /* a previous reading exists */
	bool attributed;   /* cgroup/job looked up */
	uint64_t start;    /* starttime, clock ticks after boot */
	uint64_t cpu;      /* utime + stime, ticks */
	bool have_io;
	uint64_t rd, wr;   /* io read_bytes, write_bytes */
	char job[64];      /* SLURM job id, "" if none */
	char cgroup[256];  /* unified (v2) cgroup path or the first v1 one, "" if unreadable */
};

struct proc_collector {
	char *root;
	long hz, page;
	struct tproc *p;
	size_t n;
	struct buf b;
};

struct proc_collector *proc_collector_new(const char *procfs_root)
{
	struct proc_collector *c = xcalloc(1, sizeof *c);
	c->root = xstrdup(procfs_root ? procfs_root : "/proc");
	long hz = sysconf(_SC_CLK_TCK), pg = sysconf(_SC_PAGESIZE);
	c->hz = hz > 0 ? hz : 100;
	c->page = pg > 0 ? pg : 4096;
	buf_init(&c->b);
	return c;
}

void proc_collector_free(struct proc_collector *c)
{
	if (!c)
		return;
	free(c->root);
	free(c->p);
	buf_free(&c->b);
	free(c);
}

size_t proc_tracked_count(const struct proc_collector *c) { return c->n; }

bool proc_track(struct proc_collector *c, int pid)
{
	if (pid <= 0)
		return false;
	for (size_t i = 0; i < c->n; i++)
		if (c->p[i].pid == pid)
			return true;
	if (c->n >= PROC_MAX_TRACKED) {
		LOG_ONCE(LOG_LEVEL_WARN, "tracking %d processes already; not tracking more", PROC_MAX_TRACKED);
		return false;
	}
	c->p = xrealloc(c->p, (c->n + 1) * sizeof *c->p);
	memset(&c->p[c->n], 0, sizeof c->p[0]);
	c->p[c->n++].pid = pid;
	return true;
}

/* Read <root>/<pid>/<what> whole into c->b (at most 1 MiB). */
static bool slurp(struct proc_collector *c, int pid, const char *what)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%d/%s", c->root, pid, what);
	buf_reset(&c->b);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int r = buf_pread_all(&c->b, fd, 1u << 20);
	close(fd);
	return r == 0;
}

bool proc_parse_stat(const char *s, size_t len, struct proc_stat *out)
{
	/* comm is in parentheses and may itself contain ") ": the last ')' ends it */
	const char *r = NULL;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ')')
			r = s + i;
	if (!r)
		return false;
	const char *p = r + 1, *end = s + len;
	uint64_t v[22];
	int n = 0;
	/* fields from 3 (state) on; the state is a letter, the rest numbers (some may be negative) */
	while (n < 22 && p < end) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			break;
		if (n == 0) {
			v[n++] = (unsigned char)*p;
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		bool neg = false;
		if (*p == '-') {
			neg = true;
			p++;
		}
		if (p >= end || *p < '0' || *p > '9')
			return false;
		uint64_t x = 0;
		while (p < end && *p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p++ - '0');
			if (x > (UINT64_MAX - d) / 10)
				return false;
			x = x * 10 + d;
		}
		v[n++] = neg ? 0 : x;
	}
	if (n < 22)
		return false;
	out->cpu_ticks = v[11] + v[12];
	out->threads = v[17];
	out->start = v[19];
	out->rss_pages = v[21];
	return true;
}

/* Find "key: N" at a line start in s. */
static bool field_u64(const char *s, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, kl) == 0)
			return sscanf(p + kl, "%" SCNu64, out) == 1;
	return false;
}

void proc_job_from_cgroup(const char *path, char *job, size_t cap)
{
	/* SLURM puts steps in .../job_<id>/step_<n>/... (cgroup v1 and v2 plugins alike) */
	job[0] = 0;
	for (const char *p = path; (p = strstr(p, "job_")) != NULL; p += 4) {
		if (p != path && p[-1] != '/')
			continue;
		size_t n = strspn(p + 4, "0123456789");
		if (n == 0 || n >= cap || (p[4 + n] && p[4 + n] != '/'))
			continue;
		memcpy(job, p + 4, n);
		job[n] = 0;
		return;
	}
}

static void attribute(struct proc_collector *c, struct tproc *t)
{
	t->attributed = true;
	t->job[0] = t->cgroup[0] = 0;
	if (slurp(c, t->pid, "cgroup")) {
		/* prefer the unified hierarchy line "0::/path"; else the first v1 line */
		char *save = NULL, *first = NULL;
		for (char *l = strtok_r(c->b.data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *a = strchr(l, ':'), *b = a ? strchr(a + 1, ':') : NULL;
			if (!b)
				continue;
			if (strncmp(l, "0::", 3) == 0) {
				first = b + 1;
				break;
			}
			if (!first)
				first = b + 1;
		}
		if (first)
			snprintf(t->cgroup, sizeof t->cgroup, "%s", first);
		proc_job_from_cgroup(t->cgroup, t->job, sizeof t->job);
	}
	if (slurp(c, t->pid, "environ")) {
		/* NUL-separated VAR=value; SLURM_JOB_ID wins over the cgroup guess */
		for (size_t i = 0; i < c->b.len;) {
			const char *e = c->b.data + i;
			size_t l = strnlen(e, c->b.len - i);
			if (l > 13 && strncmp(e, "SLURM_JOB_ID=", 13) == 0 && l - 13 < sizeof t->job &&
			    strspn(e + 13, "0123456789_") == l - 13)
				snprintf(t->job, sizeof t->job, "%.*s", (int)(l - 13), e + 13);
			i += l + 1;
		}
	}
}

void proc_collect(struct proc_collector *c, struct frame *f)
{
	for (size_t i = 0; i < c->n;) {
		struct tproc *t = &c->p[i];
		struct proc_stat st;
		if (!slurp(c, t->pid, "stat") || !proc_parse_stat(c->b.data, c->b.len, &st)) {
			log_info("process %d is gone; no longer tracked", t->pid);
			c->p[i] = c->p[--c->n];
			continue;
		}
		if (t->have && st.start != t->start) {
			/* pid recycled: a new process, start over */
			int pid = t->pid;
			memset(t, 0, sizeof *t);
			t->pid = pid;
		}
		if (!t->attributed)
			attribute(c, t);
		char key[64];
		snprintf(key, sizeof key, "proc_rss_bytes.%d", t->pid);
		frame_uint(f, key, st.rss_pages * (uint64_t)c->page);
		snprintf(key, sizeof key, "proc_threads.%d", t->pid);
		frame_uint(f, key, st.threads);
		uint64_t d;
		if (t->have && counter_delta(t->cpu, st.cpu_ticks, &d)) {
			snprintf(key, sizeof key, "proc_cpu_ms.%d", t->pid);
			frame_uint(f, key, (uint64_t)((double)d * 1000.0 / (double)c->hz + 0.5));
		}
		uint64_t rd, wr;
		if (slurp(c, t->pid, "io") && field_u64(c->b.data, "read_bytes:", &rd) &&
		    field_u64(c->b.data, "write_bytes:", &wr)) {
			if (t->have_io && counter_delta(t->rd, rd, &d)) {
				snprintf(key, sizeof key, "proc_read_bytes.%d", t->pid);
				frame_uint(f, key, d);
			}
			if (t->have_io && counter_delta(t->wr, wr, &d)) {
				snprintf(key, sizeof key, "proc_written_bytes.%d", t->pid);
				frame_uint(f, key, d);
			}
			t->rd = rd;
			t->wr = wr;
			t->have_io = true;
		} else {
			t->have_io = false;
		}
		if (t->job[0]) {
			snprintf(key, sizeof key, "proc_job_id.%d", t->pid);
			frame_str(f, key, t->job);
		}
		if (t->cgroup[0]) {
			snprintf(key, sizeof key, "proc_cgroup.%d", t->pid);
			frame_str(f, key, t->cgroup);
		}
		t->cpu = st.cpu_ticks;
		t->start = st.start;
		t->have = true;
		i++;
	}
	if (c->b.cap > (1u << 20))
		buf_free(&c->b);
}

/* ---------------- the collector table's row (collect/list.h) ---------------- */

struct process_config {
	const char *track_pids; /* "1,2,3" */
};

static const struct arg_opt process_opts[] = {
	MOD_OPT(struct process_config, track_pids, "track_pids", ARG_STRING, "PID,...",
		"also report CPU/RSS/IO of these processes", 0, 0),
	{0},
};

static const struct process_config process_defaults = {""};

/* Check a pid list ("1,2,3") and, with c, track each pid; false at the
 * first malformed entry. */
static bool each_pid(const char *list, struct proc_collector *c)
{
	for (const char *p = list; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0 || v > 0x7fffffff || (*end && *end != ','))
			return false;
		if (c && !proc_track(c, (int)v))
			log_warn("cannot track pid %ld", v);
		p = *end ? end + 1 : end;
	}
	return true;
}

static bool process_validate(const void *cfg, struct buf *err)
{
	const struct process_config *c = cfg;
	if (each_pid(c->track_pids, NULL))
		return true;
	buf_printf(err, "--track_pids: '%s' is not a comma-separated list of pids", c->track_pids);
	return false;
}

static bool process_apply(void **state, const void *old, const void *cfg, const struct collect_env *env,
			  struct buf *err)
{
	(void)old;
	(void)err;
	if (!*state)
		*state = proc_collector_new(env->procfs_root);
	/* pids are added, never removed: registered processes stay until they exit */
	each_pid(((const struct process_config *)cfg)->track_pids, *state);
	return true;
}

static enum collect_status process_run(void *state, struct frame *f)
{
	if (!proc_tracked_count(state))
		return COLLECT_IDLE;
	proc_collect(state, f);
	return COLLECT_OK;
}

static void process_close(void *state) { proc_collector_free(state); }

static bool process_track(void *state, int pid) { return proc_track(state, pid); }

/* The keys it emits, for Prometheus and OTLP (metric.h; docs/metrics.md).
 * key, suffixed, kind, scale, prom, label, strip, fixed_label, help, otel, unit, attr, otel_fixed */
#define G MK_GAUGE
#define C MK_COUNTER
static const struct metric_desc process_catalog[] = {
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
};
#undef G
#undef C

const struct collector collector_process = {
	.name = "process",
	.catalog = process_catalog,
	.ncatalog = sizeof process_catalog / sizeof process_catalog[0],
	.config = {process_opts, sizeof(struct process_config), &process_defaults},
	.validate = process_validate,
	.rides_on = "kernel", /* the tracked processes go in the kernel tick's frame */
	.apply = process_apply,
	.collect = process_run,
	.close = process_close,
	.track_pid = process_track,
};
