/*
 * soak.c - the abuse soak driver: every abuse at once against one running
 * dynolog, and what it costs the daemon and its honest clients.
 *
 * bench/soak.sh starts the daemon (IPC monitor on a private endpoint name,
 * RPC and Prometheus on free loopback ports, OTLP pointed at a closed
 * port, kernel interval 1 s, JSON log to a file, `prlimit --nofile=4096`
 * like the unit file) and runs this program against it; see the notes at
 * the top of that script.  Threads, all bounded by the run's deadline
 * (every socket call has a timeout of at most 5 s):
 *
 *   abuse
 *   - churn (SOAK_CHURN_THREADS, default 8): connect, one valid request
 *     (getStatus, getVersion, getMetrics, setKinetOnDemandRequest for a
 *     flood job, getProcesses, dcgmProfPause), read the answer, close -
 *     upstream dyno's pattern, as fast as the daemon answers; each thread
 *     from its own source address 127.0.0.<n> so the churn cannot exhaust
 *     the legit client's ephemeral ports;
 *   (the two datagram abuses run as uid 65534, nobody, when the driver
 *   runs as root: another local user than the legit clients)
 *   - registry flood: one socket sends Kineto `req` polls (n = 1..64 pids,
 *     a new fake leaf pid each time, ancestors and job ids random) and a
 *     few `ctxt`, connected to the daemon's endpoint so a blocking send
 *     waits exactly until the daemon drains its queue ("as fast as the
 *     daemon takes them"); the answers are read and counted;
 *   - malformed datagrams: short, size mismatch, type without NUL, n = 0,
 *     n = 65, negative n, bad ctxt size, unknown type, over 64 KiB, empty,
 *     absurd size, and valid polls from an unnamed (unbound) socket;
 *   - malformed RPC frames (2 threads): length 0, -1, 2^31-1, just over
 *     1 MiB, truncated prefix/body, non-JSON, array, no fn, numeric fn,
 *     unknown fn, 100,000 nested brackets, binary junk, a valid request
 *     followed by junk; each on its own connection, closed right after;
 *   - slow readers (SOAK_SLOW_CONNS, default 160): a tiny receive buffer,
 *     then {"fn":"getProcesses"} once, or 64 of them (or of getMetrics)
 *     pipelined with "keepalive":true, and never a read; each held 6 s
 *     (past the daemon's 5 s deadline), then replaced;
 *   - slowloris (SOAK_LORIS_CONNS, default 128): a frame announcing 1000
 *     bytes, trickled one byte a second, held 6 s, then replaced.
 *     Slow readers + slowloris exceed the daemon's 256 connection slots,
 *     so its eviction runs all the time;
 *   - Prometheus: GET /metrics every 100 ms on a fresh connection (the
 *     status line and a complete answer are checked);
 *   - OTLP: the daemon's endpoint is a closed port (its retry path runs).
 *   legit
 *   - RPC: every 200 ms a fresh connection with {"fn":"getStatus"}, as
 *     upstream dyno; answered = a frame whose body is a JSON object with a
 *     numeric "status" within 5 s (latency recorded);
 *   - Kineto: a process with its own socket name and real pid ancestry
 *     polls every second with Kineto's timing: a full daemon queue
 *     (EAGAIN) is retried 10 times after 10, 20, 40, ... 5120 ms (~10 s,
 *     as Kineto, whose polling thread waits meanwhile: the next poll comes
 *     later), counted "send failed" only when all 11 attempts fail (or
 *     the 11th succeeds: Kineto's quirk); then nine 10 ms receive
 *     attempts; answered = a `req` datagram within that window, as Kineto
 *     sees it; an answer that comes later is counted "late".
 *
 * The main thread samples the daemon every 100 ms (VmRSS from
 * /proc/PID/status, liveness), follows the JSON log (the timestamps of its
 * lines: one per kernel tick) and prints a progress line every 10% of the
 * run; at the end the report: peak RSS (VmHWM and sampled VmRSS) against
 * the unit file's MemoryHigh/MemoryMax, the longest gap between ticks, the
 * share of legit requests answered, abuse volumes, daemon CPU and the time
 * its loop thread was runnable but waiting for a CPU (schedstat).  It never
 * judges the figures.  Exit status: 0 the benchmark ran (whatever the
 * figures), 3 the daemon died, 4 the driver's own watchdog fired, 2 usage.
 * A safety cap (SOAK_RSS_CAP_MB, default 1024) stops the run early, loudly,
 * if the daemon's RSS passes it, so an unbounded daemon cannot take the
 * host down with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "core/procstat.h"

#define NS  1000000000ll
#define MS  1000000ll
#define MIB (1024.0 * 1024.0)
/* packaging/dynolog.service */
#define UNIT_MEMORY_HIGH_MIB 32.0
#define UNIT_MEMORY_MAX_MIB  64.0

#define SLOW_HOLD_NS   (6 * NS)
#define MAX_FRAME      (256u << 20)
#define FAKE_PID_BASE  0x10000000 /* above any real pid (pid_max <= 2^22) */
#define FLOOD_JOB_BASE 1000000
#define FLOOD_JOBS     8192 /* more than the registry's 4096 job ids */
#define LEGIT_JOB      0
#define MAX_LAT        200000

static struct {
	int pid, rpc_port, prom_port;
	const char *ipc_name, *json_log;
	double seconds, interval_s;
	int rss_cap_mb, churn_threads, slow_conns, loris_conns;
	const char *abuse;
} opt = {.seconds = 600,
         .interval_s = 1,
         .rss_cap_mb = 1024,
         .churn_threads = 8,
         .slow_conns = 160,
         .loris_conns = 128,
         .abuse = "all"};

static const char *const abuse_names[] = {"churn", "flood", "baddgram", "badframe", "slow", "loris", "prom"};

/* Whether abuse `name` is on: --abuse is "all" or a comma list of names. */
static bool abuse_on(const char *name)
{
	if (!strcmp(opt.abuse, "all"))
		return true;
	size_t n = strlen(name);
	for (const char *p = opt.abuse; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

static atomic_bool stopping;
static int64_t t_start, t_end; /* monotonic ns */

typedef _Atomic uint64_t counter;
static struct {
	counter churn_conn, churn_ok, churn_noanswer, churn_connfail;
	counter flood_req, flood_ctxt, flood_replies, flood_full;
	counter baddg_sent, baddg_replies;
	counter badrpc_sent, badrpc_connfail;
	counter slow_opened, slow_reqs, slow_reset, slow_connfail;
	counter loris_opened, loris_reset, loris_connfail;
	counter prom_sent, prom_200, prom_other, prom_connfail, prom_fail;
	counter lrpc_sent, lrpc_ok, lrpc_bad, lrpc_noanswer, lrpc_connfail;
	counter lipc_sent, lipc_ok, lipc_sendfail, lipc_noanswer, lipc_bad, lipc_late;
} C;

static void inc(counter *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}
static uint64_t get(counter *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* legit RPC latencies (ns), written by its one thread, read after join */
static int64_t lat[MAX_LAT];
static size_t nlat;
static int64_t lipc_max_rtt;

/* ---------------- time ---------------- */

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * NS + t.tv_nsec;
}

static int64_t wall_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / MS;
}

static void sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = {ns / NS, ns % NS};
	nanosleep(&ts, NULL);
}

