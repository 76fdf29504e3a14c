/* test_core.c - buf, args, clock, procstat and the event loop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/procstat.h"
#include "test.h"

TEST(buf_grows_and_stays_terminated)
{
	struct buf b = BUF_INIT;
	CHECK_STR(b.data, "");
	for (int i = 0; i < 10000; i++)
		buf_printf(&b, "%d,", i);
	CHECK(b.len == strlen(b.data));
	CHECK(strncmp(b.data, "0,1,2,", 6) == 0);
	CHECK(strcmp(b.data + b.len - 5, "9999,") == 0);
	buf_append(&b, "a\0b", 3); /* embedded NUL kept, length authoritative */
	CHECK(b.data[b.len - 2] == 0 && b.data[b.len] == 0);
	buf_truncate(&b, 4);
	CHECK_STR(b.data, "0,1,");
	buf_put_u32(&b, 0x04030201u);
	CHECK(b.len == 8 && memcmp(b.data + 4, "\x01\x02\x03\x04", 4) == 0);
	size_t n;
	char *s = buf_detach(&b, &n);
	CHECK(n == 8 && b.len == 0 && b.cap == 0);
	free(s);
	/* a long printf takes the slow path */
	char big[1000];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	buf_printf(&b, "[%s]", big);
	CHECK(b.len == 1001 && b.data[0] == '[' && b.data[1000] == ']');
	buf_free(&b);
	s = buf_detach(&b, NULL); /* detach of an empty buffer gives "" */
	CHECK_STR(s, "");
	free(s);
}

/* The decimal appenders print what printf prints, at every digit count and
 * at both ends of the ranges (INT64_MIN has no positive counterpart). */
TEST(buf_put_decimal_matches_printf)
{
	struct buf b = BUF_INIT;
	char want[32];
	int64_t s[] = {0, 1, -1, 9, 10, 99, 100, -100, 12345678, -987654321012LL, INT64_MAX, INT64_MIN, INT64_MIN + 1};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		buf_reset(&b);
		buf_put_i64(&b, s[i]);
		snprintf(want, sizeof want, "%lld", (long long)s[i]);
		CHECK_STR(b.data, want);
	}
	/* every power of ten and its neighbours, unsigned up to UINT64_MAX */
	for (uint64_t p = 1;; p *= 10) {
		for (uint64_t v = p - 1; v <= p + 1; v++) {
			buf_reset(&b);
			buf_put_u64(&b, v);
			snprintf(want, sizeof want, "%llu", (unsigned long long)v);
			CHECK_STR(b.data, want);
			CHECK(b.len == strlen(want));
		}
		if (p > UINT64_MAX / 10)
			break;
	}
	buf_reset(&b);
	buf_put_u64(&b, UINT64_MAX);
	CHECK_STR(b.data, "18446744073709551615");
	buf_puts(&b, ",");
	buf_put_i64(&b, -42); /* appends, like every buf_put */
	CHECK_STR(b.data, "18446744073709551615,-42");
	buf_free(&b);
}

static bool all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* With huge pages on, the helpers round big blocks up, advise them, move
 * blocks that cross the threshold out of the heap by hand and collapse the
 * first 2 MiB: none of that may change what the caller sees. */
TEST(xalloc_huge_pages_keep_contents)
{
	xalloc_huge_pages(1); /* below 2 MiB: means 2 MiB */
	unsigned char *p = xrealloc(NULL, 1000);
	memset(p, 0xa5, 1000);
	p = xrealloc(p, 5u << 20); /* heap -> own mapping */
	CHECK(all_bytes(p, 1000, 0xa5));
	memset(p, 0x5a, 5u << 20);
	p = xrealloc(p, 40u << 20); /* grows by mremap */
	CHECK(all_bytes(p, 5u << 20, 0x5a));
	memset(p + (5u << 20), 0x11, 35u << 20);
	p = xrealloc(p, 3u << 20); /* shrinks */
	CHECK(all_bytes(p, 3u << 20, 0x5a));
	p = xrealloc(p, 100); /* back below the threshold */
	CHECK(all_bytes(p, 100, 0x5a));
	free(p);
	unsigned char *z = xcalloc(3, 1u << 20);
	CHECK(all_bytes(z, 3u << 20, 0));
	free(z);
	unsigned char *m = xmalloc((2u << 20) + 1);
	memset(m, 7, (2u << 20) + 1);
	CHECK(all_bytes(m, (2u << 20) + 1, 7));
	free(m);
	xalloc_huge_pages(0);
	unsigned char *small = xmalloc(8u << 20); /* off again: plain malloc */
	memset(small, 1, 8u << 20);
	CHECK(all_bytes(small, 8u << 20, 1));
	free(small);
}

