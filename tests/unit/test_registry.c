/*
 * test_registry.c - the Kineto process registry: registration, set order,
 * matching by job id / ancestor pid / trace-all, process_limit, one-shot
 * delivery by type bits, busy, the delivered text, restore, expiry, ctxt,
 * capacity, and the getProcesses states (wire-protocols.md section 4 and
 * conformance items 10-13).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "daemon/ipc/registry.h"
#include "test.h"

#define S NS_PER_SEC

/* The registry logs every registration at info level; keep tests quiet
 * (each test runs in its own child, so this stays local to it). */
static void quiet(void) { log_set_level(LOG_LEVEL_ERROR); }

static struct reg_proc *only_proc(struct registry *r, const char *job)
{
	struct reg_job *j = registry_find_job(r, job);
	return j && j->n == 1 ? j->procs[0] : NULL;
}

TEST(registry_first_poll_registers_with_ancestry)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t pids[] = {12345, 12344, 12343};
	CHECK_INT(registry_poll(&r, 42, pids, 3, 2, 100 * S, &d), 1);
	CHECK(!d.act && !d.evt);
	struct reg_proc *p = only_proc(&r, "42");
	REQUIRE(p);
	CHECK_INT(p->leaf, 12345);
	CHECK_INT(p->nanc, 3);
	CHECK_INT(p->ancestry[0], 12345);
	CHECK_INT(p->ancestry[2], 12343);
	CHECK_INT(p->last_seen_ns, 100 * S);
	/* same set in another order is the same process */
	int32_t again[] = {12343, 12345, 12344};
	CHECK_INT(registry_poll(&r, 42, again, 3, 2, 101 * S, &d), 0);
	CHECK_INT(r.nprocs, 1);
	CHECK_INT(p->leaf, 12345); /* leaf stays the first poll's */
	CHECK(registry_find_job(&r, "0") == NULL);
	/* n out of range is refused */
	CHECK_INT(registry_poll(&r, 42, pids, 0, 2, 101 * S, &d), -1);
	registry_free(&r);
}

TEST(registry_negative_and_large_job_ids_are_decimal)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t p = 7;
	registry_poll(&r, -5, &p, 1, 2, S, &d);
	registry_poll(&r, 9223372036854775807ll, &p, 1, 2, S, &d);
	CHECK(registry_find_job(&r, "-5") != NULL);
	CHECK(registry_find_job(&r, "9223372036854775807") != NULL);
	registry_free(&r);
}

/* Conformance item 11: {200,100} and {300,100}, pids [100], limit 1. */
TEST(registry_ancestor_match_limit_one_shot_busy)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t a[] = {300, 100}, b[] = {200, 100};
	registry_poll(&r, 0, a, 2, 2, S, &d); /* registered first, sorts second */
	registry_poll(&r, 0, b, 2, 2, S, &d);
	int32_t want = 100;
	const char *cfg = "ACTIVITIES_LOG_FILE=/tmp/x.json\nACTIVITIES_DURATION_MSECS=500";
	struct reg_trigger t;
	registry_trigger(&r, "0", &want, 1, cfg, strlen(cfg), REG_ACTIVITIES, 1, 2 * S, &t);
	REQUIRE(t.nmatched == 2);
	CHECK_INT(t.matched[0], 200); /* {100,200} < {100,300} */
	CHECK_INT(t.matched[1], 300);
	REQUIRE(t.nact == 1);
	CHECK_INT(t.act_triggered[0], 200);
	CHECK_INT(t.act_busy, 0);
	CHECK_INT(t.nevt, 0);
	registry_trigger_free(&t);

	/* a busy poll (type 0) keeps the config */
	registry_poll(&r, 0, b, 2, 0, 3 * S, &d);
	CHECK(!d.act);
	/* a second request before delivery: 200 is busy (its first config
	 * wins) and, busy not counting against the limit, 300 gets this one */
	const char *cfg2 = "ACTIVITIES_LOG_FILE=/tmp/other.json";
	registry_trigger(&r, "0", &want, 1, cfg2, strlen(cfg2), REG_ACTIVITIES, 1, 3 * S, &t);
	CHECK_INT(t.nmatched, 2);
	CHECK_INT(t.act_busy, 1);
	REQUIRE(t.nact == 1);
	CHECK_INT(t.act_triggered[0], 300);
	registry_trigger_free(&t);

	registry_poll(&r, 0, b, 2, 2, 4 * S, &d);
	REQUIRE(d.act);
	struct buf text = BUF_INIT;
	registry_delivery_text(&d, &text);
	const char *prefix = "\n    ACTIVITIES_LOG_FILE=/tmp/x.json\nACTIVITIES_DURATION_MSECS=500\n    REQUEST_TRACE_ID=";
	CHECK(strncmp(text.data, prefix, strlen(prefix)) == 0);
	const char *id = text.data + strlen(prefix);
	size_t digits = strspn(id, "0123456789");
	CHECK(digits > 0);
	CHECK_STR(id + digits, "\n");
	buf_free(&text);
	registry_delivery_free(&d);
	/* one-shot */
	registry_poll(&r, 0, b, 2, 2, 5 * S, &d);
	CHECK(!d.act && !d.evt);
	registry_free(&r);
}