static bool running(void)
{
	return !atomic_load(&stopping) && mono_ns() < t_end;
}

/* Sleep until `when` (monotonic), waking every 100 ms to notice the end. */
static bool sleep_until(int64_t when)
{
	while (running()) {
		int64_t d = when - mono_ns();
		if (d <= 0)
			return true;
		sleep_ns(d < 100 * MS ? d : 100 * MS);
	}
	return false;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint64_t rng_seed(uint64_t salt)
{
	uint64_t s = 0;
	if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
		s = (uint64_t)mono_ns();
	s ^= salt * 0x9e3779b97f4a7c15ull;
	return s ? s : 1;
}

/* ---------------- TCP ---------------- */

static void set_timeouts(int fd, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* connect() too */
}

/* Blocking TCP connection to 127.0.0.1:port from 127.0.0.<src> (src 0:
 * the kernel's choice), every call bounded by timeout_ms; rcvbuf > 0 sets
 * a small receive buffer first.  -1 on failure. */
static int dial(int port, int src, int timeout_ms, int rcvbuf)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	set_timeouts(fd, timeout_ms);
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	if (src > 0) {
		int one = 1;
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
		struct sockaddr_in me = {.sin_family = AF_INET,
		                         .sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)(src & 0xff))};
		if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
			close(fd);
			return -1;
		}
	}
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool send_all(int fd, const void *p, size_t n)
{
	size_t off = 0;
	while (off < n) {
		ssize_t w = send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		off += (size_t)w;
	}
	return true;
}

static bool recv_exact(int fd, void *p, size_t n, int64_t deadline)
{
	size_t got = 0;
	while (got < n) {
		if (mono_ns() > deadline)
			return false;
		ssize_t r = recv(fd, (char *)p + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* One answer frame (int32 native length + body) into *buf, grown as
 * needed.  Body length, or -1 when the daemon closed, reset or timed out. */
static ssize_t read_frame(int fd, char **buf, size_t *cap, int64_t deadline)
{
	int32_t len;
	if (!recv_exact(fd, &len, 4, deadline) || len <= 0 || (uint32_t)len > MAX_FRAME)
		return -1;
	if ((size_t)len + 1 > *cap) {
		char *nb = realloc(*buf, (size_t)len + 1);
		if (!nb)
			return -1;
		*buf = nb;
		*cap = (size_t)len + 1;
	}
	if (!recv_exact(fd, *buf, (size_t)len, deadline))
		return -1;
	(*buf)[len] = 0;
	return len;
}

static size_t frame(char *out, const void *body, size_t n)
{
	int32_t len = (int32_t)n;
	memcpy(out, &len, 4);
	memcpy(out + 4, body, n);
	return 4 + n;
}

/* ---------------- IPC datagrams ---------------- */

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(name);
	if (n > sizeof sa->sun_path - 2)
		n = sizeof sa->sun_path - 2;
	memcpy(sa->sun_path + 1, name, n); /* "\0name\0": the trailing NUL is part of the name */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 2);
}

/* A datagram socket bound to abstract `name` (NULL: unbound). */
static int dgram_socket(const char *name)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || !name)
		return fd;
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	if (bind(fd, (struct sockaddr *)&sa, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static size_t dg_header(uint8_t *out, uint64_t size, const char *type)
{
	memcpy(out, &size, 8);
	memset(out + 8, 0, 32);
	memcpy(out + 8, type, strnlen(type, 32));
	return 40;
}

static size_t dg_req(uint8_t *out, int32_t want, int64_t jobid, const int32_t *pids, int32_t n)
{
	dg_header(out, 16 + 4 * (uint64_t)n, "req");
	memcpy(out + 40, &want, 4);
	memcpy(out + 44, &n, 4);
	memcpy(out + 48, &jobid, 8);
	memcpy(out + 56, pids, 4 * (size_t)n);
	return 56 + 4 * (size_t)n;
}

static size_t dg_ctxt(uint8_t *out, int32_t gpu, int32_t pid, int64_t jobid)
{
	dg_header(out, 16, "ctxt");
	memcpy(out + 40, &gpu, 4);
	memcpy(out + 44, &pid, 4);
	memcpy(out + 48, &jobid, 8);
	return 56;
}

static bool is_req_reply(const uint8_t *p, ssize_t n)
{
	uint64_t size;
	if (n < 40)
		return false;
	memcpy(&size, p, 8);
	return size == (uint64_t)n - 40 && memcmp(p + 8, "req", 4) == 0;
}

/* ---------------- abuse: RPC churn ---------------- */

static size_t churn_body(char *out, size_t cap, uint64_t k, uint64_t *rng)
{
	switch (k % 16) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
	case 5: return (size_t)snprintf(out, cap, "{\"fn\":\"getStatus\"}");
	case 6:
	case 7:
	case 8: return (size_t)snprintf(out, cap, "{\"fn\":\"getVersion\"}");
	case 9:
	case 10:
		return (size_t)snprintf(out, cap,
		                        "{\"fn\":\"getMetrics\",\"since_s\":5,\"names\":[\"cpu*\",\"mem*\"]}");
	case 11:
	case 12:
	case 13:
		return (size_t)snprintf(out, cap,
		                        "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=/tmp/"
		                        "soak_never_written.json\\nACTIVITIES_DURATION_MSECS=100\",\"job_id\":%d,"
		                        "\"pids\":[0],\"process_limit\":3}",
		                        FLOOD_JOB_BASE + (int)(rng_next(rng) % FLOOD_JOBS));
	case 14: return (size_t)snprintf(out, cap, "{\"fn\":\"getProcesses\"}");
	default: return (size_t)snprintf(out, cap, "{\"fn\":\"dcgmProfPause\",\"duration_s\":1}");
	}
}

static void *churn_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	uint64_t rng = rng_seed((uint64_t)idx + 1);
	char body[512], req[520];
	char *rx = NULL;
	size_t cap = 0;
	for (uint64_t k = (uint64_t)idx; running(); k++) {
		size_t n = frame(req, body, churn_body(body, sizeof body, k, &rng));
		int fd = dial(opt.rpc_port, 2 + idx % 200, 2000, 0);
		if (fd < 0) {
			inc(&C.churn_connfail);
			sleep_ns(MS);
			continue;
		}
		inc(&C.churn_conn);
		if (send_all(fd, req, n) && read_frame(fd, &rx, &cap, mono_ns() + 3 * NS) >= 0)
			inc(&C.churn_ok);
		else
			inc(&C.churn_noanswer);
		close(fd);
	}
	free(rx);
	return NULL;
}

