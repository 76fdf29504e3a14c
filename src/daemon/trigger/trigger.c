/* trigger.c - see trigger.h. */
#include "trigger.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/net.h"
#include "daemon/rpc/gpusnoop_rpc.h"
#include "daemon/ipc/registry.h"
#include "daemon/ipc/tracing.h"
#include "daemon/rpc/security.h"
#include "daemon/trigger/trigger_keys.h"
#include "daemon/trigger/trigger_peers.h"

#define TRIG_BATCHES_MAX 2 /* firings whose peers are being asked at once (memory: docs/daemon.md) */

/* A batch of peer requests in flight, and what its record needs. */
struct batch_ctx {
	struct triggers *T;
	struct trig_batch *b;
	uint64_t seq;
	char id[TRIG_ID_MAX + 1];
};

/* What one trigger remembers per job: when it first saw the job (the
 * cadence counts from there) and when it last fired for it (the rate
 * limit).  Job "" stands for "no registered process". */
struct tjob {
	char job[TRIG_JOB_MAX + 1];
	int64_t seen_s, last_fire_s;
	int64_t last_fire_ms; /* wall clock of the last firing: kept in the file */
	bool fired;
};
_Static_assert(TRIG_JOBS_PER_TRIGGER == TRIG_JOBS_KEPT, "the file keeps the jobs a trigger remembers");

struct trig {
	struct trig_def d;
	struct trig_window win;
	size_t hint; /* where the key was in its collector's last frame */
	struct tjob jobs[TRIG_JOBS_PER_TRIGGER];
	size_t njobs;
	uint64_t fired, rate_limited;
};

struct triggers {
	struct trig *t;
	size_t n, max;
	char *file; /* NULL: memory only */
	char *peer_token; /* NULL: the peers get no token */
	uint64_t next_fire;
	int64_t clock_s; /* the ticks' time: kernel intervals summed */
	char **log;      /* firing records (JSON objects), a ring */
	size_t log_head, log_n, log_cap;
	struct tracing *tracing;
	struct gpusnoop_rpc *snoop;
	struct ev_loop *loop;
	struct batch_ctx *batches[TRIG_BATCHES_MAX];
	size_t nbatches;
};

static struct trig *find(struct triggers *T, const char *id);
static struct tjob *tjob_get(struct triggers *T, struct trig *g, const char *job);

/* ---------------- persistence ---------------- */

static bool save(struct triggers *T, struct buf *err)
{
	if (!T->file)
		return true;
	struct trig_file f = {.n = T->n, .next_fire = T->next_fire};
	size_t nlast = 0;
	for (size_t i = 0; i < T->n; i++)
		nlast += T->t[i].njobs;
	f.defs = xcalloc(T->n ? T->n : 1, sizeof *f.defs);
	f.last = xcalloc(nlast ? nlast : 1, sizeof *f.last);
	for (size_t i = 0; i < T->n; i++) {
		f.defs[i] = T->t[i].d; /* shallow: written, not freed */
		for (size_t k = 0; k < T->t[i].njobs; k++) {
			const struct tjob *j = &T->t[i].jobs[k];
			if (!j->fired)
				continue;
			struct trig_last *l = &f.last[f.nlast++];
			memcpy(l->id, T->t[i].d.id, sizeof l->id);
			memcpy(l->job, j->job, sizeof l->job);
			l->time_ms = j->last_fire_ms;
		}
	}
	struct buf text = BUF_INIT;
	trig_file_text(&f, &text);
	bool ok = trig_file_save(T->file, &text, err);
	buf_free(&text);
	free(f.defs);
	free(f.last);
	return ok;
}

