/*
 * telemetry.c - host telemetry wiring (see telemetry.h).
 *
 * Two timers: the kernel tick (procfs + tracked processes) and, with
 * --enable_perf_monitor, the perf tick.  Each tick fills a frame and hands
 * it to every enabled sink; sinks never block (the JSON log is written with
 * O_NONBLOCK and a line that does not fit is dropped and counted,
 * Prometheus only swaps a prepared page, OTLP only enqueues).
 *
 * Configuration precedence: command line > config file > defaults.  The
 * config file (--config) is a JSON object whose keys are the flag names
 * ({"use_prometheus": true, "prometheus_port": 9400}); on SIGHUP it is read
 * again and the result applied: intervals, sinks on/off, listen address,
 * OTLP endpoint, tracked pids, NIC filter, history window (history restarts
 * when its shape changes).  A config that does not parse is rejected whole
 * and the running configuration kept.
 */
#include "telemetry.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/collect/kernel.h"
#include "daemon/collect/perf.h"
#include "daemon/collect/proc.h"
#include "daemon/frame.h"
#include "daemon/publish/history.h"
#include "daemon/publish/jsonlog.h"
#include "daemon/publish/otlp.h"
#include "daemon/publish/prometheus.h"

enum { SRC_KERNEL = 0, SRC_PERF = 1 };

struct cstat {
	const char *name;
	double last_s; /* duration of the last run */
	bool ok;
	uint64_t runs;
};

struct telemetry {
	struct ev_loop *loop;
	struct telemetry_config cli; /* as given on the command line */
	struct telemetry_config cfg; /* effective */
	struct args file_args;       /* keeps the config file's strings alive */
	char **file_argv;
	int file_argc;
	struct kernel_options kopt;
	struct kernel_collector *kernel;
	struct proc_collector *proc;
	struct perf_collector *perf;
	struct ev_timer *ktimer, *ptimer;
	struct frame frame;
	struct buf line;
	int json_fd;
	int json_pipe_cap; /* capacity when the JSON log is a pipe, else -1 */
	enum jsonlog_mode json_mode;
	uint64_t json_dropped;
	struct prom_sink *prom;
	struct otlp_sink *otlp;
	struct history *hist;
	int64_t hist_window, hist_interval;
	size_t hist_cap_series;
	struct cstat cs[3]; /* kernel, proc, perf */
	int64_t ticks;
};

static struct telemetry *g_tel; /* the running instance, for telemetry_track_pid / the RPC */

/* ---------------- configuration ---------------- */

void telemetry_config_defaults(struct telemetry_config *c)
{
	memset(c, 0, sizeof *c);
	c->kernel_interval_s = 60;
	c->perf_interval_s = 60;
	c->use_json = true;
	c->json_format = "upstream";
	c->json_file = "-";
	c->procfs_root = "/proc";
	c->sysfs_root = "/sys";
	c->per_cpu = true;
	c->nic_prefixes = "eno,ens,enp,enx,eth";
	c->track_pids = "";
	c->prom_address = "127.0.0.1";
	c->prom_port = 8080;
	c->prom_max_conn = 1024;
	c->prom_timeout_s = 10;
	c->otlp_endpoint = "";
	c->otlp_headers = "";
	c->otlp_service = ""; /* "": $OTEL_SERVICE_NAME, else dynolog */
	c->otlp_timeout_ms = 10000;
	c->otlp_max_queue = 1000;
	c->history_window_s = 3600;
	c->history_max_series = 20000;
	c->history_max_mb = 32;
	c->config_file = "";
	c->compat_int[0] = 10;
	c->compat_str[0] = c->compat_str[1] = c->compat_str[2] = "";
}

