/*
 * test_trigger.c - the daemon's triggers: the condition parser and its
 * window counted in ticks (trigger_cond.c), the trigger file as an input
 * boundary (trigger_store.c), and the running module on synthetic metric
 * streams (trigger.c): it fires exactly when the condition has held for
 * its window, never more often than the per-job rate limit (in ticks),
 * hands the config to the registered process through the on-demand path
 * (the registry delivers it on the next poll), keeps cadences, refuses a
 * bad definition, and its file survives a restart.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "daemon/frame.h"
#include "daemon/rpc/gpusnoop_rpc.h"
#include "daemon/ipc/registry.h"
#include "daemon/ipc/tracing.h"
#include "daemon/trigger/trigger.h"
#include "daemon/trigger/trigger_cond.h"
#include "daemon/trigger/trigger_peers.h"
#include "daemon/trigger/trigger_store.h"
#include "test.h"

static bool cond(const char *s, struct trig_cond *c, struct buf *err)
{
	buf_reset(err);
	return trig_cond_parse(s, strlen(s), c, err);
}

TEST(trigger_cond_parse_and_format)
{
	struct trig_cond c;
	struct buf err = BUF_INIT, out = BUF_INIT;
	REQUIRE(cond("sm_active_ratio.0 < 0.2 for 60s", &c, &err));
	CHECK_STR(c.key, "sm_active_ratio.0");
	CHECK_INT(c.op, TRIG_LT);
	CHECK(c.value == 0.2);
	CHECK_INT(c.for_s, 60);
	trig_cond_format(&c, &out);
	CHECK_STR(out.data, "sm_active_ratio.0 < 0.2 for 60s");
	REQUIRE(cond("  cpu_iowait>=30   for 5m ", &c, &err));
	CHECK_INT(c.op, TRIG_GE);
	CHECK_INT(c.for_s, 300);
	REQUIRE(cond("x != -1e3", &c, &err));
	CHECK_INT(c.for_s, 0);
	CHECK(c.value == -1000);
	REQUIRE(cond("rx_bytes.eth0 == 0 for 2h", &c, &err));
	CHECK_INT(c.for_s, 7200);
	/* every rejection says where */
	CHECK(!cond("", &c, &err) && strstr(err.data, "column 1: a metric key"));
	CHECK(!cond("cpu_iowait => 3", &c, &err) && strstr(err.data, "column 12"));
	CHECK(!cond("cpu_iowait > abc", &c, &err) && strstr(err.data, "column 14: a number"));
	CHECK(!cond("cpu_iowait > 3 during 5s", &c, &err) && strstr(err.data, "column 16"));
	CHECK(!cond("cpu_iowait > 3 for 5x", &c, &err) && strstr(err.data, "a duration"));
	CHECK(!cond("cpu_iowait > 3 for 8d", &c, &err) && strstr(err.data, "at most 7 days"));
	CHECK(!cond("cpu_iowait > 3 for 5s now", &c, &err) && strstr(err.data, "unexpected text"));
	CHECK(!cond("cpu_iowait > 1e999", &c, &err));
	CHECK(!cond("cpu iowait > 3", &c, &err));
	char longkey[200];
	memset(longkey, 'k', 150);
	strcpy(longkey + 150, " > 1");
	CHECK(!cond(longkey, &c, &err) && strstr(err.data, "longer than"));
	int64_t d;
	CHECK(trig_duration_parse("90", 2, 1000, &d) && d == 90);
	CHECK(trig_duration_parse("1d", 2, 86400, &d) && d == 86400);
	CHECK(!trig_duration_parse("1d", 2, 86399, &d));
	CHECK(!trig_duration_parse("99999999999999999999", 20, INT64_MAX, &d));
	CHECK(!trig_duration_parse("s", 1, 100, &d));
	buf_free(&err);
	buf_free(&out);
}

TEST(trigger_window_counts_ticks)
{
	struct trig_cond c;
	struct buf err = BUF_INIT;
	REQUIRE(cond("k < 0.2 for 3s", &c, &err));
	struct trig_window w = TRIG_WINDOW_INIT;
	/* 1 s ticks: the third consecutive true sample completes the window */
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	CHECK(trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	/* a false sample restarts it */
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.5, true));
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	/* the key absent from its own collector's tick: unavailable, not true */
	CHECK(!trig_window_step(&c, &w, 0, 1, false, 0, true));
	CHECK_INT(w.held_s, 0);
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	/* other collectors' ticks without the key change nothing */
	CHECK(!trig_window_step(&c, &w, 3, 5, false, 0, true));
	CHECK_INT(w.held_s, 1);
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	CHECK(trig_window_step(&c, &w, 0, 1, true, 0.1, true));
	/* the gate (a registered job) false: not held */
	CHECK(!trig_window_step(&c, &w, 0, 1, true, 0.1, false));
	CHECK_INT(w.held_s, 0);
	/* a 5 s collector: one sample covers 5 s */
	struct trig_window w5 = TRIG_WINDOW_INIT;
	CHECK(trig_window_step(&c, &w5, 2, 5, true, 0.0, true));
	/* NaN is never true */
	struct trig_cond ne;
	REQUIRE(cond("k != 1", &ne, &err));
	struct trig_window wn = TRIG_WINDOW_INIT;
	CHECK(!trig_window_step(&ne, &wn, 0, 1, true, 0.0 / 0.0, true));
	CHECK(trig_window_step(&ne, &wn, 0, 1, true, 2, true));
	buf_free(&err);
}

