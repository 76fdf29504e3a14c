/* registry.c - see registry.h. */
#include "registry.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"

void registry_init(struct registry *r, size_t max_procs)
{
	memset(r, 0, sizeof *r);
	r->max_procs = max_procs ? max_procs : 65536;
	r->max_per_uid = r->max_procs / 4 ? r->max_procs / 4 : 1;
	r->max_per_sender = REG_MAX_PER_SENDER;
	r->max_config = REG_MAX_CONFIG;
	if (gethostname(r->host, sizeof r->host - 1) < 0)
		strcpy(r->host, "localhost");
}

/* ---- counters per sender: linear probing, backward-shift deletion ---- */

static size_t slot_of(const struct reg_counts *c, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 17) & (c->cap - 1);
	while (c->slot[i].key && c->slot[i].key != key)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static uint32_t count_get(const struct reg_counts *c, uint64_t key)
{
	if (!c->cap)
		return 0;
	return c->slot[slot_of(c, key)].n;
}

static void count_inc(struct reg_counts *c, uint64_t key)
{
	if ((c->used + 1) * 2 > c->cap) {
		struct reg_counts big = {.cap = c->cap ? c->cap * 2 : 64};
		big.slot = xcalloc(big.cap, sizeof *big.slot);
		for (size_t i = 0; i < c->cap; i++)
			if (c->slot[i].key)
				big.slot[slot_of(&big, c->slot[i].key)] = c->slot[i];
		big.used = c->used;
		free(c->slot);
		*c = big;
	}
	size_t i = slot_of(c, key);
	if (!c->slot[i].key) {
		c->slot[i].key = key;
		c->used++;
	}
	c->slot[i].n++;
}

static void count_dec(struct reg_counts *c, uint64_t key)
{
	if (!key || !c->cap)
		return;
	size_t i = slot_of(c, key);
	if (!c->slot[i].key || --c->slot[i].n)
		return;
	/* Empty the slot and pull later entries of the run back into it. */
	size_t mask = c->cap - 1;
	c->slot[i].key = 0;
	c->used--;
	for (size_t j = (i + 1) & mask; c->slot[j].key; j = (j + 1) & mask) {
		size_t home = (size_t)((c->slot[j].key * 0x9e3779b97f4a7c15ull) >> 17) & mask;
		/* move j to i when its home is not in (i, j] (cyclically) */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			c->slot[i] = c->slot[j];
			c->slot[j].key = 0;
			c->slot[j].n = 0;
			i = j;
		}
	}
}

/* Keys: a uid has the top bit set (its processes; bit 62 also: the job
 * ids it created; bit 61: its ctxt tables and pids); a socket name is a
 * 63-bit FNV-1a hash with the low bit set (so never 0). */
static uint64_t uid_key(uint32_t uid) { return (1ull << 63) | uid; }
static uint64_t uid_jobs_key(uint32_t uid) { return (1ull << 63) | (1ull << 62) | uid; }
static uint64_t uid_ctxt_key(uint32_t uid) { return (1ull << 63) | (1ull << 61) | uid; }

static uint64_t name_key(const void *name, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= ((const uint8_t *)name)[i];
		h *= 1099511628211ull;
	}
	return (h & ~(1ull << 63)) | 1;
}

static size_t slen(const char *t) { return t ? strlen(t) : 0; }

static void proc_free(struct reg_proc *p)
{
	free(p->ancestry);
	free(p->key);
	free(p->pending_evt);
	free(p->pending_act);
	free(p);
}

static void job_free(struct reg_job *j)
{
	for (size_t i = 0; i < j->n; i++)
		proc_free(j->procs[i]);
	free(j->procs);
	for (size_t i = 0; i < j->nctxt; i++) {
		free(j->ctxt[i].pids);
		free(j->ctxt[i].by);
	}
	free(j->ctxt);
}

void registry_free(struct registry *r)
{
	for (size_t i = 0; i < r->njobs; i++)
		job_free(&r->jobs[i]);
	free(r->jobs);
	free(r->counts.slot);
	memset(r, 0, sizeof *r);
}

void registry_job_str(int64_t job, char out[24]) { snprintf(out, 24, "%" PRId64, job); }

struct reg_job *registry_find_job(struct registry *r, const char *job)
{
	for (size_t i = 0; i < r->njobs; i++)
		if (strcmp(r->jobs[i].id, job) == 0)
			return &r->jobs[i];
	return NULL;
}