int telemetry_opts(struct telemetry_config *c, struct arg_opt *o)
{
	int n = 0;
#define ROW(name, type, ptr, mv, help, lo, hi) o[n] = (struct arg_opt){name, 0, type, ptr, mv, help, lo, hi, &c->seen[n]}, n++
	ROW("kernel_monitor_reporting_interval_s", ARG_INT, &c->kernel_interval_s, "SECONDS",
	    "kernel (procfs) collection period", 1, 86400);
	ROW("use_JSON", ARG_BOOL, &c->use_json, NULL, "write metric samples as JSON lines", 0, 0);
	ROW("json_format", ARG_STRING, &c->json_format, "upstream|jsonl",
	    "JSON line format: upstream's 'time = T data = {...}' or plain JSON objects", 0, 0);
	ROW("json_log_file", ARG_STRING, &c->json_file, "PATH", "JSON metric log destination ('-': stdout)", 0, 0);
	ROW("procfs_root", ARG_STRING, &c->procfs_root, "DIR", "where procfs is mounted (tests use fixture trees)", 0,
	    0);
	ROW("sysfs_root", ARG_STRING, &c->sysfs_root, "DIR", "where sysfs is mounted", 0, 0);
	ROW("per_cpu_metrics", ARG_BOOL, &c->per_cpu, NULL, "also report CPU time per CPU", 0, 0);
	ROW("filter_nic_interfaces", ARG_BOOL, &c->filter_nics, NULL,
	    "only report interfaces matching --allow_interface_prefixes", 0, 0);
	ROW("allow_interface_prefixes", ARG_STRING, &c->nic_prefixes, "LIST",
	    "comma-separated interface name prefixes", 0, 0);
	ROW("track_pids", ARG_STRING, &c->track_pids, "PID,...", "also report CPU/RSS/IO of these processes", 0, 0);
	ROW("enable_perf_monitor", ARG_BOOL, &c->enable_perf, NULL,
	    "count instructions/cycles/cache misses with perf_event", 0, 0);
	ROW("perf_monitor_reporting_interval_s", ARG_INT, &c->perf_interval_s, "SECONDS",
	    "perf collection period", 1, 86400);
	ROW("use_prometheus", ARG_BOOL, &c->use_prometheus, NULL, "serve Prometheus metrics over HTTP", 0, 0);
	ROW("prometheus_address", ARG_STRING, &c->prom_address, "ADDR",
	    "Prometheus listen address (IPv4/IPv6 literal)", 0, 0);
	ROW("prometheus_port", ARG_INT, &c->prom_port, "PORT", "Prometheus listen port (0: any free port, logged)", 0,
	    65535);
	ROW("prometheus_max_connections", ARG_INT, &c->prom_max_conn, "N",
	    "concurrent HTTP connections served (more wait in the kernel backlog)", 1, 100000);
	ROW("prometheus_timeout_s", ARG_INT, &c->prom_timeout_s, "SECONDS",
	    "close idle HTTP connections after this long", 1, 3600);
	ROW("use_otlp", ARG_BOOL, &c->use_otlp, NULL, "push metrics as OTLP/HTTP JSON", 0, 0);
	ROW("otlp_endpoint", ARG_STRING, &c->otlp_endpoint, "URL",
	    "OTLP base URL (default $OTEL_EXPORTER_OTLP_ENDPOINT or http://localhost:4318)", 0, 0);
	ROW("otlp_headers", ARG_STRING, &c->otlp_headers, "K=V,...",
	    "extra HTTP headers (default $OTEL_EXPORTER_OTLP_HEADERS)", 0, 0);
	ROW("otlp_service_name", ARG_STRING, &c->otlp_service, "NAME", "OTLP resource service.name (default dynolog)",
	    0, 0);
	ROW("otlp_timeout_ms", ARG_INT, &c->otlp_timeout_ms, "MS", "OTLP request timeout", 1,
	    600000);
	ROW("otlp_max_queue_size", ARG_INT, &c->otlp_max_queue, "N",
	    "OTLP payloads kept while the receiver is slow or down; the oldest is dropped beyond", 1,
	    1000000);
	ROW("history_window_s", ARG_INT, &c->history_window_s, "SECONDS",
	    "how far back getMetrics can look", 1, 30 * 86400);
	ROW("history_max_series", ARG_INT, &c->history_max_series, "N",
	    "most metric keys kept in history", 1, 10000000);
	ROW("history_max_mb", ARG_INT, &c->history_max_mb, "MB",
	    "memory cap of the history ring; fewer keys are kept when window/interval needs more", 1,
	    65536);
	ROW("config", ARG_STRING, &c->config_file, "FILE",
	    "JSON config file {\"flag_name\": value, ...}; re-read on SIGHUP; the command line wins", 0, 0);
	ROW("exit_after_ticks", ARG_INT, &c->exit_after_ticks, "N", "stop after N kernel ticks (0: run forever)", 0,
	    1000000000);
	/* upstream flags we accept and ignore (Meta-internal sinks, DCGM) */
	ROW("use_ODS", ARG_BOOL, &c->compat_bool[0], NULL, "upstream compatibility; ignored", 0, 0);
	ROW("use_scuba", ARG_BOOL, &c->compat_bool[1], NULL, "upstream compatibility; ignored", 0, 0);
	ROW("use_fbrelay", ARG_BOOL, &c->compat_bool[2], NULL, "upstream compatibility; ignored", 0, 0);
	ROW("enable_gpu_monitor", ARG_BOOL, &c->compat_bool[3], NULL,
	    "upstream compatibility; DCGM is not supported, ignored", 0, 0);
	ROW("enable_env_var_attribution", ARG_BOOL, &c->compat_bool[4], NULL, "upstream compatibility; ignored", 0,
	    0);
	ROW("dcgm_reporting_interval_s", ARG_INT, &c->compat_int[0], "SECONDS", "upstream compatibility; ignored", 0,
	    0);
	ROW("dcgm_lib_path", ARG_STRING, &c->compat_str[0], "PATH", "upstream compatibility; ignored", 0, 0);
	ROW("dcgm_fields", ARG_STRING, &c->compat_str[1], "LIST", "upstream compatibility; ignored", 0, 0);
	ROW("scribe_category", ARG_STRING, &c->compat_str[2], "NAME", "upstream compatibility; ignored", 0, 0);
#undef ROW
	return n;
}

