/*
 * test_kernel.c - the procfs collector over fixture trees: every parser,
 * deltas, counter wrap vs reset, CPU hotplug, devices coming and going,
 * malformed input.
 */
#include <math.h>
#include <unistd.h>

#include "core/json.h"
#include "daemon/collect/counter.h"
#include "daemon/collect/kernel.h"
#include "fixture.h"
#include "test.h"

static struct kernel_collector *kc_new(const char *scenario, const char *tick)
{
	fixture_tick(scenario, tick);
	return kernel_collector_new(fixture_path("proc"), fixture_path("sys"), NULL);
}

static void tick(struct kernel_collector *k, struct frame *f, const char *scenario, const char *t)
{
	fixture_tick(scenario, t);
	frame_reset(f, 0);
	kernel_collect(k, f);
}

TEST(counter_delta_wrap_and_reset)
{
	uint64_t d = 0;
	CHECK(counter_delta(10, 25, &d) && d == 15);
	CHECK(counter_delta(4294967000u, 1000, &d) && d == 1296);         /* 32-bit wrap */
	CHECK(!counter_delta(10000000000ull, 5, &d));                     /* 64-bit value went down: reset */
	CHECK(!counter_delta(1000000, 3, &d));                            /* would be a 4e9 jump: reset */
	CHECK(counter_delta(UINT32_MAX, 0, &d) && d == 1);
}

TEST(kernel_basic_first_tick_absolute_only)
{
	struct kernel_collector *k = kc_new("basic", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "basic", "t0");
	CHECK_INT(fval(&f, "uptime"), 86400);
	CHECK_INT(fval(&f, "mem_total_bytes"), 16384000ll * 1024);
	CHECK_INT(fval(&f, "mem_available_bytes"), 12000000ll * 1024);
	CHECK_INT(fval(&f, "swap_used_bytes"), 500000ll * 1024);
	CHECK_NEAR(fval(&f, "load1"), 0.5, 1e-12);
	CHECK_NEAR(fval(&f, "load15"), 0.3, 1e-12);
	CHECK_INT(fval(&f, "procs_running"), 3);
	CHECK_INT(fval(&f, "cpus_online"), 2);
	CHECK_INT(fval(&f, "cpus_present"), 2);
	/* deltas need two reads: absent, not zero */
	ABSENT(&f, "cpu_util");
	ABSENT(&f, "cpu_u_ms.cpu0");
	ABSENT(&f, "ctxt");
	/* an interface's or disk's first tick sets its baseline: no delta
	 * (absent, never 0: nothing was measured), as docs/metrics.md says */
	ABSENT(&f, "rx_bytes.eth0");
	ABSENT(&f, "disk_reads.sda");
	ABSENT(&f, "disk_reads.loop0"); /* loop devices are not storage */
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_basic_deltas)
{
	struct kernel_collector *k = kc_new("basic", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "basic", "t0");
	tick(k, &f, "basic", "t1");
	long hz = sysconf(_SC_CLK_TCK);
	double ms = 1000.0 / (double)hz;
	/* aggregate: d = user 100, nice 0, sys 100, idle 700, steal 15 -> total 915 */
	CHECK_NEAR(fval(&f, "cpu_util"), 100.0 * (1.0 - 700.0 / 915.0), 1e-9);
	CHECK_NEAR(fval(&f, "cpu_u"), 100.0 * 100.0 / 915.0, 1e-9);
	CHECK_NEAR(fval(&f, "cpu_i"), 100.0 * 700.0 / 915.0, 1e-9);
	/* the other modes, for dynolog_cpu_mode_ratio: all eight add up to 1 */
	CHECK(fval(&f, "@cpu_ratio_steal") == 15.0 / 915.0);
	CHECK(fval(&f, "@cpu_ratio_nice") == 0);
	CHECK_NEAR((fval(&f, "cpu_u") + fval(&f, "cpu_s") + fval(&f, "cpu_i")) / 100 + fval(&f, "@cpu_ratio_nice") +
			   fval(&f, "@cpu_ratio_iowait") + fval(&f, "@cpu_ratio_irq") + fval(&f, "@cpu_ratio_softirq") +
			   fval(&f, "@cpu_ratio_steal"),
		   1.0, 1e-12);
	CHECK_INT(fval(&f, "cpu_u_ms"), (long long)(100 * ms + 0.5));
	CHECK_INT(fval(&f, "cpu_z_ms"), (long long)(15 * ms + 0.5));
	/* per CPU */
	CHECK_INT(fval(&f, "cpu_u_ms.cpu0"), (long long)(40 * ms + 0.5));
	CHECK_INT(fval(&f, "cpu_i_ms.cpu1"), (long long)(350 * ms + 0.5));
	CHECK_NEAR(fval(&f, "cpu_util.cpu1"), 100.0 * (1.0 - 350.0 / 468.0), 1e-9); /* 60+50+350+8 */
	CHECK_INT(fval(&f, "ctxt"), 1000);
	CHECK_INT(fval(&f, "intr"), 500);
	CHECK_INT(fval(&f, "forks"), 10);
	CHECK_NEAR(fval(&f, "load1"), 1.25, 1e-12);
	CHECK_INT(fval(&f, "uptime"), 86460);
	/* network */
	CHECK_INT(fval(&f, "rx_bytes.eth0"), 600000);
	CHECK_INT(fval(&f, "rx_packets.eth0"), 500);
	CHECK_INT(fval(&f, "rx_drops.eth0"), 1);
	CHECK_INT(fval(&f, "tx_bytes.eth0"), 100000);
	CHECK_INT(fval(&f, "tx_packets.lo"), 6);
	/* disks: sectors are 512 bytes */
	CHECK_INT(fval(&f, "disk_reads.sda"), 100);
	CHECK_INT(fval(&f, "disk_read_bytes.sda"), 8000 * 512);
	CHECK_INT(fval(&f, "disk_written_bytes.sda"), 16000 * 512);
	CHECK_INT(fval(&f, "disk_write_ms.sda"), 100);
	CHECK_INT(fval(&f, "disk_io_ms.sda"), 300);
	CHECK_INT(fval(&f, "disk_io_in_progress.sda"), 2);
	CHECK_INT(fval(&f, "disk_reads.sda1"), 90);
	frame_free(&f);
	kernel_collector_free(k);
}

