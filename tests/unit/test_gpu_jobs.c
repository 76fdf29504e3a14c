/*
 * test_gpu_jobs.c - the GPU accounting (collect/gpu_jobs.c): the cgroup
 * parsers, the NVML process listing, and the collector driven tick by tick
 * over a fixture /proc written here (pids that exit, pids reused, an
 * unreadable environ, the series cap, MIG energy, absent lists).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/collect/collector.h"
#include "daemon/collect/gpu_jobs.h"
#include "fixture.h"
#include "test.h"

extern const struct collector collector_gpu_jobs;

/* ---------------- the cgroup parsers ---------------- */

static void check_cgroup(const char *text, enum gpu_job_kind kind, const char *id, const char *container)
{
	struct gpu_job_id j;
	bool ok = gpu_job_from_cgroup(text, strlen(text), &j);
	if (!ok || j.kind != kind || strcmp(j.id, id) != 0 || strcmp(j.container, container) != 0)
		test_fail(__FILE__, __LINE__, "cgroup '%s': got %d kind %d id '%s' container '%s', want kind %d '%s' '%s'",
			  text, ok, j.kind, j.id, j.container, kind, id, container);
}

static void check_no_job(const char *text, size_t len)
{
	struct gpu_job_id j;
	bool ok = gpu_job_from_cgroup(text, len, &j);
	if (ok || j.kind != GJ_NONE)
		test_fail(__FILE__, __LINE__, "garbage '%.*s' gave a job: kind %d '%s'", (int)len, text, j.kind, j.id);
}

#define CTR "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

TEST(gpu_jobs_cgroup_slurm_v1_v2)
{
	/* v2: the slurmstepd scope (cgroup/v2 plugin) */
	check_cgroup("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n", GJ_SLURM, "4242", "");
	/* v1: the job is in some hierarchies only; the others do not hide it */
	check_cgroup("12:pids:/user.slice\n5:memory:/slurm/uid_1000/job_77/step_batch\n1:name=systemd:/user.slice\n",
		     GJ_SLURM, "77", "");
	/* hybrid: "0::/" and v1 lines */
	check_cgroup("4:cpu,cpuacct:/slurm/uid_0/job_5/step_0/task_1\n0::/\n", GJ_SLURM, "5", "");
}

TEST(gpu_jobs_cgroup_kubernetes)
{
	/* cgroupfs driver, each QoS class */
	check_cgroup("0::/kubepods/pod1234abcd-5678-90ef-1234-567890abcdef/" CTR "\n", GJ_K8S,
		     "1234abcd-5678-90ef-1234-567890abcdef", CTR);
	check_cgroup("11:memory:/kubepods/burstable/pod1234abcd-5678-90ef-1234-567890abcdef/" CTR "\n", GJ_K8S,
		     "1234abcd-5678-90ef-1234-567890abcdef", CTR);
	check_cgroup("0::/kubepods/besteffort/podaaaabbbb-cccc-dddd-eeee-ffff00001111/" CTR "\n", GJ_K8S,
		     "aaaabbbb-cccc-dddd-eeee-ffff00001111", CTR);
	/* systemd driver: underscores in the slice name, a runtime prefix */
	check_cgroup("0::/kubepods.slice/kubepods-burstable.slice/"
		     "kubepods-burstable-pod1234abcd_5678_90ef_1234_567890abcdef.slice/cri-containerd-" CTR ".scope\n",
		     GJ_K8S, "1234abcd-5678-90ef-1234-567890abcdef", CTR);
	check_cgroup("0::/kubepods.slice/kubepods-pod1234abcd_5678_90ef_1234_567890abcdef.slice/crio-" CTR ".scope\n",
		     GJ_K8S, "1234abcd-5678-90ef-1234-567890abcdef", CTR);
	check_cgroup("0::/kubepods.slice/kubepods-besteffort.slice/"
		     "kubepods-besteffort-pod1234abcd_5678_90ef_1234_567890abcdef.slice/docker-" CTR ".scope\n",
		     GJ_K8S, "1234abcd-5678-90ef-1234-567890abcdef", CTR);
	/* the pod's own cgroup (no container below it) */
	check_cgroup("0::/kubepods/burstable/pod1234abcd-5678-90ef-1234-567890abcdef\n", GJ_K8S,
		     "1234abcd-5678-90ef-1234-567890abcdef", "");
	/* "kubepods" with no pod in it: just a path */
	check_cgroup("0::/kubepods/burstable\n", GJ_CGROUP, "/kubepods/burstable", "");
}