TEST(registry_trace_all_forms_and_job_mismatch)
{
	quiet();
	int32_t zero = 0;
	for (int form = 0; form < 3; form++) {
		struct registry r;
		registry_init(&r, 0);
		struct reg_delivery d;
		for (int32_t p = 10; p < 15; p++)
			registry_poll(&r, 77, &p, 1, 2, S, &d);
		int32_t zz[] = {0, 0};
		struct reg_trigger t;
		if (form == 0)
			registry_trigger(&r, "77", NULL, 0, "X=1", 3, REG_ACTIVITIES, 1000, S, &t);
		else if (form == 1)
			registry_trigger(&r, "77", &zero, 1, "X=1", 3, REG_ACTIVITIES, 1000, S, &t);
		else
			registry_trigger(&r, "77", zz, 2, "X=1", 3, REG_ACTIVITIES, 1000, S, &t);
		CHECK_INT(t.nmatched, 5);
		CHECK_INT(t.nact, 5);
		registry_trigger_free(&t);
		registry_trigger(&r, "0", &zero, 1, "X=1", 3, REG_ACTIVITIES, 1000, S, &t);
		CHECK_INT(t.nmatched, 0);
		CHECK_INT(t.nact, 0);
		CHECK_INT(t.act_busy, 0);
		registry_trigger_free(&t);
		registry_free(&r);
	}
}

TEST(registry_limit_counts_triggered_not_matched)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	for (int32_t p = 1; p <= 4; p++) {
		int32_t anc[] = {100 + p, 50};
		registry_poll(&r, 0, anc, 2, 2, S, &d);
	}
	int32_t parent = 50;
	struct reg_trigger t;
	/* first: 101 and 102 triggered */
	registry_trigger(&r, "0", &parent, 1, "A=1", 3, REG_ACTIVITIES, 2, S, &t);
	CHECK_INT(t.nmatched, 4);
	CHECK_INT(t.nact, 2);
	registry_trigger_free(&t);
	/* second, limit 1: 101 and 102 busy (busy does not count against the
	 * limit), 103 triggered, 104 past the limit: neither */
	registry_trigger(&r, "0", &parent, 1, "A=2", 3, REG_ACTIVITIES, 1, S, &t);
	CHECK_INT(t.nmatched, 4);
	CHECK_INT(t.act_busy, 2);
	REQUIRE(t.nact == 1);
	CHECK_INT(t.act_triggered[0], 103);
	registry_trigger_free(&t);
	/* limit 0 triggers nobody and counts nobody busy */
	registry_trigger(&r, "0", &parent, 1, "A=2", 3, REG_ACTIVITIES, 0, S, &t);
	CHECK_INT(t.nmatched, 4);
	CHECK_INT(t.act_busy, 0);
	CHECK_INT(t.nact, 0);
	registry_trigger_free(&t);
	/* pids matching nothing; several pids of one process count once */
	int32_t none = 999, same[] = {101, 50};
	registry_trigger(&r, "0", &none, 1, "A=3", 3, REG_ACTIVITIES, 10, S, &t);
	CHECK_INT(t.nmatched, 0);
	registry_trigger_free(&t);
	registry_trigger(&r, "0", same, 2, "A=3", 3, REG_ACTIVITIES, 10, S, &t);
	CHECK_INT(t.nmatched, 4); /* 50 is everyone's parent */
	registry_trigger_free(&t);
	registry_free(&r);
}