TEST(buf_read_fd_to_end_limit_error)
{
	int p[2];
	REQUIRE(pipe(p) == 0);
	char chunk[1000];
	memset(chunk, 'a', sizeof chunk);
	for (int i = 0; i < 50; i++) /* 50,000 bytes: fits the pipe buffer */
		REQUIRE(write(p[1], chunk, sizeof chunk) == (ssize_t)sizeof chunk);
	close(p[1]);
	struct buf b = BUF_INIT;
	buf_puts(&b, "x");
	CHECK_INT(buf_read_fd(&b, p[0], 50001), 0); /* exactly max: fine */
	CHECK(b.len == 50001 && b.data[0] == 'x' && b.data[50000] == 'a' && b.data[50001] == 0);
	close(p[0]);

	REQUIRE(pipe(p) == 0);
	for (int i = 0; i < 50; i++)
		REQUIRE(write(p[1], chunk, sizeof chunk) == (ssize_t)sizeof chunk);
	close(p[1]);
	buf_reset(&b);
	CHECK_INT(buf_read_fd(&b, p[0], 49999), 1); /* one byte over */
	CHECK(b.len > 49999);
	close(p[0]);

	buf_reset(&b);
	errno = 0;
	CHECK_INT(buf_read_fd(&b, p[0], 100), -1); /* closed descriptor */
	CHECK_INT(errno, EBADF);
	CHECK_INT(b.len, 0);
	buf_free(&b);
}

static int64_t g_port = 1778, g_interval = 60;
static bool g_ipc, g_json = true, g_seen_port, g_verbose;
static double g_ratio = 0.5;
static const char *g_host = "localhost";