/* ---------------- abuse: registry flood ---------------- */

/* The datagram abusers are another local user than the legit clients
 * (the threat: one user crowds out the others): run as root, their
 * threads switch to nobody (65534) before creating their sockets, which
 * then carry that uid.  Raw system calls change only the calling thread's
 * credentials (glibc's setresuid would change every thread's). */
static void as_nobody(const char *who)
{
	if (geteuid() != 0)
		return;
	if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, 65534, 65534, 65534) != 0 ||
	    syscall(SYS_setresuid, 65534, 65534, 65534) != 0)
		fprintf(stderr, "soak: %s stays root (cannot switch to uid 65534: %s)\n", who, strerror(errno));
}

static void *flood_main(void *arg)
{
	(void)arg;
	as_nobody("the registry flood");
	char name[64];
	snprintf(name, sizeof name, "soak-flood-%d", (int)getpid());
	int fd = dgram_socket(name);
	struct sockaddr_un da;
	socklen_t dlen = abstract_addr(&da, opt.ipc_name);
	if (fd < 0 || connect(fd, (struct sockaddr *)&da, dlen) < 0) {
		fprintf(stderr, "soak: flood socket: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	set_timeouts(fd, 100);
	uint64_t rng = rng_seed(1000);
	static uint8_t dg[56 + 4 * 64], rx[65536];
	int32_t pids[64];
	for (uint64_t k = 0; running(); k++) {
		int64_t job = FLOOD_JOB_BASE + (int64_t)(rng_next(&rng) % FLOOD_JOBS);
		int32_t leaf = FAKE_PID_BASE + (int32_t)(k % 0x60000000u);
		size_t len;
		bool ctxt = k % 8 == 7;
		if (ctxt) {
			len = dg_ctxt(dg, (int32_t)(rng_next(&rng) % 2048), leaf, job);
		} else {
			int32_t n = 1 + (int32_t)(rng_next(&rng) % 64);
			pids[0] = leaf;
			for (int i = 1; i < n; i++)
				pids[i] = FAKE_PID_BASE + (int32_t)(rng_next(&rng) % 0x60000000u);
			len = dg_req(dg, k % 3 == 0 ? 0 : 2, job, pids, n);
		}
		/* connected + blocking: waits while the daemon's queue is full */
		ssize_t w = send(fd, dg, len, 0);
		if (w == (ssize_t)len)
			inc(ctxt ? &C.flood_ctxt : &C.flood_req);
		else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			inc(&C.flood_full);
		else if (w < 0 && errno != EINTR)
			sleep_ns(10 * MS); /* ECONNREFUSED: the daemon is gone */
		while (recv(fd, rx, sizeof rx, MSG_DONTWAIT) > 0)
			inc(&C.flood_replies);
	}
	close(fd);
	return NULL;
}

/* ---------------- abuse: malformed datagrams ---------------- */

static void *baddg_main(void *arg)
{
	(void)arg;
	as_nobody("the malformed datagrams");
	char name[64];
	snprintf(name, sizeof name, "soak-bad-%d", (int)getpid());
	int named = dgram_socket(name), anon = dgram_socket(NULL);
	struct sockaddr_un da;
	socklen_t dlen = abstract_addr(&da, opt.ipc_name);
	if (named < 0 || anon < 0) {
		fprintf(stderr, "soak: malformed-datagram sockets: %s\n", strerror(errno));
		if (named >= 0)
			close(named);
		if (anon >= 0)
			close(anon);
		return NULL;
	}
	set_timeouts(named, 100);
	set_timeouts(anon, 100);
	static uint8_t dg[70000], rx[65536];
	int32_t pids[65] = {FAKE_PID_BASE - 1};
	for (uint64_t k = 0; running(); k++) {
		size_t len;
		int fd = named;
		memset(dg, 0, 128);
		switch (k % 12) {
		case 0: /* shorter than a header */ len = 10; break;
		case 1: /* size says 100, 10 bytes follow */ len = dg_header(dg, 100, "req") + 10; break;
		case 2: /* type without NUL */
			len = dg_header(dg, 16, "req");
			memset(dg + 8, 'A', 32);
			len += 16;
			break;
		case 3: /* req with n = 0 */ len = dg_req(dg, 2, LEGIT_JOB, pids, 0); break;
		case 4: /* req with n = 65 */ len = dg_req(dg, 2, LEGIT_JOB, pids, 65); break;
		case 5: { /* req with n = -1, size of an n = 1 message */
			len = dg_req(dg, 2, LEGIT_JOB, pids, 1);
			int32_t neg = -1;
			memcpy(dg + 44, &neg, 4);
			break;
		}
		case 6: /* ctxt with an 8-byte payload */ len = dg_header(dg, 8, "ctxt") + 8; break;
		case 7: /* a type nobody serves */ len = dg_header(dg, 16, "soak-unknown-type") + 16; break;
		case 8: /* over 64 KiB */
			len = dg_header(dg, sizeof dg - 40, "req");
			memset(dg + 40, 0x5a, sizeof dg - 40);
			len = sizeof dg;
			break;
		case 9: /* a valid poll from an unnamed socket */
			len = dg_req(dg, 2, LEGIT_JOB, pids, 1);
			fd = anon;
			break;
		case 10: /* empty */ len = 0; break;
		default: /* absurd size */ len = dg_header(dg, UINT64_MAX, "req") + 16; break;
		}
		ssize_t w = sendto(fd, dg, len, 0, (struct sockaddr *)&da, dlen);
		if (w == (ssize_t)len)
			inc(&C.baddg_sent);
		else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			sleep_ns(10 * MS);
		while (recv(named, rx, sizeof rx, MSG_DONTWAIT) > 0)
			inc(&C.baddg_replies); /* none expected */
		while (recv(anon, rx, sizeof rx, MSG_DONTWAIT) > 0)
			inc(&C.baddg_replies);
	}
	close(named);
	close(anon);
	return NULL;
}

/* ---------------- abuse: malformed RPC frames ---------------- */

static char *nested; /* {"fn": + 100,000 '[' */
static size_t nested_len;

static size_t bad_frame(char *out, size_t cap, uint64_t k, uint64_t *rng)
{
	int32_t len;
	size_t n;
	switch (k % 16) {
	case 0:
		len = 0;
		memcpy(out, &len, 4);
		return 4;
	case 1:
		len = -1;
		memcpy(out, &len, 4);
		memcpy(out + 4, "{\"fn\":\"getStatus\"}", 18);
		return 22;
	case 2: /* huge declared length */
		len = INT32_MAX;
		memcpy(out, &len, 4);
		memset(out + 4, '{', 100);
		return 104;
	case 3: /* just over the 1 MiB default cap */
		len = (1 << 20) + 1;
		memcpy(out, &len, 4);
		memset(out + 4, ' ', 100);
		return 104;
	case 4: /* truncated prefix */ memcpy(out, "\x12\x00", 2); return 2;
	case 5: /* truncated body */
		len = 100;
		memcpy(out, &len, 4);
		memcpy(out + 4, "{\"fn\":\"getSta", 13);
		return 17;
	case 6: return frame(out, "this is not JSON {", 18);
	case 7: return frame(out, "[1,2,3]", 7);
	case 8: return frame(out, "{\"x\":1}", 7);
	case 9: return frame(out, "{\"fn\":42}", 9);
	case 10: return frame(out, "{\"fn\":\"noSuchFunction\"}", 23);
	case 11: return frame(out, "{\"fn\":\"getStatus\xff\xfe\"}", 20);
	case 12: return nested_len <= cap ? (memcpy(out, nested, nested_len), nested_len) : 0;
	case 13: /* binary junk with a plausible length */
		len = 64;
		memcpy(out, &len, 4);
		for (int i = 0; i < 64; i++)
			out[4 + i] = (char)rng_next(rng);
		return 68;
	case 14: /* valid request, then junk on the same connection */
		n = frame(out, "{\"fn\":\"getStatus\"}", 18);
		memset(out + n, 0xee, 200);
		return n + 200;
	default: /* unterminated JSON */ return frame(out, "{\"fn\":\"getStatus\",\"a\":[1,2,", 27);
	}
}

static void *badrpc_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	uint64_t rng = rng_seed(2000 + (uint64_t)idx);
	size_t cap = nested_len + 1024;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	for (uint64_t k = (uint64_t)idx; running(); k++) {
		size_t n = bad_frame(out, cap, k, &rng);
		int fd = dial(opt.rpc_port, 220 + idx % 30, 1000, 0);
		if (fd < 0) {
			inc(&C.badrpc_connfail);
			sleep_ns(MS);
			continue;
		}
		if (n && send_all(fd, out, n))
			inc(&C.badrpc_sent);
		close(fd);
	}
	free(out);
	return NULL;
}

/* ---------------- abuse: slow readers and slowloris ---------------- */

struct slot {
	int fd;
	bool loris;
	int64_t opened, next_byte;
	int sent;
};

static void slot_open(struct slot *s, int i, char *big, size_t bigcap)
{
	s->sent = 0;
	s->fd = dial(opt.rpc_port, s->loris ? 251 : 252 + i % 3, 1000, s->loris ? 0 : 2304);
	if (s->fd < 0) {
		inc(s->loris ? &C.loris_connfail : &C.slow_connfail);
		return;
	}
	fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
	s->opened = s->next_byte = mono_ns();
	if (s->loris) {
		inc(&C.loris_opened);
		int32_t len = 1000;
		send(s->fd, &len, 4, MSG_NOSIGNAL | MSG_DONTWAIT);
		return;
	}
	inc(&C.slow_opened);
	size_t n = 0;
	int reqs = 1;
	if (i % 4 < 2) {
		n = frame(big, "{\"fn\":\"getProcesses\"}", 21);
	} else {
		const char *b = i % 4 == 2 ? "{\"fn\":\"getProcesses\",\"keepalive\":true}"
		                           : "{\"fn\":\"getMetrics\",\"keepalive\":true}";
		for (reqs = 0; reqs < 64 && n + 64 < bigcap; reqs++)
			n += frame(big + n, b, strlen(b));
	}
	ssize_t w = send(s->fd, big, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w > 0)
		atomic_fetch_add_explicit(&C.slow_reqs, (uint64_t)reqs, memory_order_relaxed);
}

static void *slow_main(void *arg)
{
	(void)arg;
	int n = opt.slow_conns + opt.loris_conns;
	if (n <= 0)
		return NULL;
	struct slot *s = calloc((size_t)n, sizeof *s);
	struct pollfd *p = calloc((size_t)n, sizeof *p);
	static char big[8192];
	if (!s || !p) {
		free(s);
		free(p);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		s[i].fd = -1;
		s[i].loris = i >= opt.slow_conns;
	}
	while (running()) {
		int64_t now = mono_ns();
		for (int i = 0; i < n && running(); i++) {
			if (s[i].fd >= 0 && now - s[i].opened > SLOW_HOLD_NS) {
				close(s[i].fd);
				s[i].fd = -1;
			}
			if (s[i].fd < 0)
				slot_open(&s[i], i, big, sizeof big);
			else if (s[i].loris && now >= s[i].next_byte && s[i].sent < 999) {
				send(s[i].fd, "{", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
				s[i].sent++;
				s[i].next_byte = now + NS;
			}
			p[i] = (struct pollfd){.fd = s[i].fd, .events = 0};
		}
		if (poll(p, (nfds_t)n, 50) > 0)
			for (int i = 0; i < n; i++)
				if (s[i].fd >= 0 && (p[i].revents & (POLLHUP | POLLERR))) {
					inc(s[i].loris ? &C.loris_reset : &C.slow_reset);
					close(s[i].fd);
					s[i].fd = -1;
				}
		/* failed dials already waited their timeout; do not spin */
		sleep_ns(10 * MS);
	}
	for (int i = 0; i < n; i++)
		if (s[i].fd >= 0)
			close(s[i].fd);
	free(s);
	free(p);
	return NULL;
}

/* ---------------- Prometheus scrapes ---------------- */

static void *prom_main(void *arg)
{
	(void)arg;
	static const char get[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
	static char rx[65536];
	int64_t next = mono_ns();
	while (sleep_until(next)) {
		next += 100 * MS;
		if (next < mono_ns())
			next = mono_ns();
		inc(&C.prom_sent);
		int64_t deadline = mono_ns() + 5 * NS;
		int fd = dial(opt.prom_port, 0, 2000, 0);
		if (fd < 0) {
			inc(&C.prom_connfail);
			continue;
		}
		char head[16] = {0};
		size_t got = 0;
		bool eof = false;
		if (send_all(fd, get, sizeof get - 1))
			while (mono_ns() < deadline) {
				ssize_t r = recv(fd, rx, sizeof rx, 0);
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0) {
					eof = r == 0;
					break;
				}
				if (got < sizeof head - 1) {
					size_t t =
					    (size_t)r < sizeof head - 1 - got ? (size_t)r : sizeof head - 1 - got;
					memcpy(head + got, rx, t);
				}
				got += (size_t)r;
			}
		close(fd);
		if (!eof || got < 12 || strncmp(head, "HTTP/1.", 7) != 0)
			inc(&C.prom_fail);
		else if (strncmp(head + 8, " 200", 4) == 0)
			inc(&C.prom_200);
		else
			inc(&C.prom_other);
	}
	return NULL;
}

/* ---------------- legit clients ---------------- */

static bool status_ok(const char *body, size_t n)
{
	struct json_doc doc;
	struct json_error err;
	if (!json_parse(body, n, &doc, &err))
		return false;
	const struct json_value *v = json_get(doc.root, "status");
	bool ok = v && v->type == JV_NUMBER;
	json_doc_free(&doc);
	return ok;
}

static void *lrpc_main(void *arg)
{
	(void)arg;
	static const char body[] = "{\"fn\":\"getStatus\"}";
	char req[64];
	size_t n = frame(req, body, sizeof body - 1);
	char *rx = NULL;
	size_t cap = 0;
	int64_t next = mono_ns();
	while (sleep_until(next)) {
		next += 200 * MS;
		inc(&C.lrpc_sent);
		int64_t t0 = mono_ns();
		int fd = dial(opt.rpc_port, 0, 5000, 0);
		if (fd < 0) {
			inc(&C.lrpc_connfail);
		} else {
			ssize_t r = send_all(fd, req, n) ? read_frame(fd, &rx, &cap, t0 + 5 * NS) : -1;
			close(fd);
			if (r < 0)
				inc(&C.lrpc_noanswer);
			else if (!status_ok(rx, (size_t)r))
				inc(&C.lrpc_bad);
			else {
				inc(&C.lrpc_ok);
				if (nlat < MAX_LAT)
					lat[nlat++] = mono_ns() - t0;
			}
		}
		if (next < mono_ns())
			next = mono_ns();
	}
	free(rx);
	return NULL;
}

static void *lipc_main(void *arg)
{
	(void)arg;
	uint8_t u[16];
	if (getrandom(u, sizeof u, 0) != (ssize_t)sizeof u)
		memset(u, 0x42, sizeof u);
	char name[80];
	snprintf(name, sizeof name, "dynoconfigclient%02x%02x%02x%02x-%02x%02x-4%x%02x-%x%02x-%02x%02x%02x%02x%02x%02x",
	         u[0], u[1], u[2], u[3], u[4], u[5], u[6] & 15, u[7], 8 | (u[8] & 3), u[9], u[10], u[11], u[12], u[13],
	         u[14], u[15]);
	int fd = dgram_socket(name);
	if (fd < 0) {
		fprintf(stderr, "soak: legit Kineto socket: %s\n", strerror(errno));
		return NULL;
	}
	struct sockaddr_un da;
	socklen_t dlen = abstract_addr(&da, opt.ipc_name);
	/* Kineto's ancestry: self and up to 10 ancestors, pid 1 left out */
	int32_t pids[11];
	int32_t n = procstat_ancestry(pids, 11);
	uint8_t dg[56 + 4 * 11];
	size_t len = dg_req(dg, 2, LEGIT_JOB, pids, n);
	static uint8_t rx[65536];
	int64_t next = mono_ns();
	while (sleep_until(next)) {
		next += NS;
		while (recv(fd, rx, sizeof rx, MSG_DONTWAIT) >= 0)
			inc(&C.lipc_late); /* an answer that came after Kineto stopped waiting */
		inc(&C.lipc_sent);
		int64_t t0 = mono_ns(), wait = 10 * MS;
		bool sent = false;
		/* Kineto's send: 11 attempts, sleeping 10, 20, 40 ... 5120 ms
		 * between them (~10.2 s in all) while the daemon's queue is full;
		 * its thread waits meanwhile, so the next poll comes later.  Its
		 * quirk is kept: a send that succeeds only at the 11th attempt
		 * is reported as failed (docs/wire-protocols.md, 3.4). */
		for (int attempt = 0; attempt <= 10 && running(); attempt++) {
			ssize_t w = sendto(fd, dg, len, MSG_DONTWAIT, (struct sockaddr *)&da, dlen);
			if (w == (ssize_t)len) {
				sent = attempt < 10;
				break;
			}
			if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED)
				break;
			if (attempt == 10)
				break;
			/* in slices, so the end of the run does not wait out a 5 s sleep */
			for (int64_t left = wait; left > 0 && running(); left -= 100 * MS)
				sleep_ns(left < 100 * MS ? left : 100 * MS);
			wait *= 2;
		}
		if (!sent) {
			inc(&C.lipc_sendfail);
			if (next < mono_ns())
				next = mono_ns();
			continue;
		}
		ssize_t r = -1;
		for (int i = 0; i < 9 && r < 0; i++) {
			r = recv(fd, rx, sizeof rx, MSG_DONTWAIT);
			if (r < 0)
				sleep_ns(10 * MS);
		}
		if (r < 0)
			inc(&C.lipc_noanswer);
		else if (!is_req_reply(rx, r))
			inc(&C.lipc_bad);
		else {
			inc(&C.lipc_ok);
			if (mono_ns() - t0 > lipc_max_rtt)
				lipc_max_rtt = mono_ns() - t0;
		}
		if (next < mono_ns())
			next = mono_ns();
	}
	close(fd);
	return NULL;
}

/* ---------------- the daemon, seen from /proc ---------------- */

/* VmRSS / VmHWM in kB, or -1 when the daemon is gone (or a zombie). */
static long proc_status_kb(const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", opt.pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static bool daemon_alive(void)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", opt.pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool alive = true;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "State:", 6)) {
			alive = !strchr(line, 'Z') && !strchr(line, 'X');
			break;
		}
	fclose(f);
	return alive;
}

