/*
 * gpu_jobs.c - per-process and per-job GPU accounting (see gpu_jobs.h):
 * which pids use which GPU, their job and user, and GPU-seconds and energy
 * accumulated per job and per user.
 *
 * The process lists come from the GPU collector's frame (gpu_procs_list()
 * runs on its worker thread, where every NVML call runs); this collector
 * rides on that tick and only reads /proc (under --procfs_root, so tests
 * use a fixture tree).  A process's job: SLURM_JOB_ID from its environ
 * (readable by root or its own user; unreadable: the next rule), else its
 * cgroup (a SLURM job_<id> directory, a Kubernetes pod and container, or
 * the cgroup path itself); its user is the real uid of /proc/PID/status
 * (numeric: resolving names would call NSS, which may block, in the loop).
 *
 * The rules (docs/metrics.md, "GPU accounting"):
 * - a device whose process list was read at this tick and at the previous
 *   GPU tick is charged one period (the configured interval, not the
 *   measured time, so a late tick moves nothing); its jobs share it
 *   equally: interval / (distinct jobs on the device).  A MIG instance is a
 *   device of its own.  The first listing, and the first after a failed
 *   one, only sets the baseline, as counter deltas do.
 * - a GPU's energy over the interval is split equally among the distinct
 *   jobs on it and its MIG instances (on the devices charged this tick);
 *   energy of a GPU with no job is not attributed.
 * - a job's user is the uid of the first of its processes seen; per-user
 *   totals are the sums over their jobs (those folded into "other" too).
 * - at most --gpu_job_series jobs (and as many users) have series of their
 *   own; a new one past that takes the place of the one seen longest ago if
 *   that one is not on a GPU now, else it is counted under job_id "other"
 *   (user "other").  A job not seen for an hour is dropped.
 * - FLOPs per job: a GPU's FLOPs/s estimate (gpu_flops.h: absent without
 *   GPM or a known model) times the period, split like its energy.
 *
 * Cost: per GPU tick a pass over the frame, and for each process not in
 * the pid cache three small /proc reads (stat, status, environ; cgroup
 * when environ has no job); cached processes cost one stat read (their
 * start time tells a reused pid); the cache keeps only the processes on a
 * GPU now, and more processes than it holds are looked up every tick.
 * Memory, allocated at start: the pid cache (--gpu_pid_cache entries of 376
 * bytes: 94 KiB at the default 256) and two tables of --gpu_job_series
 * entries of 400 bytes (50 KiB at the default 64).
 */
#include "gpu_jobs.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "daemon/collect/collector.h"
#include "daemon/collect/proc.h"

/* ---------------- the listing (GPU collector's worker thread) ---------------- */

static nvmlReturn_t call_list(nvml_procs_fn fn, nvmlDevice_t h, struct gpu_proc_buf *b, unsigned *n)
{
	if (!b->cap) {
		b->cap = 64;
		b->p = xmalloc(b->cap * sizeof *b->p);
	}
	for (int tries = 0; tries < 3; tries++) {
		*n = b->cap;
		nvmlReturn_t r = fn(h, n, b->p);
		if (r != NVML_ERROR_INSUFFICIENT_SIZE || *n > 65536)
			return r;
		/* more processes than room: grow to what NVML asks, with slack
		 * for those starting meanwhile */
		b->cap = *n + 16;
		b->p = xrealloc(b->p, b->cap * sizeof *b->p);
	}
	return NVML_ERROR_INSUFFICIENT_SIZE;
}