TEST(gpu_jobs_cgroup_plain_and_garbage)
{
	check_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n", GJ_CGROUP,
		     "/user.slice/user-1000.slice/session-3.scope", "");
	check_cgroup("0::/\n", GJ_CGROUP, "/", "");
	/* hybrid with the unified root: the v1 path below it is more telling */
	check_cgroup("3:cpu:/docker/abc\n0::/\n", GJ_CGROUP, "/docker/abc", "");
	/* no trailing newline */
	check_cgroup("0::/system.slice/train.service", GJ_CGROUP, "/system.slice/train.service", "");
	const char *bad[] = {"", "garbage", "0::", "0::\n", "x:y:/a\n", ":cpu:/a\n", "0::relative/path\n",
			     "0:/no-second-colon\n", "\n\n\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		check_no_job(bad[i], strlen(bad[i]));
	check_no_job("0::/a\0b\n", 8); /* a NUL inside the path */
	/* a path longer than any id: no job rather than a truncated one */
	char lng[700] = "0::/";
	memset(lng + 4, 'a', 600);
	lng[604] = 0;
	check_no_job(lng, strlen(lng));
	/* a bad pod id: a plain cgroup path, not a pod */
	check_cgroup("0::/kubepods/podXYZ/" CTR "\n", GJ_CGROUP, "/kubepods/podXYZ/" CTR, "");
}

/* ---------------- the listing ---------------- */

static unsigned fake_n = 100;
static nvmlReturn_t fake_compute(nvmlDevice_t d, unsigned *n, nvmlProcessInfo_t *p)
{
	(void)d;
	if (*n < fake_n) {
		*n = fake_n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned i = 0; i < fake_n; i++)
		p[i] = (nvmlProcessInfo_t){1000 + i, i % 2 ? NVML_VALUE_NOT_AVAILABLE : 4096ull * i, 0, 0};
	*n = fake_n;
	return NVML_SUCCESS;
}
static nvmlReturn_t fake_graphics(nvmlDevice_t d, unsigned *n, nvmlProcessInfo_t *p)
{
	(void)d;
	if (*n < 2)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	p[0] = (nvmlProcessInfo_t){1000, 1, 0, 0}; /* also a compute process: listed once */
	p[1] = (nvmlProcessInfo_t){7, 10, 0, 0};
	*n = 2;
	return NVML_SUCCESS;
}
static nvmlReturn_t fake_unsupported(nvmlDevice_t d, unsigned *n, nvmlProcessInfo_t *p)
{
	(void)d;
	(void)n;
	(void)p;
	return NVML_ERROR_NOT_SUPPORTED;
}