struct triggers *triggers_start(struct ev_loop *l, const struct trigger_flags *f, struct tracing *tr,
				struct gpusnoop_rpc *snoop, struct buf *err)
{
	struct triggers *T = xcalloc(1, sizeof *T);
	T->loop = l;
	T->max = (size_t)f->max;
	T->log_cap = (size_t)f->max_firings;
	T->log = xcalloc(T->log_cap, sizeof *T->log);
	T->tracing = tr;
	T->snoop = snoop;
	/* read once, at start, like --rpc_token_file: the same checks */
	if (f->peer_token_file && *f->peer_token_file) {
		struct buf e = BUF_INIT;
		if (!sec_load_token(f->peer_token_file, &T->peer_token, &e)) {
			buf_printf(err, "--trigger_peer_token_file: %s", e.data);
			buf_free(&e);
			triggers_stop(T);
			return NULL;
		}
		buf_free(&e);
	}
	if (f->file && *f->file) {
		T->file = xstrdup(f->file);
		struct trig_file tf;
		if (!trig_file_load(T->file, T->max, &tf, err)) {
			triggers_stop(T);
			return NULL;
		}
		T->t = xcalloc(tf.n ? tf.n : 1, sizeof *T->t);
		for (size_t i = 0; i < tf.n; i++) {
			T->t[i].d = tf.defs[i];
			T->t[i].win = (struct trig_window)TRIG_WINDOW_INIT;
		}
		T->n = tf.n;
		T->next_fire = tf.next_fire;
		/* the rate limits' state: a firing t ms ago is a firing t/1000 s
		 * before this tick clock's 0 (a time ahead of now counts as now) */
		int64_t now_ms = clock_wall_ns() / NS_PER_MS;
		for (size_t i = 0; i < tf.nlast; i++) {
			struct trig *g = find(T, tf.last[i].id);
			if (!g)
				continue;
			struct tjob *j = tjob_get(T, g, tf.last[i].job);
			j->fired = true;
			j->last_fire_ms = tf.last[i].time_ms;
			j->last_fire_s = now_ms > tf.last[i].time_ms ? -((now_ms - tf.last[i].time_ms) / 1000) : 0;
		}
		free(tf.defs); /* the definitions moved */
		free(tf.last);
		log_info("triggers: %zu from %s", T->n, T->file);
	}
	return T;
}

void triggers_stop(struct triggers *T)
{
	if (!T)
		return;
	for (size_t i = 0; i < T->nbatches; i++) {
		trig_batch_free(T->batches[i]->b);
		free(T->batches[i]);
	}
	for (size_t i = 0; i < T->n; i++)
		trig_def_free(&T->t[i].d);
	free(T->t);
	for (size_t i = 0; i < T->log_cap; i++)
		free(T->log[i]);
	free(T->log);
	free(T->file);
	free(T->peer_token);
	free(T);
}

/* ---------------- firing ---------------- */

static struct trig *find(struct triggers *T, const char *id)
{
	for (size_t i = 0; i < T->n; i++)
		if (strcmp(T->t[i].d.id, id) == 0)
			return &T->t[i];
	return NULL;
}

static bool job_registered(struct triggers *T, const char *job)
{
	struct registry *r = tracing_registry(T->tracing);
	if (!*job)
		return r->nprocs > 0;
	struct reg_job *j = registry_find_job(r, job);
	return j && j->n > 0;
}

/* The job's entry, made when absent (replacing the one idle longest). */
static struct tjob *tjob_get(struct triggers *T, struct trig *g, const char *job)
{
	for (size_t i = 0; i < g->njobs; i++)
		if (strcmp(g->jobs[i].job, job) == 0)
			return &g->jobs[i];
	size_t k = g->njobs;
	if (k == TRIG_JOBS_PER_TRIGGER) {
		k = 0;
		for (size_t i = 1; i < g->njobs; i++) {
			int64_t a = g->jobs[i].fired ? g->jobs[i].last_fire_s : g->jobs[i].seen_s;
			int64_t b = g->jobs[k].fired ? g->jobs[k].last_fire_s : g->jobs[k].seen_s;
			if (a < b)
				k = i;
		}
	} else
		g->njobs++;
	memset(&g->jobs[k], 0, sizeof g->jobs[k]);
	snprintf(g->jobs[k].job, sizeof g->jobs[k].job, "%s", job);
	g->jobs[k].seen_s = T->clock_s;
	return &g->jobs[k];
}

static bool rate_ok(const struct triggers *T, const struct trig *g, const struct tjob *j)
{
	return !j->fired || T->clock_s - j->last_fire_s >= g->d.min_interval_s;
}

