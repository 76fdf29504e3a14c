/*
 * test_cli_rpc.c - the dyno RPC subcommands against a recording fake daemon
 * on real loopback sockets, run as the real dyno binary: request bytes equal
 * to upstream dyno's (wire-protocols.md §2.6, spelled out here by hand from
 * the spec, not produced by our builder), output, and every way an answer
 * can go wrong (refused, closed, bad length, truncated, garbage, silence).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/fake_daemon.h"
#include "client/hosts.h"
#include "client/rpc_cmd.h"
#include "client/rpc_client.h"
#include "core/clock.h"
#include "test.h"

/* dyno --hostname 127.0.0.1 --port P <args...>: upstream's option order. */
static int dyno_at(struct fake_daemon *f, int port_index, const char *const *args, struct buf *out,
		   struct buf *err)
{
	char port[16];
	snprintf(port, sizeof port, "%d", f ? f->ports[port_index] : 1);
	char *argv[48] = {"dyno", "--hostname", "127.0.0.1", "--port", port};
	int n = 5;
	for (int i = 0; args[i] && n < 46; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	return run_dyno(argv, out, err, 30);
}

static void check_one_request(struct fake_daemon *f, const char *want, size_t wantlen)
{
	pthread_mutex_lock(&f->mu);
	size_t n = f->nreqs;
	pthread_mutex_unlock(&f->mu);
	/* a gputrace that matched nothing is followed by getStatus (does the
	 * daemon have getProcesses?) */
	CHECK(n == 1 || (n == 2 && strcmp(f->reqs[1].body.data, GET_STATUS_EXT_REQUEST) == 0));
	if (n < 1)
		return;
	CHECK_INT(f->reqs[0].body.len, wantlen);
	if (f->reqs[0].body.len != wantlen || memcmp(f->reqs[0].body.data, want, wantlen) != 0)
		test_fail(__FILE__, __LINE__, "request bytes differ:\n got: [%s]\nwant: [%s]", f->reqs[0].body.data,
			  want);
}

#define LIT(s) s, sizeof(s) - 1

TEST(cli_status_version_dcgm_bytes_exact)
{
	struct {
		const char *args[4];
		const char *want;
		size_t len;
		const char *out;
	} cases[] = {
		{{"status", "--no-processes", NULL}, LIT("{\"fn\":\"getStatus\"}"),
		 "response length = 12\nresponse = {\"status\":1}\n"},
		{{"version", NULL}, LIT("{\"fn\":\"getVersion\"}"), "response length = 19\nresponse = {\"version\":\"0.6.0\"}\n"},
		{{"dcgm-resume", NULL}, LIT("{\"fn\":\"dcgmProfResume\"}"), "response = {\"status\":true}\n"},
		/* §2.6: newline, {, newline, 4 spaces ... 53 bytes for N=300 */
		{{"dcgm-pause", NULL}, LIT("\n{\n    \"fn\": \"dcgmProfPause\",\n    \"duration_s\": 300\n}"),
		 "response = {\"status\":true}\n"},
		{{"dcgm-pause", "--duration-s", "42", NULL}, LIT("\n{\n    \"fn\": \"dcgmProfPause\",\n    \"duration_s\": 42\n}"),
		 "response = {\"status\":true}\n"},
	};
	CHECK_INT(cases[0].len, 18);
	CHECK_INT(cases[1].len, 19);
	CHECK_INT(cases[2].len, 23);
	CHECK_INT(cases[3].len, 53);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fake_daemon f;
		REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
		struct buf out = BUF_INIT, err = BUF_INIT;
		int rc = dyno_at(&f, 0, cases[i].args, &out, &err);
		CHECK_INT(rc, 0);
		check_one_request(&f, cases[i].want, cases[i].len);
		if (!strstr(out.data, cases[i].out))
			test_fail(__FILE__, __LINE__, "%s: output [%s] lacks [%s] (stderr [%s])", cases[i].args[0], out.data,
				  cases[i].out, err.data);
		fake_stop(&f);
		buf_free(&out);
		buf_free(&err);
	}
}

