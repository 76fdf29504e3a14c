/* rpc_tracing.c - see rpc_tracing.h. */
#include "rpc_tracing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "daemon/collect/gpu_prof.h"
#include "daemon/ipc/ipc.h"

static const char *type_name(const struct json_value *v)
{
	switch (v->type) {
	case JV_NULL: return "null";
	case JV_BOOL: return "boolean";
	case JV_NUMBER: return "number";
	case JV_STRING: return "string";
	case JV_ARRAY: return "array";
	case JV_OBJECT: return "object";
	}
	return "?";
}

static void type_error(struct buf *resp, const char *want, const struct json_value *v)
{
	struct buf msg = BUF_INIT;
	buf_printf(&msg, "failed with exception = [json.exception.type_error.302] type must be %s, but is %s", want,
		   type_name(v));
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "status");
	jw_strn(&w, msg.data, msg.len);
	jw_obj_end(&w);
	buf_free(&msg);
}

static void status_str(struct buf *resp, const char *status, const char *error)
{
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	if (error) {
		jw_key(&w, "error");
		jw_str(&w, error);
	}
	jw_key(&w, "status");
	jw_str(&w, status);
	jw_obj_end(&w);
}

/* A JSON number as upstream's library converts it to int: integers wrap to
 * 32 bits, floats truncate toward zero (out-of-range floats: 0, where C++
 * would be undefined). */
static int32_t as_int32(const struct json_value *v)
{
	int64_t i;
	if (json_value_i64(v, &i))
		return (int32_t)(uint32_t)(uint64_t)i;
	uint64_t u;
	if (v->u.num.n.is_int && !v->u.num.n.big && json_num_u64(&v->u.num.n, &u))
		return (int32_t)(uint32_t)u;
	double d = json_value_f64(v);
	if (!isfinite(d) || d >= 9.2e18 || d <= -9.2e18)
		return 0;
	return (int32_t)(uint32_t)(uint64_t)(int64_t)d;
}

static void put_pids(struct jw *w, const int32_t *p, size_t n)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		jw_i64(w, p[i]);
	jw_arr_end(w);
}

bool rpc_set_on_demand(const struct json_value *req, struct buf *resp, void *ud)
{
	struct rpc_tracing *t = ud;
	const struct json_value *config = json_get(req, "config"), *pids = json_get(req, "pids");
	const struct json_value *job = json_get(req, "job_id"), *limit = json_get(req, "process_limit");
	if (!config || !pids) {
		status_str(resp, "failed", NULL);
		return true;
	}
	if (config->type != JV_STRING) {
		type_error(resp, "string", config);
		return true;
	}
	if (job && job->type != JV_NUMBER) {
		type_error(resp, "number", job);
		return true;
	}
	if (pids->type != JV_ARRAY) {
		type_error(resp, "array", pids);
		return true;
	}
	for (uint32_t i = 0; i < pids->len; i++)
		if (pids->u.items[i].type != JV_NUMBER) {
			type_error(resp, "number", &pids->u.items[i]);
			return true;
		}
	if (limit && limit->type != JV_NUMBER) {
		type_error(resp, "number", limit);
		return true;
	}
	if (memchr(config->u.str, 0, config->len)) {
		status_str(resp, "failed", "config contains a NUL character");
		return true;
	}
	if (t->reg->max_config && config->len > t->reg->max_config) {
		/* It could never reach a process (one datagram, see ipc.h).
		 * Answered in upstream's shape, nothing triggered, plus the
		 * reason: upstream dyno prints the answer and does not fail. */
		struct buf why = BUF_INIT;
		buf_printf(&why, "config is %u bytes; a process can receive at most %zu bytes in one datagram",
			   (unsigned)config->len, t->reg->max_config);
		LOG_RATELIMITED(LOG_LEVEL_WARN, "on-demand request refused: %s", why.data);
		struct jw w;
		jw_init(&w, resp);
		jw_obj_begin(&w);
		jw_key(&w, "activityProfilersBusy");
		jw_i64(&w, 0);
		jw_key(&w, "activityProfilersTriggered");
		put_pids(&w, NULL, 0);
		jw_key(&w, "error");
		jw_strn(&w, why.data, why.len);
		jw_key(&w, "eventProfilersBusy");
		jw_i64(&w, 0);
		jw_key(&w, "eventProfilersTriggered");
		put_pids(&w, NULL, 0);
		jw_key(&w, "processesMatched");
		put_pids(&w, NULL, 0);
		jw_key(&w, "status");
		jw_str(&w, "failed");
		jw_obj_end(&w);
		buf_free(&why);
		return true;
	}
	int32_t *want = xmalloc((pids->len ? pids->len : 1) * sizeof *want);
	for (uint32_t i = 0; i < pids->len; i++)
		want[i] = as_int32(&pids->u.items[i]);
	char js[24];
	registry_job_str(job ? as_int32(job) : 0, js);
	/* The names Kineto will write are <name>_<pid>.json(.tmp) with each
	 * matched process's own pid: checked for those pids (issue #35 item 7). */
	struct buf why = BUF_INIT;
	size_t nleaf = 0;
	int32_t *leaves = t->policy && t->policy->n ? registry_match(t->reg, js, want, pids->len, &nleaf) : NULL;
	bool allowed = path_policy_check_pids(t->policy, config->u.str, config->len, leaves, nleaf, &why);
	free(leaves);
	if (!allowed) {
		char safe[512];
		LOG_RATELIMITED(LOG_LEVEL_WARN, "on-demand request refused: %s", sec_printable(why.data, why.len, safe, sizeof safe));
		status_str(resp, "failed", why.data);
		buf_free(&why);
		free(want);
		return true;
	}
	buf_free(&why);
	int64_t lim = limit ? as_int32(limit) : 1000;
	struct reg_trigger r;
	registry_trigger(t->reg, js, want, pids->len, config->u.str, config->len, REG_ACTIVITIES, lim, t->now_ns(),
			 &r);
	free(want);
	LOG_RATELIMITED(LOG_LEVEL_INFO, "on-demand request for job %s: %zu matched, %zu triggered, %d busy", js, r.nmatched, r.nact,
		 r.act_busy);
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "activityProfilersBusy");
	jw_i64(&w, r.act_busy);
	jw_key(&w, "activityProfilersTriggered");
	put_pids(&w, r.act_triggered, r.nact);
	jw_key(&w, "eventProfilersBusy");
	jw_i64(&w, r.evt_busy);
	jw_key(&w, "eventProfilersTriggered");
	put_pids(&w, r.evt_triggered, r.nevt);
	jw_key(&w, "processesMatched");
	put_pids(&w, r.matched, r.nmatched);
	jw_obj_end(&w);
	registry_trigger_free(&r);
	return true;
}