TEST(registry_type_bits_select_configs)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t p = 5;
	registry_poll(&r, 0, &p, 1, 3, S, &d);
	struct reg_trigger t;
	registry_trigger(&r, "0", &p, 1, "E=1", 3, REG_EVENTS, 5, S, &t);
	CHECK_INT(t.nevt, 1);
	registry_trigger_free(&t);
	registry_trigger(&r, "0", &p, 1, "A=1", 3, REG_ACTIVITIES, 5, S, &t);
	registry_trigger_free(&t);
	/* type 2 takes only the activity config */
	registry_poll(&r, 0, &p, 1, 2, S, &d);
	CHECK(d.act && !d.evt);
	registry_delivery_free(&d);
	/* type 1 then the event one */
	registry_poll(&r, 0, &p, 1, 1, S, &d);
	CHECK(!d.act && d.evt);
	registry_delivery_free(&d);
	/* both at once are concatenated events first, each + "\n" */
	registry_trigger(&r, "0", &p, 1, "E=2", 3, REG_EVENTS, 5, S, &t);
	registry_trigger_free(&t);
	registry_trigger(&r, "0", &p, 1, "A=2", 3, REG_ACTIVITIES, 5, S, &t);
	registry_trigger_free(&t);
	registry_poll(&r, 0, &p, 1, 3, S, &d);
	struct buf b = BUF_INIT;
	registry_delivery_text(&d, &b);
	CHECK(strncmp(b.data, "\n    E=2\n    REQUEST_TRACE_ID=", 30) == 0);
	CHECK(strstr(b.data, "\n\n    A=2\n    REQUEST_TRACE_ID=") != NULL);
	CHECK(b.data[b.len - 1] == '\n');
	buf_free(&b);
	registry_delivery_free(&d);
	registry_free(&r);
}

TEST(registry_restore_after_failed_send)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t p = 5;
	registry_poll(&r, 0, &p, 1, 2, S, &d);
	struct reg_trigger t;
	registry_trigger(&r, "0", &p, 1, "A=1", 3, REG_ACTIVITIES, 5, S, &t);
	registry_trigger_free(&t);
	registry_poll(&r, 0, &p, 1, 2, 2 * S, &d);
	REQUIRE(d.act);
	char *saved = xstrdup(d.act);
	registry_restore(&r, 0, &p, 1, &d);
	CHECK(!d.act);
	CHECK_INT(r.stats.restored, 1);
	registry_poll(&r, 0, &p, 1, 2, 3 * S, &d);
	REQUIRE(d.act);
	CHECK_STR(d.act, saved);
	free(saved);
	registry_delivery_free(&d);
	registry_free(&r);
}

TEST(registry_expiry_whole_seconds_and_job_removal)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t a = 1, b = 2;
	registry_poll(&r, 9, &a, 1, 2, 0, &d);
	registry_poll(&r, 9, &b, 1, 2, 30 * S, &d);
	registry_ctxt(&r, 9, 0, 1);
	registry_ctxt(&r, 8, 0, 1); /* ctxt-only job */
	CHECK_INT(registry_next_expiry(&r, 60), 61 * S);
	CHECK_INT(registry_expire(&r, 60 * S + S - 1, 60), 0); /* 60.99 s: not yet */
	CHECK_INT(registry_expire(&r, 61 * S, 60), 1);
	CHECK_INT(r.nprocs, 1);
	CHECK(registry_find_job(&r, "9") != NULL);
	CHECK_INT(registry_expire(&r, 91 * S, 60), 1);
	CHECK(registry_find_job(&r, "9") == NULL); /* emptied: gone with its ctxt */
	/* never had a process: goes once its last ctxt (at 0 here) is as old
	 * as a silent process (upstream kept it until restart) */
	CHECK(registry_find_job(&r, "8") == NULL);
	CHECK_INT(registry_next_expiry(&r, 60), -1);
	CHECK_INT(registry_ctxt_from(&r, NULL, 8, 0, 1, 100 * S), 1);
	CHECK_INT(registry_next_expiry(&r, 60), 161 * S);
	CHECK_INT(registry_expire(&r, 160 * S, 60), 0);
	CHECK(registry_find_job(&r, "8") != NULL);
	CHECK_INT(registry_expire(&r, 161 * S, 60), 0);
	CHECK(registry_find_job(&r, "8") == NULL);
	/* a re-registration after expiry counts from 1 again */
	CHECK_INT(registry_ctxt(&r, 9, 0, 1), 1);
	registry_free(&r);
}

