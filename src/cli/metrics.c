/*
 * metrics.c - `dyno metrics [--since S] [--names a,b*]`: the daemons' recent
 * metric history through the getMetrics RPC extension (agreed contract:
 * {"fn":"getMetrics","since_s":S,"names":[...]} ->
 * {"interval_s":I,"metrics":{"key":[[unix_ms,value],...]},"window_s":W}).
 * An answer past the daemon's bound (--history_max_answer_bytes) ends with
 * "truncated":true and a "next" cursor: the same request with that "next"
 * gives the following page.  Pages are fetched here, every paging host's
 * next page in one round, and merged into the answer one unbounded reply
 * would have been (the numbers' text copied as sent), so the table and
 * --json are the same either way.  At most MAX_PAGES pages and
 * RPC_MAX_RESPONSE bytes a host: past them that host fails, said so.
 * Prints one line per metric (samples, last, min, mean, max; integral
 * values such as byte counters exactly, not as 2.48295e+10) or, with
 * --json, the answer itself.  The header waits for the first answer (a
 * connection error alone prints no table), and --names that match nothing
 * are an error (exit 1), not an empty table.  Upstream daemons do not know the request and
 * close without answering; that gets its own message.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "client/rpc_cmd.h"

/* Pages one host may take, and merged bytes (the limit of one answer
 * before the daemon paged: 64 MiB, ~9 hours of a host's keys at 1 s). */
#define MAX_PAGES 4096


/* next: the previous page's cursor, sent back as is (NULL: first page). */
static void build_request(int64_t since_s, bool since_seen, const char *names, const struct json_value *next,
			  struct buf *out)
{
	struct jw w;
	jw_init(&w, out);
	jw_obj_begin(&w);
	jw_key(&w, "fn");
	jw_str(&w, "getMetrics");
	if (names) {
		jw_key(&w, "names");
		jw_arr_begin(&w);
		for (const char *p = names; *p;) {
			size_t n = strcspn(p, ",");
			if (n)
				jw_strn(&w, p, n);
			p += n;
			if (*p)
				p++;
		}
		jw_arr_end(&w);
	}
	if (next) {
		jw_key(&w, "next");
		jw_value(&w, next);
	}
	if (since_seen) {
		jw_key(&w, "since_s");
		jw_i64(&w, since_s);
	}
	jw_obj_end(&w);
}

/* One paging host: the answer built from its pages so far, and what the
 * next round sends. */
struct pages {
	struct buf out; /* {"interval_s":I,"metrics":{... (open) */
	struct jw w;
	char *key;       /* the series open at the end of out (pages split a series) */
	struct buf tail; /* ,"window_s":W} from the first page */
	struct buf req;  /* the next page's request; empty: done */
	size_t n;        /* pages merged */
};

/* Merge one page's series into p (the cursor goes to p->req); false with
 * detail when the page is not a getMetrics answer. */