static bool parse_def(const char *js, struct trig_def *d, struct buf *err)
{
	struct json_doc doc;
	struct json_error je;
	buf_reset(err);
	if (!json_parse(js, strlen(js), &doc, &je)) {
		buf_puts(err, "bad test JSON");
		memset(d, 0, sizeof *d);
		return false;
	}
	bool ok = trig_def_parse(doc.root, d, err);
	json_doc_free(&doc);
	return ok;
}

TEST(trigger_definitions_are_checked)
{
	struct trig_def d;
	struct buf err = BUF_INIT;
	static const struct {
		const char *js, *why;
	} bad[] = {
		{"[]", "a JSON object"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"whn\":\"k > 1\"}", "unknown member \"whn\""},
		{"{\"config\":\"X=1\"}", "id:"},
		{"{\"id\":\"a b\",\"config\":\"X=1\"}", "id:"},
		{"{\"id\":\"a\"}", "config:"},
		{"{\"id\":\"a\",\"config\":\"\"}", "config:"},
		{"{\"id\":\"a\",\"config\":\"X=\\u0000\"}", "config:"},
		{"{\"id\":\"a\",\"config\":\"X=\\u0001\"}", "config: control character at byte 2"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"when\":\"k > 1\",\"every_s\":60}", "not both"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"when\":\"k >\"}", "when: column"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"every_s\":0}", "every_s:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"every_s\":\"60\"}", "every_s:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"job\":\"12a\"}", "job:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"while_job\":true}", "while_job:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"when\":\"k>1\",\"while_job\":1}", "while_job:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"min_interval_s\":-1}", "min_interval_s:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"process_limit\":0}", "process_limit:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"gpusnoop_s\":5}", "gpusnoop_log:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"gpusnoop_s\":5,\"gpusnoop_log\":\"rel\"}", "gpusnoop_log:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"gpusnoop_log\":\"/tmp/x\"}", "without gpusnoop_s"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"localhost:1778\"}", "\"localhost:1778\" is not ADDR[:PORT]"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"10.0.0.1:0\"}", "peers:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"10.0.0.1:65536\"}", "peers:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"10.0.0.1:1x\"}", "peers:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"[::1\"}", "peers:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"[::1]x\"}", "peers:"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"10.0.0.1,,10.0.0.2\"}", "\"\" is not"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"\"}", "peers: 1 to"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers_delay_s\":5}", "without peers"},
		{"{\"id\":\"a\",\"config\":\"X=1\",\"peers\":\"10.0.0.1\",\"peers_delay_s\":0}", "peers_delay_s:"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		bool ok = parse_def(bad[i].js, &d, &err);
		if (ok || !strstr(err.data, bad[i].why))
			test_fail(__FILE__, __LINE__, "%s: %s (wanted \"%s\")", bad[i].js, ok ? "accepted" : err.data,
				  bad[i].why);
		trig_def_free(&d);
	}
	/* a good one comes back as it went in (canonical when) */
	REQUIRE(parse_def("{\"id\":\"low-sm\",\"when\":\"sm_active_ratio.0<0.2 for 1m\",\"job\":\"42\",\"while_job\":true,"
			  "\"config\":\"ACTIVITIES_LOG_FILE=/tmp/t.json\",\"min_interval_s\":600,\"process_limit\":2,"
			  "\"gpusnoop_s\":10,\"gpusnoop_log\":\"/tmp/snoop\"}",
			  &d, &err));
	CHECK_INT(d.kind, TRIG_METRIC);
	struct buf out = BUF_INIT;
	struct jw w;
	jw_init(&w, &out);
	trig_def_write(&d, &w);
	CHECK_STR(out.data, "{\"id\":\"low-sm\",\"when\":\"sm_active_ratio.0 < 0.2 for 60s\",\"job\":\"42\",\"while_job\":true,"
			    "\"config\":\"ACTIVITIES_LOG_FILE=/tmp/t.json\",\"min_interval_s\":600,\"process_limit\":2,"
			    "\"gpusnoop_s\":10,\"gpusnoop_log\":\"/tmp/snoop\"}");
	trig_def_free(&d);
	/* peers: numeric, default port and delay; 64 at most */
	REQUIRE(parse_def("{\"id\":\"p\",\"config\":\"X=1\",\"peers\":\"10.0.0.1,[fd00::3]:1779,127.0.0.1:5\"}", &d, &err));
	buf_reset(&out);
	jw_init(&w, &out);
	trig_def_write(&d, &w);
	CHECK(strstr(out.data, "\"peers\":\"10.0.0.1,[fd00::3]:1779,127.0.0.1:5\",\"peers_delay_s\":20}") != NULL);
	trig_def_free(&d);
	struct buf many = BUF_INIT;
	for (int i = 0; i < 65; i++)
		buf_printf(&many, "%s10.0.0.%d", i ? "," : "", i);
	buf_reset(&err);
	CHECK(trig_peers_check(many.data, many.len - strlen(",10.0.0.64"), &err)); /* 64 */
	CHECK(!trig_peers_check(many.data, many.len, &err) && strstr(err.data, "more than 64"));
	buf_free(&many);
	REQUIRE(parse_def("{\"id\":\"c\",\"every_s\":300,\"config\":\"X=1\"}", &d, &err));
	CHECK_INT(d.kind, TRIG_CADENCE);
	CHECK_INT(d.min_interval_s, TRIG_DEFAULT_MIN_INTERVAL_S);
	trig_def_free(&d);
	buf_free(&out);
	buf_free(&err);
}

static bool file_parse(const char *text, size_t max, struct trig_file *f, struct buf *err)
{
	buf_reset(err);
	return trig_file_parse("t.json", text, strlen(text), max, f, err);
}

TEST(trigger_file_boundary)
{
	struct trig_file f;
	struct buf err = BUF_INIT, text = BUF_INIT;
	CHECK(!file_parse("{\"version\":1,\"triggers\":[}", 8, &f, &err) && strstr(err.data, "t.json: byte 25 (line 1, column 26)"));
	CHECK(!file_parse("[]", 8, &f, &err) && strstr(err.data, "a JSON object"));
	CHECK(!file_parse("{\"version\":2,\"triggers\":[]}", 8, &f, &err) && strstr(err.data, "\"version\": 1"));
	CHECK(!file_parse("{\"version\":1}", 8, &f, &err) && strstr(err.data, "\"triggers\""));
	CHECK(!file_parse("{\"version\":1,\"next_fire\":-3,\"triggers\":[]}", 8, &f, &err) &&
	      strstr(err.data, "next_fire"));
	const char *two = "{\"version\":1,\"next_fire\":7,\"triggers\":[{\"id\":\"a\",\"config\":\"X=1\"},"
			  "{\"id\":\"b\",\"every_s\":60,\"config\":\"Y=2\"}]}";
	CHECK(!file_parse(two, 1, &f, &err) && strstr(err.data, "more than --trigger_max (1)"));
	CHECK(!file_parse("{\"version\":1,\"triggers\":[{\"id\":\"a\",\"config\":\"X=1\"},{\"id\":\"a\",\"config\":\"X=1\"}]}",
			  8, &f, &err) &&
	      strstr(err.data, "trigger 1 (\"a\"): id: the same id"));
	CHECK(!file_parse("{\"version\":1,\"triggers\":[{\"id\":\"ok\",\"config\":\"X=1\"},{\"id\":\"b\"}]}", 8, &f, &err) &&
	      strstr(err.data, "trigger 1 (\"b\"): config:"));
	REQUIRE(file_parse(two, 8, &f, &err));
	CHECK_INT(f.n, 2);
	CHECK_INT(f.next_fire, 7);
	/* written, read back: the same text */
	trig_file_text(&f, &text);
	char path[4096];
	snprintf(path, sizeof path, "%s/triggers.json", test_tmpdir());
	REQUIRE(trig_file_save(path, &text, &err));
	struct trig_file g;
	REQUIRE(trig_file_load(path, 8, &g, &err));
	struct buf again = BUF_INIT;
	trig_file_text(&g, &again);
	CHECK_STR(again.data, text.data);
	/* no temporary left behind */
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	CHECK(access(tmp, F_OK) != 0);
	trig_file_free(&g);
	/* missing: empty; a directory or a symlink: refused */
	snprintf(path, sizeof path, "%s/none.json", test_tmpdir());
	CHECK(trig_file_load(path, 8, &g, &err) && g.n == 0);
	buf_reset(&err);
	CHECK(!trig_file_load(test_tmpdir(), 8, &g, &err));
	snprintf(tmp, sizeof tmp, "%s/link.json", test_tmpdir());
	snprintf(path, sizeof path, "%s/triggers.json", test_tmpdir());
	REQUIRE(symlink(path, tmp) == 0);
	buf_reset(&err);
	CHECK(!trig_file_load(tmp, 8, &g, &err) && strstr(err.data, "link.json"));
	/* a directory that cannot be written: the save fails, says why */
	buf_reset(&err);
	CHECK(!trig_file_save("/proc/none/triggers.json", &text, &err) && strstr(err.data, "cannot create"));
	trig_file_free(&f);
	buf_free(&text);
	buf_free(&again);
	buf_free(&err);
}

/* ---------------- the module on synthetic streams ---------------- */

struct rig {
	struct tracing *tr;
	struct triggers *T;
	struct frame f;
};

static void rig_start(struct rig *r, const char *file)
{
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	struct buf err = BUF_INIT;
	r->tr = tracing_start(NULL, &tf, &err);
	REQUIRE(r->tr);
	struct trigger_flags gf = TRIGGER_FLAGS_DEFAULT;
	gf.file = file;
	gf.max = 4;
	r->T = triggers_start(NULL, &gf, r->tr, NULL, &err);
	if (!r->T)
		test_fail(__FILE__, __LINE__, "%s", err.data);
	REQUIRE(r->T);
	frame_init(&r->f);
	buf_free(&err);
}

static void rig_stop(struct rig *r)
{
	triggers_stop(r->T);
	tracing_stop(r->tr);
	frame_free(&r->f);
}

/* One kernel tick (src 0, 1 s) with key = v (NAN: absent). */
static void tick(struct rig *r, const char *key, double v)
{
	frame_reset(&r->f, 0);
	frame_int(&r->f, "uptime", 1);
	if (v == v)
		frame_float(&r->f, key, v);
	triggers_on_tick(&r->f, 0, 1, r->T);
}

static void call(struct rig *r, const char *fn, const char *req, struct buf *resp)
{
	struct json_doc doc;
	struct json_error je;
	buf_reset(resp);
	REQUIRE(json_parse(req, strlen(req), &doc, &je));
	REQUIRE(triggers_rpc_call(r->T, fn, doc.root, resp));
	json_doc_free(&doc);
}

/* A poll of process pid of job: returns the delivered activity config (or "") */
static const char *poll_proc(struct rig *r, int64_t job, int32_t pid)
{
	static char got[8192];
	struct reg_delivery d = {0};
	int32_t pids[1] = {pid};
	registry_poll(tracing_registry(r->tr), job, pids, 1, REG_ACTIVITIES | REG_EVENTS, 1000000000, &d);
	snprintf(got, sizeof got, "%s", d.act ? d.act : "");
	registry_delivery_free(&d);
	return got;
}

/* How many firings listTriggers holds for id. */
static int firings(struct rig *r, const char *id)
{
	struct buf resp = BUF_INIT, pat = BUF_INIT;
	call(r, "listTriggers", "{}", &resp);
	buf_printf(&pat, "\"trigger\":\"%s\"", id);
	int n = 0;
	for (const char *p = resp.data; (p = strstr(p, pat.data)); p += pat.len)
		n++;
	buf_free(&resp);
	buf_free(&pat);
	return n;
}

TEST(trigger_fires_exactly_under_its_condition)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct rig r;
	rig_start(&r, "");
	struct buf resp = BUF_INIT;
	call(&r, "addTrigger",
	     "{\"trigger\":{\"id\":\"low\",\"when\":\"sm_active_ratio.0 < 0.2 for 3s\",\"while_job\":true,"
	     "\"config\":\"ACTIVITIES_LOG_FILE=/tmp/low_{fire}.json\",\"min_interval_s\":10}}",
	     &resp);
	REQUIRE(strstr(resp.data, "\"status\":\"ok\""));
	/* no job registered: the condition does not hold, whatever the value */
	for (int i = 0; i < 5; i++)
		tick(&r, "sm_active_ratio.0", 0.1);
	CHECK_INT(firings(&r, "low"), 0);
	CHECK_STR(poll_proc(&r, 7, 100), ""); /* registers job 7 */
	/* 0.1, 0.1, 0.3 (breaks), then three lows: fires on the third */
	double stream[] = {0.1, 0.1, 0.3, 0.1, 0.1};
	for (size_t i = 0; i < 5; i++)
		tick(&r, "sm_active_ratio.0", stream[i]);
	CHECK_INT(firings(&r, "low"), 0);
	tick(&r, "sm_active_ratio.0", NAN); /* absent: unavailable, breaks the run */
	tick(&r, "sm_active_ratio.0", 0.1);
	tick(&r, "sm_active_ratio.0", 0.1);
	CHECK_INT(firings(&r, "low"), 0);
	tick(&r, "sm_active_ratio.0", 0.1);
	CHECK_INT(firings(&r, "low"), 1);
	/* the config reached the process through the on-demand path, {fire} replaced */
	const char *got = poll_proc(&r, 7, 100);
	CHECK(strstr(got, "ACTIVITIES_LOG_FILE=/tmp/low_0.json") != NULL);
	CHECK(strstr(got, "REQUEST_TRACE_ID=") != NULL);
	/* held on for 30 ticks: min_interval 10 s lets it fire at ticks +10, +20, +30 only */
	for (int i = 0; i < 30; i++)
		tick(&r, "sm_active_ratio.0", 0.05);
	CHECK_INT(firings(&r, "low"), 4);
	call(&r, "listTriggers", "{}", &resp);
	/* the firing clock: exactly 10 s (ticks) apart */
	const char *p = resp.data;
	int64_t prev = -1, n = 0;
	while ((p = strstr(p, "\"clock_s\":"))) {
		int64_t c = strtoll(p + 10, NULL, 10);
		if (prev >= 0 && c - prev != 10)
			test_fail(__FILE__, __LINE__, "firings %lld s apart: %s", (long long)(c - prev), resp.data);
		prev = c;
		n++;
		p++;
	}
	CHECK_INT(n, 4);
	CHECK(strstr(resp.data, "\"values\":{\"sm_active_ratio.0\":0.1}") != NULL);
	CHECK(strstr(resp.data, "\"why\":\"sm_active_ratio.0 = 0.1: sm_active_ratio.0 < 0.2 for 3s while a job runs\""));
	CHECK(strstr(resp.data, "\"result\":{\"busy\":0,\"matched\":1,\"triggered\":[100]}") != NULL);
	/* a value above never fires */
	for (int i = 0; i < 30; i++)
		tick(&r, "sm_active_ratio.0", 0.9);
	CHECK_INT(firings(&r, "low"), 4);
	buf_free(&resp);
	rig_stop(&r);
}

TEST(trigger_rate_limit_per_job_and_fire_rpc)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct rig r;
	rig_start(&r, "");
	struct buf resp = BUF_INIT;
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"m\",\"config\":\"X=1\",\"min_interval_s\":5}}", &resp);
	REQUIRE(strstr(resp.data, "\"status\":\"ok\""));
	/* nobody registered: recorded as such */
	call(&r, "fireTrigger", "{\"id\":\"m\"}", &resp);
	CHECK(strstr(resp.data, "\"error\":\"no registered process\"") != NULL);
	poll_proc(&r, 1, 10);
	poll_proc(&r, 2, 20);
	tick(&r, "k", 1);
	call(&r, "fireTrigger", "{\"id\":\"m\"}", &resp);
	CHECK(strstr(resp.data, "\"job\":\"1\"") && strstr(resp.data, "\"job\":\"2\""));
	CHECK(strstr(resp.data, "\"rate_limited\":[]") != NULL);
	/* again in the same tick and 4 ticks later: both jobs refused */
	call(&r, "fireTrigger", "{\"id\":\"m\"}", &resp);
	CHECK(strstr(resp.data, "\"firings\":[],\"rate_limited\":[\"1\",\"2\"]") != NULL);
	for (int i = 0; i < 4; i++)
		tick(&r, "k", 1);
	call(&r, "fireTrigger", "{\"id\":\"m\"}", &resp);
	CHECK(strstr(resp.data, "\"firings\":[]") != NULL);
	tick(&r, "k", 1);
	call(&r, "fireTrigger", "{\"id\":\"m\"}", &resp);
	CHECK(strstr(resp.data, "\"rate_limited\":[]") != NULL);
	CHECK_INT(firings(&r, "m"), 5);
	/* errors */
	call(&r, "fireTrigger", "{\"id\":\"nope\"}", &resp);
	CHECK(strstr(resp.data, "\"error\":\"fireTrigger: no trigger with this id\"") != NULL);
	call(&r, "fireTrigger", "{\"id\":3}", &resp);
	CHECK(strstr(resp.data, "\"status\":\"failed\"") != NULL);
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"m\",\"config\":\"X=1\"}}", &resp);
	CHECK(strstr(resp.data, "exists") != NULL);
	call(&r, "addTrigger", "{}", &resp);
	CHECK(strstr(resp.data, "addTrigger: a trigger must be a JSON object") != NULL);
	call(&r, "removeTrigger", "{\"id\":\"m\"}", &resp);
	CHECK_STR(resp.data, "{\"status\":\"ok\"}");
	call(&r, "removeTrigger", "{\"id\":\"m\"}", &resp);
	CHECK(strstr(resp.data, "no trigger with this id") != NULL);
	/* the cap (--trigger_max 4 here) */
	for (int i = 0; i < 5; i++) {
		char req[128];
		snprintf(req, sizeof req, "{\"trigger\":{\"id\":\"t%d\",\"config\":\"X=1\"}}", i);
		call(&r, "addTrigger", req, &resp);
		CHECK(i < 4 ? strstr(resp.data, "\"ok\"") != NULL : strstr(resp.data, "--trigger_max") != NULL);
	}
	buf_free(&resp);
	rig_stop(&r);
}