TEST(registry_ctxt_counts_distinct_pids_per_gpu)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	CHECK_INT(registry_ctxt(&r, 42, 2, 100), 1);
	CHECK_INT(registry_ctxt(&r, 42, 2, 100), 1);
	CHECK_INT(registry_ctxt(&r, 42, 2, 50), 2);
	CHECK_INT(registry_ctxt(&r, 42, 3, 100), 1);
	CHECK_INT(registry_ctxt(&r, 43, 2, 100), 1);
	/* ctxt alone registers no process */
	CHECK_INT(r.nprocs, 0);
	registry_free(&r);
}

TEST(registry_capacity_refuses_new_processes)
{
	quiet();
	struct registry r;
	registry_init(&r, 3);
	struct reg_delivery d;
	for (int32_t p = 1; p <= 3; p++)
		CHECK_INT(registry_poll(&r, 0, &p, 1, 2, S, &d), 1);
	int32_t p4 = 4, p1 = 1;
	CHECK_INT(registry_poll(&r, 0, &p4, 1, 2, S, &d), -1);
	CHECK_INT(registry_poll(&r, 0, &p1, 1, 2, S, &d), 0); /* known ones still served */
	CHECK_INT(r.stats.refused_full, 1);
	registry_free(&r);
}

TEST(registry_states_idle_pending_busy)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t p = 5;
	registry_poll(&r, 0, &p, 1, 2, S, &d);
	struct reg_proc *pr = only_proc(&r, "0");
	REQUIRE(pr);
	CHECK_STR(registry_state_str(registry_proc_state(pr, S)), "idle");
	struct reg_trigger t;
	const char *cfg = "ACTIVITIES_DURATION_MSECS=1000";
	registry_trigger(&r, "0", &p, 1, cfg, strlen(cfg), REG_ACTIVITIES, 5, S, &t);
	registry_trigger_free(&t);
	CHECK_STR(registry_state_str(registry_proc_state(pr, S)), "pending");
	registry_poll(&r, 0, &p, 1, 2, 2 * S, &d);
	registry_delivery_free(&d);
	/* delivered, no poll since: busy for warm-up (7 s) + 1 s + 5 s margin */
	CHECK_STR(registry_state_str(registry_proc_state(pr, 3 * S)), "busy");
	CHECK_STR(registry_state_str(registry_proc_state(pr, 16 * S)), "idle");
	/* Kineto polls with type 0 while tracing */
	registry_poll(&r, 0, &p, 1, 0, 4 * S, &d);
	CHECK_STR(registry_state_str(registry_proc_state(pr, 30 * S)), "busy");
	registry_poll(&r, 0, &p, 1, 2, 31 * S, &d);
	CHECK_STR(registry_state_str(registry_proc_state(pr, 31 * S)), "idle");
	registry_free(&r);
}

TEST(registry_many_processes_keep_set_order)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	/* insert in a scrambled order; matched order must be ascending by set */
	for (int i = 0; i < 1000; i++) {
		int32_t anc[] = {(int32_t)(1000 + (i * 7919) % 1000), 1};
		registry_poll(&r, 0, anc, 2, 2, S, &d);
	}
	CHECK_INT(r.nprocs, 1000);
	struct reg_trigger t;
	int32_t zero = 0;
	registry_trigger(&r, "0", &zero, 1, "A=1", 3, REG_ACTIVITIES, 3, S, &t);
	REQUIRE(t.nmatched == 1000);
	bool sorted = true;
	for (size_t i = 1; i < t.nmatched; i++)
		sorted &= t.matched[i - 1] < t.matched[i];
	CHECK(sorted);
	CHECK_INT(t.nact, 3);
	CHECK_INT(t.act_triggered[0], 1000);
	registry_trigger_free(&t);
	registry_free(&r);
}

