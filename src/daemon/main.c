/*
 * main.c - dynolog, the per-host daemon: flags, wiring, the event loop.
 *
 * One thread, one epoll loop (core/loop.c).  Host telemetry (collectors,
 * sinks, their flags and SIGHUP reload) lives in telemetry.c, on-demand
 * tracing (IPC fabric, registry, RPC server) in tracing.c; main only parses
 * the command line, starts the two parts, plugs telemetry's getMetrics into
 * the RPC server and each newly registered Kineto process into telemetry's
 * per-process collector (issue #4: CPU/RSS/IO of the training processes the
 * daemon knows about), and runs the loop.  SIGINT and
 * SIGTERM stop the loop and the process exits 0.  Flag names follow
 * upstream Dynolog so existing unit files and --flagfile files keep working.
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
#include "daemon/telemetry.h"
#include "daemon/tracing.h"

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

static bool rpc_get_metrics(const struct json_value *req, struct buf *resp, void *ud)
{
	(void)ud;
	metrics_rpc_handle(req, resp);
	return true;
}

/* A training process registered over IPC: report its CPU, RSS and I/O
 * like a --track_pids one, under the pid the kernel gave us for it (its
 * reported one differs inside a container).  Telemetry drops it when it
 * exits.  (A full table is already logged once by the collector.) */
static void track_kineto_process(int32_t pid, int32_t reported, const char *job, void *ud)
{
	(void)ud;
	if (pid > 0 && pid != reported)
		LOG_RATELIMITED(LOG_LEVEL_INFO, "Kineto process %d (job %s) is pid %d here (another pid namespace?)", (int)reported, job,
			 (int)pid);
	if (pid <= 0)
		LOG_RATELIMITED(LOG_LEVEL_INFO, "not tracking Kineto process %d (job %s): not visible from the daemon's pid namespace",
			 (int)reported, job);
	else if (!telemetry_track_pid(pid))
		log_debug("not tracking Kineto process %d (job %s)", (int)pid, job);
}

int main(int argc, char **argv)
{
	const char *log_level = "info";
	struct telemetry_config tcfg;
	telemetry_config_defaults(&tcfg);
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	const struct arg_opt tracing_rows[] = {TRACING_FLAG_ROWS(&tf)};
	enum { NTRACING = sizeof tracing_rows / sizeof tracing_rows[0] };
	struct arg_opt opts[TELEMETRY_MAX_OPTS + NTRACING + 2];
	int n = 0;
	opts[n++] = (struct arg_opt){"log_level", 0, ARG_STRING, &log_level, "LEVEL", "error, warn, info or debug",
				     0, 0, NULL};
	n += telemetry_opts(&tcfg, opts + n);
	memcpy(opts + n, tracing_rows, sizeof tracing_rows);
	n += NTRACING;
	memset(&opts[n], 0, sizeof opts[n]);

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
	if (rc >= 0)
		return rc;
	enum log_level lvl;
	if (!log_parse_level(log_level, &lvl)) {
		fprintf(stderr, "dynolog: --log_level: unknown level '%s'\n", log_level);
		args_free(&a);
		return 2;
	}
	log_set_level(lvl);

	signal(SIGPIPE, SIG_IGN);
	struct ev_loop *loop = ev_loop_new();
	if (!loop) {
		log_error("cannot create the event loop: %s", strerror(errno));
		return 1;
	}
	/* Stop signals are blocked and queued from here on, so a SIGTERM that
	 * arrives while the parts start still ends in a clean exit. */
	if (ev_signal_add(loop, SIGTERM, on_stop_signal, NULL) < 0 || ev_signal_add(loop, SIGINT, on_stop_signal, NULL) < 0) {
		log_error("cannot set up signal handling: %s", strerror(errno));
		ev_loop_free(loop);
		args_free(&a);
		return 1;
	}
	struct buf err = BUF_INIT;
	struct telemetry *tel = telemetry_start(loop, &tcfg, &err);
	if (!tel) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		buf_free(&err);
		ev_loop_free(loop);
		args_free(&a);
		return 2;
	}
	struct tracing *tracing = tracing_start(loop, &tf, &err);
	if (!tracing) {
		fprintf(stderr, "dynolog: %s\n", err.data);
		telemetry_stop(tel);
		buf_free(&err);
		ev_loop_free(loop);
		args_free(&a);
		return 1;
	}
	if (tracing_rpc(tracing))
		rpc_register_fn(tracing_rpc(tracing), "getMetrics", rpc_get_metrics, NULL);
	tracing_on_new_process(tracing, track_kineto_process, NULL);
	if (ev_signal_add(loop, SIGHUP, on_hup, tel) < 0) {
		log_error("cannot set up signal handling: %s", strerror(errno));
		return 1;
	}
	log_info("dynolog %s started (pid %d)", DYNO_VERSION, (int)getpid());
	int run = ev_run(loop);
	log_info("stopped");
	tracing_stop(tracing);
	telemetry_stop(tel);
	ev_loop_free(loop);
	buf_free(&err);
	args_free(&a);
	return run == 0 ? 0 : 1;
}