static int parse(int argc, char **argv, struct args *a)
{
	const struct arg_opt opts[] = {
		{"port", 'p', ARG_INT, &g_port, "PORT", "RPC port", 0, 65535, &g_seen_port},
		{"kernel_monitor_reporting_interval_s", 0, ARG_INT, &g_interval, "S", "", 1, 3600, NULL},
		{"enable_ipc_monitor", 0, ARG_BOOL, &g_ipc, NULL, "", 0, 0, NULL},
		{"use_JSON", 0, ARG_BOOL, &g_json, NULL, "", 0, 0, NULL},
		{"ratio", 0, ARG_DOUBLE, &g_ratio, "R", "", 0, 0, NULL},
		{"hostname", 0, ARG_STRING, &g_host, "HOST", "", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	return args_parse(opts, argc, argv, a);
}

TEST(args_forms)
{
	char *argv[] = {"--port=1234", "trace.json", "--enable-ipc-monitor", "--nouse_JSON", "--ratio", "0.25",
			"--kernel-monitor-reporting-interval-s", "7", "-p", "99", "--hostname=h1", "--", "--port=5"};
	struct args a;
	REQUIRE(parse(13, argv, &a) == ARGS_OK);
	CHECK_INT(g_port, 99);
	CHECK(g_seen_port);
	CHECK(g_ipc);
	CHECK(!g_json);
	CHECK(g_ratio == 0.25);
	CHECK_INT(g_interval, 7);
	CHECK_STR(g_host, "h1");
	REQUIRE(a.npos == 2);
	CHECK_STR(a.pos[0], "trace.json");
	CHECK_STR(a.pos[1], "--port=5");
	args_free(&a);

	char *argv2[] = {"--use_JSON=false", "--enable_ipc_monitor=true", "--no-enable-ipc-monitor"};
	g_json = true;
	REQUIRE(parse(3, argv2, &a) == ARGS_OK);
	CHECK(!g_json && !g_ipc);
	args_free(&a);

	/* a short option's value attached (-p42, as -j1 is written) */
	char *argv3[] = {"-p42"};
	REQUIRE(parse(1, argv3, &a) == ARGS_OK);
	CHECK_INT(g_port, 42);
	args_free(&a);
	char *argv4[] = {"-p4x"};
	CHECK(parse(1, argv4, &a) == ARGS_ERROR && strstr(a.error.data, "not an integer"));
	args_free(&a);
}

TEST(args_errors)
{
	struct args a;
	char *bad1[] = {"--port=70000"};
	CHECK(parse(1, bad1, &a) == ARGS_ERROR && strstr(a.error.data, "out of range"));
	args_free(&a);
	char *bad2[] = {"--port=12x"};
	CHECK(parse(1, bad2, &a) == ARGS_ERROR && strstr(a.error.data, "not an integer"));
	args_free(&a);
	char *bad3[] = {"--bogus"};
	CHECK(parse(1, bad3, &a) == ARGS_ERROR && strstr(a.error.data, "unknown option '--bogus'"));
	args_free(&a);
	char *bad4[] = {"--hostname"};
	CHECK(parse(1, bad4, &a) == ARGS_ERROR && strstr(a.error.data, "needs a value"));
	args_free(&a);
	char *bad5[] = {"--use_JSON=maybe"};
	CHECK(parse(1, bad5, &a) == ARGS_ERROR && strstr(a.error.data, "not a boolean"));
	args_free(&a);
	char *bad6[] = {"--noport"}; /* --no only negates booleans */
	CHECK(parse(1, bad6, &a) == ARGS_ERROR);
	args_free(&a);
	char *help[] = {"x", "--help"};
	CHECK(parse(2, help, &a) == ARGS_HELP);
	args_free(&a);
	char *nofile[] = {"--flagfile=/nonexistent/dynolog.gflags"};
	CHECK(parse(1, nofile, &a) == ARGS_ERROR && strstr(a.error.data, "cannot open"));
	args_free(&a);
}

TEST(args_flagfile)
{
	char path[512], inner[512];
	snprintf(inner, sizeof inner, "%s/inner.gflags", test_tmpdir());
	snprintf(path, sizeof path, "%s/dynolog.gflags", test_tmpdir());
	FILE *f = fopen(inner, "w");
	fprintf(f, "--hostname=fromfile\n");
	fclose(f);
	f = fopen(path, "w");
	fprintf(f, "# upstream-style flag file\n--port=4242\n\n  --enable_ipc_monitor\n--flagfile=%s\n", inner);
	fclose(f);
	char arg[600];
	snprintf(arg, sizeof arg, "--flagfile=%s", path);
	char *argv[] = {arg, "--port=5555"}; /* later flags override the file */
	struct args a;
	g_ipc = false;
	REQUIRE(parse(2, argv, &a) == ARGS_OK);
	CHECK_INT(g_port, 5555);
	CHECK(g_ipc);
	CHECK_STR(g_host, "fromfile");
	args_free(&a);
	/* a file that includes itself is stopped */
	f = fopen(path, "w");
	fprintf(f, "--flagfile=%s\n", path);
	fclose(f);
	CHECK(parse(1, argv, &a) == ARGS_ERROR && strstr(a.error.data, "nested too deeply"));
	args_free(&a);
}

/* args_cmd with stdout and stderr caught in files; out and err get what it printed. */
static int run_cmd(const struct arg_cmd *c, int argc, char **argv, struct args *a, struct buf *out, struct buf *err)
{
	char of[512], ef[512];
	snprintf(of, sizeof of, "%s/cmd.out", test_tmpdir());
	snprintf(ef, sizeof ef, "%s/cmd.err", test_tmpdir());
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	FILE *fo = fopen(of, "w+"), *fe = fopen(ef, "w+");
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	int rc = args_cmd(c, argc, argv, a);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	for (int k = 0; k < 2; k++) {
		FILE *f = k ? fe : fo;
		char tmp[4096];
		size_t n;
		rewind(f);
		while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
			buf_append(k ? err : out, tmp, n);
		fclose(f);
	}
	return rc;
}

/* What args_cmd says when it refuses argv (it must exit 2 and print nothing
 * on stdout), for CHECK_STR at the caller's line; the text is overwritten by
 * the next call. */
static const char *usage_error(const struct arg_cmd *c, int argc, char **argv)
{
	static char msg[512];
	struct args a;
	struct buf out = BUF_INIT, err = BUF_INIT;
	int rc = run_cmd(c, argc, argv, &a, &out, &err);
	if (rc == -1)
		args_free(&a);
	if (rc != 2 || out.len)
		snprintf(msg, sizeof msg, "(exit %d, stdout '%s')", rc, out.len ? out.data : "");
	else
		snprintf(msg, sizeof msg, "%s", err.len ? err.data : "");
	buf_free(&out);
	buf_free(&err);
	return msg;
}
#define USAGE_ERROR(c, argv) usage_error((c), (int)(sizeof(argv) / sizeof *(argv)), (argv))

TEST(args_cmd_help_errors_positionals)
{
	const struct arg_opt opts[] = {
		{"port", 'p', ARG_INT, &g_port, "PORT", "RPC port", 0, 65535, NULL},
		{"verbose", 'v', ARG_BOOL, &g_verbose, NULL, "say more", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct arg_cmd c = {.prog = "dyno x", .usage = "dyno x [options] A B", .description = "Does x.", .opts = opts,
			    .min_pos = 1, .max_pos = 2};
	struct args a;
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *help[] = {"x", "-p", "7", "--help"};
	CHECK_INT(run_cmd(&c, 4, help, &a, &out, &err), 0);
	const char *head = "usage: dyno x [options] A B\n\nDoes x.\n\noptions:\n";
	CHECK(strncmp(out.data, head, strlen(head)) == 0);
	CHECK(strstr(out.data, "--port=PORT") && strstr(out.data, "show this help"));
	CHECK_STR(err.data, "");
	CHECK(a.pos == NULL && a.owned == NULL); /* freed */

	buf_truncate(&out, 0);
	char *bad[] = {"x", "--port=x"};
	CHECK_STR(USAGE_ERROR(&c, bad), "dyno x: --port: 'x' is not an integer\n");
	char *few[] = {"x", "-p", "1"};
	CHECK_STR(USAGE_ERROR(&c, few), "dyno x: missing argument (see --help)\n");
	char *many[] = {"x", "a", "b", "c", "d"};
	CHECK_STR(USAGE_ERROR(&c, many), "dyno x: unexpected argument 'c' (see --help)\n");

	/* missing_error replaces the message for too few only; too many
	 * still names the stray argument */
	c.missing_error = "expected A and B";
	CHECK_STR(USAGE_ERROR(&c, many), "dyno x: unexpected argument 'c' (see --help)\n");
	CHECK_STR(USAGE_ERROR(&c, few), "dyno x: expected A and B\n");

	/* "--top 3": the value given to a boolean flag is what gets blamed,
	 * wherever the surplus shows up; "--verbose=true 3" or a value after
	 * an option that takes one does not point at a flag */
	char *boolval[] = {"x", "a", "--verbose", "3", "b"};
	CHECK_STR(USAGE_ERROR(&c, boolval), "dyno x: unexpected argument '3': --verbose takes no value (see --help)\n");
	char *boolshort[] = {"x", "a", "b", "-v", "3"};
	CHECK_STR(USAGE_ERROR(&c, boolshort), "dyno x: unexpected argument '3': --verbose takes no value (see --help)\n");
	char *booleq[] = {"x", "a", "--verbose=true", "3", "b"};
	CHECK_STR(USAGE_ERROR(&c, booleq), "dyno x: unexpected argument 'b' (see --help)\n");
	char *intval[] = {"x", "a", "--port", "9", "3", "b"};
	CHECK_STR(USAGE_ERROR(&c, intval), "dyno x: unexpected argument 'b' (see --help)\n");
	char *boolfits[] = {"x", "--verbose", "a", "b"}; /* right count: a positional after a flag is fine */
	REQUIRE(run_cmd(&c, 4, boolfits, &a, &out, &err) == -1);
	CHECK_STR(err.data, "");
	CHECK(g_verbose && a.npos == 2);
	args_free(&a);
	g_verbose = false;

	buf_truncate(&err, 0);
	char *ok[] = {"x", "a", "--port", "9", "b"};
	REQUIRE(run_cmd(&c, 5, ok, &a, &out, &err) == -1);
	CHECK_STR(err.data, "");
	CHECK_STR(out.data, "");
	CHECK(a.npos == 2 && strcmp(a.pos[0], "a") == 0 && strcmp(a.pos[1], "b") == 0);
	CHECK_INT(g_port, 9);
	args_free(&a);

	c.max_pos = ARGS_ANY; /* any number, at least min_pos */
	REQUIRE(run_cmd(&c, 5, many, &a, &out, &err) == -1);
	CHECK_INT(a.npos, 4);
	args_free(&a);
	c.min_pos = c.max_pos = 0;
	c.missing_error = NULL;
	CHECK_STR(USAGE_ERROR(&c, many), "dyno x: unexpected argument 'a' (see --help)\n");
	buf_free(&out);
	buf_free(&err);
}

TEST(clock_iso8601)
{
	char t[40];
	clock_fmt_iso8601(t, sizeof t, 1700000000123456789ll);
	CHECK_STR(t, "2023-11-14T22:13:20.123Z");
	int64_t a = clock_mono_ns(), b = clock_mono_ns();
	CHECK(b >= a);
	CHECK(clock_wall_ns() > 1600000000ll * NS_PER_SEC);
}

TEST(procstat_fields_after_last_paren)
{
	struct procstat st;
	/* a command name holding ") " and digits must not shift the fields */
	const char *line = "4242 (a) 7 (b) S 17 4242 4242 0 -1 4194560 100 0 0 0 "
			   "31 29 0 0 20 0 3 0 123456 987654321 555 18446744073709551615\n";
	CHECK(procstat_parse(line, &st));
	CHECK_INT(st.ppid, 17);
	CHECK_INT(st.utime, 31);
	CHECK_INT(st.stime, 29);
	CHECK_INT(st.starttime, 123456);
	CHECK_INT(st.vsize, 987654321);
	CHECK_INT(st.rss, 555);
	CHECK_INT(st.nfields, 21);
	/* truncated: what is there, and the rest 0 */
	CHECK(procstat_parse("1 (x) R 0 1 1 0 -1 0 5 0 0 0 7", &st));
	CHECK_INT(st.ppid, 0);
	CHECK_INT(st.nfields, 11);
	CHECK_INT(st.utime, 0);
	/* no ')' or nothing after it: false */
	CHECK(!procstat_parse("1 (x R 0", &st));
	CHECK(!procstat_parse("1 (x)", &st));
	CHECK(!procstat_parse("1 (x) R", &st));
	CHECK(!procstat_parse("", &st));
	/* the live process: its parent is ours */
	CHECK(procstat_read(getpid(), &st));
	CHECK_INT(st.ppid, getppid());
	int32_t pids[4];
	int n = procstat_ancestry(pids, 4);
	CHECK(n >= 1 && n <= 4);
	CHECK_INT(pids[0], getpid());
	if (n > 1 && getppid() > 1)
		CHECK_INT(pids[1], getppid());
	CHECK_INT(procstat_ancestry(pids, 0), 0);
}

struct loop_state {
	int timer_fires, io_reads, signals;
	int sv[2];
	struct ev_timer *once;
};

static void on_periodic(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	struct loop_state *s = ud;
	if (++s->timer_fires == 3) {
		ev_timer_del(l, t); /* a handler may remove itself */
		ssize_t w = write(s->sv[1], "x", 1);
		(void)w;
	}
}

static void on_readable(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	struct loop_state *s = ud;
	(void)ev;
	char c;
	if (read(fd, &c, 1) == 1)
		s->io_reads++;
	ev_io_del(l, fd);
	raise(SIGUSR1);
}

static void on_signal(struct ev_loop *l, int signo, void *ud)
{
	struct loop_state *s = ud;
	if (signo == SIGUSR1)
		s->signals++;
	ev_stop(l);
}

TEST(loop_timers_io_signals)
{
	struct loop_state s = {0};
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, s.sv) == 0);
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	/* t0 before arming: the 3rd expiry is >= 5 ms after the timer is armed,
	 * not after a t0 read later (a preemption in between broke this) */
	int64_t t0 = clock_mono_ns();
	REQUIRE(ev_timer_add(l, 1 * NS_PER_MS, 2 * NS_PER_MS, on_periodic, &s));
	REQUIRE(ev_io_add(l, s.sv[0], EPOLLIN, on_readable, &s) == 0);
	CHECK(ev_io_add(l, s.sv[0], EPOLLIN, on_readable, &s) < 0 && errno == EEXIST);
	REQUIRE(ev_signal_add(l, SIGUSR1, on_signal, &s) == 0);
	/* a timer left armed is released by ev_loop_free (no leak) */
	REQUIRE(ev_timer_add(l, 3600 * NS_PER_SEC, 0, on_periodic, &s));
	CHECK(ev_run(l) == 0);
	CHECK_INT(s.timer_fires, 3);
	CHECK_INT(s.io_reads, 1);
	CHECK_INT(s.signals, 1);
	CHECK(clock_mono_ns() - t0 >= 5 * NS_PER_MS);
	/* few wake-ups: three timer ticks, one read, one signal */
	CHECK(ev_wakeups(l) <= 8);
	ev_loop_free(l);
	close(s.sv[0]);
	close(s.sv[1]);
}

/* A busy batch: four always-readable descriptors whose handler takes
 * 30 ms each (never reading, so they stay ready), and a timer due after
 * 20 ms.  The log records the order of callbacks. */
struct busy_state {
	char log[16];
	int n;
};

static void busy_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)fd;
	(void)ev;
	struct busy_state *s = ud;
	s->log[s->n++] = 'I';
	struct timespec ts = {0, 30 * 1000 * 1000};
	nanosleep(&ts, NULL);
	if (s->n >= 8)
		ev_stop(l);
}