/* The 329-byte golden request of §2.6, with the leading newline, the
 * 4-space indentation and the escaped newlines inside "config". */
static const char golden[] =
	"\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": "
	"\"ACTIVITIES_LOG_FILE=/tmp/libkineto_trace.json\\nPROFILE_START_TIME=0\\nACTIVITIES_DURATION_MSECS=500\\n"
	"PROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=false\\n"
	"PROFILE_WITH_MODULES=false\",\n    \"job_id\": 0,\n    \"pids\": [0],\n    \"process_limit\": 3\n}";

TEST(cli_gputrace_golden_request_and_output)
{
	CHECK_INT(sizeof golden - 1, 329);
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	fake_add_proc(&f, 151419, 100, 1000);
	fake_add_proc(&f, 151420, 100, 1000);
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *args[] = {"gputrace", "--log-file", "/tmp/libkineto_trace.json", NULL};
	CHECK_INT(dyno_at(&f, 0, args, &out, &err), 0);
	check_one_request(&f, golden, sizeof golden - 1);
	/* upstream's lines, in order */
	const char *want = "Kineto config = \nACTIVITIES_LOG_FILE=/tmp/libkineto_trace.json\nPROFILE_START_TIME=0\n"
			   "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\nPROFILE_WITH_STACK=false\n"
			   "PROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false\n"
			   "response length = 159\nresponse = {\"activityProfilersBusy\":0,\"activityProfilersTriggered\":"
			   "[151419,151420],\"eventProfilersBusy\":0,\"eventProfilersTriggered\":[],\"processesMatched\":"
			   "[151419,151420]}\n\nMatched 2 processes\nTrace output files will be written to:\n"
			   "    /tmp/libkineto_trace_151419.json\n    /tmp/libkineto_trace_151420.json\n";
	CHECK_STR(out.data, want);
	buf_reset(&out);
	buf_reset(&err);
	/* a second request finds both still pending: busy, nothing triggered,
	 * which is a failure */
	CHECK_INT(dyno_at(&f, 0, args, &out, &err), 1);
	CHECK(strstr(out.data, "\"activityProfilersBusy\":2") != NULL);
	CHECK(strstr(out.data, "Triggered 0 of them (2 busy") != NULL);
	CHECK(strstr(err.data, "2 processes matched but none was triggered") != NULL);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_gputrace_all_flags_bytes_exact)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	struct buf out = BUF_INIT, err = BUF_INIT;
	/* duration mode with memory profiling: §5.3 order, lines 1-8 */
	const char *a1[] = {"gputrace", "--log-file=/tmp/t.pt.trace.json", "--profile-start-time", "4102444800000", "--duration-ms",
			    "42", "--record-shapes", "--with-stacks", "--with-modules", "--profile-memory", "--job-id",
			    "77", "--pids", "12,13", "--process-limit", "5", NULL};
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 0);
	static const char w1[] =
		"\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": \"ACTIVITIES_LOG_FILE=/tmp/t.pt.trace.json\\n"
		"PROFILE_START_TIME=4102444800000\\nACTIVITIES_DURATION_MSECS=42\\nPROFILE_REPORT_INPUT_SHAPES=true\\n"
		"PROFILE_PROFILE_MEMORY=true\\nPROFILE_MEMORY=true\\nPROFILE_MEMORY_DURATION_MSECS=42\\n"
		"PROFILE_WITH_STACK=true\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_MODULES=true\",\n"
		"    \"job_id\": 77,\n    \"pids\": [12,13],\n    \"process_limit\": 5\n}";
	check_one_request(&f, w1, sizeof w1 - 1);
	fake_stop(&f);

	/* iteration mode */
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	const char *a2[] = {"gputrace", "--log-file", "/tmp/it.json", "--iterations", "42",
			    "--profile-start-iteration-roundup", "1000", "--with-flops", NULL};
	CHECK_INT(dyno_at(&f, 0, a2, &out, &err), 0);
	static const char w2[] =
		"\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": \"ACTIVITIES_LOG_FILE=/tmp/it.json\\n"
		"PROFILE_START_ITERATION=0\\nPROFILE_START_ITERATION_ROUNDUP=1000\\nACTIVITIES_ITERATIONS=42\\n"
		"PROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=true\\n"
		"PROFILE_WITH_MODULES=false\",\n    \"job_id\": 0,\n    \"pids\": [0],\n    \"process_limit\": 3\n}";
	check_one_request(&f, w2, sizeof w2 - 1);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