TEST(trigger_cadence_per_job)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct rig r;
	rig_start(&r, "");
	struct buf resp = BUF_INIT;
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"c\",\"every_s\":4,\"job\":\"9\",\"config\":\"X=1\",\"min_interval_s\":0}}",
	     &resp);
	REQUIRE(strstr(resp.data, "\"ok\""));
	for (int i = 0; i < 6; i++)
		tick(&r, "k", 1); /* job 9 not there: nothing */
	CHECK_INT(firings(&r, "c"), 0);
	poll_proc(&r, 9, 90);
	poll_proc(&r, 8, 80); /* another job: not this trigger's */
	/* first seen at the next tick; fires 4, 8, 12 ticks later */
	for (int i = 0; i < 13; i++)
		tick(&r, "k", 1);
	CHECK_INT(firings(&r, "c"), 3);
	call(&r, "listTriggers", "{}", &resp);
	CHECK(strstr(resp.data, "\"job\":\"8\"") == NULL);
	CHECK(strstr(resp.data, "\"why\":\"every 4s\"") != NULL);
	buf_free(&resp);
	rig_stop(&r);
}

TEST(trigger_file_survives_restart)
{
	log_set_level(LOG_LEVEL_ERROR);
	char path[4096];
	snprintf(path, sizeof path, "%s/trig.json", test_tmpdir());
	struct rig r;
	rig_start(&r, path);
	struct buf resp = BUF_INIT;
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"keep\",\"when\":\"cpu_util > 30 for 2s\",\"config\":\"X={fire}\"}}",
	     &resp);
	REQUIRE(strstr(resp.data, "\"ok\""));
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"gone\",\"config\":\"X=1\"}}", &resp);
	call(&r, "removeTrigger", "{\"id\":\"gone\"}", &resp);
	poll_proc(&r, 0, 5);
	tick(&r, "cpu_util", 40);
	tick(&r, "cpu_util", 40);
	CHECK_INT(firings(&r, "keep"), 1);
	rig_stop(&r);
	/* restarted: the trigger is back with its rate limit (300 s, not over:
	 * the condition holds but nothing fires), the firing numbers go on */
	rig_start(&r, path);
	call(&r, "listTriggers", "{}", &resp);
	CHECK(strstr(resp.data, "\"id\":\"keep\",\"when\":\"cpu_util > 30 for 2s\"") != NULL);
	CHECK(strstr(resp.data, "\"id\":\"gone\"") == NULL);
	poll_proc(&r, 0, 5);
	tick(&r, "cpu_util", 40);
	tick(&r, "cpu_util", 40);
	CHECK_STR(poll_proc(&r, 0, 5), "");
	CHECK_INT(firings(&r, "keep"), 0);
	call(&r, "listTriggers", "{}", &resp);
	CHECK(strstr(resp.data, "\"fired\":0,\"held_s\":2,\"last_value\":40,\"rate_limited\":1}") != NULL);
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"after\",\"config\":\"Y={fire}\",\"min_interval_s\":0}}", &resp);
	call(&r, "fireTrigger", "{\"id\":\"after\"}", &resp);
	CHECK(strstr(poll_proc(&r, 0, 5), "Y=1") != NULL);
	rig_stop(&r);
	/* a damaged file: the daemon does not start (it would overwrite it) */
	FILE *f = fopen(path, "w");
	REQUIRE(f);
	fputs("{\"version\":1,\"triggers\":[{\"id\":\"x\",\"config\":\"X=1\",}]}", f);
	fclose(f);
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	struct buf err = BUF_INIT;
	struct tracing *tr = tracing_start(NULL, &tf, &err);
	struct trigger_flags gf = TRIGGER_FLAGS_DEFAULT;
	gf.file = path;
	CHECK(triggers_start(NULL, &gf, tr, NULL, &err) == NULL);
	CHECK(strstr(err.data, "trig.json: byte 50") != NULL);
	tracing_stop(tr);
	buf_free(&err);
	buf_free(&resp);
}