static void busy_tick(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	struct busy_state *s = ud;
	s->log[s->n++] = 'T';
}

TEST(loop_timer_not_behind_busy_batch)
{
	struct busy_state s = {0};
	int p[4][2];
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	for (int i = 0; i < 4; i++) {
		REQUIRE(pipe(p[i]) == 0);
		REQUIRE(write(p[i][1], "x", 1) == 1);
		REQUIRE(ev_io_add(l, p[i][0], EPOLLIN, busy_io, &s) == 0);
	}
	REQUIRE(ev_timer_add(l, 20 * NS_PER_MS, 0, busy_tick, &s));
	CHECK(ev_run(l) == 0);
	/* The first batch holds the four descriptors (the timer is not due
	 * yet).  The timer falls due during the first 30 ms callback; the loop
	 * must look again before running the other three (a whole batch of
	 * them used to run first: "IIIIT"). */
	const char *t = strchr(s.log, 'T');
	REQUIRE(t != NULL);
	if (t - s.log > 1)
		test_fail(__FILE__, __LINE__, "the timer ran after %d busy callbacks: %s", (int)(t - s.log), s.log);
	ev_loop_free(l);
	for (int i = 0; i < 4; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

static void edge_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)l;
	(void)fd;
	(void)ev;
	struct busy_state *s = ud;
	s->log[s->n++] = 'E';
}