/* Issue #15 item 6: utilization is (t - idle) / t, one division of exact
 * integers: 30 of 200 ticks busy is 15, not 100 * (1 - 0.85) =
 * 15.000000000000002, in the JSON log (shortest round-trip form) too. */
TEST(kernel_utilization_exact_shortest_form)
{
	struct kernel_collector *k = kc_new("ratio", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "ratio", "t0");
	tick(k, &f, "ratio", "t1");
	static const char *const keys[] = {"cpu_util", "cpu_util.cpu0", "cpu_util.cpu1"};
	for (size_t i = 0; i < 3; i++) {
		char t[40];
		json_fmt_f64(t, fval(&f, keys[i]));
		if (strcmp(t, "15") != 0)
			test_fail(__FILE__, __LINE__, "%s = %s, want 15", keys[i], t);
	}
	frame_free(&f);
	kernel_collector_free(k);
}

/* Issue #15 item 6: the kernel's own totals for Prometheus' node_exporter
 * families ("@" keys, left out of the JSON log): as read, from the first
 * tick on; a CPU that is offline, or a counter the kernel wrapped, is
 * published as the kernel has it (absent; lower: a counter reset). */
TEST(kernel_totals_for_node_exporter_names)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct kernel_collector *k = kc_new("basic", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "basic", "t0");
	CHECK_NEAR(fval(&f, "@cpu_user_s.cpu0"), 500.0 / (double)hz, 1e-12); /* first tick: no delta needed */
	tick(k, &f, "basic", "t1");
	CHECK_NEAR(fval(&f, "@cpu_user_s.cpu0"), 540.0 / (double)hz, 1e-12);
	CHECK_NEAR(fval(&f, "@cpu_idle_s.cpu1"), 4350.0 / (double)hz, 1e-12);
	CHECK_NEAR(fval(&f, "@cpu_steal_s.cpu1"), 10.0 / (double)hz, 1e-12);
	CHECK_NEAR(fval(&f, "@cpu_guest_s.cpu1"), 0, 1e-12);
	ABSENT(&f, "@cpu_user_s.cpu"); /* no aggregate: node_exporter has none */
	CHECK_INT(fval(&f, "@ctxt"), 501000);
	CHECK_INT(fval(&f, "@forks"), 12010);
	CHECK_INT(fval(&f, "@rx_bytes.eth0"), 5600000);
	CHECK_INT(fval(&f, "@tx_drops.eth0"), 1);
	CHECK(!isnan(fval(&f, "@disk_read_bytes.sda")) && (int64_t)fval(&f, "@disk_read_bytes.sda") % 512 == 0);
	frame_free(&f);
	kernel_collector_free(k);

	k = kc_new("hotplug", "t0");
	frame_init(&f);
	tick(k, &f, "hotplug", "t0");
	CHECK(!isnan(fval(&f, "@cpu_user_s.cpu2")));
	tick(k, &f, "hotplug", "t1"); /* cpu2 offline: absent, not 0 */
	CHECK_INT(fcount_prefix(&f, "@cpu_user_s.cpu2"), 0);
	CHECK(!isnan(fval(&f, "@cpu_user_s.cpu0")));
	frame_free(&f);
	kernel_collector_free(k);

	k = kc_new("wrap", "t0");
	frame_init(&f);
	tick(k, &f, "wrap", "t0");
	CHECK_INT(fval(&f, "@rx_bytes.eth0"), 4294967000LL);
	tick(k, &f, "wrap", "t1");
	CHECK_INT(fval(&f, "@rx_bytes.eth0"), 1000); /* the kernel's value: Prometheus sees a reset */
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_counter_wrap_and_reset)
{
	struct kernel_collector *k = kc_new("wrap", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "wrap", "t0");
	tick(k, &f, "wrap", "t1");
	CHECK_INT(fval(&f, "rx_bytes.eth0"), 1296); /* 32-bit wrap */
	ABSENT(&f, "tx_bytes.eth0");                /* 64-bit counter went down: reset, no delta */
	CHECK_INT(fval(&f, "rx_packets.eth0"), 0);
	CHECK_INT(fval(&f, "ctxt"), 5);
	CHECK_INT(fval(&f, "disk_reads.sda"), 16);
	tick(k, &f, "wrap", "t2");
	CHECK_INT(fval(&f, "rx_bytes.eth0"), 1000);
	CHECK_INT(fval(&f, "tx_bytes.eth0"), 100); /* rebaselined after the reset */
	CHECK_INT(fval(&f, "ctxt"), 10);
	frame_free(&f);
	kernel_collector_free(k);
}

