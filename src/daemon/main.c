/*
 * main.c - dynolog, the per-host daemon: flags, wiring, the event loop.
 *
 * One thread, one epoll loop (core/loop.c).  Host telemetry (the collector
 * and sink tables, their flags and SIGHUP reload) lives in telemetry.c,
 * on-demand tracing (IPC fabric, registry) in tracing.c; main parses the
 * command line, starts the two parts and the RPC server they both answer
 * on (each registers its functions: tracing upstream's, telemetry
 * getMetrics; gpusnoop_rpc.c gpusnoop sessions; trigger.c the triggers,
 * evaluated on telemetry's tick), points each newly
 * registered Kineto process at telemetry's
 * per-process collector (CPU/RSS/IO of the training processes the daemon
 * knows about), and runs the loop.  SIGINT and SIGTERM stop the loop and
 * the process exits 0.  Flag names follow upstream Dynolog so existing
 * unit files and --flagfile files keep working.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/net.h"
#include "daemon/rpc/gpusnoop_rpc.h"
#include "daemon/publish/prometheus.h"
#include "daemon/rpc/rpc.h"
#include "daemon/rpc/security.h"
#include "daemon/telemetry.h"
#include "daemon/ipc/tracing.h"
#include "daemon/trigger/trigger.h"

/* The RPC server's flags (upstream's --port and --enable_rpc first). */
struct rpc_flags {
	int64_t port;
	bool enable;
	const char *bind, *allow, *token_file;
	int64_t timeout_ms, max_frame, max_requests, max_queued, max_held;
	/* given on the command line: an explicitly empty list is an error */
	bool allow_seen, token_file_seen;
};

#define RPC_FLAG_ROWS(f)                                                                                      \
	{"port", 0, ARG_INT, &(f)->port, "PORT", "RPC TCP port (0: any free port, logged)", 0, 65535, NULL},      \
	{"enable_rpc", 0, ARG_BOOL, &(f)->enable, NULL, "serve the dyno RPC protocol", 0, 0, NULL},           \
	{"rpc_bind", 0, ARG_STRING, &(f)->bind, "ADDR",                                                     \
	 "listen on this address only (default: every IPv6 and IPv4 address)", 0, 0, NULL},                 \
	{"rpc_allow", 0, ARG_STRING, &(f)->allow, "CIDR,...",                                               \
	 "accept RPC clients from these networks only (default: any)", 0, 0, &(f)->allow_seen},              \
	{"rpc_token_file", 0, ARG_STRING, &(f)->token_file, "PATH",                                         \
	 "require this shared secret as \"token\" in every RPC request", 0, 0, &(f)->token_file_seen},       \
	{"rpc_timeout_ms", 0, ARG_INT, &(f)->timeout_ms, "MS", "drop an RPC client silent this long", 1,    \
	 3600000, NULL},                                                                                     \
	{"rpc_max_frame", 0, ARG_INT, &(f)->max_frame, "BYTES", "largest RPC request accepted", 64, 1 << 30, \
	 NULL},                                                                                              \
	{"rpc_max_requests_per_connection", 0, ARG_INT, &(f)->max_requests, "N",                             \
	 "requests one keep-alive RPC connection may make (1: no keep-alive)", 1, 1000000, NULL},            \
	{"rpc_max_queued_bytes", 0, ARG_INT, &(f)->max_queued, "BYTES",                                     \
	 "unsent answer bytes one RPC client may leave unread before it is dropped", 65536, 1LL << 30, NULL}, \
	{"rpc_max_held_bytes", 0, ARG_INT, &(f)->max_held, "BYTES",                                         \
	 "memory for all RPC connections together; past it the oldest holders are dropped", 65536,          \
	 1LL << 30, NULL}

static void on_stop_signal(struct ev_loop *l, int signo, void *ud)
{
	(void)ud;
	log_info("received %s, shutting down", strsignal(signo));
	ev_stop(l);
}

static void on_hup(struct ev_loop *l, int signo, void *ud)
{
	(void)l;
	(void)signo;
	log_info("received SIGHUP, reloading the configuration");
	telemetry_reload(ud);
}

/* *srv NULL when RPC is off; 0, 2 with err on a configuration error (an
 * empty flag, an allow-list that does not parse), or 1 on what the
 * machine refused (the token file, a listener that cannot be opened).  A
 * busy port is fatal like the Prometheus port and the IPC name: a daemon
 * that runs on without RPC looks healthy under systemd while dyno cannot
 * reach it (upstream Dynolog goes on; we do not). */