static void stop_now(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)t;
	(void)ud;
	ev_stop(l);
}

TEST(loop_budget_never_drops_edge_triggered_events)
{
	struct busy_state s = {0};
	int lt[2], et[2];
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	REQUIRE(pipe(lt) == 0 && pipe(et) == 0);
	REQUIRE(write(lt[1], "x", 1) == 1 && write(et[1], "x", 1) == 1);
	/* both ready when added, in this order: one batch, the busy one first */
	REQUIRE(ev_io_add(l, lt[0], EPOLLIN, busy_io, &s) == 0);
	REQUIRE(ev_io_add(l, et[0], EPOLLIN | EPOLLET, edge_io, &s) == 0);
	REQUIRE(ev_timer_add(l, 200 * NS_PER_MS, 0, stop_now, NULL));
	CHECK(ev_run(l) == 0);
	/* the busy callback used the batch's budget; the edge-triggered event
	 * of the same batch is reported only once, so skipping it would lose
	 * it for good */
	if (!strchr(s.log, 'E'))
		test_fail(__FILE__, __LINE__, "the edge-triggered event was lost: %s", s.log);
	ev_loop_free(l);
	close(lt[0]);
	close(lt[1]);
	close(et[0]);
	close(et[1]);
}

/* Three descriptors that stay ready, each callback over the batch's
 * budget (11 ms against 10), so every batch runs exactly one of them. */