static void keep_record(struct triggers *T, struct buf *rec)
{
	size_t slot = (T->log_head + T->log_n) % T->log_cap;
	if (T->log_n == T->log_cap) {
		free(T->log[T->log_head]);
		T->log[T->log_head] = NULL;
		slot = T->log_head;
		T->log_head = (T->log_head + 1) % T->log_cap;
	} else
		T->log_n++;
	T->log[slot] = buf_detach(rec, NULL);
}

/* The config with every "{fire}" replaced by the firing's number, so each
 * firing's trace files get names of their own, and with start_ms (not 0)
 * as its PROFILE_START_TIME, so the peers trace the same window. */
static void subst_fire(const char *config, uint64_t seq, int64_t start_ms, struct buf *out)
{
	static const char key[] = "PROFILE_START_TIME=";
	for (const char *p = config; *p;) {
		bool line_start = p == config || p[-1] == '\n';
		if (start_ms && line_start && strncmp(p, key, sizeof key - 1) == 0) {
			buf_printf(out, "%s%lld", key, (long long)start_ms);
			p += strcspn(p, "\n");
			continue;
		}
		if (strncmp(p, "{fire}", 6) == 0) {
			buf_printf(out, "%llu", (unsigned long long)seq);
			p += 6;
			continue;
		}
		buf_putc(out, *p++);
	}
}

static void peers_done(void *ud, struct trig_batch *b, const char *summary, size_t len)
{
	struct batch_ctx *c = ud;
	struct triggers *T = c->T;
	(void)b;
	for (size_t i = 0; i < T->nbatches; i++)
		if (T->batches[i] == c) {
			T->batches[i] = T->batches[--T->nbatches];
			break;
		}
	struct buf rec = BUF_INIT, why = BUF_INIT;
	char iso[40];
	int64_t wall = clock_wall_ns();
	clock_fmt_iso8601(iso, sizeof iso, wall);
	buf_printf(&why, "the peers of firing %llu", (unsigned long long)c->seq);
	struct jw w;
	jw_init(&w, &rec);
	jw_obj_begin(&w);
	jw_key(&w, "peers"), jw_raw(&w, summary, len);
	jw_key(&w, "seq"), jw_u64(&w, c->seq);
	jw_key(&w, "time"), jw_str(&w, iso);
	jw_key(&w, "time_ms"), jw_i64(&w, wall / NS_PER_MS);
	jw_key(&w, "trigger"), jw_str(&w, c->id);
	jw_key(&w, "why"), jw_strn(&w, why.data, why.len);
	jw_obj_end(&w);
	keep_record(T, &rec);
	buf_free(&rec);
	buf_free(&why);
	free(c);
}

/* The same request to the trigger's peers; "peers_error" in the record
 * (w) when they cannot be asked. */
static void ask_peers(struct triggers *T, const struct trig *g, uint64_t seq, const struct buf *req, struct jw *w)
{
	struct buf body = BUF_INIT, err = BUF_INIT;
	if (!T->loop || T->nbatches == TRIG_BATCHES_MAX) {
		jw_key(w, "peers_error"), jw_str(w, T->loop ? "too many peer requests in flight" : "no event loop");
		return;
	}
	/* the on-demand request with its function name, as dyno sends it, and
	 * the token when there is one, as dyno's --token-file adds it */
	struct buf plain = BUF_INIT;
	buf_puts(&plain, "{\"fn\":\"setKinetOnDemandRequest\",");
	buf_append(&plain, req->data + 1, req->len - 1);
	if (T->peer_token)
		net_body_with_token(&body, plain.data, plain.len, T->peer_token);
	else
		buf_append(&body, plain.data, plain.len);
	buf_free(&plain);
	struct batch_ctx *c = xcalloc(1, sizeof *c);
	c->T = T;
	c->seq = seq;
	snprintf(c->id, sizeof c->id, "%s", g->d.id);
	c->b = trig_peers_send(T->loop, g->d.peers, body.data, body.len, peers_done, c, &err);
	if (c->b)
		T->batches[T->nbatches++] = c;
	else if (err.len) {
		jw_key(w, "peers_error"), jw_strn(w, err.data, err.len);
		free(c);
	} /* else every peer failed at once: recorded, c freed by peers_done */
	buf_free(&body);
	buf_free(&err);
}

