/*
 * processes.c - see processes.h.  The answer comes from another program over
 * the network, so every field is type-checked and a malformed answer is a
 * message, never a crash.
 */
#include "client/processes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

void processes_free(struct proc_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->p[i].job);
		free(l->p[i].pids);
	}
	free(l->p);
	l->p = NULL;
	l->n = 0;
}

static bool parse_one(const struct json_value *v, struct proc_info *p, struct buf *err, size_t idx)
{
	const char *s;
	size_t sl;
	const struct json_value *pids = json_get(v, "pids");
	if (v->type != JV_OBJECT || !json_get_str(v, "jobId", &s, &sl) || !json_get_i64(v, "pid", &p->pid) ||
	    !json_get_i64(v, "lastSeenMs", &p->last_seen_ms) || !pids || pids->type != JV_ARRAY) {
		buf_printf(err, "process %zu: expected an object with jobId (string), pid, lastSeenMs (integers), "
				"pids (array)", idx);
		return false;
	}
	p->job = xstrndup(s, sl);
	if (!json_get_str(v, "state", &s, &sl) || sl == 0 || sl >= sizeof p->state) {
		buf_printf(err, "process %zu: missing or odd state", idx);
		return false;
	}
	memcpy(p->state, s, sl);
	p->state[sl] = 0;
	p->pids = xcalloc(pids->len ? pids->len : 1, sizeof *p->pids);
	for (uint32_t k = 0; k < pids->len; k++) {
		if (!json_value_i64(&pids->u.items[k], &p->pids[k])) {
			buf_printf(err, "process %zu: pids[%u] is not an integer", idx, k);
			return false;
		}
		p->npids++;
	}
	return true;
}

bool processes_parse(const char *json, size_t len, struct proc_list *out, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct json_doc doc;
	struct json_error je;
	if (!json_parse(json, len, &doc, &je)) {
		buf_printf(err, "getProcesses answer is not JSON: %s at byte %llu", je.msg,
			   (unsigned long long)je.offset);
		return false;
	}
	bool ok = false;
	const char *emsg;
	size_t el;
	const struct json_value *arr = json_get(doc.root, "processes");
	if (json_get_str(doc.root, "error", &emsg, &el)) {
		buf_printf(err, "daemon: %.*s", (int)(el > 300 ? 300 : el), emsg);
	} else if (!arr || arr->type != JV_ARRAY) {
		buf_printf(err, "getProcesses answer has no \"processes\" array");
	} else {
		ok = true;
		int64_t count;
		bool trunc = false;
		out->truncated = json_get_bool(doc.root, "truncated", &trunc) && trunc;
		out->total = json_get_i64(doc.root, "count", &count) && count >= (int64_t)arr->len ? (size_t)count
												 : arr->len;
		out->p = xcalloc(arr->len ? arr->len : 1, sizeof *out->p);
		for (uint32_t i = 0; i < arr->len && ok; i++) {
			ok = parse_one(&arr->u.items[i], &out->p[i], err, i);
			out->n = i + 1;
		}
	}
	json_doc_free(&doc);
	if (!ok)
		processes_free(out);
	return ok;
}

void processes_format(const struct proc_list *l, const char *indent, struct buf *out)
{
	buf_printf(out, "%s%-10s %-12s %-8s %-10s %s\n", indent, "PID", "JOB", "STATE", "LAST-POLL", "ANCESTRY");
	for (size_t i = 0; i < l->n; i++) {
		const struct proc_info *p = &l->p[i];
		char age[32];
		snprintf(age, sizeof age, "%.1fs ago", (double)p->last_seen_ms / 1000.0);
		buf_printf(out, "%s%-10" PRId64 " %-12s %-8s %-10s ", indent, p->pid, p->job, p->state, age);
		for (size_t k = 0; k < p->npids; k++)
			buf_printf(out, "%s%" PRId64, k ? "<" : "", p->pids[k]);
		if (p->last_seen_ms > PROC_STALE_MS)
			buf_puts(out, "  (stale: probably exited)");
		buf_putc(out, '\n');
	}
	if (l->truncated)
		buf_printf(out, "%s(the daemon listed %zu of its %zu processes)\n", indent, l->n, l->total);
}

static bool pid_in(const char *pids, int64_t pid)
{
	for (const char *p = pids; *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		char *e;
		long long v = strtoll(p, &e, 10);
		if (e == p)
			break;
		if (v == pid)
			return true;
		p = e;
	}
	return false;
}

static bool trace_all(const char *pids)
{
	for (const char *p = pids; *p; p++)
		if (*p != ' ' && *p != ',' && *p != '0')
			return false;
	return true;
}

void processes_explain(const struct proc_list *l, uint64_t job_id, const char *pids, const char *indent,
		       struct buf *out)
{
	char job[32];
	snprintf(job, sizeof job, "%llu", (unsigned long long)job_id);
	if (l->n == 0) {
		buf_printf(out,
			   "%sno process is registered with this daemon: start the training with "
			   "KINETO_USE_DAEMON=1 and the daemon with --enable_ipc_monitor (a new process "
			   "registers at its first poll, within about 5 s)\n",
			   indent);
		return;
	}
	if (l->truncated)
		buf_printf(out, "%s(the daemon listed only %zu of its %zu processes: the explanation may miss some)\n",
			   indent, l->n, l->total);
	size_t in_job = 0, stale = 0, pid_hit = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->p[i].job, job) != 0)
			continue;
		in_job++;
		stale += l->p[i].last_seen_ms > PROC_STALE_MS;
		for (size_t k = 0; k < l->p[i].npids; k++)
			if (pid_in(pids, l->p[i].pids[k])) {
				pid_hit++;
				break;
			}
	}
	if (in_job == 0) {
		buf_printf(out, "%sno registered process has job id %s; registered:", indent, job);
		/* list each other job once, with its process count */
		for (size_t i = 0; i < l->n; i++) {
			bool seen = false;
			for (size_t k = 0; k < i && !seen; k++)
				seen = strcmp(l->p[k].job, l->p[i].job) == 0;
			if (seen)
				continue;
			size_t c = 0;
			for (size_t k = i; k < l->n; k++)
				c += strcmp(l->p[k].job, l->p[i].job) == 0;
			buf_printf(out, " job %s (%zu process%s)", l->p[i].job, c, c == 1 ? "" : "es");
		}
		buf_putc(out, '\n');
		if (job_id == 0)
			buf_printf(out,
				   "%sprocesses started under SLURM register with their SLURM_JOB_ID: pass "
				   "--job-id JOB (or --slurm-job JOB)\n",
				   indent);
		return;
	}
	if (!trace_all(pids) && pid_hit == 0) {
		buf_printf(out, "%sjob %s has %zu process%s, none with any of --pids %s in its ancestry (pids as seen "
				"inside the process's pid namespace):",
			   indent, job, in_job, in_job == 1 ? "" : "es", pids);
		for (size_t i = 0; i < l->n; i++)
			if (strcmp(l->p[i].job, job) == 0)
				buf_printf(out, " %" PRId64, l->p[i].pid);
		buf_putc(out, '\n');
		return;
	}
	if (stale == in_job) {
		buf_printf(out, "%sjob %s's processes have not polled for over %d s: they have probably exited\n", indent,
			   job, PROC_STALE_MS / 1000);
		return;
	}
	buf_printf(out, "%sjob %s has %zu matching process%s now; it registered after the request or the daemon "
			"does not match as expected: try again\n",
		   indent, job, in_job, in_job == 1 ? "" : "es");
}