/* The rate limits' state in a hand-written file: a firing an hour ago
 * (limit 300 s) lets the trigger fire; one 10 s ago does not; an entry of a
 * trigger not in the file is dropped; a bad entry stops the start. */
TEST(trigger_rate_limit_from_file)
{
	log_set_level(LOG_LEVEL_ERROR);
	char path[4096];
	snprintf(path, sizeof path, "%s/trig_last.json", test_tmpdir());
	int64_t now_ms = clock_wall_ns() / NS_PER_MS;
	FILE *f = fopen(path, "w");
	REQUIRE(f);
	fprintf(f,
		"{\"version\":1,\"next_fire\":4,\"triggers\":["
		"{\"id\":\"old\",\"when\":\"a > 1 for 1s\",\"config\":\"A={fire}\",\"job\":\"0\"},"
		"{\"id\":\"recent\",\"when\":\"a > 1 for 1s\",\"config\":\"R={fire}\",\"job\":\"0\"}],"
		"\"last_fired\":[{\"id\":\"old\",\"job\":\"0\",\"time_ms\":%lld},"
		"{\"id\":\"recent\",\"job\":\"0\",\"time_ms\":%lld},"
		"{\"id\":\"removed\",\"job\":\"0\",\"time_ms\":1}]}\n",
		(long long)(now_ms - 3600 * 1000), (long long)(now_ms - 10 * 1000));
	fclose(f);
	struct rig r;
	rig_start(&r, path);
	struct buf resp = BUF_INIT;
	poll_proc(&r, 0, 5);
	tick(&r, "a", 2);
	CHECK_INT(firings(&r, "old"), 1);
	CHECK_INT(firings(&r, "recent"), 0);
	CHECK(strstr(poll_proc(&r, 0, 5), "A=4") != NULL);
	rig_stop(&r);
	/* written back: both triggers' state, the removed one's gone */
	struct trig_file tf;
	struct buf err = BUF_INIT;
	REQUIRE(trig_file_load(path, 8, &tf, &err));
	CHECK_INT(tf.nlast, 2);
	for (size_t i = 0; i < tf.nlast; i++) {
		CHECK(strcmp(tf.last[i].id, "removed") != 0);
		if (strcmp(tf.last[i].id, "old") == 0)
			CHECK(tf.last[i].time_ms >= now_ms);
		else
			CHECK_INT(tf.last[i].time_ms, now_ms - 10 * 1000);
	}
	trig_file_free(&tf);
	CHECK(!file_parse("{\"version\":1,\"triggers\":[{\"id\":\"a\",\"config\":\"X=1\"}],"
			  "\"last_fired\":[{\"id\":\"a\",\"job\":\"0\",\"time_ms\":-1}]}",
			  8, &tf, &err) &&
	      strstr(err.data, "\"last_fired\" entry 0"));
	CHECK(!file_parse("{\"version\":1,\"triggers\":[],\"last_fired\":{}}", 8, &tf, &err) &&
	      strstr(err.data, "an array was expected"));
	buf_free(&err);
	buf_free(&resp);
}