static bool pages_add(struct pages *p, const struct json_value *root, int64_t since_s, bool since_seen,
		      const char *names, struct buf *detail)
{
	const char *s;
	size_t n;
	if (json_get_str(root, "error", &s, &n)) {
		buf_printf(detail, "page %zu: daemon: %.*s", p->n + 1, (int)(n > 300 ? 300 : n), s);
		return false;
	}
	const struct json_value *m = json_get(root, "metrics");
	if (!m || m->type != JV_OBJECT) {
		buf_printf(detail, "page %zu: answer has no \"metrics\" object", p->n + 1);
		return false;
	}
	if (p->n++ == 0) {
		jw_init(&p->w, &p->out);
		jw_obj_begin(&p->w);
		const struct json_value *i = json_get(root, "interval_s");
		if (i) {
			jw_key(&p->w, "interval_s");
			jw_value(&p->w, i);
		}
		jw_key(&p->w, "metrics");
		jw_obj_begin(&p->w);
		/* the members after "metrics" but the cursor's two (window_s), kept
		 * for the end: a writer that continues an object (need_comma) */
		struct jw t;
		jw_init(&t, &p->tail);
		t.need_comma = true;
		for (uint32_t k = 0; k < root->len; k++) {
			const struct json_member *mb = &root->u.members[k];
			if (strcmp(mb->key, "interval_s") && strcmp(mb->key, "metrics") && strcmp(mb->key, "next") &&
			    strcmp(mb->key, "truncated")) {
				jw_keyn(&t, mb->key, mb->key_len);
				jw_value(&t, &mb->value);
			}
		}
		buf_putc(&p->tail, '}');
	}
	for (uint32_t k = 0; k < m->len; k++) {
		const struct json_member *mb = &m->u.members[k];
		if (mb->value.type != JV_ARRAY) {
			buf_printf(detail, "page %zu: metric %s: not an array of samples", p->n, mb->key);
			return false;
		}
		if (!p->key || strcmp(p->key, mb->key) != 0) {
			if (p->key)
				jw_arr_end(&p->w);
			free(p->key);
			p->key = xstrdup(mb->key);
			jw_keyn(&p->w, mb->key, mb->key_len);
			jw_arr_begin(&p->w);
		}
		for (uint32_t i = 0; i < mb->value.len; i++)
			jw_value(&p->w, &mb->value.u.items[i]);
	}
	const struct json_value *next = json_get(root, "next");
	bool more = false;
	json_get_bool(root, "truncated", &more);
	struct buf prev = p->req;
	p->req = (struct buf)BUF_INIT;
	if (more && next) {
		build_request(since_s, since_seen, names, next, &p->req);
		if (prev.len == p->req.len && memcmp(prev.data, p->req.data, prev.len) == 0) {
			buf_printf(detail, "page %zu: the daemon gave the same \"next\" again", p->n);
			buf_free(&prev);
			return false;
		}
	} else if (more) {
		buf_printf(detail, "page %zu: a truncated answer without \"next\"", p->n);
		buf_free(&prev);
		return false;
	}
	buf_free(&prev);
	if (p->req.len && (p->n >= MAX_PAGES || p->out.len > RPC_MAX_RESPONSE)) {
		buf_printf(detail,
			   "stopped after %zu pages (%zu bytes; at most %d pages, %u MiB): the history is larger than "
			   "dyno metrics takes; narrow it with --since or --names",
			   p->n, p->out.len, MAX_PAGES, RPC_MAX_RESPONSE >> 20);
		return false;
	}
	return true;
}

/* The merged answer, closed, into j->resp (in place of its first page). */
static void pages_finish(struct pages *p, struct rpc_job *j)
{
	if (p->key)
		jw_arr_end(&p->w);
	jw_obj_end(&p->w); /* "metrics" */
	buf_append(&p->out, p->tail.data, p->tail.len);
	buf_free(&j->resp);
	j->resp = p->out;
	p->out = (struct buf)BUF_INIT;
}

static void pages_free(struct pages *p)
{
	buf_free(&p->out);
	buf_free(&p->tail);
	buf_free(&p->req);
	free(p->key);
}

/* Fetch the remaining pages of every host whose first answer (jobs[i])
 * was truncated, a round at a time (all such hosts' next pages at once);
 * each such job ends with the merged answer, or failed with the reason. */