TEST(gpu_jobs_list_grows_dedups_and_fails_absent)
{
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 0);
	struct gpu_proc_buf b = {0};
	/* more processes than the first buffer holds: grown and retried */
	CHECK_INT(gpu_procs_list(fake_compute, fake_graphics, NULL, "1/mig2", &f, &b), NVML_SUCCESS);
	CHECK(fval(&f, "gpu_processes.1/mig2") == 101);
	CHECK_STR(fstr(&f, "gpu_process.1/mig2:1000"), "compute");
	CHECK_STR(fstr(&f, "gpu_process.1/mig2:1099"), "compute");
	CHECK_STR(fstr(&f, "gpu_process.1/mig2:7"), "graphics");
	CHECK(fval(&f, "gpu_process_memory_bytes.1/mig2:1002") == 8192);
	CHECK(fval(&f, "gpu_process_memory_bytes.1/mig2:7") == 10);
	ABSENT(&f, "gpu_process_memory_bytes.1/mig2:1001"); /* NVML_VALUE_NOT_AVAILABLE */
	CHECK(fval(&f, "gpu_process_memory_bytes.1/mig2:1000") == 0); /* the compute entry's, not graphics' */
	CHECK_INT(fcount_prefix(&f, "gpu_process."), 101);
	/* a failed call lists nothing: absent, not an empty list */
	frame_reset(&f, 0);
	CHECK_INT(gpu_procs_list(fake_unsupported, fake_graphics, NULL, "0", &f, &b), NVML_ERROR_NOT_SUPPORTED);
	CHECK_INT(f.n, 0);
	/* no processes: a count of 0 */
	fake_n = 0;
	CHECK_INT(gpu_procs_list(fake_compute, NULL, NULL, "0", &f, &b), NVML_SUCCESS);
	CHECK(fval(&f, "gpu_processes.0") == 0);
	CHECK_INT(f.n, 1);
	fake_n = 100;
	gpu_proc_buf_free(&b);
	frame_free(&f);
}

/* ---------------- the collector over a fixture /proc ---------------- */

static void put(const char *pid, const char *file, const char *text, size_t len)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/proc/%s", test_tmpdir(), pid);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/proc/%s/%s", test_tmpdir(), pid, file);
	FILE *f = fopen(p, "w");
	REQUIRE(f);
	fwrite(text, 1, len, f);
	fclose(f);
}

/* a process: its start time, uid, cgroup text and environ (NULL: none) */
static void mkproc(int pid, unsigned start, int uid, const char *cgroup, const char *env, size_t envlen)
{
	char id[16], t[512];
	snprintf(id, sizeof id, "%d", pid);
	char p[4096];
	snprintf(p, sizeof p, "%s/proc", test_tmpdir());
	mkdir(p, 0755);
	int n = snprintf(t, sizeof t, "%d (python) S 1 %d %d 0 -1 4194560 100 0 0 0 50 10 0 0 20 0 4 0 %u 1000 250\n",
			 pid, pid, pid, start);
	put(id, "stat", t, (size_t)n);
	n = snprintf(t, sizeof t, "Name:\tpython\nPid:\t%d\nUid:\t%d\t%d\t%d\t%d\n", pid, uid, uid, uid, uid);
	put(id, "status", t, (size_t)n);
	put(id, "cgroup", cgroup, strlen(cgroup));
	snprintf(p, sizeof p, "%s/proc/%d/environ", test_tmpdir(), pid);
	unlink(p);
	if (env)
		put(id, "environ", env, envlen);
}

static void rmproc(int pid)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/proc/%d'", test_tmpdir(), pid);
	REQUIRE(system(cmd) == 0);
}

static void *start(int64_t series)
{
	struct gpu_jobs_config c = {series, 256};
	struct collect_env env = {fixture_path("proc"), fixture_path("sys")};
	struct buf err = BUF_INIT;
	void *s = NULL;
	REQUIRE(collector_gpu_jobs.apply(&s, NULL, &c, &env, &err));
	buf_free(&err);
	return s;
}

/* One GPU tick: interval 2 s; "DEV=PID,PID;DEV=..." listings; energy
 * "GPU=MJ;..." (NULL: none). */
/* "0=1e12;1=3e12": the GPUs' FLOPs/s estimates (gpu_flops.<gpu>) the
 * next tick() puts in its frame, once */
static const char *next_flops;