/* A condition on a key no collector emits can never fire: addTrigger
 * refuses it, naming the closest keys of the catalog, and keeps nothing;
 * a known key absent on this host (a GPU key without a GPU) is accepted. */
TEST(trigger_unknown_metric_key_refused)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct rig r;
	rig_start(&r, "");
	struct buf resp = BUF_INIT;
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"io\",\"when\":\"cpu_iowait > 30 for 60s\",\"config\":\"X=1\"}}",
	     &resp);
	CHECK(strstr(resp.data, "\"status\":\"failed\"") != NULL);
	CHECK(strstr(resp.data, "no metric key 'cpu_iowait'") != NULL);
	CHECK(strstr(resp.data, "@cpu_ratio_iowait") != NULL);
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"no\",\"when\":\"nosuchmetric > 30 for 5s\",\"config\":\"X=1\"}}",
	     &resp);
	CHECK(strstr(resp.data, "no metric key 'nosuchmetric' (docs/metrics.md); closest: ") != NULL);
	/* a suffixed key without its suffix, a plain key with one */
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"sm\",\"when\":\"sm_active_ratio < 0.2\",\"config\":\"X=1\"}}",
	     &resp);
	CHECK(strstr(resp.data, "'sm_active_ratio' needs a suffix") != NULL);
	CHECK(strstr(resp.data, "sm_active_ratio.<gpu>") != NULL);
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"ld\",\"when\":\"load1.x > 3\",\"config\":\"X=1\"}}", &resp);
	CHECK(strstr(resp.data, "'load1.x' takes no suffix") != NULL);
	call(&r, "listTriggers", "{}", &resp);
	CHECK(strstr(resp.data, "\"triggers\":[]") != NULL);
	/* known keys: plain, suffixed, export-only */
	call(&r, "addTrigger",
	     "{\"trigger\":{\"id\":\"gpu\",\"when\":\"sm_active_ratio.0 < 0.2\",\"config\":\"X=1\"}}", &resp);
	CHECK(strstr(resp.data, "\"status\":\"ok\"") != NULL);
	call(&r, "addTrigger",
	     "{\"trigger\":{\"id\":\"iow\",\"when\":\"@cpu_ratio_iowait > 0.3 for 60s\",\"config\":\"X=1\"}}", &resp);
	CHECK(strstr(resp.data, "\"status\":\"ok\"") != NULL);
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"rx\",\"when\":\"rx_bytes.eth0 > 1e9\",\"config\":\"X=1\"}}",
	     &resp);
	CHECK(strstr(resp.data, "\"status\":\"ok\"") != NULL);
	buf_free(&resp);
	rig_stop(&r);
}