/* Issue #38 item 3: with --profile-memory PyTorch writes a CUDA memory
 * snapshot and no trace, whatever trace options come with it.  dyno says so
 * before the request goes (the request keeps upstream's bytes: tested
 * above), and --wait waits for the snapshot, never for the trace file. */
TEST(cli_gputrace_profile_memory_says_what_comes)
{
	/* a pid no process of this machine has: the snapshot path is the test's */
	int64_t pid = 2000000000 + (int64_t)(getpid() % 100000000);
	char snap[80], named[128];
	snprintf(snap, sizeof snap, "/tmp/memory_snapshot_%lld.pickle", (long long)pid);
	snprintf(named, sizeof named, "%s (pid %lld)", snap, (long long)pid);
	unlink(snap);
	const char *args[] = {"gputrace", "--log-file", "/tmp/dyno-test-pm.json", "--profile-memory", "--record-shapes",
			      "--with-stacks", "--wait", "--wait-timeout-s", "0.3", NULL};
	static const char note[] =
		"dyno gputrace: note: with --profile-memory PyTorch writes a CUDA memory snapshot, "
		"/tmp/memory_snapshot_<pid>.pickle, and no trace (nothing at /tmp/dyno-test-pm.json); --record-shapes, "
		"--with-stacks have no effect with it\n";
	struct fake_daemon f;
	struct buf out = BUF_INIT, err = BUF_INIT;
	/* no snapshot yet: the wait names it as the file that did not come */
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	fake_add_proc(&f, pid, 1, 1000);
	CHECK_INT(dyno_at(&f, 0, args, &out, &err), 1);
	CHECK(strstr(err.data, note) != NULL);
	CHECK(strstr(err.data, named) != NULL);
	CHECK(strstr(out.data, "dyno-test-pm_") == NULL && strstr(err.data, "dyno-test-pm_") == NULL);
	fake_stop(&f);
	/* the note is said before the request goes: a daemon that is not there */
	buf_reset(&out);
	buf_reset(&err);
	CHECK(dyno_at(NULL, 0, args, &out, &err) != 0);
	CHECK(strstr(err.data, note) != NULL);
	/* the snapshot written: --wait sees it */
	FILE *sf = fopen(snap, "w");
	REQUIRE(sf);
	fputs("x", sf);
	fclose(sf);
	buf_reset(&out);
	buf_reset(&err);
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	fake_add_proc(&f, pid, 1, 1000);
	CHECK_INT(dyno_at(&f, 0, args, &out, &err), 0);
	char written[128];
	snprintf(written, sizeof written, "written: %s (1 bytes)", snap);
	CHECK(strstr(out.data, written) != NULL);
	CHECK(strstr(out.data, "all 1 trace file written") != NULL);
	fake_stop(&f);
	unlink(snap);
	/* plain --profile-memory: the snapshot said, no option named */
	buf_reset(&out);
	buf_reset(&err);
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	fake_add_proc(&f, pid, 1, 1000);
	const char *plain[] = {"gputrace", "--log-file", "/tmp/dyno-test-pm.json", "--profile-memory", NULL};
	CHECK_INT(dyno_at(&f, 0, plain, &out, &err), 0);
	CHECK(strstr(err.data, "and no trace (nothing at /tmp/dyno-test-pm.json)\n") != NULL);
	CHECK(strstr(err.data, "no effect") == NULL);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_gputrace_refuses_bad_input_before_sending)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	const char *bad[][8] = {
		{"gputrace", NULL},                                               /* no --log-file */
		{"gputrace", "--log-file", "/tmp/a\"b.json", NULL},               /* would be invalid JSON */
		{"gputrace", "--log-file", "/tmp/a=b.json", NULL},                /* Kineto splits on '=' */
		{"gputrace", "--log-file", "/tmp/a\nb.json", NULL},               /* control character */
		{"gputrace", "--log-file", "/tmp/\xff.json", NULL},               /* not UTF-8 */
		{"gputrace", "--log-file", "/tmp/a.json", "--pids", "1];x", NULL},  /* pasted verbatim upstream */
		{"gputrace", "--log-file", "/tmp/a.json", "--pids", "", NULL},
		{"gputrace", "--log-file", "/tmp/a.json", "--profile-memory", "--iterations", "3", NULL},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct buf out = BUF_INIT, err = BUF_INIT;
		CHECK_INT(dyno_at(&f, 0, bad[i], &out, &err), 2);
		CHECK(strstr(err.data, "dyno gputrace: ") != NULL);
		buf_free(&out);
		buf_free(&err);
	}
	CHECK_INT(f.nreqs, 0);
	fake_stop(&f);
}