static enum collect_status tick(void *s, struct frame *f, const char *lists, const char *energy)
{
	frame_reset(f, 0);
	frame_uint(f, GPU_INTERVAL_KEY, 2);
	char k[128], tmp[512];
	snprintf(tmp, sizeof tmp, "%s", lists ? lists : "");
	char *save = NULL;
	for (char *dev = strtok_r(tmp, ";", &save); dev; dev = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(dev, '=');
		*eq = 0;
		unsigned n = 0;
		for (char *p = eq + 1; *p; n++) {
			long pid = strtol(p, &p, 10);
			snprintf(k, sizeof k, "gpu_process.%s:%ld", dev, pid);
			frame_str(f, k, "compute");
			snprintf(k, sizeof k, "gpu_process_memory_bytes.%s:%ld", dev, pid);
			frame_uint(f, k, 100);
			if (*p == ',')
				p++;
		}
		snprintf(k, sizeof k, "gpu_processes.%s", dev);
		frame_uint(f, k, n);
	}
	if (energy) {
		snprintf(tmp, sizeof tmp, "%s", energy);
		for (char *g = strtok_r(tmp, ";", &save); g; g = strtok_r(NULL, ";", &save)) {
			char *eq = strchr(g, '=');
			*eq = 0;
			snprintf(k, sizeof k, "gpu_energy_mj.%s", g);
			frame_uint(f, k, strtoull(eq + 1, NULL, 10));
		}
	}
	if (next_flops) {
		snprintf(tmp, sizeof tmp, "%s", next_flops);
		for (char *g = strtok_r(tmp, ";", &save); g; g = strtok_r(NULL, ";", &save)) {
			char *eq = strchr(g, '=');
			*eq = 0;
			snprintf(k, sizeof k, "gpu_flops.%s", g);
			frame_float(f, k, strtod(eq + 1, NULL));
		}
		next_flops = NULL;
	}
	return collector_gpu_jobs.collect(s, f);
}

#define SLURM_ENV(id) "PATH=/bin\0SLURM_JOB_ID=" id "\0", sizeof "PATH=/bin\0SLURM_JOB_ID=" id "\0" - 1

TEST(gpu_jobs_pid_exit_and_reuse)
{
	mkproc(10, 500, 5, "0::/user.slice\n", SLURM_ENV("7"));
	void *s = start(64);
	struct frame f;
	frame_init(&f);
	CHECK_INT(tick(s, &f, "0=10", NULL), COLLECT_OK);
	CHECK(fval(&f, "gpu_job_seconds.7") == 0); /* the baseline */
	CHECK_STR(fstr(&f, "gpu_job_kind.7"), "slurm");
	CHECK_STR(fstr(&f, "gpu_job_user.7"), "5");
	CHECK(fval(&f, "gpu_job_memory_bytes.7") == 100);
	tick(s, &f, "0=10", "0=900");
	CHECK(fval(&f, "gpu_job_seconds.7") == 2);
	CHECK(fval(&f, "gpu_job_energy_mj.7") == 900);
	CHECK(fval(&f, "gpu_user_seconds.5") == 2);
	/* pid 10 exits and is reused by another process (a new start time) in
	 * a plain cgroup without SLURM: a new job, not job 7 */
	mkproc(10, 800, 6, "0::/system.slice/other.service\n", NULL, 0);
	tick(s, &f, "0=10", NULL);
	CHECK(fval(&f, "gpu_job_seconds./system.slice/other.service") == 2);
	CHECK_STR(fstr(&f, "gpu_job_user./system.slice/other.service"), "6");
	CHECK(fval(&f, "gpu_job_seconds.7") == 0); /* still known, not on a GPU */
	ABSENT(&f, "gpu_job_memory_bytes.7");
	CHECK(fval(&f, "gpu_user_seconds.6") == 2);
	/* a listed pid whose /proc entry is gone (exited, or another pid
	 * namespace): its GPU time is "unknown"'s, not dropped */
	rmproc(10);
	tick(s, &f, "0=10", NULL);
	CHECK(fval(&f, "gpu_job_seconds.unknown") == 2);
	CHECK_STR(fstr(&f, "gpu_job_kind.unknown"), "unknown");
	CHECK_STR(fstr(&f, "gpu_job_user.unknown"), "unknown");
	CHECK(fval(&f, "gpu_user_seconds.unknown") == 2);
	frame_free(&f);
	collector_gpu_jobs.close(s);
}