TEST(registry_caps_jobs_and_gpus_against_floods)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_delivery d;
	int32_t p = 1;
	for (int64_t job = 0; job < REG_MAX_JOBS; job++)
		CHECK_INT(registry_ctxt(&r, job, 0, 1), 1);
	CHECK_INT(registry_ctxt(&r, REG_MAX_JOBS, 0, 1), -1);
	CHECK_INT(registry_poll(&r, REG_MAX_JOBS + 1, &p, 1, 2, S, &d), -1);
	CHECK_INT(registry_poll(&r, 5, &p, 1, 2, S, &d), 1); /* existing jobs still work */
	for (int32_t g = 1; g < REG_MAX_GPUS; g++)
		registry_ctxt(&r, 7, g, 1);
	CHECK_INT(registry_ctxt(&r, 7, REG_MAX_GPUS + 5, 1), -1);
	registry_free(&r);
}

/* One sender (socket name) and one user cannot take the table: the caps
 * refuse them while others still register; expiry gives the room back;
 * root is counted like anyone. */
TEST(registry_caps_per_sender_and_per_user)
{
	quiet();
	struct registry r;
	registry_init(&r, 400); /* per user: 100 */
	CHECK_INT(r.max_per_uid, 100);
	struct reg_delivery d;
	struct reg_sender a = {.has_uid = true, .uid = 0, .name = "\0flooder", .name_len = 8};
	int32_t pid = 1000;
	for (int i = 0; i < 1000; i++, pid++)
		registry_poll_from(&r, &a, 0, &pid, 1, 2, S, &d);
	CHECK_INT(r.nprocs, REG_MAX_PER_SENDER);
	CHECK_INT(r.stats.refused_sender, 1000 - REG_MAX_PER_SENDER);
	/* a known process of the capped sender still polls (and gets configs) */
	int32_t first = 1000;
	CHECK_INT(registry_poll_from(&r, &a, 0, &first, 1, 2, 2 * S, &d), 0);
	/* the same uid over many names stops at the per-user cap */
	char names[200][24];
	for (int i = 0; i < 200; i++) {
		snprintf(names[i], sizeof names[i], "%cname%d", 0, i);
		struct reg_sender b = {.has_uid = true, .uid = 0, .name = names[i], .name_len = 1 + strlen(names[i] + 1)};
		for (int k = 0; k < 4; k++, pid++)
			registry_poll_from(&r, &b, 0, &pid, 1, 2, S, &d);
	}
	CHECK_INT(r.nprocs, 100);
	CHECK(r.stats.refused_uid > 0);
	/* another user still registers */
	struct reg_sender c = {.has_uid = true, .uid = 1000, .name = "\0legit", .name_len = 6};
	int32_t legit = 7;
	CHECK_INT(registry_poll_from(&r, &c, 0, &legit, 1, 2, 90 * S, &d), 1);
	/* expiry gives the flooder's room back */
	CHECK_INT(registry_expire(&r, 100 * S, 60), 100);
	CHECK_INT(r.nprocs, 1);
	CHECK_INT(registry_poll_from(&r, &a, 0, &pid, 1, 2, 100 * S, &d), 1);
	pid++;
	/* uid 0, "\0flooder", uid 1000, "\0legit", and uid 0's count of jobs
	 * (job 0, kept by legit's process): the other names are gone */
	CHECK_INT(r.counts.used, 5);
	registry_free(&r);
}

/* One user's ctxt datagrams (or polls) cannot take the job table: a
 * quarter of it per uid, then another user's new job still registers; a
 * ctxt refused that way leaves no empty job behind; the user's ctxt
 * entries are capped at a quarter of max_procs; expiry gives all back. */