struct turn_state {
	char log[16];
	int n, fd[3];
};

static void turn_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)ev;
	struct turn_state *s = ud;
	for (int i = 0; i < 3; i++)
		if (fd == s->fd[i])
			s->log[s->n++] = (char)('A' + i);
	struct timespec ts = {0, 11 * 1000 * 1000};
	nanosleep(&ts, NULL);
	if (s->n >= 9)
		ev_stop(l);
}

TEST(loop_budget_lets_busy_descriptors_take_turns)
{
	struct turn_state s = {0};
	int p[3][2];
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	for (int i = 0; i < 3; i++) {
		REQUIRE(pipe(p[i]) == 0);
		REQUIRE(write(p[i][1], "x", 1) == 1);
		s.fd[i] = p[i][0];
		REQUIRE(ev_io_add(l, p[i][0], EPOLLIN, turn_io, &s) == 0);
	}
	CHECK(ev_run(l) == 0);
	/* epoll returns the three in the same order every time; a batch that
	 * always started at the top ran the first one only: "AAAAAAAAA" */
	int runs[3] = {0};
	for (int i = 0; i < s.n; i++)
		runs[s.log[i] - 'A']++;
	if (runs[0] != 3 || runs[1] != 3 || runs[2] != 3)
		test_fail(__FILE__, __LINE__, "descriptors did not take turns: %s", s.log);
	ev_loop_free(l);
	for (int i = 0; i < 3; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

/* Three descriptors that stay ready; each batch lets one of them work and
 * the others defer (ev_defer: a handler's own budget, like the RPC
 * server's turn).  No clock involved. */
struct defer_state {
	char log[16];
	int n, fd[3];
	uint64_t worked_in; /* the wake-up in which one worked */
};

static void defer_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)ev;
	struct defer_state *s = ud;
	if (s->n && s->worked_in == ev_wakeups(l)) {
		ev_defer(l);
		return;
	}
	s->worked_in = ev_wakeups(l);
	for (int i = 0; i < 3; i++)
		if (fd == s->fd[i])
			s->log[s->n++] = (char)('A' + i);
	if (s->n >= 9)
		ev_stop(l);
}