static size_t opt_size(enum arg_type t)
{
	switch (t) {
	case ARG_BOOL: return sizeof(bool);
	case ARG_INT: return sizeof(int64_t);
	case ARG_DOUBLE: return sizeof(double);
	default: return sizeof(const char *);
	}
}

static bool name_eq(const char *a, const char *b, size_t bl)
{
	/* '-' and '_' are interchangeable, as in the args parser */
	size_t i = 0;
	for (; i < bl && a[i]; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return !a[i] && i == bl;
}

/* Parse the JSON config file into argv "--name=value" for our option table.
 * Unknown keys are a warning (another part of the daemon may own them, or a
 * typo); bad values are an error. */
static bool config_text_to_argv(const char *path, const char *text, size_t len, const struct arg_opt *opts,
				int nopts, char ***argv_out, int *argc_out, struct buf *err);

static bool config_to_argv(const char *path, const struct arg_opt *opts, int nopts, char ***argv_out, int *argc_out,
			   struct buf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "cannot open config file %s: %s", path, strerror(errno));
		return false;
	}
	struct buf text = BUF_INIT;
	int r = buf_read_fd(&text, fd, (1u << 20) - 1);
	int read_errno = errno;
	close(fd);
	if (r != 0) {
		buf_printf(err, "cannot read config file %s: %s", path, r < 0 ? strerror(read_errno) : "larger than 1 MiB");
		buf_free(&text);
		return false;
	}
	bool ok = config_text_to_argv(path, text.data, text.len, opts, nopts, argv_out, argc_out, err);
	buf_free(&text);
	return ok;
}

static bool config_text_to_argv(const char *path, const char *text, size_t len, const struct arg_opt *opts,
				int nopts, char ***argv_out, int *argc_out, struct buf *err)
{
	struct json_doc doc;
	struct json_error je;
	if (!json_parse(text, len, &doc, &je)) {
		buf_printf(err, "config file %s:%llu:%llu: %s", path, (unsigned long long)je.line,
			   (unsigned long long)je.column, je.msg);
		return false;
	}
	bool ok = true;
	const struct json_value *root = doc.root;
	if (root->type != JV_OBJECT) {
		buf_printf(err, "config file %s: expected a JSON object of flag names to values", path);
		json_doc_free(&doc);
		return false;
	}
	char **argv = xcalloc(root->len + 1, sizeof *argv);
	int argc = 0;
	for (uint32_t i = 0; i < root->len && ok; i++) {
		const struct json_member *m = &root->u.members[i];
		int k = -1;
		for (int j = 0; j < nopts; j++)
			if (name_eq(opts[j].name, m->key, m->key_len))
				k = j;
		if (k < 0 || strcmp(opts[k].name, "config") == 0) {
			log_warn("config file %s: ignoring key '%.*s' (not a telemetry setting)", path, (int)m->key_len,
				 m->key);
			continue;
		}
		struct buf a = BUF_INIT;
		buf_printf(&a, "--%s=", opts[k].name);
		const struct json_value *v = &m->value;
		if (v->type == JV_BOOL && opts[k].type == ARG_BOOL)
			buf_puts(&a, v->u.b ? "true" : "false");
		else if (v->type == JV_NUMBER && (opts[k].type == ARG_INT || opts[k].type == ARG_DOUBLE))
			buf_puts(&a, v->u.num.raw);
		else if (v->type == JV_STRING && opts[k].type == ARG_STRING && strlen(v->u.str) == v->len)
			buf_puts(&a, v->u.str);
		else {
			buf_printf(err, "config file %s: '%s' wants a %s", path, opts[k].name,
				   opts[k].type == ARG_BOOL  ? "boolean"
				   : opts[k].type == ARG_STRING ? "string"
								: "number");
			ok = false;
			buf_free(&a);
			break;
		}
		argv[argc++] = buf_detach(&a, NULL);
	}
	json_doc_free(&doc);
	if (!ok) {
		for (int i = 0; i < argc; i++)
			free(argv[i]);
		free(argv);
		return false;
	}
	*argv_out = argv;
	*argc_out = argc;
	return true;
}