static bool listed(const unsigned *pids, unsigned n, unsigned pid)
{
	for (unsigned i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

nvmlReturn_t gpu_procs_list(nvml_procs_fn compute, nvml_procs_fn graphics, nvmlDevice_t h, const char *dev,
			    struct frame *out, struct gpu_proc_buf *b)
{
	unsigned n = 0;
	nvmlReturn_t r = call_list(compute, h, b, &n);
	if (r != NVML_SUCCESS)
		return r;
	if (n > b->cap)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	/* pids and memory out of the buffer: the graphics call reuses it */
	unsigned *pids = xmalloc((n + 1) * sizeof *pids);
	unsigned long long *mem = xmalloc((n + 1) * sizeof *mem);
	unsigned np = 0;
	for (unsigned i = 0; i < n; i++)
		if (!listed(pids, np, b->p[i].pid)) {
			pids[np] = b->p[i].pid;
			mem[np++] = b->p[i].usedGpuMemory;
		}
	unsigned ng = 0;
	if (graphics && call_list(graphics, h, b, &ng) == NVML_SUCCESS && ng <= b->cap) {
		pids = xrealloc(pids, (np + ng + 1) * sizeof *pids);
		mem = xrealloc(mem, (np + ng + 1) * sizeof *mem);
		unsigned ncompute = np;
		for (unsigned i = 0; i < ng; i++)
			if (!listed(pids, np, b->p[i].pid)) {
				pids[np] = b->p[i].pid;
				mem[np++] = b->p[i].usedGpuMemory;
			}
		ng = np - ncompute;
	} else {
		ng = 0;
	}
	char k[160];
	snprintf(k, sizeof k, "gpu_processes.%s", dev);
	frame_uint(out, k, np);
	for (unsigned i = 0; i < np; i++) {
		snprintf(k, sizeof k, "gpu_process.%s:%u", dev, pids[i]);
		frame_str(out, k, i < np - ng ? "compute" : "graphics");
		if (mem[i] != NVML_VALUE_NOT_AVAILABLE) {
			snprintf(k, sizeof k, "gpu_process_memory_bytes.%s:%u", dev, pids[i]);
			frame_uint(out, k, mem[i]);
		}
	}
	free(pids);
	free(mem);
	return NVML_SUCCESS;
}

void gpu_proc_buf_free(struct gpu_proc_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->cap = 0;
}

/* ---------------- a process's job ---------------- */

static bool all_of(const char *s, size_t n, const char *set)
{
	return n && strspn(s, set) >= n;
}

/* "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope" or a
 * bare "<id>" (cgroupfs driver) -> "<id>" */
static void container_id(const char *seg, size_t n, char *out, size_t cap)
{
	out[0] = 0;
	if (n > 6 && memcmp(seg + n - 6, ".scope", 6) == 0)
		n -= 6;
	const char *dash = NULL;
	for (size_t i = 0; i < n; i++)
		if (seg[i] == '-')
			dash = seg + i;
	if (dash) {
		n -= (size_t)(dash + 1 - seg);
		seg = dash + 1;
	}
	if (n >= cap || !all_of(seg, n, "0123456789abcdefABCDEF"))
		return;
	memcpy(out, seg, n);
	out[n] = 0;
}

/* A Kubernetes pod in path: the segment after one starting "kubepods"
 * that names the pod (cgroupfs "pod<uid>", systemd
 * "kubepods-<qos>-pod<uid with _>.slice"), and the container after it. */
static bool k8s_from_path(const char *path, struct gpu_job_id *out)
{
	const char *kp = strstr(path, "kubepods");
	if (!kp)
		return false;
	for (const char *seg = kp; *seg;) {
		size_t n = strcspn(seg, "/");
		const char *uid = NULL;
		size_t ul = 0;
		if (n > 3 && memcmp(seg, "pod", 3) == 0) {
			uid = seg + 3;
			ul = n - 3;
		} else if (n > 14 && memcmp(seg, "kubepods", 8) == 0 && memcmp(seg + n - 6, ".slice", 6) == 0) {
			const char *p = strstr(seg, "-pod");
			if (p && p < seg + n - 6) {
				uid = p + 4;
				ul = (size_t)(seg + n - 6 - uid);
			}
		}
		if (uid && ul < sizeof out->id && ul >= 8 && all_of(uid, ul, "0123456789abcdefABCDEF-_")) {
			out->kind = GJ_K8S;
			for (size_t i = 0; i < ul; i++)
				out->id[i] = uid[i] == '_' ? '-' : uid[i];
			out->id[ul] = 0;
			const char *next = seg + n;
			if (*next == '/')
				next++;
			container_id(next, strcspn(next, "/"), out->container, sizeof out->container);
			return true;
		}
		seg += n;
		if (*seg == '/')
			seg++;
	}
	return false;
}

static bool job_from_path(const char *path, struct gpu_job_id *out)
{
	memset(out, 0, sizeof *out);
	char slurm[64];
	proc_job_from_cgroup(path, slurm, sizeof slurm);
	if (slurm[0]) {
		out->kind = GJ_SLURM;
		snprintf(out->id, sizeof out->id, "%s", slurm);
		return true;
	}
	if (k8s_from_path(path, out))
		return true;
	size_t n = strlen(path);
	if (path[0] != '/' || n >= sizeof out->id)
		return false;
	out->kind = GJ_CGROUP;
	memcpy(out->id, path, n + 1);
	return true;
}

bool gpu_job_from_cgroup(const char *text, size_t len, struct gpu_job_id *out)
{
	memset(out, 0, sizeof *out);
	/* the lines' paths: "hierarchy:controllers:/path" */
	char v2[512] = "", v1[512] = "";
	for (size_t i = 0; i < len;) {
		const char *l = text + i, *e = memchr(l, '\n', len - i);
		size_t n = e ? (size_t)(e - l) : len - i;
		i += n + 1;
		const char *a = memchr(l, ':', n), *b = a ? memchr(a + 1, ':', n - (size_t)(a + 1 - l)) : NULL;
		if (!b || b == l + n - 1 || b[1] != '/' || a == l || !all_of(l, (size_t)(a - l), "0123456789"))
			continue;
		size_t pl = n - (size_t)(b + 1 - l);
		if (pl >= sizeof v2 || memchr(b + 1, 0, pl))
			continue;
		char path[512];
		memcpy(path, b + 1, pl);
		path[pl] = 0;
		/* a line that names a job wins: in v1 only some hierarchies
		 * (cpu, memory, ...) hold a SLURM job or a pod */
		struct gpu_job_id j;
		if (job_from_path(path, &j) && j.kind != GJ_CGROUP) {
			*out = j;
			return true;
		}
		bool unified = a == l + 1 && l[0] == '0' && b == a + 1;
		if (unified)
			memcpy(v2, path, pl + 1);
		else if (!v1[0] || (strcmp(v1, "/") == 0 && strcmp(path, "/") != 0))
			memcpy(v1, path, pl + 1);
	}
	/* the unified hierarchy's path, unless it is the root of a hybrid
	 * layout while a v1 hierarchy names something below it */
	const char *path = v2[0] && !(strcmp(v2, "/") == 0 && v1[0] && strcmp(v1, "/") != 0) ? v2 : v1;
	return path[0] && job_from_path(path, out);
}

/* ---------------- the collector's state ---------------- */

#define JOB_EXPIRY_S 3600

struct pident {
	int pid;
	uint64_t start, seen; /* start time (ticks after boot); last tick listed */
	long uid;             /* -1: unknown */
	struct gpu_job_id job;
};

/* one job's or one user's series */
struct acct {
	char key[256];
	enum gpu_job_kind kind;
	long uid;
	char container[80];
	uint64_t seen;     /* last tick it was on a GPU */
	double sec, mj;    /* this tick's increments */
	double flop;       /* ... FLOPs (the GPUs' estimates x the period) */
	bool energy;       /* has had energy attributed: its energy series exists */
	bool flops;        /* has had FLOPs attributed: its FLOPs series exists */
	bool on_gpu;       /* listed this tick */
	unsigned long long mem;
	bool have_mem;
};

struct table {
	struct acct *a;
	size_t n;
	struct acct other;
	bool other_used;
};

struct devflag {
	char name[32];
	bool listed; /* at the previous GPU tick */
};

struct gj_state {
	char *root;
	size_t series, cache_max;
	struct pident *cache;
	size_t ncache;
	struct table jobs, users;
	struct devflag *devs;
	size_t ndevs;
	uint64_t tick;
	struct buf b;
};

static bool slurp(struct gj_state *s, int pid, const char *what)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%d/%s", s->root, pid, what);
	buf_reset(&s->b);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int r = buf_pread_all(&s->b, fd, 1u << 20);
	close(fd);
	return r == 0;
}

/* Who pid is: false when its /proc entry cannot be read (it exited, or it
 * lives in another pid namespace). */
static bool resolve(struct gj_state *s, int pid, struct pident *out)
{
	struct proc_stat st;
	if (!slurp(s, pid, "stat") || !proc_parse_stat(s->b.data, s->b.len, &st))
		return false;
	for (size_t i = 0; i < s->ncache; i++)
		if (s->cache[i].pid == pid && s->cache[i].start == st.start) {
			s->cache[i].seen = s->tick;
			*out = s->cache[i];
			return true;
		}
	/* a new process, or a pid reused by another one: look it up */
	memset(out, 0, sizeof *out);
	out->pid = pid;
	out->start = st.start;
	out->seen = s->tick;
	out->uid = -1;
	if (slurp(s, pid, "status")) {
		const char *u = strstr(s->b.data, "\nUid:");
		long v;
		if (u && sscanf(u + 5, "%ld", &v) == 1 && v >= 0)
			out->uid = v;
	}
	if (slurp(s, pid, "environ"))
		for (size_t i = 0; i < s->b.len;) {
			const char *e = s->b.data + i;
			size_t l = strnlen(e, s->b.len - i);
			if (l > 13 && strncmp(e, "SLURM_JOB_ID=", 13) == 0 && l - 13 < 64 &&
			    all_of(e + 13, l - 13, "0123456789_")) {
				out->job.kind = GJ_SLURM;
				snprintf(out->job.id, sizeof out->job.id, "%.*s", (int)(l - 13), e + 13);
			}
			i += l + 1;
		}
	if (out->job.kind == GJ_NONE && slurp(s, pid, "cgroup"))
		gpu_job_from_cgroup(s->b.data, s->b.len, &out->job);
	/* cache it; full: the entry seen longest ago goes */
	size_t slot = s->ncache;
	if (s->ncache >= s->cache_max) {
		slot = 0;
		for (size_t i = 1; i < s->ncache; i++)
			if (s->cache[i].seen < s->cache[slot].seen)
				slot = i;
		if (s->cache[slot].seen == s->tick)
			return true; /* every entry is on a GPU now: not cached */
	} else {
		s->ncache++;
	}
	s->cache[slot] = *out;
	return true;
}

static const char *kind_name(enum gpu_job_kind k)
{
	switch (k) {
	case GJ_SLURM: return "slurm";
	case GJ_K8S: return "kubernetes";
	case GJ_CGROUP: return "cgroup";
	default: return "unknown";
	}
}

/* The series of key: its own, a new one (taking the place of the one seen
 * longest ago when the table is full and that one is not on a GPU now), or
 * "other". */
static struct acct *account(struct table *t, size_t max, uint64_t tick, const char *key, enum gpu_job_kind kind,
			    long uid, const char *container)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->a[i].key, key) == 0)
			return &t->a[i];
	struct acct *a = NULL;
	if (t->n < max) {
		a = &t->a[t->n++];
	} else {
		for (size_t i = 0; i < t->n; i++)
			if (!t->a[i].on_gpu && (!a || t->a[i].seen < a->seen))
				a = &t->a[i];
		if (!a) {
			t->other_used = true;
			return &t->other;
		}
	}
	memset(a, 0, sizeof *a);
	snprintf(a->key, sizeof a->key, "%s", key);
	a->kind = kind;
	a->uid = uid;
	snprintf(a->container, sizeof a->container, "%s", container);
	a->seen = tick;
	return a;
}

