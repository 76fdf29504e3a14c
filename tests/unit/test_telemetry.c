/*
 * test_telemetry.c - the wired telemetry on a real loop: ticks over a
 * fixture tree reach the history and come back through the getMetrics
 * handler; the registry hook tracks a process; the JSON config file is
 * applied with the command line winning.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/loop.h"
#include "daemon/telemetry.h"
#include "fixture.h"
#include "test.h"

static char *rpc(struct telemetry *t, const char *req)
{
	struct json_doc d;
	struct json_error e;
	if (!json_parse(req, strlen(req), &d, &e))
		return NULL;
	struct buf out = BUF_INIT;
	if (!telemetry_rpc_call(t, "getMetrics", d.root, &out))
		buf_puts(&out, "no getMetrics");
	json_doc_free(&d);
	return buf_detach(&out, NULL);
}

/* A telemetry config from command-line style arguments (NULL-terminated). */
static struct telemetry_config *config_of(const char *first, ...)
{
	struct telemetry_config *c = telemetry_config_new();
	char *argv[32];
	int argc = 0;
	va_list ap;
	va_start(ap, first);
	for (const char *s = first; s && argc < 32; s = va_arg(ap, const char *))
		argv[argc++] = (char *)s;
	va_end(ap);
	struct args a;
	int rc = args_parse(telemetry_opts(c), argc, argv, &a);
	if (rc != ARGS_OK)
		test_fail(__FILE__, __LINE__, "%s", a.error.data);
	args_free(&a); /* the strings are argv's, which outlive c */
	return c;
}

static char procfs_arg[20000], sysfs_arg[20000];

/* --procfs_root / --sysfs_root pointing at the fixture tree */
static void fixture_args(void)
{
	snprintf(procfs_arg, sizeof procfs_arg, "--procfs_root=%s", fixture_path("proc"));
	snprintf(sysfs_arg, sizeof sysfs_arg, "--sysfs_root=%s", fixture_path("sys"));
}

TEST(telemetry_ticks_reach_get_metrics)
{
	fixture_tick("basic", "t0");
	struct telemetry_config *c = telemetry_config_new();
	const struct arg_opt *o = telemetry_opts(c);
	char cfgpath[512];
	snprintf(cfgpath, sizeof cfgpath, "%s/cfg.json", test_tmpdir());
	FILE *f = fopen(cfgpath, "w");
	REQUIRE(f);
	fprintf(f, "{\"history_window_s\": 120, \"use_JSON\": true, \"json_format\": \"jsonl\", \"unknown_key\": 1}");
	fclose(f);
	static char a1[20000], a2[20000], a3[600], a4[600];
	snprintf(a1, sizeof a1, "--procfs_root=%s", fixture_path("proc"));
	snprintf(a2, sizeof a2, "--sysfs_root=%s", fixture_path("sys"));
	snprintf(a3, sizeof a3, "--config=%s", cfgpath);
	snprintf(a4, sizeof a4, "--json_log_file=%s/m.jsonl", test_tmpdir());
	char *argv[] = {a1, a2, a3, a4, "--use_JSON=false", "--kernel_monitor_reporting_interval_s=1",
			"--exit_after_ticks=2"};
	struct args a;
	REQUIRE(args_parse(o, 7, argv, &a) == ARGS_OK);
	struct ev_loop *l = ev_loop_new();
	struct buf err = BUF_INIT;
	CHECK(!telemetry_track_pid(NULL, getpid())); /* nothing running yet */
	struct telemetry *t = telemetry_start(l, c, &err);
	if (!t)
		test_fail(__FILE__, __LINE__, "%s", err.data);
	REQUIRE(t);
	CHECK(telemetry_track_pid(t, getpid()));
	REQUIRE(ev_run(l) == 0);
	char *r = rpc(t, "{\"fn\":\"getMetrics\",\"names\":[\"mem_total_bytes\",\"load*\"]}");
	REQUIRE(r);
	const char *want = "{\"interval_s\":1,\"metrics\":{\"load1\":[[";
	CHECK(strncmp(r, want, strlen(want)) == 0);
	CHECK(strstr(r, "\"mem_total_bytes\":[[") != NULL);
	CHECK(strstr(r, ",16777216000],[") != NULL); /* two ticks */
	CHECK(strstr(r, "\"window_s\":120}") != NULL); /* from the config file */
	free(r);
	char key[64];
	snprintf(key, sizeof key, "{\"fn\":\"getMetrics\",\"names\":[\"proc_*\"]}");
	r = rpc(t, key);
	snprintf(key, sizeof key, "\"proc_rss_bytes.%d\":[[", (int)getpid());
	/* the fixture procfs has no such pid: the process is dropped, never reported as 0 */
	CHECK(strstr(r, key) == NULL);
	free(r);
	r = rpc(t, "{\"fn\":\"getMetrics\",\"names\":\"x\"}");
	CHECK(strncmp(r, "{\"error\":", 9) == 0);
	free(r);
	/* --use_JSON=false on the command line beat the config file's true */
	snprintf(key, sizeof key, "%s/m.jsonl", test_tmpdir());
	FILE *m = fopen(key, "r");
	long sz = -1;
	if (m) {
		fseek(m, 0, SEEK_END);
		sz = ftell(m);
		fclose(m);
	}
	CHECK(sz == 0);
	telemetry_stop(t);
	r = rpc(NULL, "{\"fn\":\"getMetrics\"}");
	CHECK(strstr(r, "not running") != NULL);
	free(r);
	buf_free(&err);
	args_free(&a);
	telemetry_config_free(c);
	ev_loop_free(l);
}