TEST(cli_bad_answers_are_clear_errors)
{
	struct {
		enum fake_mode mode;
		const char *msg;
	} cases[] = {
		{FAKE_CLOSE, "closed the connection without answering"},
		{FAKE_NEG_LEN, "invalid answer length -5"},
		{FAKE_HUGE_LEN, "invalid answer length 2147483647"},
		{FAKE_TRUNCATED, "after 10 of the 100 announced answer bytes"},
		{FAKE_SHORT_PREFIX, "inside the length prefix"},
		{FAKE_GARBAGE, "answer is not JSON"},
		{FAKE_SILENT, "no complete answer within 500 ms (not a byte back: a busy daemon, or not a dynolog RPC port"},
	};
	const char *cmds[][6] = {
		{"status", "--timeout-s", "0.5", NULL},
		{"version", "--timeout-s", "0.5", NULL},
		{"dcgm-pause", "--timeout-s", "0.5", NULL},
		{"gputrace", "--log-file", "/tmp/x.json", "--timeout-s", "0.5", NULL},
		{"metrics", "--timeout-s", "0.5", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
			struct fake_daemon f;
			REQUIRE(fake_start(&f, 1, cases[i].mode));
			struct buf out = BUF_INIT, err = BUF_INIT;
			int rc = dyno_at(&f, 0, cmds[c], &out, &err);
			if (rc != 1 || !strstr(err.data, cases[i].msg))
				test_fail(__FILE__, __LINE__, "mode %d, %s: rc %d, stderr [%s], want [%s]", (int)cases[i].mode,
					  cmds[c][0], rc, err.data, cases[i].msg);
			fake_stop(&f);
			buf_free(&out);
			buf_free(&err);
		}
}

TEST(cli_gputrace_refuses_start_time_in_the_past)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *a1[] = {"gputrace", "--log-file", "/tmp/p.json", "--profile-start-time", "1", NULL};
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 2);
	CHECK(strstr(err.data, "--profile-start-time 1 (1970-01-01T00:00:00.001Z) is in the past") != NULL);
	char soon[32];
	snprintf(soon, sizeof soon, "%lld", (long long)(clock_wall_ns() / NS_PER_MS + 2000));
	const char *a2[] = {"gputrace", "--log-file", "/tmp/p.json", "--profile-start-time", soon, NULL};
	buf_reset(&err);
	CHECK_INT(dyno_at(&f, 0, a2, &out, &err), 2);
	CHECK(strstr(err.data, "is too close") != NULL);
	CHECK_INT(f.nreqs, 0); /* nothing was sent */
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_gputrace_config_not_printed_before_a_connect_error)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	int port = f.ports[0];
	fake_stop(&f);
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *a1[] = {"dyno", "gputrace", "--hostname", "127.0.0.1", "--port", ps, "--log-file", "/tmp/c.json", NULL};
	CHECK_INT(run_dyno(a1, &out, &err, 30), 1);
	CHECK(strstr(err.data, "Connection refused") != NULL);
	CHECK(strstr(out.data, "Kineto config") == NULL);
	/* --verbose shows it first, as upstream */
	char *a2[] = {"dyno", "gputrace", "--hostname", "127.0.0.1", "--port", ps, "--log-file", "/tmp/c.json",
		      "--verbose", NULL};
	buf_reset(&out);
	CHECK_INT(run_dyno(a2, &out, &err, 30), 1);
	CHECK(strstr(out.data, "Kineto config = \nACTIVITIES_LOG_FILE=/tmp/c.json\n") == out.data);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_refused_and_unresolvable)
{
	/* a port nobody listens on: bind one, close it */
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	int port = f.ports[0];
	fake_stop(&f);
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *a1[] = {"dyno", "status", "--hostname", "127.0.0.1", "--port", ps, NULL};
	CHECK_INT(run_dyno(a1, &out, &err, 30), 1);
	CHECK(strstr(err.data, "Connection refused") != NULL);
	buf_reset(&err);
	char *a2[] = {"dyno", "version", "--hostname", "no-such-host.invalid", NULL};
	CHECK_INT(run_dyno(a2, &out, &err, 30), 1);
	CHECK(strstr(err.data, "cannot resolve 'no-such-host.invalid'") != NULL);
	buf_reset(&err);
	char *a3[] = {"dyno", "version", "--hostnames", "a b", NULL};
	CHECK_INT(run_dyno(a3, &out, &err, 30), 0 + 1); /* "a" and "b" both unresolvable */
	buf_reset(&err);
	char *a4[] = {"dyno", "version", "--hostnames", "h:99999", NULL};
	CHECK_INT(run_dyno(a4, &out, &err, 30), 2);
	CHECK(strstr(err.data, "port must be 1..65535") != NULL);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_explains_why_nothing_matched)
{
	/* processes registered under a SLURM job, request with the default job 0 */
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_EXTENDED));
	snprintf(f.job, sizeof f.job, "4242");
	fake_add_proc(&f, 500, 400, 1200);
	fake_add_proc(&f, 501, 400, 1300);
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *a1[] = {"gputrace", "--log-file", "/tmp/x.json", NULL};
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 0);
	CHECK(strstr(out.data, "No processes were matched, please check --job-id or --pids flags\n") != NULL);
	CHECK(strstr(out.data, "no registered process has job id 0; registered: job 4242 (2 processes)") != NULL);
	CHECK(strstr(out.data, "--job-id JOB") != NULL);
	/* right job, pids in nobody's ancestry */
	buf_reset(&out);
	const char *a2[] = {"gputrace", "--log-file", "/tmp/x.json", "--job-id", "4242", "--pids", "77",
			    "--fail-on-no-process", NULL};
	CHECK_INT(dyno_at(&f, 0, a2, &out, &err), 1);
	CHECK(strstr(out.data, "job 4242 has 2 processes, none with any of --pids 77") != NULL);
	CHECK(strstr(err.data, "Error: No processes were matched") != NULL);
	/* the parent pid matches both children */
	buf_reset(&out);
	const char *a3[] = {"gputrace", "--log-file", "/tmp/x.json", "--job-id", "4242", "--pids", "400", NULL};
	CHECK_INT(dyno_at(&f, 0, a3, &out, &err), 0);
	CHECK(strstr(out.data, "Matched 2 processes") != NULL);
	CHECK(strstr(out.data, "    /tmp/x_500.json\n    /tmp/x_501.json\n") != NULL);
	/* status lists them, now pending */
	buf_reset(&out);
	const char *a4[] = {"status", NULL};
	CHECK_INT(dyno_at(&f, 0, a4, &out, &err), 0);
	CHECK(strstr(out.data, "processes: 2 registered (0 idle, 2 pending, 0 busy)") != NULL);
	CHECK(strstr(out.data, "500        4242         pending  1.2s ago   500<400") != NULL);
	fake_stop(&f);

	/* an upstream daemon: no getProcesses, said plainly, not an error */
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	buf_reset(&out);
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 0);
	CHECK(strstr(out.data, "does not list its processes") != NULL);
	buf_reset(&out);
	CHECK_INT(dyno_at(&f, 0, a4, &out, &err), 0);
	CHECK(strstr(out.data, "processes: not listed (daemon without the getProcesses extension)") != NULL);
	/* gputrace + getStatus (may it ask getProcesses to explain the
	 * no-match? no), then status's getStatus alone: the upstream daemon
	 * did not list getProcesses among its extensions, so it is never sent
	 * (upstream would log "Unknown RPC call getProcesses" every time) */
	CHECK_INT(f.nreqs, 3);
	CHECK(f.nreqs == 3 && strcmp(f.reqs[1].body.data, "{\"fn\":\"getStatus\",\"extensions\":true}") == 0);
	CHECK(f.nreqs == 3 && strcmp(f.reqs[2].body.data, "{\"fn\":\"getStatus\",\"extensions\":true}") == 0);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