/* utime + stime of the whole process (all threads), seconds; -1 if gone. */
static double daemon_cpu_s(void)
{
	struct procstat st;
	if (!procstat_read(opt.pid, &st) || st.nfields < 12)
		return -1;
	return (double)(st.utime + st.stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Seconds the daemon's main thread (its event loop) has spent runnable but
 * waiting for a CPU (/proc/PID/schedstat, second field, ns); -1 when the
 * kernel does not say.  Next to its CPU time, this tells a loop that was
 * busy from one that was not scheduled (a shared, loaded host). */
static double daemon_wait_s(void)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/schedstat", opt.pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	unsigned long long run, wait;
	int n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (double)wait / 1e9 : -1;
}

/* The JSON log, followed: one line per kernel tick, its timestamp first
 * ("time = 2026-...Z data = {...}" or {"time":"2026-...Z",...}). */
struct ticks {
	int fd;
	char head[128];
	size_t hlen;
	int64_t from_ms; /* soak start, wall clock */
	int64_t last_ms, max_gap_ms, max_gap_at_ms;
	uint64_t n, unparsed;
};

static int64_t line_time_ms(const char *s)
{
	const char *t = strstr(s, "time");
	if (!t)
		return -1;
	while (*t && (*t < '0' || *t > '9'))
		t++;
	struct tm tm = {0};
	int ms = 0, used = 0;
	if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
	           &tm.tm_sec, &used) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if (t[used] == '.') {
		int scale = 100;
		for (const char *d = t + used + 1; *d >= '0' && *d <= '9'; d++, scale /= 10)
			ms += (*d - '0') * scale;
	}
	return (int64_t)timegm(&tm) * 1000 + ms;
}