/* ---------------- one tick ---------------- */

struct tproc {
	const char *dev;
	size_t devlen;
	int pid;
	unsigned long long mem;
	bool have_mem;
	size_t job; /* index into the tick's jobs */
};

struct tjob {
	struct acct *job, *user;
	char ident[256];
};

static bool find_u(const struct frame *f, const char *key, unsigned long long *out)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->vals[i].type == FV_UINT && strcmp(frame_key(f, &f->vals[i]), key) == 0) {
			*out = f->vals[i].v.u;
			return true;
		}
	return false;
}

/* The index of device name's flag (added if new); SIZE_MAX: none.  An
 * index, not a pointer: adding one moves the array. */
static size_t devflag(struct gj_state *s, const char *name, size_t n)
{
	for (size_t i = 0; i < s->ndevs; i++)
		if (strlen(s->devs[i].name) == n && memcmp(s->devs[i].name, name, n) == 0)
			return i;
	if (n >= sizeof s->devs[0].name || s->ndevs >= 4096)
		return SIZE_MAX;
	s->devs = xrealloc(s->devs, (s->ndevs + 1) * sizeof *s->devs);
	struct devflag *d = &s->devs[s->ndevs++];
	memcpy(d->name, name, n);
	d->name[n] = 0;
	d->listed = false;
	return s->ndevs - 1;
}