TEST(registry_ctxt_jobs_share_per_user_and_expire)
{
	quiet();
	struct registry r;
	registry_init(&r, 0);
	struct reg_sender a = {.has_uid = true, .uid = 65534, .name = "\0flood", .name_len = 6};
	struct reg_sender b = {.has_uid = true, .uid = 1000, .name = "\0legit", .name_len = 6};
	int ok = 0;
	for (int64_t job = 0; job < REG_MAX_JOBS + 100; job++)
		ok += registry_ctxt_from(&r, &a, job, 0, 1, S) == 1;
	CHECK_INT(ok, REG_MAX_JOBS_PER_UID);
	CHECK_INT(r.njobs, REG_MAX_JOBS_PER_UID); /* the refused left no job behind */
	struct reg_delivery d;
	int32_t pid = 5000, legit = 7;
	CHECK_INT(registry_poll_from(&r, &a, 100000, &pid, 1, 2, S, &d), -1); /* a new job: over the share */
	CHECK_INT(registry_poll_from(&r, &a, 5, &pid, 1, 2, S, &d), 1);       /* a job it has: fine */
	CHECK_INT(registry_poll_from(&r, &b, 999999, &legit, 1, 2, 30 * S, &d), 1);
	CHECK_INT(registry_ctxt_from(&r, &b, 999999, 0, 7, 30 * S), 1);
	CHECK_INT(registry_expire(&r, 62 * S, 60), 1); /* the process of job 5 */
	CHECK_INT(r.njobs, 1);                         /* legit's: the ctxt-only jobs went */
	CHECK_INT(registry_ctxt_from(&r, &a, 1, 0, 1, 62 * S), 1);
	registry_free(&r);
	/* the ctxt tables and pids one user adds: a quarter of max_procs */
	registry_init(&r, 400);
	ok = 0;
	for (int32_t gpu = 0; gpu < 200; gpu++)
		ok += registry_ctxt_from(&r, &a, 1, gpu, 1, S) == 1;
	CHECK_INT(ok, 50); /* a table and a pid each: 100 entries */
	CHECK_INT(registry_ctxt_from(&r, &b, 1, 300, 1, S), 1);
	registry_free(&r);
}

/* ctxt tables and pids of all jobs together are bounded by max_procs. */
TEST(registry_ctxt_bounded_in_total)
{
	quiet();
	struct registry r;
	registry_init(&r, 64);
	for (int job = 0; job < 100; job++)
		for (int gpu = 0; gpu < 10; gpu++)
			registry_ctxt(&r, job, gpu, 5);
	CHECK(r.nctxt_entries <= 64);
	CHECK(r.stats.refused_full > 0);
	registry_free(&r);
}

/* Undelivered configs together stay under REG_MAX_PENDING_BYTES: a big
 * config for every process of a big job is not copied past it; delivery
 * and expiry give the room back. */
TEST(registry_pending_configs_bounded_in_total)
{
	quiet();
	struct registry r;
	registry_init(&r, 1000);
	struct reg_delivery d;
	for (int32_t pid = 1; pid <= 400; pid++)
		registry_poll(&r, 0, &pid, 1, 2, S, &d);
	size_t len = REG_MAX_CONFIG;
	char *cfg = malloc(len);
	REQUIRE(cfg);
	memset(cfg, '#', len);
	struct reg_trigger t;
	registry_trigger(&r, "0", NULL, 0, cfg, len, REG_ACTIVITIES, 1000, S, &t);
	size_t fit = REG_MAX_PENDING_BYTES / (len + REG_WRAP_OVERHEAD);
	CHECK_INT(t.nmatched, 400);
	CHECK_INT(t.nact, fit);
	CHECK_INT(t.no_memory, 400 - fit);
	CHECK(r.pending_bytes <= REG_MAX_PENDING_BYTES);
	registry_trigger_free(&t);
	int32_t first = 1;
	registry_poll(&r, 0, &first, 1, 2, 2 * S, &d); /* delivered: its room is free again */
	CHECK(d.act != NULL);
	registry_delivery_free(&d);
	registry_trigger(&r, "0", NULL, 0, cfg, len, REG_ACTIVITIES, 1000, S, &t);
	CHECK_INT(t.nact, 1);
	registry_trigger_free(&t);
	registry_expire(&r, 100 * S, 60);
	CHECK_INT(r.pending_bytes, 0);
	free(cfg);
	registry_free(&r);
}