TEST(telemetry_bad_config_file)
{
	char cfgpath[512], cfgarg[600];
	snprintf(cfgpath, sizeof cfgpath, "%s/cfg.json", test_tmpdir());
	const char *bad[] = {"[1,2]", "{\"history_window_s\": \"long\"}", "{\"use_JSON\": 1}", "{\"x\":", "",
			     "{\"kernel_monitor_reporting_interval_s\": 0}", "{\"json_log_file\": \"a\\u0000b\"}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		FILE *f = fopen(cfgpath, "w");
		REQUIRE(f);
		fputs(bad[i], f);
		fclose(f);
		snprintf(cfgarg, sizeof cfgarg, "--config=%s", cfgpath);
		struct telemetry_config *c = config_of(cfgarg, NULL);
		struct ev_loop *l = ev_loop_new();
		struct buf err = BUF_INIT;
		struct telemetry *t = telemetry_start(l, c, &err);
		CHECK(t == NULL);
		CHECK(strstr(err.data, "cfg.json") != NULL);
		if (t)
			telemetry_stop(t);
		buf_free(&err);
		telemetry_config_free(c);
		ev_loop_free(l);
	}
	struct telemetry_config *c = config_of("--config=/nonexistent/cfg.json", NULL);
	struct ev_loop *l = ev_loop_new();
	struct buf err = BUF_INIT;
	CHECK(telemetry_start(l, c, &err) == NULL);
	CHECK(strstr(err.data, "/nonexistent/cfg.json") != NULL);
	buf_free(&err);
	telemetry_config_free(c);
	ev_loop_free(l);
}

#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/un.h>