static int start_rpc(struct ev_loop *l, const struct rpc_flags *f, struct rpc_server **srv, struct buf *err)
{
	*srv = NULL;
	if (!sec_flag_not_empty("rpc_allow", f->allow_seen, f->allow, err) ||
	    !sec_flag_not_empty("rpc_token_file", f->token_file_seen, f->token_file, err))
		return 2;
	/* the allow-list is checked first so its message is the one shown;
	 * it names the flag (net_acl_parse's message names the value only) */
	struct net_acl probe;
	struct buf aerr = BUF_INIT;
	if (!net_acl_parse(&probe, f->allow, &aerr)) {
		buf_printf(err, "--rpc_allow=%s: %s", f->allow ? f->allow : "", aerr.data);
		buf_free(&aerr);
		return 2;
	}
	buf_free(&aerr);
	net_acl_free(&probe);
	if (!f->enable)
		return 0;
	char *token = NULL;
	if (f->token_file && *f->token_file && !sec_load_token(f->token_file, &token, err))
		return 1;
	struct rpc_opts ro = {.bind = f->bind, .port = (int)f->port, .allow = f->allow, .token = token,
			      .max_frame = (uint32_t)f->max_frame, .timeout_ms = (int)f->timeout_ms,
			      .max_requests = (uint32_t)f->max_requests,
			      .max_queued = (size_t)f->max_queued, .max_held = (size_t)f->max_held};
	struct buf rerr = BUF_INIT;
	*srv = rpc_start(l, &ro, &rerr);
	if (*srv)
		prom_note_rpc_port(rpc_port(*srv)); /* named by the Prometheus port's answer to RPC */
	if (!*srv)
		buf_printf(err, "cannot start the RPC server on port %lld: %s", (long long)f->port, rerr.data);
	buf_free(&rerr);
	free(token);
	return *srv ? 0 : 1;
}

/* --trace_path_prefixes read and checked as tracing_start will (an empty
 * value, a prefix that is not absolute), before anything is opened: a
 * configuration error (exit 2), not something the machine refused. */
static bool trace_prefixes_valid(const struct tracing_flags *f, struct buf *err)
{
	struct path_policy p;
	if (!sec_flag_not_empty("trace_path_prefixes", f->trace_prefixes_seen, f->trace_prefixes, err) ||
	    !path_policy_parse(&p, f->trace_prefixes, err))
		return false;
	path_policy_free(&p);
	return true;
}

static void stop_rpc(struct rpc_server *srv)
{
	if (!srv)
		return;
	const struct rpc_stats *s = rpc_get_stats(srv);
	log_info("RPC: %llu connections, %llu answered, %llu unanswered, %llu bad frames, %llu oversized, "
		 "%llu timeouts, %llu evicted, %llu refused peers, %llu unauthorized, %llu over the value cap, "
		 "%llu keep-alive requests, "
		 "%llu requests left to a later wake-up, at most %llu answer bytes built in one wake-up",
		 (unsigned long long)s->accepted, (unsigned long long)s->answered, (unsigned long long)s->silent,
		 (unsigned long long)s->bad_frame, (unsigned long long)s->too_big, (unsigned long long)s->timeouts,
		 (unsigned long long)s->evicted, (unsigned long long)s->refused_peer,
		 (unsigned long long)s->unauthorized, (unsigned long long)s->too_many_values,
		 (unsigned long long)s->reused, (unsigned long long)s->yields,
		 (unsigned long long)s->turn_peak);
	rpc_stop(srv);
}

/* A training process registered over IPC: report its CPU, RSS and I/O
 * like a --track_pids one, under the pid the kernel gave us for it (its
 * reported one differs inside a container).  Telemetry drops it when it
 * exits.  (A full table is already logged once by the collector.) */
static void track_kineto_process(int32_t pid, int32_t reported, const char *job, void *ud)
{
	struct telemetry *tel = ud;
	if (pid > 0 && pid != reported)
		LOG_RATELIMITED(LOG_LEVEL_INFO, "Kineto process %d (job %s) is pid %d here (another pid namespace?)", (int)reported, job,
			 (int)pid);
	if (pid <= 0)
		LOG_RATELIMITED(LOG_LEVEL_INFO, "not tracking Kineto process %d (job %s): not visible from the daemon's pid namespace",
			 (int)reported, job);
	else if (!telemetry_track_pid(tel, pid))
		log_debug("not tracking Kineto process %d (job %s)", (int)pid, job);
}

