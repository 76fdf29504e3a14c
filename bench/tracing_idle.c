/*
 * tracing_idle.c - does the daemon sleep between events with the IPC
 * monitor on?
 *
 * Starts the real daemon (build/dynolog, next to this bench's directory)
 * with --enable_ipc_monitor and RPC on, lets it settle, then counts its
 * context switches (/proc/PID/status voluntary_ctxt_switches: one per
 * wake-up from epoll_wait) and CPU time over an idle window.  Then the same
 * with 100 registered fake Kineto clients polling every 5 s, as on a busy
 * 8-GPU host with many worker processes (expected: ~20 wake-ups/s, one per
 * poll, and nothing else).  Baseline measured the same way in the same run:
 * a child process looping on usleep(10 ms) - upstream's IPC monitor loop,
 * which wakes 100 times a second whether or not anybody polls.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/procstat.h"
#include "daemon/ipc/ipc_wire.h"

#define WINDOW_S 5

static long long status_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long long v = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = atoll(line + strlen(key) + 1);
	fclose(f);
	return v;
}

static double cpu_s(pid_t pid)
{
	struct procstat st;
	if (!procstat_read((int)pid, &st) || st.nfields < 12)
		return -1;
	return (double)(st.utime + st.stime) / (double)sysconf(_SC_CLK_TCK);
}

struct sample {
	double wakeups_per_s, cpu_pct;
};

static struct sample observe(pid_t pid, int seconds, void (*during)(void))
{
	long long w0 = status_field(pid, "voluntary_ctxt_switches:");
	double c0 = cpu_s(pid);
	int64_t t0 = clock_mono_ns();
	if (during)
		during();
	else
		sleep((unsigned)seconds);
	double dt = (clock_mono_ns() - t0) / 1e9;
	long long w1 = status_field(pid, "voluntary_ctxt_switches:");
	double c1 = cpu_s(pid);
	struct sample s = {(w1 - w0) / dt, 100.0 * (c1 - c0) / dt};
	return s;
}

static char ipc_name[64];
static int clients[100];

/* 100 clients, each polling every 5 s, spread evenly over the window. */
static void poll_clients(void)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct buf err = BUF_INIT, m = BUF_INIT;
	ipc_addr(ipc_name, NULL, &sa, &len, &err);
	int64_t t0 = clock_mono_ns();
	for (int tick = 0; tick < WINDOW_S * 20; tick++) {
		int i = tick % 100;
		int32_t anc[] = {200000 + i, 4000};
		buf_reset(&m);
		ipc_encode_req(&m, 2, 0, anc, 2);
		sendto(clients[i], m.data, m.len, MSG_DONTWAIT, (struct sockaddr *)&sa, len);
		int64_t next = t0 + (int64_t)(tick + 1) * NS_PER_SEC / 20;
		int64_t now = clock_mono_ns();
		if (next > now)
			usleep((useconds_t)((next - now) / 1000));
		char rx[256];
		while (recv(clients[i], rx, sizeof rx, MSG_DONTWAIT) > 0)
			;
	}
	buf_free(&m);
	buf_free(&err);
}

int main(int argc, char **argv)
{
	(void)argc;
	char exe[PATH_MAX], daemon_path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return 1;
	exe[n] = 0;
	*strrchr(exe, '/') = 0; /* .../build/bench */
	snprintf(daemon_path, sizeof daemon_path, "%s/../dynolog", exe);
	snprintf(ipc_name, sizeof ipc_name, "dynolog_bench_idle_%d", (int)getpid());
	char name_flag[96];
	snprintf(name_flag, sizeof name_flag, "--ipc_endpoint_name=%s", ipc_name);
	pid_t d = fork();
	if (d == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 2);
		dup2(devnull, 1);
		execl(daemon_path, "dynolog", "--enable_ipc_monitor", "--port=0", "--use_JSON=false", name_flag,
		      (char *)NULL);
		_exit(127);
	}
	sleep(1); /* start-up and the first kernel-monitor tick */
	if (waitpid(d, NULL, WNOHANG) != 0) {
		fprintf(stderr, "%s: cannot run %s\n", argv[0], daemon_path);
		return 1;
	}
	struct sample idle = observe(d, WINDOW_S, NULL);
	struct buf err = BUF_INIT;
	for (int i = 0; i < 100; i++) {
		char nm[80];
		snprintf(nm, sizeof nm, "dynoconfigclientidle-%d-%03d", (int)getpid(), i);
		clients[i] = ipc_bind(nm, NULL, &err);
	}
	struct sample busy = observe(d, WINDOW_S, poll_clients);
	kill(d, SIGTERM);
	waitpid(d, NULL, 0);
	for (int i = 0; i < 100; i++)
		close(clients[i]);
	buf_free(&err);

	pid_t b = fork();
	if (b == 0) {
		for (;;)
			usleep(10000);
	}
	usleep(200000);
	struct sample base = observe(b, WINDOW_S, NULL);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);

	printf("tracing_idle: daemon wake-ups with the IPC monitor on, %d s windows\n", WINDOW_S);
	printf("  %-52s %10s %8s\n", "case", "wakeups/s", "CPU %");
	printf("  %-52s %10.2f %8.3f\n", "dynolog idle (IPC + RPC on, nobody polling)", idle.wakeups_per_s, idle.cpu_pct);
	printf("  %-52s %10.2f %8.3f\n", "dynolog, 100 clients polling every 5 s (20 polls/s)", busy.wakeups_per_s,
	       busy.cpu_pct);
	printf("  %-52s %10.2f %8.3f\n", "baseline: 10 ms polling loop (upstream IPC monitor)", base.wakeups_per_s,
	       base.cpu_pct);
	printf("  idle wake-ups vs baseline: %.4fx; target (no wake-ups between events): %s\n",
	       idle.wakeups_per_s / (base.wakeups_per_s > 0 ? base.wakeups_per_s : 1),
	       idle.wakeups_per_s < 0.5 ? "met" : "MISSED");
	return 0;
}