static void free_argv(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

/* Effective config = what the caller gave (defaults plus the command line),
 * with the config file's values for every option the command line did not
 * set.  On success the new file strings replace t's old ones. */
static bool build_config(struct telemetry *t, struct telemetry_config *out, struct buf *err)
{
	*out = t->cli;
	char **argv = NULL;
	int argc = 0;
	struct args fa;
	memset(&fa, 0, sizeof fa);
	if (t->cli.config_file && *t->cli.config_file) {
		struct telemetry_config fc;
		telemetry_config_defaults(&fc);
		struct arg_opt fo[TELEMETRY_MAX_OPTS + 1], oo[TELEMETRY_MAX_OPTS + 1];
		int n = telemetry_opts(&fc, fo);
		telemetry_opts(out, oo);
		memset(&fo[n], 0, sizeof fo[n]);
		if (!config_to_argv(t->cli.config_file, fo, n, &argv, &argc, err))
			return false;
		int rc = args_parse(fo, argc, argv, &fa); /* sets fc.seen[] for the keys present */
		if (rc != ARGS_OK) {
			buf_printf(err, "config file %s: %s", t->cli.config_file,
				   rc == ARGS_HELP ? "help requested" : fa.error.data);
			args_free(&fa);
			free_argv(argv, argc);
			return false;
		}
		for (int i = 0; i < n; i++)
			if (fc.seen[i] && !t->cli.seen[i])
				memcpy(oo[i].ptr, fo[i].ptr, opt_size(fo[i].type));
	}
	/* keep the strings the new config points into; free the old ones */
	if (t->file_argv)
		free_argv(t->file_argv, t->file_argc);
	args_free(&t->file_args); /* safe on a zeroed struct */
	t->file_argv = argv;
	t->file_argc = argc;
	t->file_args = fa;
	return true;
}

static bool validate(const struct telemetry_config *c, struct buf *err)
{
	if (strcmp(c->json_format, "upstream") != 0 && strcmp(c->json_format, "jsonl") != 0) {
		buf_puts(err, "--json_format must be 'upstream' or 'jsonl'");
		return false;
	}
	for (const char *p = c->track_pids; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0 || v > 0x7fffffff || (*end && *end != ',')) {
			buf_printf(err, "--track_pids: '%s' is not a comma-separated list of pids", c->track_pids);
			return false;
		}
		p = *end ? end + 1 : end;
	}
	return true;
}

bool telemetry_config_check(const char *text, size_t len, struct buf *err)
{
	struct telemetry_config c;
	telemetry_config_defaults(&c);
	struct arg_opt o[TELEMETRY_MAX_OPTS + 1];
	int n = telemetry_opts(&c, o);
	memset(&o[n], 0, sizeof o[n]);
	char **argv = NULL;
	int argc = 0;
	if (!config_text_to_argv("(text)", text, len, o, n, &argv, &argc, err))
		return false;
	struct args a;
	int rc = args_parse(o, argc, argv, &a);
	bool ok = rc == ARGS_OK && validate(&c, err);
	if (rc != ARGS_OK)
		buf_puts(err, rc == ARGS_HELP ? "help requested" : a.error.data);
	args_free(&a);
	free_argv(argv, argc);
	return ok;
}

/* ---------------- sinks ---------------- */