/* The gpusnoop sessions of one firing, written as the record's "gpusnoop"
 * member: one per triggered process (at most TRIG_SNOOPS_PER_FIRING). */
static void start_snoops(struct triggers *T, const struct trig *g, uint64_t seq, const struct json_value *pids,
			 struct jw *w)
{
	jw_key(w, "gpusnoop");
	jw_arr_begin(w);
	for (uint32_t i = 0; pids && i < pids->len && i < TRIG_SNOOPS_PER_FIRING; i++) {
		int64_t pid;
		if (!json_value_i64(&pids->u.items[i], &pid))
			continue;
		struct buf req = BUF_INIT, log = BUF_INIT, ans = BUF_INIT;
		buf_printf(&log, "%s.%llu.%lld.log", g->d.gpusnoop_log, (unsigned long long)seq, (long long)pid);
		struct jw rw;
		jw_init(&rw, &req);
		jw_obj_begin(&rw);
		jw_key(&rw, "pid"), jw_i64(&rw, pid);
		jw_key(&rw, "duration_s"), jw_i64(&rw, g->d.gpusnoop_s);
		jw_key(&rw, "log_file"), jw_strn(&rw, log.data, log.len);
		jw_obj_end(&rw);
		struct json_doc rd, ad;
		struct json_error je;
		jw_obj_begin(w);
		jw_key(w, "pid"), jw_i64(w, pid);
		jw_key(w, "log_file"), jw_strn(w, log.data, log.len);
		if (json_parse(req.data, req.len, &rd, &je)) {
			gpusnoop_rpc_call(T->snoop, rd.root, &ans);
			json_doc_free(&rd);
		}
		const char *s;
		size_t n;
		if (ans.len && json_parse(ans.data, ans.len, &ad, &je)) {
			if (json_get_str(ad.root, "status", &s, &n))
				jw_key(w, "status"), jw_strn(w, s, n);
			if (json_get_str(ad.root, "error", &s, &n))
				jw_key(w, "error"), jw_strn(w, s, n > 200 ? 200 : n);
			json_doc_free(&ad);
		}
		jw_obj_end(w);
		buf_free(&req);
		buf_free(&log);
		buf_free(&ans);
	}
	jw_arr_end(w);
}

/* Ask for a trace for job ("": no registered process: only recorded) and
 * record it; the record is also appended to out (an RPC answer) when
 * given.  why: the reason text; key/value: the metric sample, if any, and
 * sample_ns its frame's time (the JSON log line's "time"), else 0. */