TEST(trigger_key_found_wherever_it_moves)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct rig r;
	rig_start(&r, "");
	struct buf resp = BUF_INIT;
	call(&r, "addTrigger", "{\"trigger\":{\"id\":\"mv\",\"when\":\"load1 > 5 for 3s\",\"config\":\"X=1\",\"min_interval_s\":0}}",
	     &resp);
	REQUIRE(strstr(resp.data, "\"ok\""));
	poll_proc(&r, 0, 1);
	/* the key at another place each tick (a new interface, a GPU gone),
	 * interleaved with another collector's ticks (src 3) that lack it */
	for (int t = 0; t < 3; t++) {
		frame_reset(&r.f, 0);
		for (int i = 0; i < 5 - 2 * t; i++) {
			char k[16];
			snprintf(k, sizeof k, "pad%d", i);
			frame_int(&r.f, k, i);
		}
		frame_float(&r.f, "load1", 9);
		frame_int(&r.f, "load15", 1);
		triggers_on_tick(&r.f, 0, 1, r.T);
		frame_reset(&r.f, 0);
		frame_int(&r.f, "other", 1);
		triggers_on_tick(&r.f, 3, 5, r.T);
		CHECK_INT(firings(&r, "mv"), t == 2);
	}
	/* a string under the key is not a number: the run breaks */
	tick(&r, "load1", 9);
	call(&r, "listTriggers", "{}", &resp);
	CHECK(strstr(resp.data, "\"held_s\":1") != NULL);
	frame_reset(&r.f, 0);
	frame_str(&r.f, "load1", "9");
	triggers_on_tick(&r.f, 0, 1, r.T);
	call(&r, "listTriggers", "{}", &resp);
	CHECK(strstr(resp.data, "\"held_s\":0") != NULL);
	buf_free(&resp);
	rig_stop(&r);
}