static void write_json(struct telemetry *t)
{
	if (t->json_fd < 0)
		return;
	if (t->json_pipe_cap > 0 && t->line.len <= (size_t)t->json_pipe_cap) {
		/* a pipe: drop the whole line rather than write half of it */
		int unread = 0;
		if (ioctl(t->json_fd, FIONREAD, &unread) == 0 && unread >= 0 &&
		    t->line.len > (size_t)(t->json_pipe_cap - unread)) {
			t->json_dropped++;
			LOG_ONCE(LOG_LEVEL_WARN, "JSON metric log: output would block; dropping lines (counted in "
						 "dynolog_json_lines_dropped_total)");
			return;
		}
	}
	size_t off = 0;
	while (off < t->line.len) {
		ssize_t w = write(t->json_fd, t->line.data + off, t->line.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* the reader is not keeping up: never block collection for it */
			t->json_dropped++;
			LOG_ONCE(LOG_LEVEL_WARN, "JSON metric log: output would block; dropping lines (counted in "
						 "dynolog_json_lines_dropped_total)");
			if (off) /* finish the partial line so the next one starts clean */
				(void)!write(t->json_fd, "\n", 1);
			return;
		}
		if (w < 0) {
			LOG_ONCE(LOG_LEVEL_ERROR, "cannot write the JSON metric log: %s", strerror(errno));
			t->json_dropped++;
			return;
		}
		off += (size_t)w;
	}
}

static void self_metrics(struct telemetry *t, struct prom_self *s, size_t *n)
{
	size_t k = 0;
	for (int i = 0; i < 3; i++) {
		if (!t->cs[i].runs)
			continue;
		s[k++] = (struct prom_self){"dynolog_collector_duration_seconds", "Wall time of the last collection.",
					    "gauge", "collector", t->cs[i].name, t->cs[i].last_s};
	}
	for (int i = 0; i < 3; i++) {
		if (!t->cs[i].runs)
			continue;
		s[k++] = (struct prom_self){"dynolog_collector_success",
					    "1 if the last collection read its sources, 0 if not.", "gauge", "collector",
					    t->cs[i].name, t->cs[i].ok ? 1 : 0};
	}
	s[k++] = (struct prom_self){"dynolog_json_lines_dropped_total",
				    "JSON log lines dropped because the output would block.", "counter", NULL, NULL,
				    (double)t->json_dropped};
	if (t->hist)
		s[k++] = (struct prom_self){"dynolog_history_series", "Metric keys held in the history ring.", "gauge",
					    NULL, NULL, (double)history_series(t->hist)};
	if (t->otlp) {
		struct otlp_stats st;
		otlp_get_stats(t->otlp, &st);
		s[k++] = (struct prom_self){"dynolog_otlp_dropped_total", "OTLP payloads dropped (queue full).",
					    "counter", NULL, NULL, (double)st.dropped};
		s[k++] = (struct prom_self){"dynolog_otlp_queue_length", "OTLP payloads waiting.", "gauge", NULL, NULL,
					    (double)st.queued};
		s[k++] = (struct prom_self){"dynolog_otlp_sent_total", "OTLP payloads accepted by the receiver.",
					    "counter", NULL, NULL, (double)st.sent};
	}
	s[k++] = (struct prom_self){"dynolog_process_cpu_seconds", "CPU time used by dynolog itself.", "gauge", NULL,
				    NULL, (double)clock_cpu_ns() / 1e9};
	*n = k;
}

static void publish(struct telemetry *t, int src)
{
	struct frame *f = &t->frame;
	if (t->cfg.use_json && f->n) {
		buf_reset(&t->line);
		jsonlog_render(f, t->json_mode, &t->line);
		write_json(t);
	}
	if (t->hist)
		history_add(t->hist, f);
	if (t->otlp)
		otlp_publish(t->otlp, src, f);
	if (t->prom) {
		struct prom_self s[16];
		size_t n;
		prom_update(t->prom, src, f);
		self_metrics(t, s, &n);
		prom_publish(t->prom, s, n);
	}
}

static void run_collector(struct cstat *cs, bool ok, int64_t t0)
{
	cs->last_s = (double)(clock_mono_ns() - t0) / 1e9;
	cs->ok = ok;
	cs->runs++;
}