static void tick_line(struct ticks *t)
{
	t->head[t->hlen] = 0;
	t->hlen = 0;
	int64_t ms = line_time_ms(t->head);
	if (ms < 0) {
		t->unparsed++;
		return;
	}
	if (ms >= t->from_ms) {
		t->n++;
		if (t->last_ms > 0 && ms - t->last_ms > t->max_gap_ms) {
			t->max_gap_ms = ms - t->last_ms;
			t->max_gap_at_ms = ms - t->from_ms;
		}
	}
	t->last_ms = ms;
}

static void ticks_update(struct ticks *t)
{
	static char buf[1 << 16];
	ssize_t r;
	while (t->fd >= 0 && (r = read(t->fd, buf, sizeof buf)) > 0) {
		size_t i = 0;
		while (i < (size_t)r) {
			char *nl = memchr(buf + i, '\n', (size_t)r - i);
			size_t end = nl ? (size_t)(nl - buf) : (size_t)r;
			size_t room = sizeof t->head - 1 - t->hlen, take = end - i < room ? end - i : room;
			memcpy(t->head + t->hlen, buf + i, take);
			t->hlen += take;
			if (nl)
				tick_line(t);
			i = end + 1;
		}
	}
}

/* the gap since the last tick, when it is longer than any between ticks */
static int64_t trailing_gap_ms(const struct ticks *t)
{
	return t->last_ms > 0 ? wall_ms() - t->last_ms : 0;
}