/* How many recorded requests name fn (a substring of the body). */
static size_t count_requests(struct fake_daemon *f, const char *fn)
{
	pthread_mutex_lock(&f->mu);
	size_t c = 0;
	for (size_t i = 0; i < f->nreqs; i++)
		c += strstr(f->reqs[i].body.data, fn) != NULL;
	pthread_mutex_unlock(&f->mu);
	return c;
}

/* Issue #15 item 8: gputrace asks for getProcesses only where getStatus
 * lists it, in every path that wants the list: nothing matched, matched
 * with --wait (are they alive?), files missing after --wait (why?). */
TEST(cli_gputrace_no_extension_to_upstream)
{
	const char *none[] = {"gputrace", "--log-file", "/tmp/x.json", "--job-id", "77", NULL};
	const char *match[] = {"gputrace", "--log-file", "/tmp/x.json", NULL};
	const char *wait[] = {"gputrace", "--log-file", "/nonexistent-dyno-test/x.json", "--wait",
			      "--wait-timeout-s", "0.3", NULL};
	const char *const *paths[] = {none, match, wait};
	const int want_rc[] = {0, 0, 1};
	for (int mode = 0; mode < 2; mode++)
		for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
			/* a fresh daemon each time: a triggered process stays pending */
			struct fake_daemon f;
			REQUIRE(fake_start(&f, 1, mode ? FAKE_EXTENDED : FAKE_UPSTREAM));
			fake_add_proc(&f, 500, 400, 1000);
			struct buf out = BUF_INIT, err = BUF_INIT;
			CHECK_INT(dyno_at(&f, 0, paths[i], &out, &err), want_rc[i]);
			size_t asked = count_requests(&f, "getProcesses");
			if (mode == 0 && asked)
				test_fail(__FILE__, __LINE__, "path %zu sent getProcesses to an upstream daemon", i);
			/* ours is still asked where the list explains something */
			if (mode == 1 && i != 1 && !asked)
				test_fail(__FILE__, __LINE__, "path %zu did not ask our daemon for its processes", i);
			/* the probe: getStatus with our key, which upstream ignores */
			if (i != 1)
				CHECK(count_requests(&f, GET_STATUS_EXT_REQUEST) >= 1);
			if (mode == 0 && i == 0)
				CHECK(strstr(out.data, "does not list its processes") != NULL);
			if (mode == 1 && i == 0)
				CHECK(strstr(out.data, "no registered process has job id 77") != NULL);
			if (i == 2)
				CHECK(strstr(err.data, "x_500.json (pid 500)") != NULL);
			buf_free(&out);
			buf_free(&err);
			fake_stop(&f);
		}
}