static void on_kernel_tick(struct ev_loop *l, struct ev_timer *tm, void *ud)
{
	(void)tm;
	struct telemetry *t = ud;
	frame_reset(&t->frame, clock_wall_ns());
	int64_t t0 = clock_mono_ns();
	bool ok = kernel_collect(t->kernel, &t->frame);
	run_collector(&t->cs[0], ok, t0);
	if (proc_tracked_count(t->proc)) {
		t0 = clock_mono_ns();
		proc_collect(t->proc, &t->frame);
		run_collector(&t->cs[1], true, t0);
	}
	publish(t, SRC_KERNEL);
	if (t->cfg.exit_after_ticks && ++t->ticks >= t->cfg.exit_after_ticks)
		ev_stop(l);
}

static void on_perf_tick(struct ev_loop *l, struct ev_timer *tm, void *ud)
{
	(void)l;
	(void)tm;
	struct telemetry *t = ud;
	frame_reset(&t->frame, clock_wall_ns());
	int64_t t0 = clock_mono_ns();
	perf_collect(t->perf, &t->frame);
	run_collector(&t->cs[2], t->frame.n > 0, t0);
	if (t->frame.n)
		publish(t, SRC_PERF);
}

/* ---------------- applying a configuration ---------------- */

/* Each scrape connection is a descriptor: make room for the configured
 * number (the soft limit is often 1024; the hard one much higher). */
static void raise_fd_limit(rlim_t want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < want)
		log_warn("open-file limit %llu is below --prometheus_max_connections + 128; connections beyond it "
			 "wait in the backlog",
			 (unsigned long long)rl.rlim_cur);
}

