/*
 * main.c - dynolog, the per-host daemon: flags, wiring, the event loop.
 *
 * One thread, one epoll loop (core/loop.c).  A timer fires the kernel
 * collector every --kernel_monitor_reporting_interval_s; the frame it fills
 * goes to the enabled sinks.  SIGINT/SIGTERM stop the loop and the process
 * exits 0.  Flag names follow upstream Dynolog so existing unit files and
 * --flagfile files keep working.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/loop.h"
#include "daemon/collect/kernel.h"
#include "daemon/frame.h"
#include "daemon/publish/jsonlog.h"
#include "daemon/tracing.h"

struct daemon {
	struct ev_loop *loop;
	struct kernel_collector *kernel;
	struct frame frame;
	struct buf line;
	int json_fd;
	bool use_json;
	enum jsonlog_mode json_mode;
	int64_t ticks, max_ticks;
};

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			LOG_ONCE(LOG_LEVEL_ERROR, "cannot write the JSON metric log: %s", strerror(errno));
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void on_kernel_tick(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)t;
	struct daemon *d = ud;
	frame_reset(&d->frame, clock_wall_ns());
	kernel_collect(d->kernel, &d->frame);
	if (d->use_json && d->frame.n) {
		buf_reset(&d->line);
		jsonlog_render(&d->frame, d->json_mode, &d->line);
		write_all(d->json_fd, d->line.data, d->line.len);
	}
	if (d->max_ticks && ++d->ticks >= d->max_ticks)
		ev_stop(l);
}

static void on_stop_signal(struct ev_loop *l, int signo, void *ud)
{
	(void)ud;
	log_info("received %s, shutting down", strsignal(signo));
	ev_stop(l);
}

int main(int argc, char **argv)
{
	int64_t interval_s = 60, max_ticks = 0;
	bool use_json = true;
	const char *json_format = "upstream", *json_file = "-", *procfs_root = "/proc", *log_level = "info";
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	const struct arg_opt opts[] = {
		{"kernel_monitor_reporting_interval_s", 0, ARG_INT, &interval_s, "SECONDS",
		 "kernel (procfs) collection period", 1, 86400, NULL},
		{"use_JSON", 0, ARG_BOOL, &use_json, NULL, "write metric samples as JSON lines", 0, 0, NULL},
		{"json_format", 0, ARG_STRING, &json_format, "upstream|jsonl",
		 "JSON line format: upstream's 'time = T data = {...}' or plain JSON objects", 0, 0, NULL},
		{"json_log_file", 0, ARG_STRING, &json_file, "PATH", "JSON metric log destination ('-': stdout)", 0, 0,
		 NULL},
		{"procfs_root", 0, ARG_STRING, &procfs_root, "DIR", "where procfs is mounted (tests use fixture trees)",
		 0, 0, NULL},
		{"log_level", 0, ARG_STRING, &log_level, "LEVEL", "error, warn, info or debug", 0, 0, NULL},
		{"exit_after_ticks", 0, ARG_INT, &max_ticks, "N", "stop after N collection ticks (0: run forever)", 0,
		 1000000000, NULL},
		TRACING_FLAG_ROWS(&tf),
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	log_init("dynolog", LOG_LEVEL_INFO);
	struct args a;
	int rc = args_parse(opts, argc - 1, argv + 1, &a);
	if (rc == ARGS_HELP) {
		args_help(stdout, "dynolog [options]",
			  "The dynolite per-host telemetry daemon. Collects host metrics and publishes them.", opts);
		args_free(&a);
		return 0;
	}
	if (rc != ARGS_OK || a.npos) {
		fprintf(stderr, "dynolog: %s\n", rc != ARGS_OK ? a.error.data : "unexpected positional argument");
		args_free(&a);
		return 2;
	}
	enum log_level lvl;
	if (!log_parse_level(log_level, &lvl)) {
		fprintf(stderr, "dynolog: --log_level: unknown level '%s'\n", log_level);
		args_free(&a);
		return 2;
	}
	log_set_level(lvl);

	struct daemon d = {0};
	d.use_json = use_json;
	d.max_ticks = max_ticks;
	if (strcmp(json_format, "upstream") == 0)
		d.json_mode = JSONLOG_UPSTREAM;
	else if (strcmp(json_format, "jsonl") == 0)
		d.json_mode = JSONLOG_JSONL;
	else {
		fprintf(stderr, "dynolog: --json_format must be 'upstream' or 'jsonl'\n");
		args_free(&a);
		return 2;
	}
	d.json_fd = STDOUT_FILENO;
	if (strcmp(json_file, "-") != 0) {
		d.json_fd = open(json_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (d.json_fd < 0) {
			fprintf(stderr, "dynolog: cannot open --json_log_file '%s': %s\n", json_file, strerror(errno));
			args_free(&a);
			return 1;
		}
	}
	frame_init(&d.frame);
	d.loop = ev_loop_new();
	d.kernel = kernel_collector_new(procfs_root);
	if (!d.loop || ev_signal_add(d.loop, SIGTERM, on_stop_signal, &d) < 0 ||
	    ev_signal_add(d.loop, SIGINT, on_stop_signal, &d) < 0 ||
	    !ev_timer_add(d.loop, 1, interval_s * NS_PER_SEC, on_kernel_tick, &d)) {
		log_error("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	struct buf terr = BUF_INIT;
	struct tracing *tracing = tracing_start(d.loop, &tf, &terr);
	if (!tracing)
		log_error("%s", terr.data);
	buf_free(&terr);
	if (tracing)
		log_info("dynolog %s started (pid %d): kernel monitor every %llds, JSON log %s", DYNO_VERSION, (int)getpid(),
			 (long long)interval_s, use_json ? (strcmp(json_file, "-") ? json_file : "to stdout") : "off");
	int run = tracing ? ev_run(d.loop) : -1;
	log_info("stopped");
	tracing_stop(tracing);
	kernel_collector_free(d.kernel);
	ev_loop_free(d.loop);
	frame_free(&d.frame);
	buf_free(&d.line);
	if (d.json_fd != STDOUT_FILENO)
		close(d.json_fd);
	args_free(&a);
	return run == 0 ? 0 : 1;
}