bool rpc_get_processes(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)req;
	struct rpc_tracing *t = ud;
	int64_t now = t->now_ns();
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "count");
	jw_u64(&w, t->reg->nprocs);
	jw_key(&w, "processes");
	jw_arr_begin(&w);
	/* Capped: the answer's size must not grow with whatever a local user
	 * registered (count stays the total). */
	size_t listed = 0, max = t->max_processes ? t->max_processes : RPC_PROCESSES_MAX;
	for (size_t ji = 0; ji < t->reg->njobs && listed < max; ji++) {
		const struct reg_job *j = &t->reg->jobs[ji];
		for (size_t i = 0; i < j->n && listed < max; i++, listed++) {
			const struct reg_proc *p = j->procs[i];
			jw_obj_begin(&w);
			jw_key(&w, "jobId");
			jw_str(&w, j->id);
			jw_key(&w, "lastSeenMs");
			jw_i64(&w, (now - p->last_seen_ns) / NS_PER_MS);
			jw_key(&w, "pid");
			jw_i64(&w, p->leaf);
			jw_key(&w, "pids");
			put_pids(&w, p->ancestry, p->nanc);
			jw_key(&w, "state");
			jw_str(&w, registry_state_str(registry_proc_state(p, now)));
			jw_obj_end(&w);
		}
	}
	jw_arr_end(&w);
	if (listed < t->reg->nprocs) {
		jw_key(&w, "truncated");
		jw_bool(&w, true);
	}
	jw_obj_end(&w);
	return true;
}

static bool get_status(const struct json_value *req, struct buf *resp, void *ud)
{
	const struct rpc_tracing *t = ud;
	/* 1: no GPU monitor, as upstream.  A client that asks (dyno status)
	 * also learns our extensions, so it never sends them to an upstream
	 * daemon (which would log "Unknown RPC call"); the plain request
	 * keeps upstream's bytes.  It also learns whether the IPC datagram
	 * budget is on and what it dropped. */
	if (json_get(req, "extensions")) {
		struct jw w;
		jw_init(&w, resp);
		jw_obj_begin(&w);
		jw_key(&w, "extensions");
		jw_arr_begin(&w);
		jw_str(&w, "getMetrics");
		jw_str(&w, "getProcesses");
		jw_str(&w, "gpusnoop");
		/* trigger.c's: the daemon always runs them */
		jw_str(&w, "addTrigger");
		jw_str(&w, "listTriggers");
		jw_str(&w, "removeTrigger");
		jw_str(&w, "fireTrigger");
		jw_arr_end(&w);
		if (t && t->ipc) {
			const struct ipc_stats *st = ipc_get_stats(t->ipc);
			const char *fs = ipc_filter_state(t->ipc);
			jw_key(&w, "ipc_filter");
			jw_str(&w, fs);
			if (strcmp(fs, "on") == 0) {
				jw_key(&w, "ipc_dropped_over_budget");
				jw_u64(&w, st->dropped_over_budget);
			}
		}
		jw_key(&w, "status");
		jw_i64(&w, 1);
		jw_obj_end(&w);
	} else
		buf_puts(resp, "{\"status\":1}");
	return true;
}

static bool get_version(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)req;
	(void)ud;
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "version");
	jw_str(&w, DYNO_VERSION);
	jw_obj_end(&w);
	return true;
}

static bool dcgm_pause(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)ud;
	const struct json_value *d = json_get(req, "duration_s");
	if (!d)
		status_str(resp, "failed", NULL);
	else if (d->type != JV_NUMBER)
		type_error(resp, "number", d);
	else if (gpu_prof_pause(as_int32(d), clock_mono_ns()))
		buf_puts(resp, "{\"status\":true}");
	else
		buf_puts(resp, "{\"status\":false}"); /* no GPU backend with profiling metrics */
	return true;
}

static bool dcgm_resume(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)req;
	(void)ud;
	buf_puts(resp, gpu_prof_resume() ? "{\"status\":true}" : "{\"status\":false}");
	return true;
}

void rpc_tracing_register(struct rpc_server *s, struct rpc_tracing *t)
{
	if (!t->now_ns)
		t->now_ns = clock_mono_ns;
	rpc_register_fn(s, "getStatus", get_status, t);
	rpc_register_fn(s, "getVersion", get_version, t);
	rpc_register_fn(s, "setKinetOnDemandRequest", rpc_set_on_demand, t);
	rpc_register_fn(s, "dcgmProfPause", dcgm_pause, t);
	rpc_register_fn(s, "dcgmProfResume", dcgm_resume, t);
	rpc_register_fn(s, "getProcesses", rpc_get_processes, t);
}