static bool str_changed(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") != 0; }

static bool apply(struct telemetry *t, const struct telemetry_config *n, bool first, struct buf *err)
{
	const struct telemetry_config *o = &t->cfg;
	/* JSON log: reopened on every reload, so `kill -HUP` after logrotate
	 * moves the file starts a new one */
	if (first || str_changed(o->json_file, n->json_file) || strcmp(n->json_file, "-") != 0) {
		int fd = STDOUT_FILENO;
		if (strcmp(n->json_file, "-") != 0) {
			fd = open(n->json_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
			if (fd < 0) {
				buf_printf(err, "cannot open --json_log_file '%s': %s", n->json_file, strerror(errno));
				return false;
			}
		} else {
			/* a pipe or socket whose reader stalls must not stall the loop:
			 * make it non-blocking.  Not a terminal: the flag would be shared
			 * with the shell that owns it. */
			struct stat st;
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0 && fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
				fcntl(fd, F_SETFL, fl | O_NONBLOCK);
		}
		struct stat st;
		t->json_pipe_cap = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) ? fcntl(fd, F_GETPIPE_SZ) : -1;
		if (!first && t->json_fd != STDOUT_FILENO && t->json_fd >= 0)
			close(t->json_fd);
		t->json_fd = fd;
	}
	t->json_mode = strcmp(n->json_format, "jsonl") == 0 ? JSONLOG_JSONL : JSONLOG_UPSTREAM;

	/* Prometheus: (re)listen when enabled or its address changed */
	bool prom_restart = n->use_prometheus &&
			    (!t->prom || str_changed(o->prom_address, n->prom_address) || o->prom_port != n->prom_port ||
			     o->prom_max_conn != n->prom_max_conn || o->prom_timeout_s != n->prom_timeout_s);
	if (t->prom && (!n->use_prometheus || prom_restart)) {
		prom_free(t->prom);
		t->prom = NULL;
	}
	if (prom_restart) {
		raise_fd_limit((rlim_t)n->prom_max_conn + 128);
		struct prom_options po = {n->prom_address, (int)n->prom_port, (unsigned)n->prom_max_conn,
					  (unsigned)n->prom_timeout_s};
		t->prom = prom_new(t->loop, &po, err);
		if (!t->prom)
			return false;
		log_info("serving Prometheus metrics on http://%s%s%s:%d/metrics", strchr(n->prom_address, ':') ? "[" : "",
			 n->prom_address, strchr(n->prom_address, ':') ? "]" : "", prom_port(t->prom));
	}

	/* OTLP */
	bool otlp_restart = n->use_otlp && (!t->otlp || str_changed(o->otlp_endpoint, n->otlp_endpoint) ||
					    str_changed(o->otlp_headers, n->otlp_headers) ||
					    str_changed(o->otlp_service, n->otlp_service) ||
					    o->otlp_timeout_ms != n->otlp_timeout_ms || o->otlp_max_queue != n->otlp_max_queue);
	if (t->otlp && (!n->use_otlp || otlp_restart)) {
		otlp_free(t->otlp);
		t->otlp = NULL;
	}
	if (otlp_restart) {
		struct otlp_options oo = {0};
		oo.endpoint = *n->otlp_endpoint ? n->otlp_endpoint : NULL;
		oo.headers = *n->otlp_headers ? n->otlp_headers : NULL;
		oo.service_name = *n->otlp_service ? n->otlp_service : NULL;
		oo.timeout_ms = n->otlp_timeout_ms;
		oo.max_queue = (size_t)n->otlp_max_queue;
		t->otlp = otlp_new(t->loop, &oo, err);
		if (!t->otlp)
			return false;
		log_info("pushing OTLP metrics (queue of %lld)", (long long)n->otlp_max_queue);
	}

	/* collectors */
	t->kopt.per_cpu = n->per_cpu;
	t->kopt.filter_nics = n->filter_nics;
	t->kopt.nic_prefixes = n->nic_prefixes;
	if (first || str_changed(o->procfs_root, n->procfs_root) || str_changed(o->sysfs_root, n->sysfs_root)) {
		kernel_collector_free(t->kernel);
		t->kernel = kernel_collector_new(n->procfs_root, n->sysfs_root, &t->kopt);
		proc_collector_free(t->proc);
		t->proc = proc_collector_new(n->procfs_root);
	} else {
		kernel_collector_set_options(t->kernel, &t->kopt);
	}
	for (const char *p = n->track_pids; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (!proc_track(t->proc, (int)v))
			log_warn("cannot track pid %ld", v);
		p = *end ? end + 1 : end;
	}
	if (n->enable_perf) {
		/* (re)open on every reload: picks up CPUs that came online since
		 * (the next perf tick re-establishes the baseline) */
		perf_collector_free(t->perf);
		t->perf = perf_collector_new();
	} else if (t->perf) {
		perf_collector_free(t->perf);
		t->perf = NULL;
	}

	/* history: its ring holds window / interval ticks of each collector */
	int64_t per_window = n->history_window_s / n->kernel_interval_s + 1;
	if (n->enable_perf)
		per_window += n->history_window_s / n->perf_interval_s + 1;
	/* 8 bytes per key per tick: cap the keys so the ring fits --history_max_mb */
	size_t max_series = (size_t)n->history_max_series;
	size_t by_mem = (size_t)((n->history_max_mb << 20) / (per_window * 8));
	if (by_mem < max_series) {
		max_series = by_mem ? by_mem : 1;
		log_info("history: %lld ticks per window fit %zu keys in %lld MB (--history_max_mb)",
			 (long long)per_window, max_series, (long long)n->history_max_mb);
	}
	if (!t->hist || t->hist_window != n->history_window_s || t->hist_interval != per_window ||
	    t->hist_cap_series != max_series) {
		history_free(t->hist);
		t->hist = history_new(n->history_window_s, n->kernel_interval_s, (size_t)per_window, max_series);
		t->hist_window = n->history_window_s;
		t->hist_interval = per_window;
		t->hist_cap_series = max_series;
	}

	/* timers: the first kernel tick right away (it sets the baselines) */
	if (first || o->kernel_interval_s != n->kernel_interval_s)
		ev_timer_set(t->ktimer, first ? 1 : n->kernel_interval_s * NS_PER_SEC, n->kernel_interval_s * NS_PER_SEC);
	if (n->enable_perf && (first || !o->enable_perf || o->perf_interval_s != n->perf_interval_s))
		ev_timer_set(t->ptimer, 1, n->perf_interval_s * NS_PER_SEC);
	else if (!n->enable_perf)
		ev_timer_disarm(t->ptimer);

	for (int i = 0; i < 5; i++)
		if (n->compat_bool[i])
			LOG_ONCE(LOG_LEVEL_WARN, "ignoring upstream-only flags (Meta-internal sinks, DCGM): not supported");
	t->cfg = *n;
	return true;
}

/* ---------------- sd_notify (optional libsystemd) ---------------- */

static void notify(const char *state)
{
	if (!getenv("NOTIFY_SOCKET"))
		return;
	static void *lib;
	static int (*fn)(int, const char *);
	if (!lib) {
		lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			LOG_ONCE(LOG_LEVEL_INFO, "NOTIFY_SOCKET is set but libsystemd is not available; no sd_notify");
			return;
		}
		*(void **)&fn = dlsym(lib, "sd_notify");
	}
	if (fn)
		fn(0, state);
}