TEST(loop_deferred_work_takes_turns)
{
	struct defer_state s = {0};
	int p[3][2];
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	for (int i = 0; i < 3; i++) {
		REQUIRE(pipe(p[i]) == 0);
		REQUIRE(write(p[i][1], "x", 1) == 1);
		s.fd[i] = p[i][0];
		REQUIRE(ev_io_add(l, p[i][0], EPOLLIN, defer_io, &s) == 0);
	}
	CHECK(ev_run(l) == 0);
	int runs[3] = {0};
	for (int i = 0; i < s.n; i++)
		runs[s.log[i] - 'A']++;
	if (runs[0] != 3 || runs[1] != 3 || runs[2] != 3)
		test_fail(__FILE__, __LINE__, "deferred descriptors did not take turns: %s", s.log);
	ev_loop_free(l);
	for (int i = 0; i < 3; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

/* An urgent descriptor among many ready ones.  The order of callbacks
 * is logged: 'U' the urgent one, 'B' the others. */
struct urgent_state {
	char log[64];
	int n, total, stop_at; /* n: logged (the first 63), total: all */
	bool drain; /* the urgent callback reads its byte (else it stays ready) */
	int busy_ms;
};

static void urgent_log(struct ev_loop *l, struct urgent_state *s, char c)
{
	if (s->n < (int)sizeof s->log - 1)
		s->log[s->n++] = c;
	if (++s->total >= s->stop_at)
		ev_stop(l);
}

static void urgent_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	struct urgent_state *s = ud;
	CHECK(ev & EPOLLIN);
	char c;
	if (s->drain)
		CHECK(read(fd, &c, 1) == 1);
	urgent_log(l, s, 'U');
}

static void urgent_other_io(struct ev_loop *l, int fd, uint32_t ev, void *ud)
{
	(void)fd;
	(void)ev;
	struct urgent_state *s = ud;
	if (s->busy_ms) {
		struct timespec ts = {0, (long)s->busy_ms * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	urgent_log(l, s, 'B');
}

/* 100 descriptors ready before the urgent one: epoll_wait returns 64 of
 * them first, and the urgent one queues behind all 100 in the kernel's
 * ready list.  It must still run first, before any of them. */
TEST(loop_urgent_runs_before_other_ready_io)
{
	enum { N = 100 };
	struct urgent_state s = {.stop_at = 5, .drain = true};
	int p[N][2], u[2];
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	for (int i = 0; i < N; i++) {
		REQUIRE(pipe(p[i]) == 0);
		REQUIRE(write(p[i][1], "x", 1) == 1);
		REQUIRE(ev_io_add(l, p[i][0], EPOLLIN, urgent_other_io, &s) == 0);
	}
	REQUIRE(pipe(u) == 0);
	REQUIRE(ev_io_add(l, u[0], EPOLLIN, urgent_io, &s) == 0);
	CHECK(ev_io_urgent(l, u[0]) == 0);
	CHECK(ev_io_urgent(l, u[0]) == 0); /* twice: no change */
	REQUIRE(write(u[1], "x", 1) == 1);
	CHECK(ev_run(l) == 0);
	CHECK_STR(s.log, "UBBBB");
	/* not watched: refused */
	CHECK(ev_io_urgent(l, p[0][1]) == -1 && errno == ENOENT);
	/* after ev_io_del it is gone from the urgent set too: an fd number
	 * reused by a plain handler is not urgent */
	ev_io_del(l, u[0]);
	REQUIRE(ev_io_add(l, u[0], EPOLLIN, urgent_io, &s) == 0);
	REQUIRE(write(u[1], "x", 1) == 1);
	memset(&s, 0, sizeof s);
	s.stop_at = N + 1;
	s.drain = true;
	CHECK(ev_run(l) == 0);
	CHECK(s.total == N + 1 && strchr(s.log, 'U') == NULL); /* the log keeps 63: 'U' came later */
	ev_loop_free(l);
	for (int i = 0; i < N; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	close(u[0]);
	close(u[1]);
}

/* Three descriptors that stay ready, each callback over the batch's
 * budget (11 ms against 10), so every batch runs one of them; the urgent
 * one stays ready too.  It runs at the top of every batch, never skipped
 * by the budget: "UBUBUB" (as a plain descriptor it took its turn among
 * the others: "BUBBUB..."). */
TEST(loop_urgent_runs_in_every_batch_despite_budget)
{
	struct urgent_state s = {.stop_at = 6, .busy_ms = 11};
	int p[3][2], u[2];
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	for (int i = 0; i < 3; i++) {
		REQUIRE(pipe(p[i]) == 0);
		REQUIRE(write(p[i][1], "x", 1) == 1);
		REQUIRE(ev_io_add(l, p[i][0], EPOLLIN, urgent_other_io, &s) == 0);
	}
	REQUIRE(pipe(u) == 0);
	REQUIRE(write(u[1], "x", 1) == 1);
	REQUIRE(ev_io_add(l, u[0], EPOLLIN, urgent_io, &s) == 0);
	REQUIRE(ev_io_urgent(l, u[0]) == 0);
	CHECK(ev_run(l) == 0);
	CHECK_STR(s.log, "UBUBUB");
	ev_loop_free(l);
	for (int i = 0; i < 3; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	close(u[0]);
	close(u[1]);
}

static void never(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	(void)t;
	*(int *)ud += 1;
}

static void stop_soon(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)t;
	ev_timer_del(l, ud); /* delete another timer that fires in the same batch */
	ev_stop(l);
}

TEST(loop_delete_other_timer_in_batch)
{
	struct ev_loop *l = ev_loop_new();
	int fired = 0;
	struct ev_timer *victim = ev_timer_add(l, 50 * NS_PER_MS, 0, never, &fired);
	REQUIRE(victim);
	REQUIRE(ev_timer_add(l, 1 * NS_PER_MS, 0, stop_soon, victim));
	CHECK(ev_run(l) == 0);
	CHECK_INT(fired, 0);
	ev_loop_free(l);
}

TEST(log_levels)
{
	enum log_level lv;
	CHECK(log_parse_level("debug", &lv) && lv == LOG_LEVEL_DEBUG);
	CHECK(!log_parse_level("loud", &lv));
}