TEST(cli_metrics_extension)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_EXTENDED));
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *a1[] = {"metrics", "--since", "60", "--names", "cpu_*,uptime", NULL};
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 0);
	/* getStatus (is getMetrics listed?), then the request */
	CHECK_INT(f.nreqs, 2);
	CHECK(f.nreqs == 2 && strcmp(f.reqs[0].body.data, GET_STATUS_EXT_REQUEST) == 0);
	CHECK(f.nreqs == 2 && strcmp(f.reqs[1].body.data,
				     "{\"fn\":\"getMetrics\",\"names\":[\"cpu_*\",\"uptime\"],\"since_s\":60}") == 0);
	CHECK(strstr(out.data, "cpu_util") != NULL);
	CHECK(strstr(out.data, "      2           37.5           12.5             25           37.5") != NULL);
	fake_stop(&f);
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	buf_reset(&err);
	const char *a2[] = {"metrics", NULL};
	CHECK_INT(dyno_at(&f, 0, a2, &out, &err), 1);
	CHECK(strstr(err.data, "it has no getMetrics (upstream dynolog)") != NULL);
	/* only the getStatus probe: upstream would log "Unknown RPC call getMetrics" */
	check_one_request(&f, LIT(GET_STATUS_EXT_REQUEST));
	CHECK_INT(count_requests(&f, "getMetrics"), 0);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_answers_in_pieces_and_large)
{
	/* one byte at a time, the length prefix split over four reads */
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_DRIP));
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *a1[] = {"version", NULL};
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 0);
	CHECK(strstr(out.data, "response length = 19\nresponse = {\"version\":\"0.6.0\"}\n") != NULL);
	fake_stop(&f);
	/* a 5 MB answer */
	REQUIRE(fake_start(&f, 1, FAKE_EXTENDED));
	f.metric_samples = 200000;
	buf_reset(&out);
	const char *a2[] = {"metrics", "--names", "big", NULL};
	CHECK_INT(dyno_at(&f, 0, a2, &out, &err), 0);
	CHECK(strstr(out.data, "big                                       200000         199999") != NULL);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_daemon_refusals)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_FAILED));
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *a1[] = {"gputrace", "--log-file", "/tmp/x.json", NULL};
	CHECK_INT(dyno_at(&f, 0, a1, &out, &err), 1);
	CHECK(strstr(out.data, "response = {\"status\":\"failed\"}") != NULL);
	CHECK(strstr(err.data, "daemon refused the request: status \"failed\"") != NULL);
	buf_reset(&err);
	const char *a2[] = {"dcgm-resume", NULL};
	CHECK_INT(dyno_at(&f, 0, a2, &out, &err), 1);
	CHECK(strstr(err.data, "daemon answered status \"failed\"") != NULL);
	buf_reset(&err);
	const char *a3[] = {"status", NULL};
	CHECK_INT(dyno_at(&f, 0, a3, &out, &err), 1);
	CHECK(strstr(err.data, "answer has no integer \"status\"") != NULL);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