TEST(telemetry_sd_notify_ready)
{
	void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "    libsystemd.so.0 not installed: readiness is skipped by design, nothing to check\n");
		return;
	}
	dlclose(lib);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	REQUIRE(fd >= 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s/notify", test_tmpdir());
	REQUIRE(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
	setenv("NOTIFY_SOCKET", a.sun_path, 1);
	fixture_tick("basic", "t0");
	fixture_args();
	struct telemetry_config *c = config_of(procfs_arg, sysfs_arg, "--use_JSON=false", NULL);
	struct ev_loop *l = ev_loop_new();
	struct buf err = BUF_INIT;
	struct telemetry *t = telemetry_start(l, c, &err);
	REQUIRE(t);
	char msg[256];
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	ssize_t n = recv(fd, msg, sizeof msg - 1, 0);
	REQUIRE(n > 0);
	msg[n] = 0;
	CHECK(strstr(msg, "READY=1") != NULL);
	telemetry_reload(t);
	n = recv(fd, msg, sizeof msg - 1, 0);
	REQUIRE(n > 0);
	msg[n] = 0;
	CHECK(strstr(msg, "RELOADING=1") != NULL);
	telemetry_stop(t);
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	buf_free(&err);
	telemetry_config_free(c);
	ev_loop_free(l);
}

TEST(telemetry_history_memory_cap)
{
	fixture_tick("basic", "t0");
	fixture_args();
	struct telemetry_config *c = config_of(procfs_arg, sysfs_arg, "--use_JSON=false",
					       "--kernel_monitor_reporting_interval_s=1",
					       "--history_window_s=3600", /* a ring: 3601 x 8 B = 28 KiB per key */
					       "--history_max_mb=1",      /* a ring kept 37 keys; blocks keep all */
					       /* two: the first tick has no deltas */
					       "--exit_after_ticks=2", NULL);
	struct ev_loop *l = ev_loop_new();
	struct buf err = BUF_INIT;
	struct telemetry *t = telemetry_start(l, c, &err);
	REQUIRE(t);
	REQUIRE(ev_run(l) == 0);
	struct json_doc d;
	struct json_error e;
	char *r = rpc(t, "{\"fn\":\"getMetrics\"}");
	REQUIRE(r && json_parse(r, strlen(r), &d, &e));
	const struct json_value *m = json_get(d.root, "metrics");
	REQUIRE(m && m->type == JV_OBJECT);
	/* the cap counts blocks held, not the window: it costs no key at start */
	CHECK(m->len > 1048576 / (3601 * 8));
	CHECK(strstr(test_stderr(), "in 1 MB (--history_max_mb)") != NULL);
	json_doc_free(&d);
	free(r);
	telemetry_stop(t);
	buf_free(&err);
	telemetry_config_free(c);
	ev_loop_free(l);
}

TEST(telemetry_config_check_text)
{
	struct buf err = BUF_INIT;
	const char *good = "{\"use_prometheus\": true, \"prometheus_port\": 9400, \"track_pids\": \"1,2\", \"other\": 1}";
	CHECK(telemetry_config_check(good, strlen(good), &err));
	const char *bad[] = {"{\"track_pids\": \"1,x\"}", "{\"json_format\": \"xml\"}", "{\"prometheus_port\": 70000}",
			     "{\"use_otlp\": \"yes\"}", "nope", "{\"history_window_s\": 1e99}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_reset(&err);
		CHECK(!telemetry_config_check(bad[i], strlen(bad[i]), &err));
		CHECK(err.len > 0);
	}
	buf_free(&err);
}

#include "daemon/collect/collector.h"
#include "daemon/publish/sink.h"

/* The rows of one module: every option named, explained, inside its
 * config struct; returns how many. */
static size_t check_rows(const char *who, const struct mod_config *m)
{
	size_t n = 0;
	CHECK(m->opts != NULL);
	CHECK(m->size > 0 && m->defaults != NULL);
	for (const struct arg_opt *o = m->opts; o && o->name; o++, n++) {
		if (!o->help || !*o->help || !*o->name)
			test_fail(__FILE__, __LINE__, "%s: option row %zu lacks a name or help", who, n);
		size_t width = o->type == ARG_BOOL ? sizeof(bool) : o->type == ARG_STRING ? sizeof(char *) : 8;
		if ((uintptr_t)o->ptr + width > m->size)
			test_fail(__FILE__, __LINE__, "%s: --%s lies outside its config struct", who, o->name);
		CHECK(o->seen == NULL); /* bound by telemetry, never in the table */
	}
	return n;
}

TEST(telemetry_tables_are_complete)
{
	REQUIRE(ncollectors > 0 && nsinks > 0);
	size_t ticking = 0;
	for (size_t i = 0; i < ncollectors; i++) {
		const struct collector *c = collectors[i];
		REQUIRE(c->name && *c->name);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(collectors[j]->name, c->name) != 0);
		check_rows(c->name, &c->config);
		CHECK(c->apply && c->collect && c->close);
		/* its own tick, or one of an earlier collector's */
		if (c->interval_s) {
			ticking++;
			CHECK(c->interval_s(c->config.defaults) > 0);
		} else {
			bool found = false;
			for (size_t j = 0; j < i; j++)
				found = found || (c->rides_on && strcmp(collectors[j]->name, c->rides_on) == 0 &&
						  collectors[j]->interval_s);
			if (!found)
				test_fail(__FILE__, __LINE__, "collector %s has no period and rides on no earlier collector",
					  c->name);
		}
		if (c->validate) {
			struct buf err = BUF_INIT;
			CHECK(c->validate(c->config.defaults, &err)); /* the defaults are valid */
			buf_free(&err);
		}
	}
	CHECK(collectors[0]->interval_s != NULL); /* the main tick */
	CHECK(ticking > 0);
	for (size_t i = 0; i < nsinks; i++) {
		const struct sink *s = sinks[i];
		REQUIRE(s->name && *s->name);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(sinks[j]->name, s->name) != 0);
		check_rows(s->name, &s->config);
		CHECK(s->apply && s->publish && s->close);
		CHECK(!s->rpc_name == !s->rpc);
		if (s->validate) {
			struct buf err = BUF_INIT;
			CHECK(s->validate(s->config.defaults, &err));
			buf_free(&err);
		}
	}
	/* the option table is every module's rows, each name once */
	struct telemetry_config *c = telemetry_config_new();
	const struct arg_opt *o = telemetry_opts(c);
	size_t n = 0;
	for (; o[n].name; n++) {
		CHECK(o[n].seen != NULL);
		for (size_t j = 0; j < n; j++)
			if (strcmp(o[j].name, o[n].name) == 0)
				test_fail(__FILE__, __LINE__, "--%s is declared twice", o[n].name);
	}
	size_t want = 0;
	for (size_t i = 0; i < ncollectors; i++)
		want += mod_rows_count(&collectors[i]->config);
	for (size_t i = 0; i < nsinks; i++)
		want += mod_rows_count(&sinks[i]->config);
	CHECK(n > want); /* plus telemetry's own (--config, --procfs_root, ...) */
	telemetry_config_free(c);
}
