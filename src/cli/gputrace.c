/*
 * gputrace.c - `dyno gputrace`: ask daemons to hand a Kineto trace config to
 * the PyTorch processes registered with them.
 *
 * With one daemon it sends exactly upstream dyno's bytes and prints
 * upstream's lines, then adds what upstream leaves out: which processes
 * were really triggered, why nothing matched (asking the daemon for its
 * registered processes when its getStatus lists the getProcesses
 * extension: never sent to an upstream daemon), the file names Kineto
 * will really write, and with --wait, waits until they exist.
 *
 * With many daemons (--hostnames/--hostfile/--slurm-job) every daemon is
 * contacted concurrently (rpc_client), in duration mode all ranks get one
 * PROFILE_START_TIME a few seconds ahead (so they trace the same window), a
 * "{host}" in --log-file is replaced per daemon, and a per-host table plus a
 * non-zero exit status report any daemon that failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "client/kineto_config.h"
#include "client/processes.h"
#include "client/rpc_cmd.h"
#include "core/clock.h"

struct gt {
	struct trace_opts to;
	uint64_t job_id;
	const char *pids;
	int64_t process_limit;
	bool fail_on_no_process;
	bool wait, json, verbose;
	double wait_timeout_s;
	double start_delay_s;
};

/* What one daemon answered. */
struct host_result {
	bool ok;          /* a well-formed setKinetOnDemandRequest answer */
	struct buf detail; /* why not ok, or notes */
	int64_t *matched, *triggered;
	size_t nmatched, ntriggered;
	int64_t busy;
	char *log_file; /* after {host} substitution */
};

static bool int_array(const struct json_value *root, const char *key, int64_t **out, size_t *n)
{
	const struct json_value *a = json_get(root, key);
	if (!a || a->type != JV_ARRAY)
		return false;
	*out = xcalloc(a->len ? a->len : 1, sizeof **out);
	for (uint32_t i = 0; i < a->len; i++)
		if (!json_value_i64(&a->u.items[i], &(*out)[i]))
			return false;
	*n = a->len;
	return true;
}

static void judge(const struct rpc_job *j, struct host_result *r)
{
	if (j->status != RPC_OK) {
		buf_puts(&r->detail, j->err);
		return;
	}
	struct json_doc doc;
	if (!cli_parse_answer(j, &doc, &r->detail))
		return;
	const char *s;
	size_t n;
	if (json_get_str(doc.root, "error", &s, &n)) {
		/* our daemon's refusals (trace path policy, a config too big to
		 * deliver) carry the reason; show it rather than a status */
		buf_printf(&r->detail, "daemon refused the request: %.*s", (int)(n > 300 ? 300 : n), s);
	} else if (!int_array(doc.root, "processesMatched", &r->matched, &r->nmatched)) {
		if (json_get_str(doc.root, "status", &s, &n))
			buf_printf(&r->detail, "daemon refused the request: status \"%.*s\"", (int)(n > 200 ? 200 : n), s);
		else
			buf_puts(&r->detail, "answer has no processesMatched array of pids");
	} else if (json_get(doc.root, "activityProfilersTriggered") &&
		   !int_array(doc.root, "activityProfilersTriggered", &r->triggered, &r->ntriggered)) {
		buf_puts(&r->detail, "activityProfilersTriggered is not an array of pids");
	} else {
		if (!json_get(doc.root, "activityProfilersTriggered")) {
			/* not upstream's shape, but be useful: assume every match triggered */
			r->triggered = xcalloc(r->nmatched ? r->nmatched : 1, sizeof *r->triggered);
			memcpy(r->triggered, r->matched, r->nmatched * sizeof *r->matched);
			r->ntriggered = r->nmatched;
		}
		if (!json_get_i64(doc.root, "activityProfilersBusy", &r->busy))
			r->busy = 0;
		r->ok = true;
	}
	json_doc_free(&doc);
}

static void result_free(struct host_result *r)
{
	buf_free(&r->detail);
	free(r->matched);
	free(r->triggered);
	free(r->log_file);
}