TEST(cli_dispatcher_option_order)
{
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 1, FAKE_UPSTREAM));
	char port[16];
	snprintf(port, sizeof port, "--port=%d", f.ports[0]);
	struct buf out = BUF_INIT, err = BUF_INIT;
	/* upstream order with '=' forms, and options after the subcommand */
	char *a1[] = {"dyno", "--hostname=127.0.0.1", port, "version", NULL};
	CHECK_INT(run_dyno(a1, &out, &err, 30), 0);
	char *a2[] = {"dyno", "version", "--hostname", "127.0.0.1", port, NULL};
	CHECK_INT(run_dyno(a2, &out, &err, 30), 0);
	CHECK_INT(f.nreqs, 2);
	/* leading options without a known subcommand: usage error, no request */
	char *a3[] = {"dyno", "--hostname", "127.0.0.1", "nosuchcmd", NULL};
	CHECK_INT(run_dyno(a3, &out, &err, 30), 2);
	CHECK(strstr(err.data, "unknown command 'nosuchcmd'") != NULL);
	char *a4[] = {"dyno", "version", "extra", NULL};
	CHECK_INT(run_dyno(a4, &out, &err, 30), 2);
	char *a6[] = {"dyno", "--hostname", "h", "version", "--hostnames", "a,b", NULL};
	buf_reset(&err);
	CHECK_INT(run_dyno(a6, &out, &err, 30), 2);
	CHECK(strstr(err.data, "--hostname names one daemon") != NULL);
	char *a5[] = {"dyno", "help", "gputrace", NULL};
	buf_reset(&out);
	CHECK_INT(run_dyno(a5, &out, &err, 30), 0);
	CHECK(strstr(out.data, "--profile-start-iteration-roundup") != NULL);
	CHECK_INT(f.nreqs, 2);
	fake_stop(&f);
	buf_free(&out);
	buf_free(&err);
}

