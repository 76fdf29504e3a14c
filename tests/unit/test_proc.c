/*
 * test_proc.c - the per-process collector over fixture trees: stat with a
 * hostile comm, io deltas, SLURM job from environ and from the cgroup path,
 * pid recycling, exited processes, and the live /proc.
 */
#include <math.h>
#include <unistd.h>

#include "core/clock.h"
#include "daemon/collect/proc.h"
#include "fixture.h"
#include "test.h"

static void ptick(struct proc_collector *c, struct frame *f, const char *t)
{
	fixture_tick("proc", t);
	frame_reset(f, 0);
	proc_collect(c, f);
}

TEST(proc_parse_stat_hostile_comm)
{
	const char *s = "42 (a) b) (c) R 1 42 42 0 -1 0 0 0 0 0 11 22 0 0 20 0 7 0 999 100 55 0 0";
	struct proc_stat st;
	REQUIRE(proc_parse_stat(s, strlen(s), &st));
	CHECK_INT(st.cpu_ticks, 33);
	CHECK_INT(st.threads, 7);
	CHECK_INT(st.start, 999);
	CHECK_INT(st.rss_pages, 55);
	CHECK(!proc_parse_stat("42 (x", 5, &st));
	CHECK(!proc_parse_stat("42 (x) R 1 2", 12, &st));
	const char *bad = "42 (x) R 1 42 42 0 -1 0 0 0 0 0 1x 22 0 0 20 0 7 0 999 100 55";
	CHECK(!proc_parse_stat(bad, strlen(bad), &st));
}

TEST(proc_job_from_cgroup_paths)
{
	char job[32];
	proc_job_from_cgroup("/slurm/uid_1000/job_31/step_batch", job, sizeof job);
	CHECK_STR(job, "31");
	proc_job_from_cgroup("/system.slice/slurmstepd.scope/job_777/step_0/user/task_0", job, sizeof job);
	CHECK_STR(job, "777");
	proc_job_from_cgroup("/user.slice/notajob_5/x", job, sizeof job);
	CHECK_STR(job, "");
	proc_job_from_cgroup("/job_12abc/", job, sizeof job);
	CHECK_STR(job, "");
}

TEST(proc_fixture_ticks)
{
	fixture_tick("proc", "t0");
	struct proc_collector *c = proc_collector_new(fixture_path("proc"));
	CHECK(proc_track(c, 4242));
	CHECK(proc_track(c, 5151));
	CHECK(proc_track(c, 4242)); /* idempotent */
	CHECK(!proc_track(c, 0));
	CHECK_INT(proc_tracked_count(c), 2);
	struct frame f;
	frame_init(&f);
	long page = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);
	ptick(c, &f, "t0");
	CHECK_INT(fval(&f, "proc_rss_bytes.4242"), 2560 * page);
	CHECK_INT(fval(&f, "proc_threads.4242"), 8);
	ABSENT(&f, "proc_cpu_ms.4242"); /* first reading: no delta */
	CHECK_STR(fstr(&f, "proc_job_id.4242"), "778");  /* environ wins over the cgroup */
	CHECK_STR(fstr(&f, "proc_cgroup.4242"), "/system.slice/slurmstepd.scope/job_777/step_0/user/task_0");
	CHECK_STR(fstr(&f, "proc_job_id.5151"), "31");   /* from the v1 cgroup path */
	ptick(c, &f, "t1");
	CHECK_INT(fval(&f, "proc_cpu_ms.4242"), (long long)(150 * 1000.0 / (double)hz + 0.5));
	CHECK_INT(fval(&f, "proc_read_bytes.4242"), 8192);
	CHECK_INT(fval(&f, "proc_written_bytes.4242"), 0);
	CHECK_INT(fval(&f, "proc_cpu_ms.5151"), (long long)(30 * 1000.0 / (double)hz + 0.5));
	ABSENT(&f, "proc_read_bytes.5151"); /* no io file: unavailable, not 0 */
	ptick(c, &f, "t2");
	/* 5151 exited: dropped; 4242 was recycled (new start time): no delta */
	CHECK_INT(proc_tracked_count(c), 1);
	CHECK_INT(fcount_prefix(&f, "proc_rss_bytes.5151"), 0);
	ABSENT(&f, "proc_cpu_ms.4242");
	CHECK_INT(fval(&f, "proc_threads.4242"), 1);
	frame_free(&f);
	proc_collector_free(c);
}

TEST(proc_live_self)
{
	struct proc_collector *c = proc_collector_new("/proc");
	REQUIRE(proc_track(c, (int)getpid()));
	struct frame f;
	frame_init(&f);
	proc_collect(c, &f);
	/* burn 60 ms of CPU (not wall time: the machine may be busy) so there is a delta */
	int64_t end = clock_cpu_ns() + 60 * NS_PER_MS;
	while (clock_cpu_ns() < end)
		;
	frame_reset(&f, 0);
	proc_collect(c, &f);
	char key[64];
	snprintf(key, sizeof key, "proc_rss_bytes.%d", (int)getpid());
	CHECK(fval(&f, key) > 0);
	snprintf(key, sizeof key, "proc_cpu_ms.%d", (int)getpid());
	CHECK(fval(&f, key) >= 20); /* most of the 60 ms, in 10 ms ticks */
	frame_free(&f);
	proc_collector_free(c);
}
