/*
 * collect_cycle.c - CPU time of one host-telemetry collection cycle on this
 * machine's live /proc, measured in-process with the thread CPU clock.
 *
 * Prints, per cycle: reading /proc/stat once (the baseline: the least any
 * procfs collector must do), the kernel collector alone, kernel + tracked
 * process (ourselves), and the full tick the daemon does with every sink
 * (JSON line, history, Prometheus page, OTLP payload), each as a ratio to
 * the baseline.  Usage: collect_cycle [CYCLES]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "daemon/collect/kernel.h"
#include "daemon/collect/proc.h"
#include "daemon/publish/history.h"
#include "daemon/publish/jsonlog.h"
#include "daemon/publish/otlp.h"
#include "daemon/publish/prometheus.h"

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	if (n < 10)
		n = 10;
	log_init("collect_cycle", LOG_LEVEL_ERROR);
	char buf[65536];

	double t0 = cpu_ns();
	for (int i = 0; i < n; i++) {
		int fd = open("/proc/stat", O_RDONLY);
		while (read(fd, buf, sizeof buf) > 0)
			;
		close(fd);
	}
	double base = (cpu_ns() - t0) / n;

	struct kernel_collector *k = kernel_collector_new("/proc", "/sys", NULL);
	struct frame f;
	frame_init(&f);
	kernel_collect(k, &f);
	t0 = cpu_ns();
	for (int i = 0; i < n; i++) {
		frame_reset(&f, i);
		kernel_collect(k, &f);
	}
	double kern = (cpu_ns() - t0) / n;
	size_t keys = f.n;

	struct proc_collector *pc = proc_collector_new("/proc");
	proc_track(pc, (int)getpid());
	t0 = cpu_ns();
	for (int i = 0; i < n; i++) {
		frame_reset(&f, i);
		kernel_collect(k, &f);
		proc_collect(pc, &f);
	}
	double kp = (cpu_ns() - t0) / n;

	struct history *h = history_new(3600, 60, 0, 20000);
	struct prom_sink *p = prom_new_offline();
	struct buf line = BUF_INIT, page = BUF_INIT, otlp = BUF_INIT;
	size_t page_len = 0, line_len = 0, otlp_len = 0;
	t0 = cpu_ns();
	for (int i = 0; i < n; i++) {
		frame_reset(&f, (int64_t)i * 60000000000ll);
		kernel_collect(k, &f);
		proc_collect(pc, &f);
		buf_reset(&line);
		jsonlog_render(&f, JSONLOG_UPSTREAM, &line);
		history_add(h, &f);
		prom_update(p, 0, &f);
		buf_reset(&page);
		prom_render(p, NULL, 0, &page);
		line_len = line.len;
		page_len = page.len;
	}
	double full = (cpu_ns() - t0) / n;
	t0 = cpu_ns();
	for (int i = 0; i < n; i++) {
		buf_reset(&otlp);
		otlp_render(&f, 1, "dynolog", "host", &otlp);
	}
	double ot = (cpu_ns() - t0) / n;
	otlp_len = otlp.len;

	printf("collect_cycle: %d cycles on live /proc, %zu keys per frame\n", n, keys);
	printf("  %-44s %9.1f us   1.00x (baseline)\n", "read /proc/stat once", base / 1e3);
	printf("  %-44s %9.1f us %6.2fx\n", "kernel collector (procfs, per-CPU)", kern / 1e3, kern / base);
	printf("  %-44s %9.1f us %6.2fx\n", "kernel + 1 tracked process", kp / 1e3, kp / base);
	printf("  %-44s %9.1f us %6.2fx   (JSON %zu B, page %zu B)\n", "full tick: + JSON + history + Prometheus",
	       full / 1e3, full / base, line_len, page_len);
	printf("  %-44s %9.1f us %6.2fx   (%zu B)\n", "OTLP payload render (when enabled)", ot / 1e3, ot / base,
	       otlp_len);
	printf("  target <= 300 us per default cycle (kernel + process + JSON/history/Prometheus): %s\n",
	       full <= 300e3 ? "met" : "NOT met");
	buf_free(&line);
	buf_free(&page);
	buf_free(&otlp);
	prom_free(p);
	history_free(h);
	proc_collector_free(pc);
	frame_free(&f);
	kernel_collector_free(k);
	return 0;
}