static bool on_dev(const struct devflag *d, const struct tproc *p)
{
	return strlen(d->name) == p->devlen && memcmp(d->name, p->dev, p->devlen) == 0;
}

static void emit_table(struct table *t, const char *base, const char *ukey, struct frame *f, bool jobs)
{
	char k[320];
	for (size_t i = 0; i <= t->n; i++) {
		struct acct *a = i < t->n ? &t->a[i] : &t->other;
		if (i == t->n && !t->other_used)
			break;
		const char *id = i < t->n ? a->key : "other";
		snprintf(k, sizeof k, "%s_seconds.%s", base, id);
		frame_float(f, k, a->sec);
		if (a->energy) {
			snprintf(k, sizeof k, "%s_energy_mj.%s", base, id);
			frame_float(f, k, a->mj);
		}
		if (a->flops) {
			snprintf(k, sizeof k, "%s_flop.%s", base, id);
			frame_float(f, k, a->flop);
		}
		if (jobs && a->have_mem) {
			snprintf(k, sizeof k, "%s_memory_bytes.%s", base, id);
			frame_uint(f, k, a->mem);
		}
		if (jobs) {
			snprintf(k, sizeof k, "%s_kind.%s", base, id);
			frame_str(f, k, i < t->n ? kind_name(a->kind) : "other");
			char u[32] = "other";
			if (i < t->n) {
				if (a->uid >= 0)
					snprintf(u, sizeof u, "%ld", a->uid);
				else
					snprintf(u, sizeof u, "unknown");
			}
			snprintf(k, sizeof k, "%s.%s", ukey, id);
			frame_str(f, k, u);
			if (a->container[0]) {
				snprintf(k, sizeof k, "%s_container.%s", base, id);
				frame_str(f, k, a->container);
			}
		}
		a->sec = a->mj = a->flop = 0;
		a->mem = 0;
		a->have_mem = a->on_gpu = false;
	}
}