/* ---- --token-file ---- */

TEST(cli_token_goes_first_into_every_request)
{
	struct buf b = BUF_INIT;
	net_body_with_token(&b, "{\"fn\":\"getStatus\"}", 18, "s3cret\"\\x");
	CHECK_STR(b.data, "{\"token\":\"s3cret\\\"\\\\x\",\"fn\":\"getStatus\"}");
	buf_reset(&b);
	net_body_with_token(&b, "\n{\n    \"fn\": \"x\"\n}", 18, "abcdefgh"); /* upstream's pretty form */
	CHECK_STR(b.data, "\n{\"token\":\"abcdefgh\",\n    \"fn\": \"x\"\n}");
	buf_reset(&b);
	net_body_with_token(&b, "{ }", 3, "abcdefgh");
	CHECK_STR(b.data, "{\"token\":\"abcdefgh\" }");
	buf_free(&b);

	/* through dyno: the daemon sees the token in each request, fan-out too */
	struct fake_daemon f;
	REQUIRE(fake_start(&f, 2, FAKE_EXTENDED));
	char dir[] = "/tmp/dyno-token-XXXXXX", path[64];
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t", dir);
	FILE *fp = fopen(path, "w");
	REQUIRE(fp);
	fputs("correct-horse\n", fp);
	fclose(fp);
	struct buf out = BUF_INIT, err = BUF_INIT, hosts = BUF_INIT;
	CHECK_INT(dyno_at(&f, 0, (const char *const[]){"status", "--token-file", path, NULL}, &out, &err), 0);
	fake_hostnames(&f, &hosts);
	CHECK_INT(run_dyno((char *const[]){"dyno", "version", "--hostnames", hosts.data, "--token-file", path, NULL}, &out,
			   &err, 30),
		  0);
	pthread_mutex_lock(&f.mu);
	CHECK_INT(f.nreqs, 4);
	for (size_t i = 0; i < f.nreqs; i++)
		CHECK(strncmp(f.reqs[i].body.data, "{\"token\":\"correct-horse\",\"fn\":\"", 31) == 0);
	pthread_mutex_unlock(&f.mu);
	fake_stop(&f);
	unlink(path);
	rmdir(dir);
	buf_free(&out);
	buf_free(&err);
	buf_free(&hosts);
}

TEST(cli_token_file_checks)
{
	char dir[] = "/tmp/dyno-token-XXXXXX", path[64];
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t", dir);
	char tok[HOST_TOKEN_MAX + 1];
	struct buf e = BUF_INIT;
	struct {
		const char *text;
		const char *tok; /* NULL: refused */
	} cases[] = {
		{"abcdefgh", "abcdefgh"},
		{"abcdefgh \t\r\n\n", "abcdefgh"}, /* trailing whitespace stripped, like the daemon */
		{"  abc def gh\n", "  abc def gh"},
		{"abcdefg\n", NULL},               /* 7 bytes */
		{"abcd\xff\xfe" "efgh\n", NULL},   /* not UTF-8: could never match */
		{"\n\n\n\n\n\n\n\n\n", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		FILE *fp = fopen(path, "w");
		REQUIRE(fp);
		fputs(cases[i].text, fp);
		fclose(fp);
		buf_reset(&e);
		bool ok = hosts_token_load(path, tok, &e);
		CHECK(ok == (cases[i].tok != NULL));
		if (ok && cases[i].tok)
			CHECK_STR(tok, cases[i].tok);
		if (!ok)
			CHECK(strstr(e.data, path) != NULL);
	}
	buf_reset(&e);
	CHECK(!hosts_token_load(dir, tok, &e)); /* a directory */
	CHECK(strstr(e.data, "not a regular file"));
	unlink(path);
	buf_reset(&e);
	CHECK(!hosts_token_load(path, tok, &e)); /* missing */
	rmdir(dir);
	buf_free(&e);
}