TEST(gpu_jobs_unreadable_environ_falls_back_to_cgroup)
{
	/* environ a directory: it opens, its read fails, as EACCES would */
	mkproc(20, 1, 0, "0::/system.slice/slurmstepd.scope/job_99/step_0/user/task_0\n", NULL, 0);
	char p[4096];
	snprintf(p, sizeof p, "%s/proc/20/environ", test_tmpdir());
	REQUIRE(mkdir(p, 0755) == 0);
	/* no environ at all, a Kubernetes pod */
	mkproc(21, 1, 1000,
	       "0::/kubepods.slice/kubepods-pod1234abcd_5678_90ef_1234_567890abcdef.slice/cri-containerd-" CTR
	       ".scope\n",
	       NULL, 0);
	void *s = start(64);
	struct frame f;
	frame_init(&f);
	tick(s, &f, "0=20,21", NULL);
	tick(s, &f, "0=20,21", "0=1000");
	CHECK(fval(&f, "gpu_job_seconds.99") == 1);
	CHECK(fval(&f, "gpu_job_energy_mj.99") == 500);
	CHECK_STR(fstr(&f, "gpu_job_kind.99"), "slurm");
	const char *pod = "1234abcd-5678-90ef-1234-567890abcdef";
	char k[128];
	snprintf(k, sizeof k, "gpu_job_seconds.%s", pod);
	CHECK(fval(&f, k) == 1);
	snprintf(k, sizeof k, "gpu_job_container.%s", pod);
	CHECK_STR(fstr(&f, k), CTR);
	snprintf(k, sizeof k, "gpu_job_kind.%s", pod);
	CHECK_STR(fstr(&f, k), "kubernetes");
	frame_free(&f);
	collector_gpu_jobs.close(s);
}

TEST(gpu_jobs_series_cap_and_other)
{
	mkproc(1, 1, 100, "0::/a.scope\n", NULL, 0);
	mkproc(2, 1, 200, "0::/b.scope\n", NULL, 0);
	mkproc(3, 1, 300, "0::/c.scope\n", NULL, 0);
	void *s = start(1);
	struct frame f;
	frame_init(&f);
	tick(s, &f, "0=1,2", NULL);
	tick(s, &f, "0=1,2", "0=600");
	/* one series of its own; the second job shares the GPU as a job of
	 * its own but is counted under "other" */
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 1);
	CHECK(fval(&f, "gpu_job_seconds.other") == 1);
	CHECK(fval(&f, "gpu_job_energy_mj.other") == 300);
	CHECK_STR(fstr(&f, "gpu_job_kind.other"), "other");
	ABSENT(&f, "gpu_job_seconds./b.scope");
	/* users: capped the same way */
	CHECK(fval(&f, "gpu_user_seconds.100") == 1);
	CHECK(fval(&f, "gpu_user_seconds.other") == 1);
	/* job a leaves: the first new job seen (b, in frame order) takes its
	 * place, c is "other" */
	tick(s, &f, "0=2,3", NULL);
	ABSENT(&f, "gpu_job_seconds./a.scope");
	CHECK(fval(&f, "gpu_job_seconds./b.scope") == 1);
	CHECK(fval(&f, "gpu_job_seconds.other") == 1);
	ABSENT(&f, "gpu_job_seconds./c.scope");
	frame_free(&f);
	collector_gpu_jobs.close(s);
}