int main(int argc, char **argv)
{
	const char *log_level = "info";
	bool show_version = false;
	struct telemetry_config *tcfg = telemetry_config_new();
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	struct gpusnoop_flags gf = GPUSNOOP_FLAGS_DEFAULT;
	struct trigger_flags trf = TRIGGER_FLAGS_DEFAULT;
	struct rpc_flags rf = {.port = NET_RPC_PORT, .enable = true, .bind = "", .allow = "", .token_file = "",
			       .timeout_ms = 5000, .max_frame = 1 << 20, .max_requests = 1000,
			       .max_queued = 2 << 20, .max_held = 8 << 20};
	const struct arg_opt own_rows[] = {
		{"log_level", 0, ARG_STRING, &log_level, "LEVEL", "error, warn, info or debug", 0, 0, NULL},
		{"version", 0, ARG_BOOL, &show_version, NULL, "print dynolog's version and exit", 0, 0, NULL},
	};
	const struct arg_opt rest[] = {RPC_FLAG_ROWS(&rf), TRACING_FLAG_ROWS(&tf), GPUSNOOP_FLAG_ROWS(&gf),
				       TRIGGER_FLAG_ROWS(&trf)};
	const struct arg_opt *trows = telemetry_opts(tcfg);
	size_t nt = 0;
	while (trows[nt].name)
		nt++;
	enum { NOWN = sizeof own_rows / sizeof own_rows[0], NREST = sizeof rest / sizeof rest[0] };
	struct arg_opt *opts = xcalloc(NOWN + nt + NREST + 1, sizeof *opts);
	memcpy(opts, own_rows, sizeof own_rows);
	memcpy(opts + NOWN, trows, nt * sizeof *opts);
	memcpy(opts + NOWN + nt, rest, sizeof rest);

	log_init("dynolog", LOG_LEVEL_INFO);
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "dynolog",
		.usage = "dynolog [options]",
		.description = "The dynolite per-host telemetry daemon. Collects host metrics (procfs, perf_event, "
			       "tracked processes) and publishes them as JSON lines, Prometheus, OTLP and over RPC "
			       "(getMetrics). Options may also come from --flagfile=FILE (one per line) or --config=FILE "
			       "(JSON). SIGHUP re-reads --config; SIGTERM exits cleanly. See docs/daemon.md.",
		.opts = opts,
	};
	int rc = args_cmd(&cmd, argc, argv, &a);
	int exit_code = 1;
	struct ev_loop *loop = NULL;
	struct telemetry *tel = NULL;
	struct tracing *tracing = NULL;
	struct gpusnoop_rpc *snoop = NULL;
	struct triggers *trig = NULL;
	struct rpc_server *srv = NULL;
	struct buf err = BUF_INIT;
	if (rc >= 0) {
		free(opts);
		telemetry_config_free(tcfg);
		return rc;
	}
	if (show_version) {
		/* the same form as "dyno --version": packaging scripts read either */
		printf("dynolog %s\n", DYNO_VERSION);
		exit_code = 0;
		goto out;
	}
	enum log_level lvl;
	if (!log_parse_level(log_level, &lvl)) {
		fprintf(stderr, "dynolog: --log_level: unknown level '%s'\n", log_level);
		exit_code = 2;
		goto out;
	}
	log_set_level(lvl);

	signal(SIGPIPE, SIG_IGN);
	/* A file size limit (ulimit -f, LimitFSIZE=) must not kill the daemon
	 * mid-line: ignored, the write that crosses it fails with EFBIG, which
	 * the JSON log handles as a full disk (the cut line taken back). */
	signal(SIGXFSZ, SIG_IGN);
	loop = ev_loop_new();
	if (!loop) {
		log_error("cannot create the event loop: %s", strerror(errno));
		goto out;
	}
	/* Stop signals are blocked and queued from here on, so a SIGTERM that
	 * arrives while the parts start still ends in a clean exit. */
	if (ev_signal_add(loop, SIGTERM, on_stop_signal, NULL) < 0 || ev_signal_add(loop, SIGINT, on_stop_signal, NULL) < 0) {
		log_error("cannot set up signal handling: %s", strerror(errno));
		goto out;
	}
	/* exit status: 2 a configuration error (a bad flag or config file), 1
	 * what the machine refused (a port in use, a socket, a file) */
	if (!telemetry_config_valid(tcfg, &err) || !trace_prefixes_valid(&tf, &err)) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		exit_code = 2;
		goto out;
	}
	tel = telemetry_start(loop, tcfg, &err);
	if (!tel) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		goto out;
	}
	tracing = tracing_start(loop, &tf, &err);
	if (!tracing) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		goto out;
	}
	int rpc_rc = start_rpc(loop, &rf, &srv, &err);
	if (rpc_rc) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		exit_code = rpc_rc;
		goto out;
	}
	snoop = gpusnoop_rpc_start(loop, &gf, tf.trace_prefixes, &err);
	if (!snoop) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		goto out;
	}
	trig = triggers_start(loop, &trf, tracing, snoop, &err);
	if (!trig) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		goto out;
	}
	tracing_register_rpc(tracing, srv);
	telemetry_register_rpc(tel, srv);
	gpusnoop_rpc_register(snoop, srv);
	triggers_register_rpc(trig, srv);
	telemetry_on_tick(tel, triggers_on_tick, trig);
	tracing_on_new_process(tracing, track_kineto_process, tel);
	if (ev_signal_add(loop, SIGHUP, on_hup, tel) < 0) {
		log_error("cannot set up signal handling: %s", strerror(errno));
		goto out;
	}
	log_info("dynolog %s started (pid %d)", DYNO_VERSION, (int)getpid());
	exit_code = ev_run(loop) == 0 ? 0 : 1;
	log_info("stopped");
out:
	/* the server first: its functions point into tracing and telemetry */
	stop_rpc(srv);
	if (tel)
		telemetry_on_tick(tel, NULL, NULL);
	triggers_stop(trig);
	gpusnoop_rpc_stop(snoop);
	tracing_stop(tracing);
	telemetry_stop(tel);
	if (loop)
		ev_loop_free(loop);
	buf_free(&err);
	args_free(&a);
	free(opts);
	telemetry_config_free(tcfg);
	return exit_code;
}