/* Drop the series of jobs (users) not on a GPU for an hour. */
static void expire(struct table *t, uint64_t tick, int64_t interval_s)
{
	uint64_t ticks = (uint64_t)(JOB_EXPIRY_S / (interval_s > 0 ? interval_s : 1)) + 1;
	for (size_t i = 0; i < t->n;)
		if (tick - t->a[i].seen > ticks)
			t->a[i] = t->a[--t->n];
		else
			i++;
}

/* What split_among_jobs needs of one tick (gj_collect). */
struct tick {
	struct gj_state *s;
	const struct tproc *p;
	size_t np;
	struct tjob *tj;
	size_t ntj;
	const size_t *now; /* the devices listed now */
	const bool *was;   /* ... and whether each was at the previous tick */
	size_t nnow;
	bool *on; /* scratch, ntj + 1 */
};

/* A GPU's amount over the tick (gpu: its frame suffix; its MIG instances
 * "<gpu>/mig<k>" count under it) split equally among the distinct jobs on
 * it that were charged GPU time this tick (listed now and at the previous
 * tick); flop: FLOPs, else energy in mJ.  A GPU with no such job: not
 * attributed. */
static void split_among_jobs(const struct tick *t, const char *gpu, double amount, bool flop)
{
	size_t gl = strlen(gpu), nj = 0;
	memset(t->on, 0, (t->ntj + 1) * sizeof *t->on);
	for (size_t i = 0; i < t->np; i++) {
		const struct tproc *q = &t->p[i];
		bool mine = q->devlen == gl || (q->devlen > gl && q->dev[gl] == '/'); /* "0" or "0/migN" */
		if (!mine || memcmp(q->dev, gpu, gl) != 0 || t->on[q->job])
			continue;
		bool charged = false;
		for (size_t d = 0; d < t->nnow && !charged; d++)
			charged = t->was[d] && on_dev(&t->s->devs[t->now[d]], q);
		if (!charged)
			continue;
		t->on[q->job] = true;
		nj++;
	}
	for (size_t j = 0; j < t->ntj; j++) {
		if (!t->on[j])
			continue;
		double share = amount / (double)nj;
		struct acct *a[2] = {t->tj[j].job, t->tj[j].user};
		for (int w = 0; w < 2; w++) {
			if (flop) {
				a[w]->flop += share;
				a[w]->flops = true;
			} else {
				a[w]->mj += share;
				a[w]->energy = true;
			}
		}
	}
}