/* {host} -> the host name, or host_PORT when several targets share a host. */
static char *subst_host(const char *log_file, const struct targets *t, size_t i)
{
	const char *m = strstr(log_file, "{host}");
	if (!m)
		return xstrdup(log_file);
	bool shared = false;
	for (size_t k = 0; k < t->n && !shared; k++)
		shared = k != i && strcmp(t->t[k].host, t->t[i].host) == 0;
	struct buf b = BUF_INIT;
	for (const char *p = log_file; *p;) {
		m = strstr(p, "{host}");
		if (!m) {
			buf_puts(&b, p);
			break;
		}
		buf_append(&b, p, (size_t)(m - p));
		for (const char *h = t->t[i].host; *h; h++)
			buf_putc(&b, *h == ':' ? '_' : *h); /* IPv6 colons make poor file names */
		if (shared)
			buf_printf(&b, "_%s", t->t[i].port);
		p = m + 6;
	}
	return buf_detach(&b, NULL);
}

/* With --profile-memory PyTorch's on-demand profiler writes a CUDA memory
 * snapshot, /tmp/memory_snapshot_<pid>.pickle, and no trace: on an H200
 * (issue #38) the trace options sent with it had no effect and nothing came
 * at --log-file.  Said on stderr before the request goes, so that nobody
 * waits for a trace with shapes and stacks; the request stays upstream's
 * bytes, and --wait waits for the snapshot (kineto_trace_path). */
static void profile_memory_note(const struct trace_opts *o)
{
	if (!o->profile_memory)
		return;
	const struct {
		bool on;
		const char *flag;
	} trace_only[] = {
		{o->record_shapes, "--record-shapes"},
		{o->with_stacks, "--with-stacks"},
		{o->with_flops, "--with-flops"},
		{o->with_modules, "--with-modules"},
	};
	struct buf ignored = BUF_INIT;
	size_t n = 0;
	for (size_t i = 0; i < sizeof trace_only / sizeof trace_only[0]; i++)
		if (trace_only[i].on)
			buf_printf(&ignored, "%s%s", n++ ? ", " : "", trace_only[i].flag);
	fprintf(stderr,
		"dyno gputrace: note: with --profile-memory PyTorch writes a CUDA memory snapshot, "
		"/tmp/memory_snapshot_<pid>.pickle, and no trace (nothing at %s)%s%s%s\n",
		o->log_file, n ? "; " : "", n ? ignored.data : "",
		n == 0 ? "" : n == 1 ? " has no effect with it" : " have no effect with it");
	buf_free(&ignored);
}

/* A trace file dyno waits for, and whose it is. */
struct wanted {
	char *path;
	size_t host; /* index in the targets */
	int64_t pid;
};
struct want {
	struct wanted *f;
	size_t n;
};

/* Kineto's timing (docs/cli.md, "Many daemons at once"): a process reads
 * a config up to one poll (5 s) after the request, one more poll later when
 * it started before its daemon (a libkineto bug), acts on it at its next
 * 1 s tick, and refuses a start time less than its 5 s warm-up after that. */
#define KINETO_WORST_PICKUP_S 16.0

/* What dyno knows when it explains a missing file. */
struct wait_ctx {
	const struct gt *g;
	const struct host_opts *h;
	const struct targets *t;
	const struct host_result *res;
	int64_t request_wall_ms; /* when the daemons were asked */
};

/* Why did this trace file not appear?  One line to err. */
static void explain_missing(const struct wait_ctx *c, const struct wanted *w, const struct proc_list *pl,
			    bool pl_ok, struct buf *why)
{
	const char *path = w->path, *slash = strrchr(path, '/');
	struct stat st;
	if (slash && slash != path) {
		char *dir = xstrdup(path);
		dir[slash - path] = 0;
		bool missing = stat(dir, &st) != 0;
		if (missing)
			buf_printf(why, "directory %s does not exist (here; Kineto does not create it)", dir);
		free(dir);
		if (missing)
			return;
	}
	if (!kineto_path_allowed_default(c->res[w->host].log_file)) {
		buf_printf(why, "outside /tmp/: Kineto since 2026-06 refuses it and writes "
				"/tmp/libkineto_activities_%" PRId64 ".json instead (unless the process has "
				"$KINETO_ONDEMAND_TRACE_DIR)",
			   w->pid);
		return;
	}
	const struct proc_info *p = NULL;
	for (size_t m = 0; pl_ok && m < pl->n && !p; m++)
		if (pl->p[m].pid == w->pid)
			p = &pl->p[m];
	int64_t since_ms = clock_wall_ns() / NS_PER_MS - c->request_wall_ms;
	if (pl_ok && !p) {
		buf_puts(why, "the process is no longer registered with its daemon (it exited?)");
		return;
	}
	if (p && p->last_seen_ms >= since_ms) {
		buf_printf(why, "the process has not polled its daemon since the request (last poll %.0f s ago): "
				"hung or exited",
			   (double)p->last_seen_ms / 1000.0);
		return;
	}
	const struct gt *g = c->g;
	if (g->to.iterations <= 0 && g->to.profile_start_time > 0) {
		double ahead = (double)(g->to.profile_start_time - c->request_wall_ms) / 1000.0;
		if (ahead < KINETO_WORST_PICKUP_S) {
			buf_printf(why, "start time too close to its poll: it was %.1f s after the request, but a "
					"process reads the config up to 10 s later and needs 6 s more to warm up, "
					"so Kineto refused it (use --start-delay-s of at least 20, the default)",
				   ahead);
			return;
		}
	}
	if (p && strcmp(p->state, "pending") == 0)
		buf_puts(why, "the config is still waiting for the process's next poll");
	else if (!pl_ok)
		buf_puts(why, "unknown (the daemon does not list its processes)");
	else
		buf_puts(why, "unknown: the process polled after the request; see its log");
}