static void follow_pages(const struct targets *t, const struct host_opts *h, struct rpc_job *jobs, int64_t since_s,
			 bool since_seen, const char *names)
{
	struct pages *pg = xcalloc(t->n ? t->n : 1, sizeof *pg);
	struct rpc_job *round = xcalloc(t->n ? t->n : 1, sizeof *round);
	size_t *who = xcalloc(t->n ? t->n : 1, sizeof *who);
	struct buf d = BUF_INIT;
	size_t nr = 0;
	/* the first pages: only truncated answers are touched */
	for (size_t i = 0; i < t->n; i++) {
		struct json_doc doc;
		bool more = false;
		buf_reset(&d);
		if (jobs[i].status != RPC_OK || !cli_parse_answer(&jobs[i], &doc, &d))
			continue;
		if (json_get_bool(doc.root, "truncated", &more) && more && json_get(doc.root, "metrics")) {
			if (!pages_add(&pg[i], doc.root, since_s, since_seen, names, &d)) {
				jobs[i].status = RPC_ERR_IO;
				snprintf(jobs[i].err, sizeof jobs[i].err, "%s: %s", t->t[i].label, d.data);
			}
		}
		json_doc_free(&doc);
	}
	struct rpc_client_opts o = hosts_rpc_opts(h);
	for (;;) {
		nr = 0;
		for (size_t i = 0; i < t->n; i++)
			if (jobs[i].status == RPC_OK && pg[i].req.len) {
				rpc_job_init(&round[nr], t->t[i].host, t->t[i].port, pg[i].req.data, pg[i].req.len);
				who[nr++] = i;
			}
		if (!nr)
			break;
		rpc_call_many(round, nr, &o);
		for (size_t k = 0; k < nr; k++) {
			size_t i = who[k];
			struct json_doc doc;
			buf_reset(&d);
			bool ok = false;
			if (round[k].status != RPC_OK)
				buf_printf(&d, "page %zu: %s", pg[i].n + 1, round[k].err);
			else if (cli_parse_answer(&round[k], &doc, &d)) {
				ok = pages_add(&pg[i], doc.root, since_s, since_seen, names, &d);
				json_doc_free(&doc);
			}
			if (!ok) {
				jobs[i].status = round[k].status == RPC_OK || round[k].status == RPC_ERR_NO_RESPONSE
							 ? RPC_ERR_IO
							 : round[k].status;
				snprintf(jobs[i].err, sizeof jobs[i].err, "%s: %s", t->t[i].label, d.data);
			}
			rpc_job_free(&round[k]);
		}
	}
	for (size_t i = 0; i < t->n; i++) {
		if (jobs[i].status == RPC_OK && pg[i].n)
			pages_finish(&pg[i], &jobs[i]);
		pages_free(&pg[i]);
	}
	buf_free(&d);
	free(who);
	free(round);
	free(pg);
}

/* A value in a 14-wide column: integral values exactly (counters in bytes
 * run past %g's six digits), large ones (a mean of byte counts) to the
 * nearest integer, the rest with 6 significant digits; --json has every
 * value as the daemon sent it. */
static const char *fmt_value(double v, char out[32])
{
	if (isfinite(v) && ((v == floor(v) && fabs(v) < 9007199254740992.0) || /* 2^53: exact in a double */
			    (fabs(v) >= 1e6 && fabs(v) < 1e13)))
		snprintf(out, 32, "%.0f", v);
	else
		snprintf(out, 32, "%.6g", v);
	return out;
}

static void print_header(const struct targets *t, int w, bool *done)
{
	if (*done)
		return;
	*done = true;
	if (t->many)
		printf("%-*s  ", w, "HOST");
	printf("%-40s %7s %14s %14s %14s %14s\n", "METRIC", "SAMPLES", "LAST", "MIN", "MEAN", "MAX");
}

/* Print one host's metrics (the header first, once); false with detail
 * when the answer is malformed.  *count gets the number of metrics. */
static bool print_metrics(const struct targets *t, size_t ti, const struct json_value *root, int w, bool *header,
			  size_t *count, struct buf *detail)
{
	const char *host = t->many ? t->t[ti].label : NULL;
	const char *s;
	size_t n;
	if (json_get_str(root, "error", &s, &n)) {
		buf_printf(detail, "daemon: %.*s", (int)(n > 300 ? 300 : n), s);
		return false;
	}
	const struct json_value *m = json_get(root, "metrics");
	if (!m || m->type != JV_OBJECT) {
		buf_puts(detail, "answer has no \"metrics\" object");
		return false;
	}
	*count = m->len;
	for (uint32_t i = 0; i < m->len; i++) {
		const struct json_member *mb = &m->u.members[i];
		const struct json_value *series = &mb->value;
		if (series->type != JV_ARRAY) {
			buf_printf(detail, "metric %s: not an array of samples", mb->key);
			return false;
		}
		double min = INFINITY, max = -INFINITY, sum = 0, last = NAN;
		int64_t last_ms = 0;
		for (uint32_t k = 0; k < series->len; k++) {
			const struct json_value *pt = &series->u.items[k];
			int64_t ms;
			if (pt->type != JV_ARRAY || pt->len != 2 || !json_value_i64(&pt->u.items[0], &ms) ||
			    pt->u.items[1].type != JV_NUMBER) {
				buf_printf(detail, "metric %s: sample %u is not [unix_ms, number]", mb->key, k);
				return false;
			}
			double v = json_value_f64(&pt->u.items[1]);
			min = v < min ? v : min;
			max = v > max ? v : max;
			sum += v;
			if (ms >= last_ms) {
				last_ms = ms;
				last = v;
			}
		}
		print_header(t, w, header);
		if (host)
			printf("%-*s  ", w, host);
		char b1[32], b2[32], b3[32], b4[32];
		if (series->len == 0)
			printf("%-40s %7u  (no samples in the window)\n", mb->key, 0u);
		else
			printf("%-40s %7u %14s %14s %14s %14s\n", mb->key, series->len, fmt_value(last, b1),
			       fmt_value(min, b2), fmt_value(sum / series->len, b3), fmt_value(max, b4));
	}
	return true;
}

