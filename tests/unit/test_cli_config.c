/*
 * test_cli_config.c - dyno's pure pieces, in-process: the Kineto config text
 * (spec §5.3, including upstream's own CLI unit-test cases), the trace file
 * names Kineto writes (§5.5), the --pids/--log-file checks, parsing a
 * getProcesses answer (and refusing malformed ones), and the explanations.
 */
#include "client/kineto_config.h"
#include "client/processes.h"
#include "test.h"

TEST(cli_config_text_layout)
{
	struct trace_opts o = TRACE_OPTS_INIT;
	struct buf b = BUF_INIT, e = BUF_INIT;
	o.log_file = "/tmp/t.json";
	o.profile_start_time = 1000;
	o.duration_ms = 42;
	o.record_shapes = o.with_stacks = o.with_modules = o.profile_memory = true;
	REQUIRE(kineto_config_build(&o, &b, &e));
	CHECK_STR(b.data, "ACTIVITIES_LOG_FILE=/tmp/t.json\nPROFILE_START_TIME=1000\nACTIVITIES_DURATION_MSECS=42\n"
			  "PROFILE_REPORT_INPUT_SHAPES=true\nPROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\n"
			  "PROFILE_MEMORY_DURATION_MSECS=42\nPROFILE_WITH_STACK=true\nPROFILE_WITH_FLOPS=false\n"
			  "PROFILE_WITH_MODULES=true");
	buf_reset(&b);
	struct trace_opts it = TRACE_OPTS_INIT;
	it.log_file = "/tmp/t.json";
	it.iterations = 42;
	it.start_iteration_roundup = 1000;
	REQUIRE(kineto_config_build(&it, &b, &e));
	CHECK(strstr(b.data, "\nPROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1000\nACTIVITIES_ITERATIONS=42\n"));
	CHECK(!strstr(b.data, "PROFILE_START_TIME"));
	CHECK(b.data[b.len - 1] != '\n');
	/* refusals */
	it.profile_memory = true;
	buf_reset(&b);
	CHECK(!kineto_config_build(&it, &b, &e));
	struct trace_opts none = TRACE_OPTS_INIT;
	CHECK(!kineto_config_build(&none, &b, &e));
	buf_free(&b);
	buf_free(&e);
}

/* Values that silently meant something else are refused: --iterations 0
 * (Kineto took duration mode), below -1, and a duration of 0 ms. */
TEST(cli_config_refuses_meaningless_values)
{
	struct buf b = BUF_INIT, e = BUF_INIT;
	struct trace_opts o = TRACE_OPTS_INIT;
	o.log_file = "/tmp/t.json";
	o.iterations = 0;
	CHECK(!kineto_config_build(&o, &b, &e));
	CHECK(strstr(e.data, "--iterations 0: a number of iterations (1 or more") != NULL);
	buf_reset(&e);
	o.iterations = -2;
	CHECK(!kineto_config_build(&o, &b, &e));
	buf_reset(&e);
	o.iterations = -1; /* the default: duration mode */
	o.duration_ms = 0;
	CHECK(!kineto_config_build(&o, &b, &e));
	CHECK(strstr(e.data, "--duration-ms 0: a trace of no duration") != NULL);
	buf_reset(&e);
	o.duration_ms = 1;
	CHECK(kineto_config_build(&o, &b, &e));
	buf_reset(&b);
	o.iterations = 3; /* iteration mode: no duration */
	o.duration_ms = 0;
	CHECK(kineto_config_build(&o, &b, &e));
	buf_free(&b);
	buf_free(&e);
}

TEST(cli_request_body)
{
	struct buf b = BUF_INIT;
	kineto_request_build("A=1\nB=2", 7, "1, 2", 9, &b);
	CHECK_STR(b.data, "\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": \"A=1\\nB=2\",\n    \"job_id\": 7,\n"
			  "    \"pids\": [1, 2],\n    \"process_limit\": 9\n}");
	buf_reset(&b);
	dcgm_pause_request_build(300, &b);
	CHECK_INT(b.len, 53);
	buf_free(&b);
}