TEST(gpu_jobs_mig_energy_and_baselines)
{
	mkproc(1, 1, 0, "0::/a.scope\n", NULL, 0);
	mkproc(2, 1, 0, "0::/b.scope\n", NULL, 0);
	void *s = start(64);
	struct frame f;
	frame_init(&f);
	tick(s, &f, "0/mig0=1;0/mig1=2", NULL);
	tick(s, &f, "0/mig0=1;0/mig1=2", "0=1000;1=5000");
	/* each MIG instance is a device: each job has one for the interval;
	 * the GPU's energy is split between the jobs on its instances; GPU 1
	 * has no job: its energy goes to no one */
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 2);
	CHECK(fval(&f, "gpu_job_seconds./b.scope") == 2);
	CHECK(fval(&f, "gpu_job_energy_mj./a.scope") == 500);
	CHECK(fval(&f, "gpu_job_energy_mj./b.scope") == 500);
	CHECK(fval(&f, "gpu_user_energy_mj.0") == 1000);
	/* mig1's list fails one tick: its next listing is a new baseline */
	tick(s, &f, "0/mig0=1", NULL);
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 2);
	CHECK(fval(&f, "gpu_job_seconds./b.scope") == 0);
	tick(s, &f, "0/mig0=1;0/mig1=2", NULL);
	CHECK(fval(&f, "gpu_job_seconds./b.scope") == 0);
	tick(s, &f, "0/mig0=1;0/mig1=2", NULL);
	CHECK(fval(&f, "gpu_job_seconds./b.scope") == 2);
	frame_free(&f);
	collector_gpu_jobs.close(s);
}

/* FLOPs per job: each GPU's estimate (a rate) times the period, split
 * among the jobs on it like its energy; absent until a GPU has one. */
TEST(gpu_jobs_flops_split_like_energy)
{
	mkproc(1, 1, 0, "0::/a.scope\n", NULL, 0);
	mkproc(2, 1, 0, "0::/b.scope\n", NULL, 0);
	void *s = start(64);
	struct frame f;
	frame_init(&f);
	next_flops = "0=1e12;1=3e12"; /* the baseline tick: nobody charged yet */
	tick(s, &f, "0=1,2;1=1", NULL);
	CHECK_INT(fcount_prefix(&f, "gpu_job_flop"), 0);
	tick(s, &f, "0=1,2;1=1", NULL);
	CHECK_INT(fcount_prefix(&f, "gpu_job_flop"), 0); /* no estimate: absent, not 0 */
	next_flops = "0=1e12;1=3e12";
	tick(s, &f, "0=1,2;1=1", NULL);
	/* GPU 0: 2e12 over the 2 s period, half each; GPU 1: 6e12, all a's */
	CHECK(fval(&f, "gpu_job_flop./a.scope") == 7e12);
	CHECK(fval(&f, "gpu_job_flop./b.scope") == 1e12);
	CHECK(fval(&f, "gpu_user_flop.0") == 8e12);
	frame_free(&f);
	collector_gpu_jobs.close(s);
}

TEST(gpu_jobs_absent_without_lists)
{
	mkproc(1, 1, 0, "0::/a.scope\n", NULL, 0);
	void *s = start(64);
	struct frame f;
	frame_init(&f);
	tick(s, &f, "0=1", NULL);
	tick(s, &f, "0=1", NULL);
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 2);
	/* NVML could not list any device's processes: nothing, never 0 */
	CHECK_INT(tick(s, &f, NULL, "0=100"), COLLECT_IDLE);
	CHECK_INT(fcount_prefix(&f, "gpu_job"), 0);
	CHECK_INT(fcount_prefix(&f, "gpu_user"), 0);
	tick(s, &f, "0=1", NULL);
	tick(s, &f, "0=1", NULL);
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 2);
	/* no GPU collection at all this tick (hung, or none) */
	frame_reset(&f, 0);
	CHECK_INT(collector_gpu_jobs.collect(s, &f), COLLECT_IDLE);
	CHECK_INT(f.n, 0);
	/* the listing after it is a new baseline */
	tick(s, &f, "0=1", NULL);
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 0);
	tick(s, &f, "0=1", NULL);
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 2);
	/* an empty list is a measurement: the known job has 0 more */
	CHECK_INT(tick(s, &f, "0=", NULL), COLLECT_OK);
	CHECK(fval(&f, "gpu_job_seconds./a.scope") == 0);
	frame_free(&f);
	collector_gpu_jobs.close(s);
}