static enum collect_status gj_collect(void *state, struct frame *f)
{
	struct gj_state *s = state;
	unsigned long long interval;
	if (!find_u(f, GPU_INTERVAL_KEY, &interval)) {
		/* no GPU collection this tick (hung, or no GPU answered): the
		 * next listing of every device is a new baseline */
		for (size_t i = 0; i < s->ndevs; i++)
			s->devs[i].listed = false;
		return COLLECT_IDLE;
	}
	s->tick++;
	/* the frame's listings */
	size_t nproc = 0, ndl = 0;
	for (size_t i = 0; i < f->n; i++) {
		const char *k = frame_key(f, &f->vals[i]);
		nproc += f->vals[i].type == FV_STRING && strncmp(k, "gpu_process.", 12) == 0;
		ndl += strncmp(k, "gpu_processes.", 14) == 0;
	}
	struct tproc *p = xcalloc(nproc + 1, sizeof *p);
	struct tjob *tj = xcalloc(nproc + 1, sizeof *tj);
	size_t *now = xcalloc(ndl + 1, sizeof *now); /* the devices listed now */
	bool *was = xcalloc(ndl + 1, sizeof *was);
	size_t np = 0, nnow = 0, ntj = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		const char *k = frame_key(f, v);
		if (v->type == FV_UINT && strncmp(k, "gpu_processes.", 14) == 0) {
			size_t d = devflag(s, k + 14, strlen(k + 14));
			if (d != SIZE_MAX && nnow < ndl) {
				was[nnow] = s->devs[d].listed;
				now[nnow++] = d;
			}
			continue;
		}
		if (v->type != FV_STRING || strncmp(k, "gpu_process.", 12) != 0)
			continue;
		const char *dev = k + 12, *colon = strrchr(dev, ':');
		char *end;
		long pid = colon ? strtol(colon + 1, &end, 10) : 0;
		if (!colon || pid <= 0 || pid > 0x7fffffff || *end)
			continue;
		struct tproc *t = &p[np++];
		t->dev = dev;
		t->devlen = (size_t)(colon - dev);
		t->pid = (int)pid;
		char mk[200];
		snprintf(mk, sizeof mk, "gpu_process_memory_bytes.%s", dev);
		t->have_mem = find_u(f, mk, &t->mem);
	}
	/* every device not listed now loses its baseline */
	for (size_t i = 0; i < s->ndevs; i++) {
		bool in = false;
		for (size_t j = 0; j < nnow && !in; j++)
			in = now[j] == i;
		if (!in)
			s->devs[i].listed = false;
	}
	if (!nnow) {
		free(p);
		free(tj);
		free(now);
		free(was);
		return COLLECT_IDLE; /* no device's processes could be listed: absent */
	}
	/* each process's job: its series (or "other") and its user's */
	for (size_t i = 0; i < np; i++) {
		struct pident id;
		if (!resolve(s, p[i].pid, &id)) {
			memset(&id, 0, sizeof id);
			id.uid = -1;
		}
		const char *key = id.job.kind == GJ_NONE ? "unknown" : id.job.id;
		struct acct *j = account(&s->jobs, s->series, s->tick, key, id.job.kind, id.uid, id.job.container);
		j->seen = s->tick;
		j->on_gpu = true;
		if (p[i].have_mem) {
			j->mem += p[i].mem;
			j->have_mem = true;
		}
		/* the tick's distinct jobs, by identity: two jobs folded into
		 * "other" still share a GPU as two */
		size_t t;
		for (t = 0; t < ntj; t++)
			if (strcmp(tj[t].ident, key) == 0)
				break;
		if (t == ntj) {
			char ukey[32];
			long uid = j != &s->jobs.other ? j->uid : id.uid;
			if (uid >= 0)
				snprintf(ukey, sizeof ukey, "%ld", uid);
			else
				snprintf(ukey, sizeof ukey, "unknown");
			snprintf(tj[ntj].ident, sizeof tj[ntj].ident, "%s", key);
			tj[ntj].job = j;
			tj[ntj].user = account(&s->users, s->series, s->tick, ukey, GJ_NONE, uid, "");
			tj[ntj].user->seen = s->tick;
			tj[ntj].user->on_gpu = true;
			ntj++;
		}
		p[i].job = t;
	}
	/* GPU-seconds: each device listed now and at the previous tick */
	bool *on = xcalloc(ntj + 1, sizeof *on);
	for (size_t d = 0; d < nnow; d++) {
		if (!was[d])
			continue;
		size_t nj = 0;
		memset(on, 0, (ntj + 1) * sizeof *on);
		for (size_t i = 0; i < np; i++)
			if (on_dev(&s->devs[now[d]], &p[i]) && !on[p[i].job]) {
				on[p[i].job] = true;
				nj++;
			}
		for (size_t t = 0; t < ntj; t++)
			if (on[t]) {
				tj[t].job->sec += (double)interval / (double)nj;
				tj[t].user->sec += (double)interval / (double)nj;
			}
	}
	/* energy and FLOPs: each GPU's over the tick, among the jobs on it
	 * and its MIG instances (split_among_jobs) */
	const struct tick tk = {s, p, np, tj, ntj, now, was, nnow, on};
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		const char *k = frame_key(f, v);
		if (v->type == FV_UINT && strncmp(k, "gpu_energy_mj.", 14) == 0)
			split_among_jobs(&tk, k + 14, (double)v->v.u, false);
		else if (v->type == FV_FLOAT && strncmp(k, "gpu_flops.", 10) == 0)
			/* the estimate is a rate over the tick: FLOPs = rate x period */
			split_among_jobs(&tk, k + 10, v->v.f * (double)interval, true);
	}
	for (size_t d = 0; d < nnow; d++)
		s->devs[now[d]].listed = true;
	emit_table(&s->jobs, "gpu_job", "gpu_job_user", f, true);
	emit_table(&s->users, "gpu_user", NULL, f, false);
	expire(&s->jobs, s->tick, (int64_t)interval);
	expire(&s->users, s->tick, (int64_t)interval);
	/* the pid cache keeps the processes on GPUs now */
	for (size_t i = 0; i < s->ncache;)
		if (s->cache[i].seen != s->tick)
			s->cache[i] = s->cache[--s->ncache];
		else
			i++;
	if (s->b.cap > (1u << 20))
		buf_free(&s->b);
	free(on);
	free(p);
	free(tj);
	free(now);
	free(was);
	return COLLECT_OK;
}