/* ---------------- lifecycle ---------------- */

struct telemetry *telemetry_start(struct ev_loop *loop, const struct telemetry_config *cli, struct buf *err)
{
	struct telemetry *t = xcalloc(1, sizeof *t);
	t->loop = loop;
	t->cli = *cli;
	t->json_fd = -1;
	frame_init(&t->frame);
	buf_init(&t->line);
	t->cs[0].name = "kernel";
	t->cs[1].name = "process";
	t->cs[2].name = "perf";
	t->ktimer = ev_timer_add(loop, 0, 0, on_kernel_tick, t);
	t->ptimer = ev_timer_add(loop, 0, 0, on_perf_tick, t);
	struct telemetry_config c;
	if (t->ktimer)
		ev_timer_disarm(t->ktimer);
	if (t->ptimer)
		ev_timer_disarm(t->ptimer); /* armed by apply() when the perf monitor is on */
	if (!t->ktimer || !t->ptimer) {
		buf_printf(err, "cannot create timers: %s", strerror(errno));
		telemetry_stop(t);
		return NULL;
	}
	if (!build_config(t, &c, err) || !validate(&c, err)) {
		telemetry_stop(t);
		return NULL;
	}
	telemetry_config_defaults(&t->cfg);
	if (!apply(t, &c, true, err)) {
		telemetry_stop(t);
		return NULL;
	}
	g_tel = t;
	log_info("telemetry: kernel monitor every %llds%s%s%s%s, history %llds", (long long)c.kernel_interval_s,
		 c.use_json ? ", JSON log" : "", c.use_prometheus ? ", Prometheus" : "", c.use_otlp ? ", OTLP" : "",
		 c.enable_perf ? ", perf monitor" : "", (long long)c.history_window_s);
	notify("READY=1");
	return t;
}

void telemetry_reload(struct telemetry *t)
{
	notify("RELOADING=1");
	struct buf err = BUF_INIT;
	struct telemetry_config c;
	/* build_config swaps the file strings only on success; keep the old ones
	 * alive until apply has finished comparing */
	char **old_argv = t->file_argv;
	int old_argc = t->file_argc;
	struct args old_args = t->file_args;
	t->file_argv = NULL;
	t->file_argc = 0;
	memset(&t->file_args, 0, sizeof t->file_args);
	if (!build_config(t, &c, &err) || !validate(&c, &err) || !apply(t, &c, false, &err)) {
		log_error("reload failed, keeping what runs: %s", err.data);
		/* what was built is discarded; the running config keeps the old strings */
		if (t->file_argv)
			free_argv(t->file_argv, t->file_argc);
		args_free(&t->file_args);
		t->file_argv = old_argv;
		t->file_argc = old_argc;
		t->file_args = old_args;
	} else {
		log_info("configuration reloaded");
		if (old_argv)
			free_argv(old_argv, old_argc);
		args_free(&old_args);
	}
	buf_free(&err);
	notify("READY=1");
}

void telemetry_stop(struct telemetry *t)
{
	if (!t)
		return;
	if (g_tel == t)
		g_tel = NULL;
	notify("STOPPING=1");
	prom_free(t->prom);
	otlp_free(t->otlp);
	history_free(t->hist);
	kernel_collector_free(t->kernel);
	proc_collector_free(t->proc);
	perf_collector_free(t->perf);
	if (t->ktimer)
		ev_timer_del(t->loop, t->ktimer);
	if (t->ptimer)
		ev_timer_del(t->loop, t->ptimer);
	if (t->json_fd >= 0 && t->json_fd != STDOUT_FILENO)
		close(t->json_fd);
	frame_free(&t->frame);
	buf_free(&t->line);
	if (t->file_argv)
		free_argv(t->file_argv, t->file_argc);
	args_free(&t->file_args);
	free(t);
}

bool telemetry_track_pid(int pid) { return g_tel && proc_track(g_tel->proc, pid); }

void metrics_rpc_handle(const struct json_value *req, struct buf *resp)
{
	if (!g_tel || !g_tel->hist) {
		buf_puts(resp, "{\"error\":\"getMetrics: telemetry is not running\"}");
		return;
	}
	history_rpc(g_tel->hist, req, clock_wall_ns() / 1000000, resp);
}