static void fire(struct triggers *T, struct trig *g, struct tjob *j, const char *why, const char *key, double value,
		 int64_t sample_ns, struct jw *out)
{
	uint64_t seq = T->next_fire++;
	int64_t wall = clock_wall_ns();
	j->fired = true;
	j->last_fire_s = T->clock_s;
	j->last_fire_ms = wall / NS_PER_MS;
	g->fired++;
	struct buf rec = BUF_INIT, cfg = BUF_INIT, req = BUF_INIT, ans = BUF_INIT;
	char iso[40];
	clock_fmt_iso8601(iso, sizeof iso, wall);
	struct jw w;
	jw_init(&w, &rec);
	jw_obj_begin(&w);
	jw_key(&w, "asked");
	jw_obj_begin(&w);
	bool peers = g->d.peers && j->job[0];
	int64_t start_ms = peers ? wall / NS_PER_MS + g->d.peers_delay_s * 1000 : 0;
	subst_fire(g->d.config, seq, start_ms, &cfg);
	jw_key(&w, "config_bytes"), jw_u64(&w, cfg.len);
	if (g->d.gpusnoop_s)
		jw_key(&w, "gpusnoop_s"), jw_i64(&w, g->d.gpusnoop_s);
	if (peers) {
		size_t np = 1;
		for (const char *q = g->d.peers; *q; q++)
			np += *q == ',';
		jw_key(&w, "peers"), jw_u64(&w, np);
		jw_key(&w, "profile_start_ms"), jw_i64(&w, start_ms);
	}
	jw_key(&w, "process_limit"), jw_i64(&w, g->d.process_limit);
	jw_key(&w, "trace"), jw_bool(&w, j->job[0] != 0);
	jw_obj_end(&w);
	jw_key(&w, "clock_s"), jw_i64(&w, T->clock_s);
	jw_key(&w, "job"), jw_str(&w, j->job);
	jw_key(&w, "result");
	jw_obj_begin(&w);
	if (!j->job[0]) {
		jw_key(&w, "error"), jw_str(&w, "no registered process");
	} else {
		/* the same request setKinetOnDemandRequest takes: every process of the job */
		struct jw rw;
		jw_init(&rw, &req);
		jw_obj_begin(&rw);
		jw_key(&rw, "config"), jw_strn(&rw, cfg.data, cfg.len);
		jw_key(&rw, "job_id"), jw_raw(&rw, j->job, strlen(j->job));
		jw_key(&rw, "pids"), jw_arr_begin(&rw), jw_arr_end(&rw);
		jw_key(&rw, "process_limit"), jw_i64(&rw, g->d.process_limit);
		jw_obj_end(&rw);
		struct json_doc rd, ad;
		struct json_error je;
		bool asked = json_parse(req.data, req.len, &rd, &je);
		if (asked) {
			tracing_on_demand(T->tracing, rd.root, &ans);
			json_doc_free(&rd);
		}
		if (asked && ans.len && json_parse(ans.data, ans.len, &ad, &je)) {
			const struct json_value *m = json_get(ad.root, "processesMatched");
			const struct json_value *tp = json_get(ad.root, "activityProfilersTriggered");
			const struct json_value *busy = json_get(ad.root, "activityProfilersBusy");
			const char *s;
			size_t n;
			if (json_get_str(ad.root, "error", &s, &n))
				jw_key(&w, "error"), jw_strn(&w, s, n > 300 ? 300 : n);
			else if (json_get_str(ad.root, "status", &s, &n))
				jw_key(&w, "error"), jw_strn(&w, s, n > 300 ? 300 : n);
			if (busy)
				jw_key(&w, "busy"), jw_value(&w, busy);
			jw_key(&w, "matched"), jw_u64(&w, m && m->type == JV_ARRAY ? m->len : 0);
			jw_key(&w, "triggered");
			jw_arr_begin(&w);
			for (uint32_t i = 0; tp && tp->type == JV_ARRAY && i < tp->len && i < 16; i++)
				jw_value(&w, &tp->u.items[i]);
			jw_arr_end(&w);
			if (g->d.gpusnoop_s)
				start_snoops(T, g, seq, tp && tp->type == JV_ARRAY ? tp : NULL, &w);
			json_doc_free(&ad);
		} else
			jw_key(&w, "error"), jw_str(&w, "the on-demand request gave no answer");
		if (peers)
			ask_peers(T, g, seq, &req, &w);
	}
	jw_obj_end(&w);
	if (sample_ns) {
		char st[40];
		clock_fmt_iso8601(st, sizeof st, sample_ns);
		jw_key(&w, "sample_time"), jw_str(&w, st);
	}
	jw_key(&w, "seq"), jw_u64(&w, seq);
	jw_key(&w, "time"), jw_str(&w, iso);
	jw_key(&w, "time_ms"), jw_i64(&w, wall / NS_PER_MS);
	jw_key(&w, "trigger"), jw_str(&w, g->d.id);
	if (key) {
		jw_key(&w, "values");
		jw_obj_begin(&w);
		jw_key(&w, key), jw_f64(&w, value);
		jw_obj_end(&w);
	}
	jw_key(&w, "why"), jw_str(&w, why);
	jw_obj_end(&w);
	LOG_RATELIMITED(LOG_LEVEL_INFO, "trigger %s fired for job %s: %s", g->d.id, j->job[0] ? j->job : "(none)", why);
	if (out)
		jw_raw(out, rec.data, rec.len);
	keep_record(T, &rec);
	struct buf err = BUF_INIT;
	if (!save(T, &err))
		LOG_RATELIMITED(LOG_LEVEL_WARN, "triggers: %s", err.data);
	buf_free(&err);
	buf_free(&rec);
	buf_free(&cfg);
	buf_free(&req);
	buf_free(&ans);
}