/* A firing's gpusnoop sessions go through the daemon's gpusnoop code: the
 * program (here /bin/echo, which writes its arguments into the report file
 * the daemon created) runs for each triggered process. */
TEST(trigger_gpusnoop_session_per_triggered_process)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	struct buf err = BUF_INIT, resp = BUF_INIT;
	struct gpusnoop_flags sf = GPUSNOOP_FLAGS_DEFAULT;
	sf.path = "/bin/echo";
	struct rig r;
	memset(&r, 0, sizeof r);
	r.tr = tracing_start(l, &tf, &err);
	REQUIRE(r.tr);
	struct gpusnoop_rpc *snoop = gpusnoop_rpc_start(l, &sf, test_tmpdir(), &err);
	REQUIRE(snoop);
	struct trigger_flags gf = TRIGGER_FLAGS_DEFAULT;
	r.T = triggers_start(l, &gf, r.tr, snoop, &err);
	REQUIRE(r.T);
	frame_init(&r.f);
	char req[512];
	snprintf(req, sizeof req,
		 "{\"trigger\":{\"id\":\"s\",\"config\":\"X=1\",\"gpusnoop_s\":5,\"gpusnoop_log\":\"%s/snoop\"}}",
		 test_tmpdir());
	call(&r, "addTrigger", req, &resp);
	REQUIRE(strstr(resp.data, "\"ok\""));
	int me = (int)getpid();
	poll_proc(&r, 0, me);
	call(&r, "fireTrigger", "{\"id\":\"s\"}", &resp);
	char want[256];
	snprintf(want, sizeof want, "\"gpusnoop\":[{\"pid\":%d,\"log_file\":\"%s/snoop.0.%d.log\",\"status\":\"started\"}]",
		 me, test_tmpdir(), me);
	if (!strstr(resp.data, want))
		test_fail(__FILE__, __LINE__, "no session started: %s", resp.data);
	/* the report file holds what the program was asked */
	char path[512], text[256] = "";
	snprintf(path, sizeof path, "%s/snoop.0.%d.log", test_tmpdir(), me);
	for (int i = 0; i < 200 && !text[0]; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(text, sizeof text, f))
				text[0] = 0;
			fclose(f);
		}
		if (!text[0])
			usleep(10000);
	}
	char args[64];
	snprintf(args, sizeof args, "--pid %d --duration 5.000", me);
	if (!strstr(text, args))
		test_fail(__FILE__, __LINE__, "gpusnoop ran with \"%s\"", text);
	triggers_stop(r.T);
	gpusnoop_rpc_stop(snoop);
	tracing_stop(r.tr);
	frame_free(&r.f);
	ev_loop_free(l);
	buf_free(&err);
	buf_free(&resp);
}

