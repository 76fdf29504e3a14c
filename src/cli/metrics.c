/*
 * metrics.c - `dyno metrics [--since S] [--names a,b*]`: the daemons' recent
 * metric history through the getMetrics RPC extension (agreed contract:
 * {"fn":"getMetrics","since_s":S,"names":[...]} ->
 * {"interval_s":I,"metrics":{"key":[[unix_ms,value],...]},"window_s":W}).
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
#include "cli/rpc_cmd.h"

static void build_request(int64_t since_s, bool since_seen, const char *names, struct buf *out)
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
	if (since_seen) {
		jw_key(&w, "since_s");
		jw_i64(&w, since_s);
	}
	jw_obj_end(&w);
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
	build_request(since_s, since_seen && since_s > 0, names, &req); /* 0: no since_s, the whole history */
	/* getStatus first: an upstream daemon is never sent getMetrics (it
	 * would log "Unknown RPC call getMetrics") */
	struct rpc_job *jobs = cli_run_extension(&t, &h, NULL, "getMetrics", req.data, req.len);
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