TEST(cli_trace_paths)
{
	struct {
		const char *log;
		const char *want;
	} c[] = {
		{"/tmp/t.json", "/tmp/t_4242.json"},
		{"/tmp/a.pt.trace.json", "/tmp/a_4242.pt.trace.json"},
		{"/tmp/x.json.gz", "/tmp/x_4242.json.gz"},
		{"/tmp/a.json.b.json", "/tmp/a_4242.json.b.json"},
		{"/tmp/noext", "/tmp/noext"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct buf b = BUF_INIT;
		kineto_trace_path(c[i].log, 4242, false, &b);
		CHECK_STR(b.data, c[i].want);
		buf_free(&b);
	}
	struct buf b = BUF_INIT;
	kineto_trace_path("/tmp/t.json", 7, true, &b);
	CHECK_STR(b.data, "/tmp/memory_snapshot_7.pickle");
	buf_free(&b);
	CHECK(kineto_path_allowed_default("/tmp/x.json"));
	CHECK(!kineto_path_allowed_default("/tmp/../etc/x.json"));
	CHECK(!kineto_path_allowed_default("/data/x.json"));
}

TEST(cli_input_checks)
{
	struct buf e = BUF_INIT;
	const char *good_pids[] = {"0", "12,13", "12, 13", " 1 ", "2147483647"};
	for (size_t i = 0; i < sizeof good_pids / sizeof good_pids[0]; i++)
		CHECK(kineto_pids_check(good_pids[i], &e));
	const char *bad_pids[] = {"", ",", "1,", ",1", "1,,2", "-1", "1 2", "1;2", "2147483648", "99999999999999999999",
				  "0x10", "1]", "[1]"};
	for (size_t i = 0; i < sizeof bad_pids / sizeof bad_pids[0]; i++) {
		if (kineto_pids_check(bad_pids[i], &e))
			test_fail(__FILE__, __LINE__, "--pids '%s' accepted", bad_pids[i]);
	}
	CHECK(kineto_log_file_check("/tmp/résumé.json", &e));
	const char *bad_logs[] = {"", "/tmp/a\"b", "/tmp/a\\b", "/tmp/a=b", "/tmp/a#b", "/tmp/a\tb", "/tmp/\xc3", "/tmp/\x7f"};
	for (size_t i = 0; i < sizeof bad_logs / sizeof bad_logs[0]; i++) {
		if (kineto_log_file_check(bad_logs[i], &e))
			test_fail(__FILE__, __LINE__, "--log-file '%s' accepted", bad_logs[i]);
	}
	buf_free(&e);
}

TEST(cli_processes_answer)
{
	static const char ok[] = "{\"count\":3,\"processes\":["
				 "{\"jobId\":\"42\",\"lastSeenMs\":1200,\"pid\":500,\"pids\":[500,400,1],\"state\":\"idle\"},"
				 "{\"jobId\":\"42\",\"lastSeenMs\":95000,\"pid\":501,\"pids\":[501,400],\"state\":\"busy\"},"
				 "{\"jobId\":\"7\",\"lastSeenMs\":10,\"pid\":9,\"pids\":[9],\"state\":\"pending\"}]}";
	struct proc_list l;
	struct buf e = BUF_INIT, out = BUF_INIT;
	REQUIRE(processes_parse(ok, sizeof ok - 1, &l, &e));
	REQUIRE(l.n == 3);
	CHECK_STR(l.p[0].job, "42");
	CHECK_INT(l.p[0].npids, 3);
	CHECK_INT(l.p[0].pids[1], 400);
	CHECK_STR(l.p[2].state, "pending");
	processes_format(&l, "", &out);
	CHECK(strstr(out.data, "501        42           busy     95.0s ago  501<400  (stale: probably exited)\n"));
	buf_reset(&out);
	processes_explain(&l, 0, "0", "", &out);
	CHECK(strstr(out.data, "no registered process has job id 0; registered: job 42 (2 processes) job 7 (1 process)"));
	buf_reset(&out);
	processes_explain(&l, 42, "77,78", "", &out);
	CHECK(strstr(out.data, "job 42 has 2 processes, none with any of --pids 77,78 in its ancestry"));
	CHECK(strstr(out.data, ": 500 501\n"));
	buf_reset(&out);
	processes_explain(&l, 42, "400", "", &out); /* would match: a race */
	CHECK(strstr(out.data, "try again"));
	processes_free(&l);
	struct proc_list empty;
	REQUIRE(processes_parse("{\"count\":0,\"processes\":[]}", 26, &empty, &e));
	buf_reset(&out);
	processes_explain(&empty, 0, "0", "", &out);
	CHECK(strstr(out.data, "no process is registered with this daemon"));
	processes_free(&empty);

	const char *bad[] = {
		"",
		"[]",
		"{\"error\":\"boom\"}",
		"{\"processes\":{}}",
		"{\"processes\":[1]}",
		"{\"processes\":[{\"jobId\":4,\"lastSeenMs\":1,\"pid\":1,\"pids\":[1],\"state\":\"idle\"}]}",
		"{\"processes\":[{\"jobId\":\"4\",\"lastSeenMs\":1,\"pid\":1,\"pids\":[\"1\"],\"state\":\"idle\"}]}",
		"{\"processes\":[{\"jobId\":\"4\",\"lastSeenMs\":1,\"pid\":1,\"pids\":[1],\"state\":\"a-very-long-state-name\"}]}",
		"{\"processes\":[{\"jobId\":\"4\",\"lastSeenMs\":1.5,\"pid\":1,\"pids\":[1],\"state\":\"idle\"}]}",
		"{\"processes\":[{\"jobId\":\"4\",\"lastSeenMs\":1,\"pid\":1,\"pids\":[1],\"state\":\"idle\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct proc_list b;
		buf_reset(&e);
		if (processes_parse(bad[i], strlen(bad[i]), &b, &e)) {
			test_fail(__FILE__, __LINE__, "accepted: %s", bad[i]);
			processes_free(&b);
		}
		CHECK(e.len > 0);
	}
	buf_free(&e);
	buf_free(&out);
}

TEST(cli_processes_truncated_answer)
{
	static const char t[] = "{\"count\":5000,\"processes\":["
				"{\"jobId\":\"42\",\"lastSeenMs\":1200,\"pid\":500,\"pids\":[500,1],\"state\":\"idle\"}],"
				"\"truncated\":true}";
	struct proc_list l;
	struct buf e = BUF_INIT, out = BUF_INIT;
	REQUIRE(processes_parse(t, sizeof t - 1, &l, &e));
	CHECK_INT(l.n, 1);
	CHECK_INT(l.total, 5000);
	CHECK(l.truncated);
	processes_format(&l, "  ", &out);
	CHECK(strstr(out.data, "  (the daemon listed 1 of its 5000 processes)\n"));
	buf_reset(&out);
	processes_explain(&l, 7, "0", "", &out);
	CHECK(strstr(out.data, "the daemon listed only 1 of its 5000 processes"));
	processes_free(&l);
	/* a whole list: no note */
	REQUIRE(processes_parse("{\"count\":0,\"processes\":[]}", 26, &l, &e));
	CHECK(!l.truncated);
	buf_reset(&out);
	processes_format(&l, "", &out);
	CHECK(!strstr(out.data, "listed"));
	processes_free(&l);
	buf_free(&e);
	buf_free(&out);
}