/* Fire g for every job it covers (its job, else every registered job, else
 * "no process"), each subject to its rate limit.  Returns how many fired;
 * the jobs refused by the rate limit are appended to limited when given. */
static size_t fire_jobs(struct triggers *T, struct trig *g, const char *why, const char *key, double value,
			int64_t sample_ns, struct jw *out, struct jw *limited)
{
	size_t fired = 0;
	struct registry *r = tracing_registry(T->tracing);
	const char *one = g->d.job;
	size_t njobs = *one ? 1 : r->njobs;
	bool none = !*one && r->nprocs == 0;
	if (none)
		njobs = 1;
	for (size_t i = 0; i < njobs; i++) {
		const char *job = *one || none ? one : r->jobs[i].id;
		if (!*one && !none && r->jobs[i].n == 0)
			continue;
		struct tjob *j = tjob_get(T, g, job);
		if (!rate_ok(T, g, j)) {
			g->rate_limited++;
			if (limited)
				jw_str(limited, job);
			continue;
		}
		fire(T, g, j, why, key, value, sample_ns, out);
		fired++;
	}
	return fired;
}

/* ---------------- the tick ---------------- */

/* key's number in f.  A collector emits its keys in the same order tick
 * after tick, so the place it had last time (*hint) is tried first: one
 * comparison instead of a scan of the frame. */
static bool frame_number(const struct frame *f, const char *key, double *v, size_t *hint)
{
	for (size_t k = 0; k <= f->n; k++) {
		size_t i = k == 0 ? *hint : k - 1;
		if (i >= f->n || (k > 0 && i == *hint))
			continue;
		const struct frame_value *fv = &f->vals[i];
		if (strcmp(frame_key(f, fv), key) != 0)
			continue;
		*hint = i;
		switch (fv->type) {
		case FV_INT: *v = (double)fv->v.i; return true;
		case FV_UINT: *v = (double)fv->v.u; return true;
		case FV_FLOAT: *v = fv->v.f; return true;
		case FV_STRING: return false;
		}
	}
	return false;
}

static void cadence(struct triggers *T, struct trig *g)
{
	struct registry *r = tracing_registry(T->tracing);
	for (size_t i = 0; i < r->njobs; i++) {
		const struct reg_job *rj = &r->jobs[i];
		if (rj->n == 0 || (g->d.job[0] && strcmp(g->d.job, rj->id) != 0))
			continue;
		struct tjob *j = tjob_get(T, g, rj->id);
		int64_t from = j->fired ? j->last_fire_s : j->seen_s;
		if (T->clock_s - from < g->d.every_s)
			continue;
		if (!rate_ok(T, g, j)) {
			g->rate_limited++;
			continue;
		}
		char why[64];
		snprintf(why, sizeof why, "every %llds", (long long)g->d.every_s);
		fire(T, g, j, why, NULL, 0, 0, NULL);
	}
}

void triggers_on_tick(const struct frame *f, size_t src, int64_t interval_s, void *ud)
{
	struct triggers *T = ud;
	if (src == 0)
		T->clock_s += interval_s;
	for (size_t i = 0; i < T->n; i++) {
		struct trig *g = &T->t[i];
		if (g->d.kind == TRIG_CADENCE && src == 0)
			cadence(T, g);
		if (g->d.kind != TRIG_METRIC)
			continue;
		/* the key comes from one collector: other collectors' ticks are skipped */
		if (g->win.src >= 0 && (size_t)g->win.src != src)
			continue;
		double v = NAN;
		bool present = frame_number(f, g->d.cond.key, &v, &g->hint);
		bool gate = !g->d.while_job || job_registered(T, g->d.job);
		if (!trig_window_step(&g->d.cond, &g->win, (int)src, interval_s, present, v, gate))
			continue;
		struct buf why = BUF_INIT;
		char num[32];
		json_fmt_f64(num, v);
		buf_printf(&why, "%s = %s: ", g->d.cond.key, num);
		trig_cond_format(&g->d.cond, &why);
		if (g->d.while_job)
			buf_puts(&why, g->d.job[0] ? " while job runs" : " while a job runs");
		/* a firing starts a new window; while every job is rate-limited
		 * the run goes on, so it fires once the limit allows */
		if (fire_jobs(T, g, why.data, g->d.cond.key, v, f->wall_ns, NULL, NULL))
			g->win.held_s = 0;
		buf_free(&why);
	}
}