/* NULL when a new job would exceed REG_MAX_JOBS, or its creator's share
 * (owner: the user's job counter, 0: not counted). */
static struct reg_job *get_job(struct registry *r, const char *job, uint64_t owner, int64_t now_ns)
{
	struct reg_job *j = registry_find_job(r, job);
	if (j)
		return j;
	if (owner && count_get(&r->counts, owner) >= REG_MAX_JOBS_PER_UID) {
		r->stats.refused_uid++;
		LOG_RATELIMITED(LOG_LEVEL_WARN,
				"registry: refused job %s: uid %u already created %d job ids (the per-user cap)", job,
				(unsigned)(owner & 0xffffffffu), REG_MAX_JOBS_PER_UID);
		return NULL;
	}
	if (r->njobs >= REG_MAX_JOBS) {
		r->stats.refused_full++;
		LOG_ONCE(LOG_LEVEL_WARN, "registry: more than %d job ids, ignoring new ones", REG_MAX_JOBS);
		return NULL;
	}
	r->jobs = xrealloc(r->jobs, (r->njobs + 1) * sizeof *r->jobs);
	j = &r->jobs[r->njobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->id, sizeof j->id, "%s", job);
	j->owner_key = owner;
	j->ctxt_seen_ns = now_ns;
	if (owner)
		count_inc(&r->counts, owner);
	return j;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Sorted, de-duplicated copy (key holds n): the pid-set identity of a
 * process, and the set of pids a trigger asks for. */
static size_t make_key(const int32_t *pids, size_t n, int32_t *key)
{
	if (n == 0)
		return 0; /* pids may be NULL */
	memcpy(key, pids, n * sizeof *key);
	qsort(key, n, sizeof *key, cmp_i32);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || key[m - 1] != key[i])
			key[m++] = key[i];
	return m;
}

/* Upstream's set order: element-wise, a proper prefix first. */
static int key_cmp(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb)
{
	uint32_t n = na < nb ? na : nb;
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return (na > nb) - (na < nb);
}

/* Index of the process with this key, or -(insertion point) - 1. */
static ssize_t find_proc(const struct reg_job *j, const int32_t *key, uint32_t nkey)
{
	size_t lo = 0, hi = j->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(j->procs[mid]->key, j->procs[mid]->nkey, key, nkey);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(ssize_t)lo - 1;
}

static void remove_job_at(struct registry *r, size_t i)
{
	struct reg_job *j = &r->jobs[i];
	for (size_t k = 0; k < j->nctxt; k++) {
		r->nctxt_entries -= 1 + j->ctxt[k].n;
		count_dec(&r->counts, j->ctxt[k].by_table);
		for (size_t e = 0; e < j->ctxt[k].n; e++)
			count_dec(&r->counts, j->ctxt[k].by[e]);
	}
	count_dec(&r->counts, j->owner_key);
	job_free(j);
	r->jobs[i] = r->jobs[--r->njobs];
}

/* Parse the few Kineto keys that tell how long a delivered trace lasts, to
 * estimate when a process is busy (the getProcesses "busy" state).  Same
 * line rules as Kineto (5.1): '#' comments, KEY=VALUE trimmed. */