/* Wait until every path exists (a shared or local file system); 250 ms
 * polling because inotify does not see writes made by other NFS clients.
 * Files still missing at the end are listed with the likely reason. */
static int wait_files(FILE *f, const struct want *wt, double timeout_s, const struct wait_ctx *c)
{
	size_t n = wt->n;
	fprintf(f, "\nwaiting up to %.0f s for %zu trace file%s ...\n", timeout_s, n, n == 1 ? "" : "s");
	fflush(f);
	bool *seen = xcalloc(n ? n : 1, sizeof *seen);
	size_t left = n;
	int64_t deadline = clock_mono_ns() + (int64_t)(timeout_s * 1e9);
	for (;;) {
		for (size_t i = 0; i < n; i++) {
			struct stat st;
			if (!seen[i] && stat(wt->f[i].path, &st) == 0) {
				seen[i] = true;
				left--;
				fprintf(f, "    written: %s (%lld bytes)\n", wt->f[i].path, (long long)st.st_size);
				fflush(f);
			}
		}
		if (left == 0 || clock_mono_ns() >= deadline)
			break;
		struct timespec ts = {0, 250 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (!left) {
		fprintf(f, "all %zu trace file%s written\n", n, n == 1 ? "" : "s");
		free(seen);
		return 0;
	}
	/* Ask the daemons of the missing files for their processes' last polls. */
	struct targets nt = {0};
	size_t *hidx = xcalloc(c->t->n, sizeof *hidx); /* host -> index in nt + 1 */
	nt.t = xcalloc(c->t->n, sizeof *nt.t);
	for (size_t i = 0; i < n; i++)
		if (!seen[i] && !hidx[wt->f[i].host]) {
			nt.t[nt.n++] = c->t->t[wt->f[i].host];
			hidx[wt->f[i].host] = nt.n;
		}
	struct rpc_job *pj =
		cli_run_extension(&nt, c->h, NULL, "getProcesses", GET_PROCESSES_REQUEST, sizeof GET_PROCESSES_REQUEST - 1);
	struct proc_list *pl = xcalloc(nt.n, sizeof *pl);
	bool *pl_ok = xcalloc(nt.n, sizeof *pl_ok);
	struct buf e = BUF_INIT, why = BUF_INIT, tmp = BUF_INIT;
	for (size_t k = 0; k < nt.n; k++)
		pl_ok[k] = pj[k].status == RPC_OK && processes_parse(pj[k].resp.data, pj[k].resp.len, &pl[k], &e);
	fprintf(stderr, "dyno gputrace: %zu of %zu trace files did not appear within %.0f s:\n", left, n, timeout_s);
	for (size_t i = 0; i < n; i++) {
		if (seen[i])
			continue;
		struct stat st;
		buf_reset(&tmp);
		buf_reset(&why);
		buf_printf(&tmp, "%s.tmp", wt->f[i].path);
		size_t k = hidx[wt->f[i].host] - 1;
		if (stat(tmp.data, &st) == 0)
			buf_puts(&why, "still being written: .tmp exists");
		else
			explain_missing(c, &wt->f[i], &pl[k], pl_ok[k], &why);
		fprintf(stderr, "    %s (pid %" PRId64 "%s%s): %s\n", wt->f[i].path, wt->f[i].pid,
			c->t->many ? ", " : "", c->t->many ? c->t->t[wt->f[i].host].label : "", why.data);
	}
	for (size_t k = 0; k < nt.n; k++)
		if (pl_ok[k])
			processes_free(&pl[k]);
	cli_jobs_free(pj, nt.n);
	free(pl);
	free(pl_ok);
	free(nt.t);
	free(hidx);
	buf_free(&e);
	buf_free(&why);
	buf_free(&tmp);
	free(seen);
	return 1;
}

static void add_path(struct want *w, const char *p, size_t host, int64_t pid)
{
	if ((w->n & (w->n - 1)) == 0)
		w->f = xrealloc(w->f, (w->n ? w->n * 2 : 1) * sizeof *w->f);
	w->f[w->n++] = (struct wanted){xstrdup(p), host, pid};
}

/* --json: everything the text output says, for scripts. */
static void print_json(const struct gt *g, const struct targets *t, const struct rpc_job *jobs,
		       const struct host_result *res, const char *config, struct want *wt)
{
	struct buf b = BUF_INIT, p = BUF_INIT;
	struct jw w;
	jw_init(&w, &b);
	jw_obj_begin(&w);
	jw_key(&w, "config");
	jw_str(&w, config);
	jw_key(&w, "job_id");
	jw_u64(&w, g->job_id);
	jw_key(&w, "profile_start_time_ms");
	jw_i64(&w, g->to.iterations > 0 ? 0 : g->to.profile_start_time);
	jw_key(&w, "hosts");
	jw_arr_begin(&w);
	size_t ok = 0, nomatch = 0, failed = 0, trig = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct host_result *r = &res[i];
		jw_obj_begin(&w);
		jw_key(&w, "host");
		jw_str(&w, t->t[i].label);
		jw_key(&w, "address");
		jw_str(&w, jobs[i].addr);
		jw_key(&w, "ms"); /* connect to answer */
		jw_f64(&w, (double)(int64_t)(jobs[i].elapsed_ms * 1000) / 1000);
		jw_key(&w, "result");
		jw_str(&w, !r->ok ? "failed" : r->nmatched ? "ok" : "no-match");
		failed += !r->ok;
		nomatch += r->ok && !r->nmatched;
		ok += r->ok && r->nmatched;
		if (r->ok) {
			jw_key(&w, "matched");
			jw_arr_begin(&w);
			for (size_t k = 0; k < r->nmatched; k++)
				jw_i64(&w, r->matched[k]);
			jw_arr_end(&w);
			jw_key(&w, "triggered");
			jw_arr_begin(&w);
			for (size_t k = 0; k < r->ntriggered; k++)
				jw_i64(&w, r->triggered[k]);
			jw_arr_end(&w);
			jw_key(&w, "busy");
			jw_i64(&w, r->busy);
			jw_key(&w, "files");
			jw_arr_begin(&w);
			for (size_t k = 0; k < r->ntriggered; k++) {
				buf_reset(&p);
				kineto_trace_path(r->log_file, r->triggered[k], g->to.profile_memory, &p);
				jw_str(&w, p.data);
				add_path(wt, p.data, i, r->triggered[k]);
			}
			jw_arr_end(&w);
			trig += r->ntriggered;
		}
		if (r->detail.len) {
			jw_key(&w, r->ok ? "notes" : "error");
			jw_strn(&w, r->detail.data, r->detail.len - (r->detail.data[r->detail.len - 1] == '\n'));
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "summary");
	jw_obj_begin(&w);
	jw_key(&w, "hosts");
	jw_u64(&w, t->n);
	jw_key(&w, "ok");
	jw_u64(&w, ok);
	jw_key(&w, "no_match");
	jw_u64(&w, nomatch);
	jw_key(&w, "failed");
	jw_u64(&w, failed);
	jw_key(&w, "triggered");
	jw_u64(&w, trig);
	jw_obj_end(&w);
	jw_obj_end(&w);
	puts(b.data);
	buf_free(&b);
	buf_free(&p);
}

/* Ask the daemons where nothing matched what they have registered, and
 * with --wait, those with triggered processes whether they are alive; the
 * findings go to each host's detail text. */
static void ask_processes(const struct gt *g, const struct host_opts *h, const struct targets *t,
			  struct host_result *res)
{
	struct targets nt = {0};
	size_t *nidx = xcalloc(t->n, sizeof *nidx);
	nt.t = xcalloc(t->n, sizeof *nt.t);
	for (size_t i = 0; i < t->n; i++)
		if (res[i].ok && (res[i].nmatched == 0 || (g->wait && res[i].ntriggered > 0))) {
			nidx[nt.n] = i;
			nt.t[nt.n++] = t->t[i];
		}
	/* getStatus first: an upstream daemon would log "Unknown RPC call
	 * getProcesses" for every gputrace that matched nothing */
	struct rpc_job *pj = nt.n ? cli_run_extension(&nt, h, NULL, "getProcesses", GET_PROCESSES_REQUEST,
						      sizeof GET_PROCESSES_REQUEST - 1)
				  : NULL;
	for (size_t k = 0; k < nt.n; k++) {
		struct host_result *r = &res[nidx[k]];
		bool why = r->nmatched == 0;
		struct proc_list pl;
		struct buf e = BUF_INIT;
		if (pj[k].status == RPC_ERR_NO_RESPONSE) {
			if (why)
				buf_puts(&r->detail, "(this daemon does not list its processes - no getProcesses "
						     "extension - so dyno cannot tell why)\n");
		} else if (pj[k].status != RPC_OK) {
			buf_printf(&r->detail, "(listing its processes failed: %s)\n", pj[k].err);
		} else if (!processes_parse(pj[k].resp.data, pj[k].resp.len, &pl, &e)) {
			buf_printf(&r->detail, "(listing its processes failed: %s)\n", e.data);
		} else {
			if (why)
				processes_explain(&pl, g->job_id, g->pids, "", &r->detail);
			for (size_t q = 0; q < r->ntriggered; q++)
				for (size_t m = 0; m < pl.n; m++)
					if (pl.p[m].pid == r->triggered[q] && pl.p[m].last_seen_ms > PROC_STALE_MS)
						buf_printf(&r->detail,
							   "pid %" PRId64 " last polled %.0f s ago: it has probably exited "
							   "and will not write its trace\n",
							   r->triggered[q], (double)pl.p[m].last_seen_ms / 1000.0);
			processes_free(&pl);
		}
		buf_free(&e);
	}
	if (pj)
		cli_jobs_free(pj, nt.n);
	free(nt.t); /* the entries belong to t */
	free(nidx);
}

/* One daemon: upstream's lines, then ours.  False when it failed. */
static bool print_single(const struct gt *g, const struct rpc_job *j, const struct host_result *r, struct want *wt)
{
	if (j->status == RPC_OK)
		cli_print_response(stdout, j);
	if (!r->ok) {
		fprintf(stderr, "dyno gputrace: %s\n", r->detail.data);
		return false;
	}
	printf("\n");
	if (r->nmatched == 0) {
		printf("No processes were matched, please check --job-id or --pids flags\n");
		fputs(r->detail.data, stdout);
		return true;
	}
	printf("Matched %zu processes\n", r->nmatched);
	if (r->ntriggered < r->nmatched)
		printf("Triggered %zu of them (%" PRId64 " busy with an earlier request that is still undelivered, "
		       "the rest over --process-limit %" PRId64 ")\n",
		       r->ntriggered, r->busy, g->process_limit);
	if (r->ntriggered)
		printf("Trace output files will be written to:\n");
	struct buf p = BUF_INIT;
	for (size_t k = 0; k < r->ntriggered; k++) {
		buf_reset(&p);
		kineto_trace_path(r->log_file, r->triggered[k], g->to.profile_memory, &p);
		printf("    %s\n", p.data);
		add_path(wt, p.data, 0, r->triggered[k]);
	}
	buf_free(&p);
	fputs(r->detail.data, stdout);
	return true;
}

/* Many daemons: one row each, a summary, the files. */
static void print_table(const struct gt *g, const struct targets *t, struct host_result *res, struct want *wt)
{
	int w = cli_host_width(t);
	size_t failed = 0, nomatch = 0, trig = 0;
	for (size_t i = 0; i < t->n; i++) {
		failed += !res[i].ok;
		nomatch += res[i].ok && res[i].nmatched == 0;
		trig += res[i].ok ? res[i].ntriggered : 0;
	}
	printf("\n%-*s  %-8s  %7s  %9s  %4s  %s\n", w, "HOST", "RESULT", "MATCHED", "TRIGGERED", "BUSY", "DETAIL");
	struct buf one = BUF_INIT, p = BUF_INIT;
	for (size_t i = 0; i < t->n; i++) {
		const struct host_result *r = &res[i];
		/* one line per host: the explanations' lines joined by "; " */
		buf_reset(&one);
		for (size_t k = 0; k < r->detail.len; k++) {
			if (r->detail.data[k] != '\n')
				buf_putc(&one, r->detail.data[k]);
			else if (k + 1 < r->detail.len)
				buf_puts(&one, "; ");
		}
		if (!r->ok)
			printf("%-*s  %-8s  %7s  %9s  %4s  %s\n", w, t->t[i].label, "FAILED", "-", "-", "-", one.data);
		else
			printf("%-*s  %-8s  %7zu  %9zu  %4" PRId64 "  %s\n", w, t->t[i].label,
			       r->nmatched ? "ok" : "no-match", r->nmatched, r->ntriggered, r->busy, one.data);
	}
	printf("%zu host%s: %zu ok, %zu without a matching process, %zu failed; %zu process%s triggered\n", t->n,
	       t->n == 1 ? "" : "s", t->n - failed - nomatch, nomatch, failed, trig, trig == 1 ? "" : "es");
	if (trig)
		printf("Trace output files will be written to:\n");
	for (size_t i = 0; i < t->n; i++)
		for (size_t k = 0; res[i].ok && k < res[i].ntriggered; k++) {
			buf_reset(&p);
			kineto_trace_path(res[i].log_file, res[i].triggered[k], g->to.profile_memory, &p);
			printf("    %s (%s)\n", p.data, t->t[i].label);
			add_path(wt, p.data, i, res[i].triggered[k]);
		}
	buf_free(&one);
	buf_free(&p);
}

int cmd_gputrace(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	struct gt g = {.to = TRACE_OPTS_INIT, .pids = "0", .process_limit = 3, .start_delay_s = 20};
	int64_t job_id = 0;
	bool job_seen = false, start_seen = false;
	const struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"log-file", 0, ARG_STRING, &g.to.log_file, "PATH",
		 "trace file (required); Kineto adds _<pid> before .json; '{host}' is replaced per daemon", 0, 0,
		 NULL},
		{"job-id", 0, ARG_INT, &job_id, "ID", "job id the processes registered with (SLURM_JOB_ID; 0: none)", 0,
		 INT64_MAX, &job_seen},
		{"pids", 0, ARG_STRING, &g.pids, "P1,P2", "processes (or any ancestor) to trace; 0: all of the job", 0, 0,
		 NULL},
		{"process-limit", 0, ARG_INT, &g.process_limit, "N", "trace at most N processes per daemon", 0,
		 UINT32_MAX, NULL},
		{"duration-ms", 0, ARG_INT, &g.to.duration_ms, "MS", "trace duration", 0, INT32_MAX, NULL},
		{"iterations", 0, ARG_INT, &g.to.iterations, "N", "trace N iterations instead of a duration (> 0)",
		 INT64_MIN, INT32_MAX, NULL},
		{"profile-start-time", 0, ARG_INT, &g.to.profile_start_time, "UNIX_MS",
		 "start at this time, ms since the epoch (0: ~7 s after pick-up)", 0, INT64_MAX, &start_seen},
		{"profile-start-iteration-roundup", 0, ARG_INT, &g.to.start_iteration_roundup, "N",
		 "iteration mode: start at the next multiple of N", 0, INT32_MAX, NULL},
		{"record-shapes", 0, ARG_BOOL, &g.to.record_shapes, NULL, "record operator input shapes", 0, 0, NULL},
		{"profile-memory", 0, ARG_BOOL, &g.to.profile_memory, NULL,
		 "CUDA memory snapshot (writes /tmp/memory_snapshot_<pid>.pickle)", 0, 0, NULL},
		{"with-stacks", 0, ARG_BOOL, &g.to.with_stacks, NULL, "record Python stacks", 0, 0, NULL},
		{"with-flops", 0, ARG_BOOL, &g.to.with_flops, NULL, "estimate FLOPs", 0, 0, NULL},
		{"with-modules", 0, ARG_BOOL, &g.to.with_modules, NULL, "record the nn.Module hierarchy", 0, 0, NULL},
		{"fail-on-no-process", 0, ARG_BOOL, &g.fail_on_no_process, NULL, "exit 1 when no process matched", 0, 0,
		 NULL},
		{"start-delay-s", 0, ARG_DOUBLE, &g.start_delay_s, "SECONDS",
		 "many daemons, duration mode: common PROFILE_START_TIME this far ahead (20: Kineto's worst case + 4 s)", 0, 0, NULL},
		{"verbose", 0, ARG_BOOL, &g.verbose, NULL,
		 "print the Kineto config before contacting the daemons (else after the first answer)", 0, 0, NULL},
		{"json", 0, ARG_BOOL, &g.json, NULL, "print the per-host results as one JSON object instead of text", 0,
		 0, NULL},
		{"wait", 0, ARG_BOOL, &g.wait, NULL, "wait until the trace files exist (local or shared file system)", 0,
		 0, NULL},
		{"wait-timeout-s", 0, ARG_DOUBLE, &g.wait_timeout_s, "SECONDS",
		 "give up waiting after this long (0: start delay + duration + 60 s)", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dyno gputrace",
		.usage = "dyno gputrace --log-file PATH [options] [host options]",
		.description = "Trace the PyTorch processes registered with the daemon(s) (Kineto on-demand\n"
			       "tracing; the processes must run with KINETO_USE_DAEMON=1).",
		.opts = opts,
	};
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct buf err = BUF_INIT, cfg_shown = BUF_INIT;
	struct targets t = {0};
	rc = 2;
	if (!kineto_pids_check(g.pids, &err) || !kineto_config_build(&g.to, &cfg_shown, &err) ||
	    !(g.start_delay_s >= 0 && g.start_delay_s <= 86400) || !(g.wait_timeout_s >= 0)) {
		if (!err.len)
			buf_puts(&err, "--start-delay-s and --wait-timeout-s must be >= 0");
		fprintf(stderr, "dyno gputrace: %s\n", err.data);
		goto out;
	}
	if (start_seen && g.to.profile_start_time != 0 && g.to.iterations <= 0) {
		/* Kineto rejects a start time in the past and refuses one closer
		 * than its tick + warm-up (6 s) after it reads the config. */
		int64_t ahead_ms = g.to.profile_start_time - clock_wall_ns() / NS_PER_MS;
		if (ahead_ms < 6000) {
			char iso[40];
			clock_fmt_iso8601(iso, sizeof iso, g.to.profile_start_time * NS_PER_MS);
			fprintf(stderr,
				"dyno gputrace: --profile-start-time %" PRId64 " (%s) is %s: Kineto needs it at least "
				"6 s after it reads the config (which is up to 5 s, or 10 s, after this request); use a "
				"time at least %.0f s ahead, or 0\n",
				g.to.profile_start_time, iso, ahead_ms < 0 ? "in the past" : "too close", 20.0);
			goto out;
		}
		if (ahead_ms < (int64_t)(KINETO_WORST_PICKUP_S * 1000))
			fprintf(stderr, "dyno gputrace: note: --profile-start-time is only %.1f s ahead; a process "
					"that reads the config late (up to 10 s) refuses it (20 s is safe)\n",
				(double)ahead_ms / 1000.0);
	}
	if (!cli_targets(cmd.prog, &h, &t))
		goto out;
	g.job_id = (uint64_t)job_id;
	if (h.slurm_job && !job_seen) /* the processes registered under this job */
		g.job_id = strtoull(h.slurm_job, NULL, 10);
	if (g.job_id > INT32_MAX)
		fprintf(stderr, "dyno gputrace: warning: job id %" PRIu64 " exceeds 2^31-1; upstream daemons read "
				"job_id as a 32-bit int and will not match it\n",
			g.job_id);
	if (t.many && g.to.iterations <= 0 && !start_seen) {
		/* One start time for every rank, far enough ahead for every
		 * process to read it and warm up (KINETO_WORST_PICKUP_S; the
		 * default 20 s adds a 4 s margin). */
		g.to.profile_start_time = clock_wall_ns() / NS_PER_MS + (int64_t)(g.start_delay_s * 1000);
		buf_reset(&cfg_shown);
		kineto_config_build(&g.to, &cfg_shown, &err);
		char iso[40];
		clock_fmt_iso8601(iso, sizeof iso, g.to.profile_start_time * NS_PER_MS);
		if (!g.json)
			printf("synchronized start for all daemons: PROFILE_START_TIME=%" PRId64 " (%s, in %.0f s)\n",
			       g.to.profile_start_time, iso, g.start_delay_s);
	}
	if (t.many && t.n > 1 && !strstr(g.to.log_file, "{host}"))
		fprintf(stderr, "dyno gputrace: note: --log-file has no '{host}': on a shared file system, processes "
				"with the same pid on different hosts write the same file\n");
	if (!kineto_path_allowed_default(g.to.log_file))
		fprintf(stderr, "dyno gputrace: note: Kineto since 2026-06 writes on-demand traces only under /tmp/ (or "
				"$KINETO_ONDEMAND_TRACE_DIR of the traced process); elsewhere it falls back to "
				"/tmp/libkineto_activities_<pid>.json\n");

	profile_memory_note(&g.to);

	/* Upstream prints the config first; printed before a connection
	 * error it only hides the error, so without --verbose it waits for
	 * a daemon's answer (the same lines, in the same order, then). */
	if (!g.json && g.verbose)
		printf("Kineto config = \n%s\n", cfg_shown.data);
	fflush(stdout);

	/* Per-host requests ({host} makes them differ). */
	struct buf *reqs = xcalloc(t.n, sizeof *reqs);
	struct host_result *res = xcalloc(t.n, sizeof *res);
	struct rpc_job *jobs = xcalloc(t.n, sizeof *jobs);
	for (size_t i = 0; i < t.n; i++) {
		struct trace_opts to = g.to;
		buf_init(&res[i].detail);
		res[i].log_file = subst_host(g.to.log_file, &t, i);
		to.log_file = res[i].log_file;
		struct buf cfg = BUF_INIT;
		/* Cannot fail: the template passed and host names are [A-Za-z0-9._:%-]. */
		kineto_config_build(&to, &cfg, &err);
		kineto_request_build(cfg.data, g.job_id, g.pids, g.process_limit, &reqs[i]);
		buf_free(&cfg);
		rpc_job_init(&jobs[i], t.t[i].host, t.t[i].port, reqs[i].data, reqs[i].len);
	}
	struct rpc_client_opts ro = hosts_rpc_opts(&h);
	int64_t request_wall_ms = clock_wall_ns() / NS_PER_MS;
	rpc_call_many(jobs, t.n, &ro);

	size_t failed = 0, nomatch = 0, matched = 0, triggered = 0, answered = 0;
	for (size_t i = 0; i < t.n; i++) {
		judge(&jobs[i], &res[i]);
		failed += !res[i].ok;
		nomatch += res[i].ok && res[i].nmatched == 0;
		matched += res[i].ok ? res[i].nmatched : 0;
		triggered += res[i].ok ? res[i].ntriggered : 0;
		answered += jobs[i].status == RPC_OK;
	}
	if (!g.json && !g.verbose && answered)
		printf("Kineto config = \n%s\n", cfg_shown.data);
	ask_processes(&g, &h, &t, res);

	struct want wt = {0};
	if (g.json) {
		print_json(&g, &t, jobs, res, cfg_shown.data, &wt);
	} else if (!t.many) {
		if (!print_single(&g, &jobs[0], &res[0], &wt))
			failed = 1;
	} else {
		print_table(&g, &t, res, &wt);
	}
	rc = failed ? 1 : 0;
	if (matched && !triggered) {
		/* every matched process busy or over --process-limit 0 */
		fprintf(stderr, "dyno gputrace: %zu process%s matched but none was triggered\n", matched,
			matched == 1 ? "" : "es");
		rc = 1;
	}
	if (g.fail_on_no_process && nomatch) {
		fprintf(stderr, "Error: No processes were matched\n");
		rc = 1;
	}
	if (g.wait && wt.n) {
		double tmo = g.wait_timeout_s;
		if (tmo <= 0) {
			double ahead = g.to.profile_start_time
					       ? (double)(g.to.profile_start_time - clock_wall_ns() / NS_PER_MS) / 1000.0
					       : 12.0; /* poll (<= 5 s) + warm-up (5 s) + 2 ticks */
			tmo = (ahead > 0 ? ahead : 0) + (double)g.to.duration_ms / 1000.0 + 60.0;
		}
		struct wait_ctx wc = {&g, &h, &t, res, request_wall_ms};
		if (wait_files(g.json ? stderr : stdout, &wt, tmo, &wc) != 0)
			rc = 1;
	} else if (g.wait && !failed) {
		fprintf(stderr, "dyno gputrace: --wait: no process was triggered, nothing to wait for\n");
		rc = 1;
	}
	for (size_t i = 0; i < wt.n; i++)
		free(wt.f[i].path);
	free(wt.f);
	for (size_t i = 0; i < t.n; i++) {
		result_free(&res[i]);
		buf_free(&reqs[i]);
		rpc_job_free(&jobs[i]);
	}
	free(res);
	free(reqs);
	free(jobs);
out:
	targets_free(&t);
	buf_free(&cfg_shown);
	buf_free(&err);
	args_free(&a);
	return rc;
}