/* A CPU counter that jumps to near 2^64 (a corrupt read, or fuzzed input)
 * is not a real delta: the tick publishes no CPU time for it (the int64
 * conversion used to overflow: "cpu_u_ms":-9223372036854775808), the
 * counter falling back is a reset, and the next sane tick is published. */
TEST(kernel_cpu_absurd_jump_is_skipped)
{
	struct kernel_collector *k = kc_new("cpujump", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "cpujump", "t0");
	tick(k, &f, "cpujump", "t1");
	ABSENT(&f, "cpu_u_ms");
	ABSENT(&f, "cpu_util");
	ABSENT(&f, "cpu_u_ms.cpu0");
	ABSENT(&f, "cpu_util.cpu0");
	CHECK_INT(fval(&f, "ctxt"), 10); /* the rest of the tick is kept */
	for (size_t i = 0; i < f.n; i++)
		if (f.vals[i].type == FV_INT)
			CHECK(f.vals[i].v.i >= 0);
	tick(k, &f, "cpujump", "t2"); /* back down: a reset, rebaselined */
	ABSENT(&f, "cpu_u_ms");
	tick(k, &f, "cpujump", "t3");
	long hz = sysconf(_SC_CLK_TCK);
	CHECK_INT(fval(&f, "cpu_u_ms"), (long long)(100 * (1000.0 / (double)hz) + 0.5));
	CHECK_INT(fval(&f, "cpu_u_ms.cpu0"), (long long)(100 * (1000.0 / (double)hz) + 0.5));
	CHECK_NEAR(fval(&f, "cpu_util"), 100.0 * 2.0 / 3.0, 1e-9);
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_cpu_hotplug)
{
	struct kernel_collector *k = kc_new("hotplug", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "hotplug", "t0");
	CHECK_INT(fval(&f, "cpus_online"), 4);
	tick(k, &f, "hotplug", "t1"); /* cpu2 offline */
	CHECK_INT(fval(&f, "cpus_online"), 3);
	CHECK_INT(fval(&f, "cpus_present"), 3);
	CHECK(!isnan(fval(&f, "cpu_u_ms.cpu0")));
	CHECK_INT(fcount_prefix(&f, "cpu_util.cpu2"), 0);
	CHECK_INT(fcount_prefix(&f, "cpu_u_ms.cpu2"), 0);
	tick(k, &f, "hotplug", "t2"); /* cpu2 back, counters restarted: baseline only */
	CHECK_INT(fval(&f, "cpus_online"), 4);
	ABSENT(&f, "cpu_u_ms.cpu2");
	CHECK(!isnan(fval(&f, "cpu_u_ms.cpu3")));
	tick(k, &f, "hotplug", "t3");
	long hz = sysconf(_SC_CLK_TCK);
	CHECK_INT(fval(&f, "cpu_u_ms.cpu2"), (long long)(20 * 1000.0 / (double)hz + 0.5));
	CHECK_NEAR(fval(&f, "cpu_util.cpu2"), 100.0 * 40.0 / 100.0, 1e-9);
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_devices_appear_and_vanish)
{
	struct kernel_collector *k = kc_new("devices", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "devices", "t0");
	tick(k, &f, "devices", "t1");
	CHECK_INT(fcount_prefix(&f, "rx_bytes.lo"), 0); /* vanished: not reported */
	CHECK_INT(fval(&f, "rx_bytes.eth0"), 500);
	ABSENT(&f, "rx_bytes.eth1"); /* new: its baseline first, no delta */
	CHECK_INT(fcount_prefix(&f, "disk_reads.sda"), 0);
	ABSENT(&f, "disk_reads.nvme0n1");
	tick(k, &f, "devices", "t2");
	CHECK_INT(fval(&f, "rx_bytes.eth1"), 100);
	CHECK_INT(fval(&f, "disk_reads.nvme0n1"), 20);
	CHECK_INT(fval(&f, "disk_read_bytes.nvme0n1"), 160 * 512);
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_nic_filter)
{
	fixture_tick("basic", "t0");
	struct kernel_options o = {true, true, "eth,en"};
	struct kernel_collector *k = kernel_collector_new(fixture_path("proc"), fixture_path("sys"), &o);
	struct frame f;
	frame_init(&f);
	tick(k, &f, "basic", "t0");
	/* the first tick only sets each interface's baseline: no delta (absent,
	 * never 0), the kernel's total already there */
	CHECK(isnan(fval(&f, "rx_bytes.eth0")));
	CHECK(!isnan(fval(&f, "@rx_bytes.eth0")));
	CHECK(isnan(fval(&f, "disk_reads.sda")));
	tick(k, &f, "basic", "t0");
	CHECK(!isnan(fval(&f, "rx_bytes.eth0")));
	CHECK_INT(fcount_prefix(&f, "rx_bytes.lo"), 0);
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_malformed_input_is_absent_not_zero)
{
	struct kernel_collector *k = kc_new("malformed", "t0");
	struct frame f;
	frame_init(&f);
	tick(k, &f, "malformed", "t0");
	tick(k, &f, "malformed", "t0");
	ABSENT(&f, "uptime");
	ABSENT(&f, "cpu_util");
	ABSENT(&f, "ctxt");
	ABSENT(&f, "load1");
	ABSENT(&f, "cpus_online");
	ABSENT(&f, "mem_total_bytes");
	ABSENT(&f, "swap_total_bytes");           /* overflowing value */
	CHECK_INT(fval(&f, "mem_available_bytes"), 1000 * 1024); /* the good line still counts */
	ABSENT(&f, "procs_running");
	CHECK_INT(fcount_prefix(&f, "rx_"), 0);
	CHECK_INT(fcount_prefix(&f, "disk_"), 0);
	/* each unusable file is said, once, by name */
	CHECK(strstr(test_stderr(), "proc/stat has no aggregate cpu line") != NULL);
	CHECK(strstr(test_stderr(), "cpu/online: malformed cpu list") != NULL);
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_missing_root)
{
	struct kernel_collector *k = kernel_collector_new("/nonexistent/proc", "/nonexistent/sys", NULL);
	struct frame f;
	frame_init(&f);
	CHECK(!kernel_collect(k, &f));
	CHECK_INT(f.n, 0);
	/* absent, and why: the warnings name the files */
	CHECK(strstr(test_stderr(), "cannot read /nonexistent/proc/stat: CPU metrics unavailable") != NULL);
	CHECK(strstr(test_stderr(), "cannot read /nonexistent/proc/meminfo") != NULL);
	frame_free(&f);
	kernel_collector_free(k);
}

TEST(kernel_live_proc)
{
	/* the real /proc parses: the keys every Linux host has are present */
	struct kernel_collector *k = kernel_collector_new("/proc", "/sys", NULL);
	struct frame f;
	frame_init(&f);
	kernel_collect(k, &f);
	usleep(20000);
	frame_reset(&f, 0);
	kernel_collect(k, &f);
	CHECK(fval(&f, "uptime") > 0);
	CHECK(fval(&f, "mem_total_bytes") > 0);
	CHECK(fval(&f, "cpus_present") >= 1);
	CHECK(fcount_prefix(&f, "rx_bytes.lo") == 1);
	frame_free(&f);
	kernel_collector_free(k);
}