/* ---------------- RPC ---------------- */

static void failed(struct buf *resp, const char *fn, const char *why)
{
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "error");
	struct buf e = BUF_INIT;
	buf_printf(&e, "%s: %s", fn, why);
	jw_strn(&w, e.data, e.len);
	buf_free(&e);
	jw_key(&w, "status"), jw_str(&w, "failed");
	jw_obj_end(&w);
}

static bool req_id(const struct json_value *req, const char *fn, struct buf *resp, char id[TRIG_ID_MAX + 1])
{
	const char *s;
	size_t n;
	if (!json_get_str(req, "id", &s, &n) || n == 0 || n > TRIG_ID_MAX || memchr(s, 0, n)) {
		failed(resp, fn, "\"id\": a trigger id was expected");
		return false;
	}
	memcpy(id, s, n);
	id[n] = 0;
	return true;
}

/* A gpusnoop log prefix outside --trace_path_prefixes was refused only
 * when the trigger fired (issue #35 item 7): checked here, as the first
 * session's file name (fire_gpusnoop's "<log>.<seq>.<pid>.log"). */
static bool gpusnoop_log_ok(const struct triggers *T, const struct trig_def *d, struct buf *why)
{
	struct buf log = BUF_INIT;
	buf_printf(&log, "%s.0.0.log", d->gpusnoop_log);
	bool ok = !T->tracing || tracing_check_path(T->tracing, log.data, log.len, why);
	buf_free(&log);
	return ok;
}

/* A trigger with gpusnoop sessions on a daemon that cannot run them
 * would be accepted and fail at every firing: refused when added. */
static bool snoop_available(const struct triggers *T, struct buf *why)
{
	struct buf e = BUF_INIT;
	bool ok = gpusnoop_rpc_available(T->snoop, &e);
	if (!ok)
		buf_printf(why, "gpusnoop_s: %s", e.data);
	buf_free(&e);
	return ok;
}

static bool add_trigger(const struct json_value *req, struct buf *resp, void *ud)
{
	struct triggers *T = ud;
	struct trig_def d;
	struct buf why = BUF_INIT;
	if (!trig_def_parse(json_get(req, "trigger"), &d, &why))
		failed(resp, "addTrigger", why.data);
	else if (d.kind == TRIG_METRIC && !trig_key_known(d.cond.key, &why))
		failed(resp, "addTrigger", why.data);
	else if (d.gpusnoop_s > 0 && !snoop_available(T, &why))
		failed(resp, "addTrigger", why.data);
	else if (find(T, d.id))
		failed(resp, "addTrigger", "a trigger with this id exists (remove it first)");
	else if (T->n >= T->max) {
		buf_printf(&why, "%zu triggers already (--trigger_max)", T->max);
		failed(resp, "addTrigger", why.data);
	} else if (!tracing_check_config(T->tracing, d.config, strlen(d.config), &why))
		failed(resp, "addTrigger", why.data);
	else if (d.gpusnoop_s && !gpusnoop_log_ok(T, &d, &why))
		failed(resp, "addTrigger", why.data);
	else {
		T->t = xrealloc(T->t, (T->n + 1) * sizeof *T->t);
		memset(&T->t[T->n], 0, sizeof T->t[T->n]);
		T->t[T->n].d = d;
		T->t[T->n].win = (struct trig_window)TRIG_WINDOW_INIT;
		T->n++;
		if (!save(T, &why)) {
			T->n--; /* not kept: it would be gone after a restart */
			failed(resp, "addTrigger", why.data);
		} else {
			log_info("trigger %s added", d.id);
			struct jw w;
			jw_init(&w, resp);
			jw_obj_begin(&w);
			jw_key(&w, "status"), jw_str(&w, "ok");
			jw_key(&w, "trigger");
			trig_def_write(&d, &w);
			jw_obj_end(&w);
			buf_free(&why);
			return true;
		}
	}
	trig_def_free(&d);
	buf_free(&why);
	return true;
}