/* ---------------- main ---------------- */

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stopping, true);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "soak: WATCHDOG: the driver did not finish in time; giving up\n";
	ssize_t w = write(2, msg, sizeof msg - 1);
	(void)w;
	_exit(4);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void usage(void)
{
	fprintf(stderr, "usage: soak --pid PID --rpc_port N --prom_port N --ipc_name NAME --json_log FILE\n"
	                "            [--seconds S] [--interval_s S] [--rss_cap_mb MB] [--churn_threads N]\n"
	                "            [--slow_conns N] [--loris_conns N]\n"
	                "Runs every abuse at once against a running dynolog (bench/soak.sh starts one).\n");
	exit(2);
}

static void progress(int tenth, struct ticks *tk, long rss_kb, long rss_max_kb)
{
	double el = (double)(mono_ns() - t_start) / NS;
	int64_t gap = tk->max_gap_ms > trailing_gap_ms(tk) ? tk->max_gap_ms : trailing_gap_ms(tk);
	printf("[%3d%%] %5.0fs  rss %6.1f MiB (max %6.1f)  ticks %4llu, longest gap %5.2fs  legit rpc %llu/%llu"
	       " ipc %llu/%llu  prom 200s %llu/%llu  dgrams %llu  churned %llu  malformed %llu\n",
	       tenth * 10, el, rss_kb / 1024.0, rss_max_kb / 1024.0, (unsigned long long)tk->n, gap / 1000.0,
	       (unsigned long long)get(&C.lrpc_ok), (unsigned long long)get(&C.lrpc_sent),
	       (unsigned long long)get(&C.lipc_ok), (unsigned long long)get(&C.lipc_sent),
	       (unsigned long long)get(&C.prom_200), (unsigned long long)get(&C.prom_sent),
	       (unsigned long long)(get(&C.flood_req) + get(&C.flood_ctxt)), (unsigned long long)get(&C.churn_conn),
	       (unsigned long long)(get(&C.badrpc_sent) + get(&C.baddg_sent)));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	enum { O_PID = 1, O_RPC, O_PROM, O_IPC, O_LOG, O_SECS, O_IVL, O_CAP, O_CHURN, O_SLOW, O_LORIS, O_ABUSE };
	static const struct option lo[] = {{"pid", 1, 0, O_PID},
	                                   {"rpc_port", 1, 0, O_RPC},
	                                   {"prom_port", 1, 0, O_PROM},
	                                   {"ipc_name", 1, 0, O_IPC},
	                                   {"json_log", 1, 0, O_LOG},
	                                   {"seconds", 1, 0, O_SECS},
	                                   {"interval_s", 1, 0, O_IVL},
	                                   {"rss_cap_mb", 1, 0, O_CAP},
	                                   {"churn_threads", 1, 0, O_CHURN},
	                                   {"slow_conns", 1, 0, O_SLOW},
	                                   {"loris_conns", 1, 0, O_LORIS},
	                                   {"abuse", 1, 0, O_ABUSE},
	                                   {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case O_PID: opt.pid = atoi(optarg); break;
		case O_RPC: opt.rpc_port = atoi(optarg); break;
		case O_PROM: opt.prom_port = atoi(optarg); break;
		case O_IPC: opt.ipc_name = optarg; break;
		case O_LOG: opt.json_log = optarg; break;
		case O_SECS: opt.seconds = atof(optarg); break;
		case O_IVL: opt.interval_s = atof(optarg); break;
		case O_CAP: opt.rss_cap_mb = atoi(optarg); break;
		case O_CHURN: opt.churn_threads = atoi(optarg); break;
		case O_SLOW: opt.slow_conns = atoi(optarg); break;
		case O_LORIS: opt.loris_conns = atoi(optarg); break;
		case O_ABUSE: opt.abuse = optarg; break;
		default: usage();
		}
	}
	if (opt.pid <= 0 || opt.rpc_port <= 0 || opt.prom_port <= 0 || !opt.ipc_name || !opt.json_log ||
	    opt.seconds <= 0 || opt.interval_s <= 0 || opt.churn_threads < 0 || opt.churn_threads > 64 ||
	    opt.slow_conns < 0 || opt.loris_conns < 0 || opt.slow_conns + opt.loris_conns > 2000)
		usage();
	for (const char *p = opt.abuse; strcmp(opt.abuse, "all") && p && *p;
	     p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		bool known = false;
		for (size_t i = 0; i < sizeof abuse_names / sizeof abuse_names[0]; i++) {
			size_t n = strlen(abuse_names[i]);
			known |= !strncmp(p, abuse_names[i], n) && (p[n] == ',' || p[n] == 0);
		}
		if (!known) {
			fprintf(stderr,
			        "soak: unknown abuse in '%s' (all, or a list of: churn,flood,baddgram,badframe,"
			        "slow,loris,prom)\n",
			        opt.abuse);
			return 2;
		}
	}
	if (!abuse_on("churn"))
		opt.churn_threads = 0;
	if (!abuse_on("slow"))
		opt.slow_conns = 0;
	if (!abuse_on("loris"))
		opt.loris_conns = 0;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)opt.seconds + 120);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!daemon_alive()) {
		fprintf(stderr, "soak: no running process %d\n", opt.pid);
		return 2;
	}
	nested_len = 4 + 6 + 100000;
	nested = malloc(nested_len);
	if (!nested)
		return 2;
	frame(nested, "{\"fn\":", 6);
	int32_t nl = 6 + 100000;
	memcpy(nested, &nl, 4);
	memset(nested + 10, '[', 100000);

	struct ticks tk = {.fd = open(opt.json_log, O_RDONLY | O_CLOEXEC)};
	if (tk.fd < 0)
		fprintf(stderr, "soak: cannot read the JSON log %s: %s (no tick figures)\n", opt.json_log,
		        strerror(errno));
	tk.from_ms = wall_ms();
	double cpu0 = daemon_cpu_s(), wait0 = daemon_wait_s();
	t_start = mono_ns();
	t_end = t_start + (int64_t)(opt.seconds * NS);
	printf("soak: %.0f s against dynolog pid %d (RPC port %d, Prometheus port %d, IPC @%s@, interval %.0f s)\n"
	       "  abuse (%s): %d churn threads%s%s%s, %d slow readers, %d slowloris%s\n"
	       "  legit: getStatus every 200 ms, a Kineto process polling every 1 s\n",
	       opt.seconds, opt.pid, opt.rpc_port, opt.prom_port, opt.ipc_name, opt.interval_s, opt.abuse,
	       opt.churn_threads, abuse_on("flood") ? ", registry flood" : "",
	       abuse_on("baddgram") ? ", malformed datagrams" : "", abuse_on("badframe") ? ", malformed frames" : "",
	       opt.slow_conns, opt.loris_conns, abuse_on("prom") ? ", Prometheus scrapes every 100 ms" : "");
	fflush(stdout);

	pthread_t th[96];
	int nth = 0;
	pthread_create(&th[nth++], NULL, lrpc_main, NULL);
	pthread_create(&th[nth++], NULL, lipc_main, NULL);
	if (abuse_on("prom"))
		pthread_create(&th[nth++], NULL, prom_main, NULL);
	sleep_ns(200 * MS); /* the legit Kineto process registers before the flood */
	if (abuse_on("flood"))
		pthread_create(&th[nth++], NULL, flood_main, NULL);
	if (abuse_on("baddgram"))
		pthread_create(&th[nth++], NULL, baddg_main, NULL);
	for (int i = 0; i < 2 && abuse_on("badframe"); i++)
		pthread_create(&th[nth++], NULL, badrpc_main, (void *)(intptr_t)i);
	if (opt.slow_conns + opt.loris_conns > 0)
		pthread_create(&th[nth++], NULL, slow_main, NULL);
	for (int i = 0; i < opt.churn_threads; i++)
		pthread_create(&th[nth++], NULL, churn_main, (void *)(intptr_t)i);

	long rss_max = 0, rss = 0;
	int tenth = 1;
	bool died = false, capped = false;
	double died_at = 0;
	while (running()) {
		sleep_ns(100 * MS);
		rss = proc_status_kb("VmRSS");
		if (rss < 0 || !daemon_alive()) {
			died = true;
			died_at = (double)(mono_ns() - t_start) / NS;
			break;
		}
		if (rss > rss_max)
			rss_max = rss;
		ticks_update(&tk);
		if (opt.rss_cap_mb > 0 && rss > (long)opt.rss_cap_mb * 1024) {
			capped = true;
			printf("soak: SAFETY STOP at %.1f s: daemon RSS %.0f MiB passed the cap of %d MiB "
			       "(SOAK_RSS_CAP_MB); stopping every client to protect this host\n",
			       (double)(mono_ns() - t_start) / NS, rss / 1024.0, opt.rss_cap_mb);
			break;
		}
		while (tenth <= 10 && mono_ns() - t_start >= (int64_t)(opt.seconds * NS) * tenth / 10)
			progress(tenth++, &tk, rss, rss_max);
	}
	/* the daemon's figures first, before the clients' last requests end */
	long hwm = proc_status_kb("VmHWM");
	double cpu1 = daemon_cpu_s(), wait1 = daemon_wait_s();
	double elapsed = (double)(mono_ns() - t_start) / NS;
	atomic_store(&stopping, true);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (!died && !daemon_alive()) {
		died = true;
		died_at = (double)(mono_ns() - t_start) / NS;
	}
	/* A gap still open at the end is closed by the next tick: wait for it
	 * (the clients have stopped) so the longest gap is one between two
	 * real ticks; if none comes, the open gap is reported as such. */
	uint64_t nticks = tk.n;
	ticks_update(&tk);
	int64_t grace_end = mono_ns() + (int64_t)((2 * opt.interval_s + 1) * NS);
	while (!died && tk.n == nticks && trailing_gap_ms(&tk) > (int64_t)(opt.interval_s * 1000) &&
	       mono_ns() < grace_end) {
		sleep_ns(50 * MS);
		ticks_update(&tk);
	}
	int64_t trailing = trailing_gap_ms(&tk);
	if (tenth <= 10 && !died)
		progress(10, &tk, rss, rss_max);

	printf("\n== soak report: %.1f s of abuse (%s)\n", elapsed,
	       died     ? "THE DAEMON DIED"
	       : capped ? "stopped early at the RSS safety cap"
	                : "full run");
	if (died)
		printf("!! DAEMON DIED after %.1f s: pid %d is gone (a finding: see the daemon's log above/below)\n",
		       died_at, opt.pid);
	printf("memory (unit file: MemoryHigh=%.0f MiB, MemoryMax=%.0f MiB; RSS only, kernel socket buffers not "
	       "included)\n",
	       UNIT_MEMORY_HIGH_MIB, UNIT_MEMORY_MAX_MIB);
	if (hwm >= 0)
		printf("  peak RSS (VmHWM)             %8.1f MiB  = %5.2fx MemoryHigh  %5.2fx MemoryMax\n",
		       hwm / 1024.0, hwm / 1024.0 / UNIT_MEMORY_HIGH_MIB, hwm / 1024.0 / UNIT_MEMORY_MAX_MIB);
	else
		printf("  peak RSS (VmHWM)             unavailable (daemon gone)\n");
	printf("  sampled VmRSS max (100 ms)   %8.1f MiB  = %5.2fx MemoryHigh  %5.2fx MemoryMax\n", rss_max / 1024.0,
	       rss_max / 1024.0 / UNIT_MEMORY_HIGH_MIB, rss_max / 1024.0 / UNIT_MEMORY_MAX_MIB);
	if (rss > 0)
		printf("  VmRSS at the end             %8.1f MiB\n", rss / 1024.0);
	printf("collection ticks (JSON log timestamps, interval %.0f s)\n", opt.interval_s);
	if (tk.fd < 0)
		printf("  unavailable: the JSON log could not be read\n");
	else {
		double ivl_ms = opt.interval_s * 1000.0;
		printf("  ticks during the run         %8llu  (%.0f expected)\n", (unsigned long long)nticks,
		       elapsed / opt.interval_s);
		printf("  longest gap between ticks    %8.3f s  = %5.2fx the interval (tick %.1f s into the run)\n",
		       tk.max_gap_ms / 1000.0, tk.max_gap_ms / ivl_ms, tk.max_gap_at_ms / 1000.0);
		if (trailing > tk.max_gap_ms)
			printf("  !! no tick since             %8.3f s  = %5.2fx the interval (ticking stopped)\n",
			       trailing / 1000.0, trailing / ivl_ms);
		if (tk.unparsed)
			printf("  (%llu lines without a timestamp)\n", (unsigned long long)tk.unparsed);
	}
	qsort(lat, nlat, sizeof lat[0], cmp_i64);
	printf("legit clients\n");
	printf("  RPC getStatus every 200 ms   %6.2f %% answered  (%llu of %llu; %llu connect failed, %llu no answer, "
	       "%llu wrong answer)\n",
	       pct(get(&C.lrpc_ok), get(&C.lrpc_sent)), (unsigned long long)get(&C.lrpc_ok),
	       (unsigned long long)get(&C.lrpc_sent), (unsigned long long)get(&C.lrpc_connfail),
	       (unsigned long long)get(&C.lrpc_noanswer), (unsigned long long)get(&C.lrpc_bad));
	if (nlat)
		printf("      latency ms: p50 %.2f  p99 %.2f  max %.2f\n", lat[nlat / 2] / 1e6,
		       lat[nlat * 99 / 100] / 1e6, lat[nlat - 1] / 1e6);
	printf("  Kineto poll every 1 s        %6.2f %% answered within Kineto's window  (%llu of %llu; %llu send "
	       "failed (daemon queue full for ~10 s), %llu no answer in 90 ms, %llu late, %llu not a req answer; slowest "
	       "%.1f ms)\n",
	       pct(get(&C.lipc_ok), get(&C.lipc_sent)), (unsigned long long)get(&C.lipc_ok),
	       (unsigned long long)get(&C.lipc_sent), (unsigned long long)get(&C.lipc_sendfail),
	       (unsigned long long)get(&C.lipc_noanswer), (unsigned long long)get(&C.lipc_late),
	       (unsigned long long)get(&C.lipc_bad), lipc_max_rtt / 1e6);
	if (abuse_on("prom"))
		printf("  Prometheus every 100 ms      %6.2f %% answered 200  (%llu of %llu; %llu other status, %llu "
		       "connect failed, %llu no complete answer in 5 s)\n",
		       pct(get(&C.prom_200), get(&C.prom_sent)), (unsigned long long)get(&C.prom_200),
		       (unsigned long long)get(&C.prom_sent), (unsigned long long)get(&C.prom_other),
		       (unsigned long long)get(&C.prom_connfail), (unsigned long long)get(&C.prom_fail));
	printf("abuse volumes\n");
	printf("  registry flood datagrams     %10llu sent (%llu req, %llu ctxt; %.0f/s), %llu answered, %llu send "
	       "timeouts (queue full 100 ms)\n",
	       (unsigned long long)(get(&C.flood_req) + get(&C.flood_ctxt)), (unsigned long long)get(&C.flood_req),
	       (unsigned long long)get(&C.flood_ctxt), (get(&C.flood_req) + get(&C.flood_ctxt)) / elapsed,
	       (unsigned long long)get(&C.flood_replies), (unsigned long long)get(&C.flood_full));
	printf("  malformed datagrams          %10llu sent, %llu answered\n", (unsigned long long)get(&C.baddg_sent),
	       (unsigned long long)get(&C.baddg_replies));
	printf("  churned RPC connections      %10llu (%.0f/s), %llu answered, %llu unanswered, %llu connects "
	       "failed\n",
	       (unsigned long long)get(&C.churn_conn), get(&C.churn_conn) / elapsed,
	       (unsigned long long)get(&C.churn_ok), (unsigned long long)get(&C.churn_noanswer),
	       (unsigned long long)get(&C.churn_connfail));
	printf("  malformed RPC frames         %10llu sent, %llu connects failed\n",
	       (unsigned long long)get(&C.badrpc_sent), (unsigned long long)get(&C.badrpc_connfail));
	printf("  slow readers                 %10llu connections, %llu requests never read, %llu reset by the "
	       "daemon, %llu connects failed\n",
	       (unsigned long long)get(&C.slow_opened), (unsigned long long)get(&C.slow_reqs),
	       (unsigned long long)get(&C.slow_reset), (unsigned long long)get(&C.slow_connfail));
	printf("  slowloris (1 byte/s)         %10llu connections, %llu reset by the daemon, %llu connects failed\n",
	       (unsigned long long)get(&C.loris_opened), (unsigned long long)get(&C.loris_reset),
	       (unsigned long long)get(&C.loris_connfail));
	printf("  OTLP                         endpoint down (a closed loopback port) the whole run\n");
	if (cpu0 >= 0 && cpu1 >= 0)
		printf("daemon CPU                     %8.2f s over %.1f s (%.0f %% of one core)\n", cpu1 - cpu0,
		       elapsed, 100.0 * (cpu1 - cpu0) / elapsed);
	else
		printf("daemon CPU                     unavailable (daemon gone)\n");
	bool waited = wait0 >= 0 && wait1 >= 0;
	if (waited)
		printf("daemon's loop waiting for a CPU %7.2f s over %.1f s (%.0f %%: runnable, not running; "
		       "/proc/PID/schedstat)\n",
		       wait1 - wait0, elapsed, 100.0 * (wait1 - wait0) / elapsed);
	else
		printf("daemon's loop waiting for a CPU unavailable (no /proc/PID/schedstat)\n");
	char wait_txt[32] = "n/a";
	if (waited)
		snprintf(wait_txt, sizeof wait_txt, "%.2f", wait1 - wait0);
	/* the same figures on one line, for comparing runs */
	long peak = hwm > rss_max ? hwm : rss_max;
	printf("summary: peak_rss_mib=%.1f peak_x_memory_max=%.2f max_tick_gap_s=%.2f legit_rpc_pct=%.1f "
	       "legit_ipc_pct=%.1f prom_200_pct=%.1f dgrams=%llu churned=%llu malformed=%llu daemon_cpu_s=%.2f "
	       "runq_wait_s=%s seconds=%.1f%s\n",
	       peak / 1024.0, peak / 1024.0 / UNIT_MEMORY_MAX_MIB,
	       (trailing > tk.max_gap_ms ? trailing : tk.max_gap_ms) / 1000.0, pct(get(&C.lrpc_ok), get(&C.lrpc_sent)),
	       pct(get(&C.lipc_ok), get(&C.lipc_sent)), pct(get(&C.prom_200), get(&C.prom_sent)),
	       (unsigned long long)(get(&C.flood_req) + get(&C.flood_ctxt)), (unsigned long long)get(&C.churn_conn),
	       (unsigned long long)(get(&C.badrpc_sent) + get(&C.baddg_sent)),
	       cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1.0, wait_txt, elapsed,
	       died     ? " DAEMON_DIED"
	       : capped ? " RSS_CAP_STOP"
	                : "");
	fflush(stdout);
	free(nested);
	if (tk.fd >= 0)
		close(tk.fd);
	return died ? 3 : 0;
}