/* ---------------- the collector table's row (collect/list.h) ---------------- */

static const struct arg_opt gj_opts[] = {
	MOD_OPT(struct gpu_jobs_config, series, "gpu_job_series", ARG_INT, "N",
		"most jobs (and users) with GPU accounting series of their own; the rest count as \"other\"", 1,
		10000),
	MOD_OPT(struct gpu_jobs_config, cache, "gpu_pid_cache", ARG_INT, "N",
		"processes on GPUs whose job and user are remembered (keyed by pid and start time)", 1, 65536),
	{0},
};

static const struct gpu_jobs_config gj_defaults = {64, 256};

static void gj_close(void *state)
{
	struct gj_state *s = state;
	if (!s)
		return;
	free(s->root);
	free(s->cache);
	free(s->jobs.a);
	free(s->users.a);
	free(s->devs);
	buf_free(&s->b);
	free(s);
}

static bool gj_apply(void **state, const void *old, const void *cfg, const struct collect_env *env, struct buf *err)
{
	(void)old;
	(void)err;
	const struct gpu_jobs_config *c = cfg;
	struct gj_state *s = *state;
	if (s && (size_t)c->series == s->series && (size_t)c->cache == s->cache_max)
		return true;
	/* new bounds: start over (the accumulated totals live in the sinks) */
	gj_close(s);
	s = xcalloc(1, sizeof *s);
	s->root = xstrdup(env->procfs_root ? env->procfs_root : "/proc");
	s->series = (size_t)c->series;
	s->cache_max = (size_t)c->cache;
	s->cache = xcalloc(s->cache_max, sizeof *s->cache);
	s->jobs.a = xcalloc(s->series, sizeof *s->jobs.a);
	s->users.a = xcalloc(s->series, sizeof *s->users.a);
	buf_init(&s->b);
	*state = s;
	return true;
}