int cmd_metrics(int argc, char **argv)
{
	struct host_opts h = HOST_OPTS_INIT;
	int64_t since_s = 0;
	bool since_seen = false, json = false;
	const char *names = NULL;
	const struct arg_opt opts[] = {
		HOST_ARG_OPTS(&h),
		{"since", 0, ARG_INT, &since_s, "SECONDS", "only samples from the last SECONDS (0, the default: whole history)",
		 0, INT32_MAX, &since_seen},
		{"names", 0, ARG_STRING, &names, "K1,K2*", "metric keys; a trailing '*' matches a prefix", 0, 0, NULL},
		{"json", 0, ARG_BOOL, &json, NULL, "print the daemon's JSON answer", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dyno metrics",
		.usage = "dyno metrics [--since S] [--names K1,K2*] [host options]",
		.description = "Print the daemon's recent metrics (dynolite daemons only: getMetrics extension).",
		.opts = opts,
	};
	struct targets t;
	int rc = cli_start(&cmd, argc, argv, &h, &a, &t);
	if (rc >= 0)
		return rc;
	struct buf req = BUF_INIT, d = BUF_INIT;
	since_seen = since_seen && since_s > 0; /* 0: no since_s, the whole history */
	build_request(since_s, since_seen, names, NULL, &req);
	/* getStatus first: an upstream daemon is never sent getMetrics (it
	 * would log "Unknown RPC call getMetrics") */
	struct rpc_job *jobs = cli_run_extension(&t, &h, NULL, "getMetrics", req.data, req.len);
	follow_pages(&t, &h, jobs, since_s, since_seen, names);
	int w = cli_host_width(&t);
	size_t failed = 0, answered = 0, found = 0;
	bool header = false;
	for (size_t i = 0; i < t.n; i++) {
		buf_reset(&d);
		bool ok = false;
		struct json_doc doc;
		if (jobs[i].status == RPC_ERR_NO_RESPONSE)
			buf_printf(&d, "%s: it has no getMetrics (upstream dynolog) or refused the request (%s)",
				   t.t[i].label, jobs[i].err);
		else if (jobs[i].status != RPC_OK)
			buf_puts(&d, jobs[i].err);
		else if (cli_parse_answer(&jobs[i], &doc, &d)) {
			if (json) {
				const char *s;
				size_t n;
				ok = !json_get_str(doc.root, "error", &s, &n);
				if (!ok)
					buf_printf(&d, "daemon: %.*s", (int)(n > 300 ? 300 : n), s);
				if (t.many)
					printf("%s ", t.t[i].label);
				fwrite(jobs[i].resp.data, 1, jobs[i].resp.len, stdout);
				putchar('\n');
			} else {
				size_t count = 0;
				ok = print_metrics(&t, i, doc.root, w, &header, &count, &d);
				found += count;
				answered += ok;
			}
			json_doc_free(&doc);
		}
		if (!ok) {
			failed++;
			fprintf(stderr, "dyno metrics: %s%s%s\n", jobs[i].status == RPC_OK ? t.t[i].label : "",
				jobs[i].status == RPC_OK ? ": " : "", d.data);
		}
	}
	if (t.many)
		cli_print_tally(&t, failed);
	if (!json && answered && !found) {
		/* an empty table says nothing: say why */
		fprintf(stderr, "dyno metrics: no metric %s%s%s\n", names ? "matched --names " : "in the window",
			names ? names : "", names ? " (dyno metrics without --names lists them all)" : "");
		failed++;
	}
	cli_jobs_free(jobs, t.n);
	targets_free(&t);
	buf_free(&req);
	buf_free(&d);
	args_free(&a);
	return failed ? 1 : 0;
}