static bool remove_trigger(const struct json_value *req, struct buf *resp, void *ud)
{
	struct triggers *T = ud;
	char id[TRIG_ID_MAX + 1];
	if (!req_id(req, "removeTrigger", resp, id))
		return true;
	struct trig *g = find(T, id);
	if (!g) {
		failed(resp, "removeTrigger", "no trigger with this id");
		return true;
	}
	size_t k = (size_t)(g - T->t);
	struct trig keep = *g;
	memmove(&T->t[k], &T->t[k + 1], (T->n - k - 1) * sizeof *T->t);
	T->n--;
	struct buf err = BUF_INIT;
	if (!save(T, &err)) {
		/* put it back: the file still has it */
		memmove(&T->t[k + 1], &T->t[k], (T->n - k) * sizeof *T->t);
		T->t[k] = keep;
		T->n++;
		failed(resp, "removeTrigger", err.data);
	} else {
		log_info("trigger %s removed", id);
		trig_def_free(&keep.d);
		buf_puts(resp, "{\"status\":\"ok\"}");
	}
	buf_free(&err);
	return true;
}

static bool fire_trigger(const struct json_value *req, struct buf *resp, void *ud)
{
	struct triggers *T = ud;
	char id[TRIG_ID_MAX + 1];
	if (!req_id(req, "fireTrigger", resp, id))
		return true;
	struct trig *g = find(T, id);
	if (!g) {
		failed(resp, "fireTrigger", "no trigger with this id");
		return true;
	}
	struct jw w, lw;
	struct buf lim = BUF_INIT;
	jw_init(&lw, &lim);
	jw_arr_begin(&lw);
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "firings");
	jw_arr_begin(&w);
	fire_jobs(T, g, "fireTrigger RPC", NULL, 0, 0, &w, &lw);
	jw_arr_end(&w);
	jw_arr_end(&lw);
	jw_key(&w, "rate_limited"), jw_raw(&w, lim.data, lim.len);
	jw_key(&w, "status"), jw_str(&w, "ok");
	jw_obj_end(&w);
	buf_free(&lim);
	return true;
}

static bool list_triggers(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)req;
	struct triggers *T = ud;
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "firings");
	jw_arr_begin(&w);
	for (size_t i = 0; i < T->log_n; i++) {
		const char *r = T->log[(T->log_head + i) % T->log_cap];
		jw_raw(&w, r, strlen(r));
	}
	jw_arr_end(&w);
	jw_key(&w, "status"), jw_str(&w, "ok");
	jw_key(&w, "triggers");
	jw_arr_begin(&w);
	for (size_t i = 0; i < T->n; i++) {
		const struct trig *g = &T->t[i];
		jw_obj_begin(&w);
		jw_key(&w, "definition");
		trig_def_write(&g->d, &w);
		jw_key(&w, "fired"), jw_u64(&w, g->fired);
		if (g->d.kind == TRIG_METRIC) {
			jw_key(&w, "held_s"), jw_i64(&w, g->win.held_s);
			if (g->win.have_last && isfinite(g->win.last))
				jw_key(&w, "last_value"), jw_f64(&w, g->win.last);
		}
		jw_key(&w, "rate_limited"), jw_u64(&w, g->rate_limited);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	return true;
}

static const struct {
	const char *name;
	rpc_fn fn;
} fns[] = {
	{"addTrigger", add_trigger},
	{"listTriggers", list_triggers},
	{"removeTrigger", remove_trigger},
	{"fireTrigger", fire_trigger},
};

void triggers_register_rpc(struct triggers *t, struct rpc_server *s)
{
	for (size_t i = 0; s && t && i < sizeof fns / sizeof fns[0]; i++)
		rpc_register_fn(s, fns[i].name, fns[i].fn, t);
}

bool triggers_rpc_call(struct triggers *t, const char *fn, const struct json_value *req, struct buf *resp)
{
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (strcmp(fns[i].name, fn) == 0)
			return fns[i].fn(req, resp, t);
	return false;
}