/* A trigger with gpusnoop sessions on a daemon that cannot run them (no
 * gpusnoop at all, or no --trace_path_prefixes for their files) is refused
 * when added, with the reason, instead of failing at every firing. */
TEST(trigger_gpusnoop_refused_without_prefixes)
{
	log_set_level(LOG_LEVEL_ERROR);
	struct ev_loop *l = ev_loop_new();
	REQUIRE(l);
	struct tracing_flags tf = TRACING_FLAGS_DEFAULT;
	struct buf err = BUF_INIT, resp = BUF_INIT;
	struct gpusnoop_flags sf = GPUSNOOP_FLAGS_DEFAULT;
	sf.path = "/bin/echo";
	const char *req = "{\"trigger\":{\"id\":\"s\",\"config\":\"X=1\",\"gpusnoop_s\":5,\"gpusnoop_log\":\"/tmp/snoop\"}}";
	/* prefixes "" (the daemon's default): sessions cannot write their files */
	for (int no_snoop = 0; no_snoop < 2; no_snoop++) {
		struct rig r;
		memset(&r, 0, sizeof r);
		r.tr = tracing_start(l, &tf, &err);
		REQUIRE(r.tr);
		struct gpusnoop_rpc *snoop = no_snoop ? NULL : gpusnoop_rpc_start(l, &sf, "", &err);
		REQUIRE(no_snoop || snoop);
		struct trigger_flags gf = TRIGGER_FLAGS_DEFAULT;
		r.T = triggers_start(l, &gf, r.tr, snoop, &err);
		REQUIRE(r.T);
		frame_init(&r.f);
		call(&r, "addTrigger", req, &resp);
		CHECK(strstr(resp.data, "\"status\":\"failed\"") != NULL);
		CHECK(strstr(resp.data, no_snoop ? "gpusnoop_s: gpusnoop sessions are not available"
						 : "gpusnoop_s: gpusnoop sessions need the daemon to run with "
						   "--trace_path_prefixes") != NULL);
		call(&r, "listTriggers", "{}", &resp);
		CHECK(strstr(resp.data, "\"triggers\":[]") != NULL);
		/* the same trigger without a session is fine */
		call(&r, "addTrigger", "{\"trigger\":{\"id\":\"s\",\"config\":\"X=1\"}}", &resp);
		CHECK(strstr(resp.data, "\"status\":\"ok\"") != NULL);
		triggers_stop(r.T);
		if (snoop)
			gpusnoop_rpc_stop(snoop);
		tracing_stop(r.tr);
		frame_free(&r.f);
	}
	ev_loop_free(l);
	buf_free(&err);
	buf_free(&resp);
}