static int64_t trace_window_ns(const char *cfg)
{
	int64_t dur_ms = 500, warm_s = 5;
	const char *p = cfg;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[256];
		if (n < sizeof line) {
			memcpy(line, p, n);
			line[n] = 0;
			char *hash = strchr(line, '#');
			if (hash)
				*hash = 0;
			char *eq = strchr(line, '=');
			if (eq) {
				*eq = 0;
				char *k = line + strspn(line, " \t");
				char *ke = k + strlen(k);
				while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
					*--ke = 0;
				long long v = strtoll(eq + 1, NULL, 10);
				if (v >= 0 && v <= INT32_MAX) {
					if (!strcmp(k, "ACTIVITIES_DURATION_MSECS"))
						dur_ms = v;
					else if (!strcmp(k, "ACTIVITIES_DURATION_SECS"))
						dur_ms = v * 1000;
					else if (!strcmp(k, "ACTIVITIES_WARMUP_PERIOD_SECS"))
						warm_s = v;
				}
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	/* Kineto starts ~warm-up + 2 s after pick-up; allow 5 s to write. */
	return (warm_s + 2 + 5) * NS_PER_SEC + dur_ms * NS_PER_MS;
}

int registry_poll(struct registry *r, int64_t job, const int32_t *pids, uint32_t n, int32_t type,
		  int64_t now_ns, struct reg_delivery *d)
{
	return registry_poll_from(r, NULL, job, pids, n, type, now_ns, d);
}

/* Whether a new process from s fits under its caps; logs and counts when not. */
static bool sender_may_register(struct registry *r, const struct reg_sender *s, int32_t leaf, uint64_t uk,
				uint64_t nk)
{
	if (nk && count_get(&r->counts, nk) >= r->max_per_sender) {
		r->stats.refused_sender++;
		LOG_RATELIMITED(LOG_LEVEL_WARN,
				"registry: refused process %d: its socket already registered %zu processes (the "
				"per-sender cap)",
				(int)leaf, r->max_per_sender);
		return false;
	}
	if (uk && count_get(&r->counts, uk) >= r->max_per_uid) {
		r->stats.refused_uid++;
		LOG_RATELIMITED(LOG_LEVEL_WARN,
				"registry: refused process %d: uid %u already registered %zu processes (the per-user "
				"cap)",
				(int)leaf, (unsigned)s->uid, r->max_per_uid);
		return false;
	}
	return true;
}

int registry_poll_from(struct registry *r, const struct reg_sender *s, int64_t job, const int32_t *pids,
		       uint32_t n, int32_t type, int64_t now_ns, struct reg_delivery *d)
{
	d->evt = d->act = NULL;
	if (n < 1 || n > REG_MAX_PIDS)
		return -1;
	int32_t key[REG_MAX_PIDS];
	uint32_t nkey = (uint32_t)make_key(pids, n, key);
	char js[24];
	registry_job_str(job, js);
	struct reg_job *j = registry_find_job(r, js);
	ssize_t at = j ? find_proc(j, key, nkey) : -1;
	int created = 0;
	struct reg_proc *p;
	if (j && at >= 0) {
		p = j->procs[at];
	} else {
		uint64_t uk = s && s->has_uid ? uid_key(s->uid) : 0;
		uint64_t nk = s && s->name_len ? name_key(s->name, s->name_len) : 0;
		if (!sender_may_register(r, s, pids[0], uk, nk))
			return -1;
		if (r->nprocs >= r->max_procs) {
			r->stats.refused_full++;
			LOG_RATELIMITED(LOG_LEVEL_WARN, "registry: refused process %d: the registry is full (%zu processes)",
					(int)pids[0], r->max_procs);
			return -1;
		}
		j = get_job(r, js, s && s->has_uid ? uid_jobs_key(s->uid) : 0, now_ns);
		if (!j)
			return -1;
		at = find_proc(j, key, nkey);
		size_t ins = (size_t)(-at - 1);
		p = xcalloc(1, sizeof *p);
		p->leaf = pids[0];
		p->nanc = n;
		p->ancestry = xmalloc(n * sizeof *p->ancestry);
		memcpy(p->ancestry, pids, n * sizeof *pids);
		p->nkey = nkey;
		p->key = xmalloc(nkey * sizeof *p->key);
		memcpy(p->key, key, nkey * sizeof *key);
		p->first_seen_ns = now_ns;
		p->uid_key = uk;
		p->name_key = nk;
		if (uk)
			count_inc(&r->counts, uk);
		if (nk)
			count_inc(&r->counts, nk);
		if (j->n == j->cap) {
			j->cap = j->cap ? j->cap * 2 : 8;
			j->procs = xrealloc(j->procs, j->cap * sizeof *j->procs);
		}
		memmove(j->procs + ins + 1, j->procs + ins, (j->n - ins) * sizeof *j->procs);
		j->procs[ins] = p;
		j->n++;
		r->nprocs++;
		r->stats.registered++;
		created = 1;
		LOG_RATELIMITED(LOG_LEVEL_INFO, "registered process %d (job %s, %u pids)", (int)p->leaf, js, n);
	}
	if ((type & REG_EVENTS) && p->pending_evt) {
		r->pending_bytes -= slen(p->pending_evt);
		d->evt = p->pending_evt;
		p->pending_evt = NULL;
	}
	if ((type & REG_ACTIVITIES) && p->pending_act) {
		r->pending_bytes -= slen(p->pending_act);
		d->act = p->pending_act;
		p->pending_act = NULL;
		p->delivered_ns = now_ns;
		p->busy_until_ns = now_ns + trace_window_ns(d->act);
	}
	if (d->evt || d->act)
		r->stats.delivered++;
	p->last_seen_ns = now_ns;
	p->last_type = type;
	return created;
}

void registry_delivery_text(const struct reg_delivery *d, struct buf *out)
{
	if (d->evt) {
		buf_puts(out, d->evt);
		buf_putc(out, '\n');
	}
	if (d->act) {
		buf_puts(out, d->act);
		buf_putc(out, '\n');
	}
}

void registry_delivery_free(struct reg_delivery *d)
{
	free(d->evt);
	free(d->act);
	d->evt = d->act = NULL;
}

void registry_restore(struct registry *r, int64_t job, const int32_t *pids, uint32_t n,
		      struct reg_delivery *d)
{
	char js[24];
	registry_job_str(job, js);
	struct reg_job *j = registry_find_job(r, js);
	if (j && n >= 1 && n <= REG_MAX_PIDS && (d->evt || d->act)) {
		int32_t key[REG_MAX_PIDS];
		uint32_t nkey = (uint32_t)make_key(pids, n, key);
		ssize_t at = find_proc(j, key, nkey);
		if (at >= 0) {
			struct reg_proc *p = j->procs[at];
			if (d->evt && !p->pending_evt) {
				r->pending_bytes += slen(d->evt);
				p->pending_evt = d->evt;
				d->evt = NULL;
			}
			if (d->act && !p->pending_act) {
				r->pending_bytes += slen(d->act);
				p->pending_act = d->act;
				d->act = NULL;
				p->delivered_ns = 0;
				p->busy_until_ns = 0;
			}
			r->stats.restored++;
		}
	}
	registry_delivery_free(d);
}

static char *wrap_config(struct registry *r, const struct reg_proc *p, const char *config, size_t len)
{
	/* Upstream's trace id is a hash of host:pid:seconds; Kineto treats it as
	 * an opaque string.  FNV-1a of the same text plus a sequence number
	 * keeps ids unique even for two requests in the same second. */
	char seed[160];
	int sn = snprintf(seed, sizeof seed, "%s:%d:%lld:%llu", r->host, (int)p->leaf,
			  (long long)(clock_wall_ns() / NS_PER_SEC), (unsigned long long)++r->trace_seq);
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < sn && i < (int)sizeof seed; i++) {
		h ^= (uint8_t)seed[i];
		h *= 1099511628211ull;
	}
	struct buf b = BUF_INIT;
	buf_puts(&b, "\n    ");
	buf_append(&b, config, len);
	buf_printf(&b, "\n    REQUEST_TRACE_ID=%llu", (unsigned long long)h);
	return buf_detach(&b, NULL);
}

/* want is sorted: probe it with each of the process's (<= 64) pids, so an
 * absurdly long pid list costs log(n) per pid, not n. */
static bool proc_matches(const struct reg_proc *p, const int32_t *want, size_t nwant)
{
	for (uint32_t i = 0; i < p->nkey; i++)
		if (bsearch(&p->key[i], want, nwant, sizeof *want, cmp_i32))
			return true;
	return false;
}

static void push(int32_t **arr, size_t *n, int32_t v)
{
	*arr = xrealloc(*arr, (*n + 1) * sizeof **arr);
	(*arr)[(*n)++] = v;
}

void registry_trigger(struct registry *r, const char *job, const int32_t *pids, size_t npids,
		      const char *config, size_t config_len, int type, int64_t limit, int64_t now_ns,
		      struct reg_trigger *out)
{
	(void)now_ns;
	memset(out, 0, sizeof *out);
	struct reg_job *j = registry_find_job(r, job);
	if (!j)
		return;
	/* The requested pids as a set (upstream uses std::set). */
	int32_t *want = xmalloc((npids ? npids : 1) * sizeof *want);
	size_t nw = make_key(pids, npids, want);
	bool all = nw == 0 || (nw == 1 && want[0] == 0);
	size_t cost = config_len + REG_WRAP_OVERHEAD;
	for (size_t i = 0; i < j->n; i++) {
		struct reg_proc *p = j->procs[i];
		if (!all && !proc_matches(p, want, nw))
			continue;
		push(&out->matched, &out->nmatched, p->leaf);
		if ((type & REG_ACTIVITIES) && (int64_t)out->nact < limit) {
			if (!p->pending_act && r->pending_bytes + cost > REG_MAX_PENDING_BYTES) {
				out->no_memory++;
				r->stats.refused_memory++;
			} else if (!p->pending_act) {
				p->pending_act = wrap_config(r, p, config, config_len);
				r->pending_bytes += slen(p->pending_act);
				push(&out->act_triggered, &out->nact, p->leaf);
				r->stats.triggered++;
			} else {
				out->act_busy++;
				r->stats.busy++;
			}
		}
		if ((type & REG_EVENTS) && (int64_t)out->nevt < limit) {
			if (!p->pending_evt && r->pending_bytes + cost > REG_MAX_PENDING_BYTES) {
				out->no_memory++;
				r->stats.refused_memory++;
			} else if (!p->pending_evt) {
				p->pending_evt = wrap_config(r, p, config, config_len);
				r->pending_bytes += slen(p->pending_evt);
				push(&out->evt_triggered, &out->nevt, p->leaf);
			} else {
				out->evt_busy++;
			}
		}
	}
	free(want);
	if (out->no_memory)
		LOG_RATELIMITED(LOG_LEVEL_WARN,
				"registry: %zu matched processes not triggered: undelivered configs already take %zu "
				"bytes (the limit is %u)",
				out->no_memory, r->pending_bytes, REG_MAX_PENDING_BYTES);
}

int32_t *registry_match(struct registry *r, const char *job, const int32_t *pids, size_t npids, size_t *n)
{
	*n = 0;
	struct reg_job *j = registry_find_job(r, job);
	if (!j)
		return NULL;
	int32_t *want = xmalloc((npids ? npids : 1) * sizeof *want);
	size_t nw = make_key(pids, npids, want);
	bool all = nw == 0 || (nw == 1 && want[0] == 0);
	int32_t *out = NULL;
	for (size_t i = 0; i < j->n; i++)
		if (all || proc_matches(j->procs[i], want, nw))
			push(&out, n, j->procs[i]->leaf);
	free(want);
	return out;
}

void registry_trigger_free(struct reg_trigger *t)
{
	free(t->matched);
	free(t->act_triggered);
	free(t->evt_triggered);
	memset(t, 0, sizeof *t);
}

int32_t registry_ctxt(struct registry *r, int64_t job, int32_t gpu, int32_t pid)
{
	return registry_ctxt_from(r, NULL, job, gpu, pid, 0);
}

/* Whether the sender's user may add one more ctxt table or pid (its
 * quarter of the max_procs entries all jobs share). */
static bool ctxt_share_ok(struct registry *r, uint64_t ck)
{
	if (!ck || count_get(&r->counts, ck) < r->max_per_uid)
		return true;
	r->stats.refused_uid++;
	LOG_RATELIMITED(LOG_LEVEL_WARN, "registry: refused a ctxt: uid %u already added %zu ctxt entries (the per-user cap)",
			(unsigned)(ck & 0xffffffffu), r->max_per_uid);
	return false;
}

int32_t registry_ctxt_from(struct registry *r, const struct reg_sender *s, int64_t job, int32_t gpu, int32_t pid,
			   int64_t now_ns)
{
	char js[24];
	registry_job_str(job, js);
	bool uid = s && s->has_uid;
	uint64_t ck = uid ? uid_ctxt_key(s->uid) : 0;
	bool existed = registry_find_job(r, js) != NULL;
	struct reg_job *j = get_job(r, js, uid ? uid_jobs_key(s->uid) : 0, now_ns);
	if (!j)
		return -1;
	struct reg_ctxt *c = NULL;
	for (size_t i = 0; i < j->nctxt; i++)
		if (j->ctxt[i].gpu == gpu)
			c = &j->ctxt[i];
	if (!c) {
		/* Tables and pids of every job together are bounded like the
		 * process table: a flood of made-up (job, gpu, pid) stops here. */
		if (j->nctxt >= REG_MAX_GPUS || r->nctxt_entries >= r->max_procs || !ctxt_share_ok(r, ck)) {
			if (j->nctxt >= REG_MAX_GPUS || r->nctxt_entries >= r->max_procs)
				r->stats.refused_full++;
			if (!existed) /* created just now for nothing: give its slot back */
				remove_job_at(r, (size_t)(j - r->jobs));
			return -1;
		}
		r->nctxt_entries++;
		j->ctxt = xrealloc(j->ctxt, (j->nctxt + 1) * sizeof *j->ctxt);
		c = &j->ctxt[j->nctxt++];
		memset(c, 0, sizeof *c);
		c->gpu = gpu;
		c->by_table = ck;
		if (ck)
			count_inc(&r->counts, ck);
	}
	if (c->n == 0 || !bsearch(&pid, c->pids, c->n, sizeof *c->pids, cmp_i32)) {
		/* Bounded like the main table: a flood of fake pids stops here. */
		if (c->n < r->max_procs && r->nctxt_entries < r->max_procs && ctxt_share_ok(r, ck)) {
			r->nctxt_entries++;
			size_t at = 0;
			while (at < c->n && c->pids[at] < pid)
				at++;
			c->pids = xrealloc(c->pids, (c->n + 1) * sizeof *c->pids);
			c->by = xrealloc(c->by, (c->n + 1) * sizeof *c->by);
			memmove(c->pids + at + 1, c->pids + at, (c->n - at) * sizeof *c->pids);
			memmove(c->by + at + 1, c->by + at, (c->n - at) * sizeof *c->by);
			c->pids[at] = pid;
			c->by[at] = ck;
			if (ck)
				count_inc(&r->counts, ck);
			c->n++;
		}
	}
	j->ctxt_seen_ns = now_ns; /* answered: a refused ctxt keeps no job alive */
	return (int32_t)c->n;
}

size_t registry_expire(struct registry *r, int64_t now_ns, int64_t max_age_s)
{
	size_t removed = 0;
	for (size_t ji = 0; ji < r->njobs;) {
		struct reg_job *j = &r->jobs[ji];
		size_t keep = 0, gone = 0;
		for (size_t i = 0; i < j->n; i++) {
			struct reg_proc *p = j->procs[i];
			/* whole seconds, as upstream: silent for more than max_age_s */
			if ((now_ns - p->last_seen_ns) / NS_PER_SEC > max_age_s) {
				LOG_RATELIMITED(LOG_LEVEL_INFO, "expired process %d (job %s): silent for %llds", (int)p->leaf, j->id,
					 (long long)((now_ns - p->last_seen_ns) / NS_PER_SEC));
				count_dec(&r->counts, p->uid_key);
				count_dec(&r->counts, p->name_key);
				r->pending_bytes -= slen(p->pending_act) + slen(p->pending_evt);
				proc_free(p);
				gone++;
			} else {
				j->procs[keep++] = p;
			}
		}
		j->n = keep;
		removed += gone;
		/* A job emptied by this pass goes, with its ctxt table; so does a
		 * job that only ever sent ctxt, once its last ctxt is as old as a
		 * silent process (upstream keeps it until restart, so made-up ids
		 * filled the job table for good: issue #35 item 1). */
		if ((gone && keep == 0) || (keep == 0 && (now_ns - j->ctxt_seen_ns) / NS_PER_SEC > max_age_s))
			remove_job_at(r, ji);
		else
			ji++;
	}
	r->nprocs -= removed;
	r->stats.expired += removed;
	return removed;
}

int64_t registry_next_expiry(const struct registry *r, int64_t max_age_s)
{
	int64_t best = -1;
	for (size_t ji = 0; ji < r->njobs; ji++) {
		if (r->jobs[ji].n == 0) { /* ctxt only: expires by its last ctxt */
			int64_t t = r->jobs[ji].ctxt_seen_ns + (max_age_s + 1) * NS_PER_SEC;
			if (best < 0 || t < best)
				best = t;
		}
		for (size_t i = 0; i < r->jobs[ji].n; i++) {
			int64_t t = r->jobs[ji].procs[i]->last_seen_ns + (max_age_s + 1) * NS_PER_SEC;
			if (best < 0 || t < best)
				best = t;
		}
	}
	return best;
}

enum reg_state registry_proc_state(const struct reg_proc *p, int64_t now_ns)
{
	if (p->pending_act || p->pending_evt)
		return REG_PENDING;
	/* Kineto polls without the ACTIVITIES bit while a trace is active or
	 * pending; right after a delivery (no poll since) we estimate. */
	if (!(p->last_type & REG_ACTIVITIES))
		return REG_BUSY;
	if (p->delivered_ns && p->last_seen_ns == p->delivered_ns && now_ns < p->busy_until_ns)
		return REG_BUSY;
	return REG_IDLE;
}

const char *registry_state_str(enum reg_state s)
{
	switch (s) {
	case REG_IDLE: return "idle";
	case REG_PENDING: return "pending";
	case REG_BUSY: return "busy";
	}
	return "idle";
}