/* The keys it emits, for Prometheus and OTLP (metric.h; docs/metrics.md).
 * key, suffixed, kind, scale, prom, label, strip, fixed_label, help, otel, unit, attr, otel_fixed */
#define J(k, kind, sc, p, h, o, u) {k, true, kind, sc, p, "job_id", NULL, NULL, h, o, u, "dynolog.job.id", NULL}
#define U(k, kind, sc, p, h, o, u) {k, true, kind, sc, p, "user", NULL, NULL, h, o, u, "user.id", NULL}
static const struct metric_desc gj_catalog[] = {
	J("gpu_job_seconds", MK_COUNTER, 1, "dynolog_gpu_job_seconds_total",
	  "GPU time used by a job: each GPU tick's period, split equally among the jobs on that GPU.",
	  "dynolog.gpu.job.time", "s"),
	J("gpu_job_energy_mj", MK_COUNTER, 0.001, "dynolog_gpu_job_energy_joules_total",
	  "GPU energy used by a job: each GPU's energy over a tick, split equally among the jobs on it.",
	  "dynolog.gpu.job.energy", "J"),
	J("gpu_job_flop", MK_COUNTER, 1, "dynolog_gpu_job_flop_total",
	  "Floating-point operations of a job: each GPU's FLOPs/s estimate times the tick's period, split equally "
	  "among the jobs on it.",
	  "dynolog.gpu.job.flop", "{flop}"),
	J("gpu_job_memory_bytes", MK_GAUGE, 1, "dynolog_gpu_job_memory_used_bytes",
	  "GPU memory used by a job's processes, all GPUs.", "dynolog.gpu.job.memory.usage", "By"),
	U("gpu_user_seconds", MK_COUNTER, 1, "dynolog_gpu_user_seconds_total",
	  "GPU time used by a user's jobs (the sum of their dynolog_gpu_job_seconds_total).", "dynolog.gpu.user.time",
	  "s"),
	U("gpu_user_energy_mj", MK_COUNTER, 0.001, "dynolog_gpu_user_energy_joules_total",
	  "GPU energy used by a user's jobs.", "dynolog.gpu.user.energy", "J"),
	U("gpu_user_flop", MK_COUNTER, 1, "dynolog_gpu_user_flop_total", "Floating-point operations of a user's jobs.",
	  "dynolog.gpu.user.flop", "{flop}"),
	{"gpu_processes", true, MK_GAUGE, 1, "dynolog_gpu_processes", "gpu", NULL, NULL,
	 "Processes using the GPU (compute and graphics).", "dynolog.gpu.processes", "{process}", "hw.id", NULL},
	/* per process: JSON log and getMetrics only (the suffix holds two labels) */
	{"gpu_process_memory_bytes", true, MK_GAUGE, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
	/* the GPU tick's period: for this collector only */
	{GPU_INTERVAL_KEY, false, MK_GAUGE, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
#undef J
#undef U

const struct collector collector_gpu_jobs = {
	.name = "gpu_jobs",
	.catalog = gj_catalog,
	.ncatalog = sizeof gj_catalog / sizeof gj_catalog[0],
	.config = {gj_opts, sizeof(struct gpu_jobs_config), &gj_defaults},
	.rides_on = "nvml", /* reads the GPU tick's process lists from its frame */
	.apply = gj_apply,
	.collect = gj_collect,
	.close = gj_close,
};
