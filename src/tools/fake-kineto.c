/*
 * fake-kineto.c - a stand-in for a PyTorch process started with
 * KINETO_USE_DAEMON=1, for tests and demos on machines without a GPU.
 *
 * It speaks the Kineto side of the IPC fabric as wire-protocols.md 3.4
 * describes: endpoint "dynoconfigclient<uuid4>" (abstract, or under
 * $KINETO_IPC_SOCKET_DIR), pid ancestry from /proc (self + up to 10
 * ancestors, pid 1 left out), job id from $SLURM_JOB_ID, a `req` poll right
 * at start and then every --poll_interval_ms (Kineto: 5 s) with type 2
 * when idle and 0 while a trace is pending or running (--legacy: 3 and 1),
 * send retries on EAGAIN/ECONNREFUSED (10 ms doubling, 10 times), and nine
 * 10 ms receive attempts after each send; the first datagram received is
 * the answer, whatever it is, as in Kineto.
 *
 * A non-empty answer is parsed with Kineto's line rules (section 5.1) and
 * "traced": after the warm-up it waits ACTIVITIES_DURATION_MSECS (or until
 * PROFILE_START_TIME + duration) and writes a Kineto-format Chrome trace
 * (CPU ops, runtime launches, GPU kernels with correlations and flows,
 * ProfilerStep annotations, trace_id) to the path Kineto would use:
 * `_<pid>` inserted before ".pt.trace.json" or ".json" (section 5.5),
 * written to "<path>.tmp" and renamed.  --restrict_paths applies newer
 * Kineto's /tmp/ (or $KINETO_ONDEMAND_TRACE_DIR) rule.
 *
 * Kineto's timing is kept because dyno's default start delay is derived
 * from it: the config is acted on up to one controller tick (1 s) after the
 * poll that read it, and a PROFILE_START_TIME less than the warm-up (5 s)
 * after that moment is refused ("config refused: start time too close"),
 * as Kineto does; --poll_phase_ms delays the first poll (processes of one
 * job poll out of phase).  --late_replies reproduces the libkineto bug of a
 * process started before its daemon: a send that succeeds only on a retry
 * reports failure, so its reply stays queued and every later poll reads the
 * previous poll's reply, one poll (5 s) late.
 *
 * Each event is printed on stdout ("registered", "config", "trace <path>")
 * so tests can follow along.
 *
 * --flood=N is a hostile local user instead (tests of the daemon's
 * bounds): N `req` polls, each claiming a new made-up pid ancestry of
 * --flood_npids pids, spread over --flood_sockets endpoint names; replies
 * are drained and counted, then it prints "flood: sent N, replies M".
 * --flood_ctxt sends legacy `ctxt` datagrams instead, each for a new
 * made-up job id (job, job + 1, ...): the job table's flood.
 * --flood_blocking makes its sockets blocking (with a 1 s send timeout),
 * the worst flooder: the kernel wakes it the moment a slot of the
 * daemon's queue frees, so it refills the queue before anyone else.
 *
 * At exit a polling process prints "polls: S sent, A answered, F send
 * failed, R retried" (answered: a reply within Kineto's receive window;
 * send failed: still refused after Kineto's ~10 s of retries; retried:
 * polls whose first send was refused, the daemon's queue being full).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/args.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/procstat.h"
#include "daemon/ipc/ipc_wire.h"

/* Kineto's controller tick and default warm-up (ACTIVITIES_WARMUP_PERIOD_SECS). */
enum { KINETO_TICK_MS = 1000, KINETO_WARMUP_MS = 5000 };

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s, stop = 1; }

static void sleep_ms(int64_t ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop)
		;
}

static void uuid4(char out[37])
{
	uint8_t b[16];
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		uint64_t x = (uint64_t)clock_mono_ns() ^ ((uint64_t)getpid() << 32);
		for (int i = 0; i < 16; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
			b[i] = (uint8_t)(x >> 56);
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

struct client {
	int fd;
	struct sockaddr_un daemon;
	socklen_t daemon_len;
	uint8_t rx[IPC_MAX_DGRAM];
};

/* Kineto's send policy: retry EAGAIN/ECONNREFUSED 10 times, 10 ms doubling. */
static bool late_replies; /* --late_replies: see the top of the file */
static bool send_lied;    /* the last send succeeded but reported failure */
static int send_retries;  /* EAGAIN/ECONNREFUSED retries of the last send */

static bool send_dgram(struct client *c, const struct buf *msg)
{
	int64_t wait = 10;
	send_lied = false;
	send_retries = 0;
	for (int attempt = 0; attempt <= 10 && !stop; attempt++) {
		send_retries = attempt;
		ssize_t w = sendto(c->fd, msg->data, msg->len, MSG_DONTWAIT, (struct sockaddr *)&c->daemon,
				   c->daemon_len);
		if (w == (ssize_t)msg->len)
		{
			send_lied = late_replies && attempt > 0; /* the libkineto bug */
			return !send_lied;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED)
			return false;
		sleep_ms(wait);
		wait *= 2;
	}
	return false;
}

/* Nine non-blocking receive attempts, 10 ms apart; -1 when nothing came. */
static ssize_t recv_reply(struct client *c)
{
	for (int i = 0; i < 9; i++) {
		ssize_t r = recv(c->fd, c->rx, sizeof c->rx, MSG_DONTWAIT);
		if (r >= 0)
			return r;
		sleep_ms(10);
	}
	return -1;
}

struct kcfg {
	char log_file[4096];
	int64_t duration_ms, start_time_ms, iterations;
	char trace_id[128];
	bool memory;
};

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/* Kineto's rules (5.1): '#' comment, skip blank lines, split on every '=',
 * exactly two pieces; stop at the first bad line but keep what was read. */
static void parse_config(const char *text, size_t len, struct kcfg *k, int pid)
{
	memset(k, 0, sizeof *k);
	snprintf(k->log_file, sizeof k->log_file, "/tmp/libkineto_activities_%d.json", pid);
	k->duration_ms = 500;
	char *copy = xstrndup(text, len), *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *h = strchr(line, '#');
		if (h)
			*h = 0;
		char *l = trim(line);
		if (!*l)
			continue;
		char *eq = strchr(l, '=');
		if (!eq || strchr(eq + 1, '=')) {
			printf("config error: bad line '%s'\n", l);
			break;
		}
		*eq = 0;
		char *key = trim(l), *val = trim(eq + 1);
		char *end;
		long long v = strtoll(val, &end, 10);
		bool num = *val && !*end && v >= 0;
		if (!strcmp(key, "ACTIVITIES_LOG_FILE"))
			snprintf(k->log_file, sizeof k->log_file, "%s", val);
		else if (!strcmp(key, "ACTIVITIES_DURATION_MSECS") && num)
			k->duration_ms = v;
		else if (!strcmp(key, "ACTIVITIES_DURATION_SECS") && num)
			k->duration_ms = v * 1000;
		else if (!strcmp(key, "PROFILE_START_TIME") && num)
			k->start_time_ms = v;
		else if (!strcmp(key, "ACTIVITIES_ITERATIONS") && num)
			k->iterations = v;
		else if (!strcmp(key, "REQUEST_TRACE_ID"))
			snprintf(k->trace_id, sizeof k->trace_id, "%s", val);
		else if (!strcmp(key, "PROFILE_MEMORY"))
			k->memory = !strcasecmp(val, "true") || !strcmp(val, "1") || !strcasecmp(val, "yes") ||
				    !strcasecmp(val, "t") || !strcasecmp(val, "y");
	}
	free(copy);
}

/* Section 5.5: first ".pt.trace.json" -> "_<pid>.pt.trace.json", else the
 * first ".json" -> "_<pid>.json", else unchanged. */
static void output_path(const char *in, int pid, bool restrict_paths, struct buf *out)
{
	if (restrict_paths) {
		const char *dir = getenv("KINETO_ONDEMAND_TRACE_DIR");
		bool ok = strncmp(in, "/tmp/", 5) == 0;
		if (dir && *dir && strncmp(in, dir, strlen(dir)) == 0 && in[strlen(dir)] == '/')
			ok = true;
		if (!ok || strstr(in, "..")) {
			printf("warning: on-demand trace path '%s' not allowed, using the default\n", in);
			buf_printf(out, "/tmp/libkineto_activities_%d.json", pid);
			return;
		}
	}
	const char *m = strstr(in, ".pt.trace.json");
	if (!m)
		m = strstr(in, ".json");
	if (!m) {
		buf_puts(out, in);
		return;
	}
	buf_append(out, in, (size_t)(m - in));
	buf_printf(out, "_%d", pid);
	buf_puts(out, m);
}

/* One "key": value member; the trace writer below is mostly these. */
static void kv_i64(struct jw *w, const char *k, int64_t v)
{
	jw_key(w, k);
	jw_i64(w, v);
}

static void kv_f64(struct jw *w, const char *k, double v)
{
	jw_key(w, k);
	jw_f64(w, v);
}

static void kv_str(struct jw *w, const char *k, const char *v)
{
	jw_key(w, k);
	jw_str(w, v);
}

/* What Kineto writes: "ts" in microseconds since the file's
 * baseTimeNanoseconds (a whole second), not the Unix time again: the
 * events' times are given here as Unix microseconds and written less this
 * base (the warehouse and stitch add the base back). */
static double ts_base_us;

static void x_event(struct jw *w, const char *cat, const char *name, int64_t pid, int64_t tid, double ts_us,
		    double dur_us)
{
	jw_obj_begin(w);
	kv_str(w, "ph", "X");
	kv_str(w, "cat", cat);
	kv_str(w, "name", name);
	kv_i64(w, "pid", pid);
	kv_i64(w, "tid", tid);
	kv_f64(w, "ts", ts_us - ts_base_us);
	kv_f64(w, "dur", dur_us);
}

static void flow(struct jw *w, const char *ph, int64_t id, int64_t pid, int64_t tid, double ts)
{
	jw_obj_begin(w);
	kv_str(w, "ph", ph);
	kv_i64(w, "id", id);
	kv_i64(w, "pid", pid);
	kv_i64(w, "tid", tid);
	kv_f64(w, "ts", ts - ts_base_us);
	kv_str(w, "cat", "ac2g");
	kv_str(w, "name", "ac2g");
	if (ph[0] == 'f')
		kv_str(w, "bp", "e");
	jw_obj_end(w);
}

static void meta(struct jw *w, const char *name, int64_t pid, int64_t tid, const char *key, const char *sval,
		 int64_t ival)
{
	jw_obj_begin(w);
	kv_str(w, "name", name);
	kv_str(w, "ph", "M");
	kv_i64(w, "pid", pid);
	kv_i64(w, "tid", tid);
	jw_key(w, "args");
	jw_obj_begin(w);
	jw_key(w, key);
	if (sval)
		jw_str(w, sval);
	else
		jw_i64(w, ival);
	jw_obj_end(w);
	jw_obj_end(w);
}

static int envint(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

/* A small but complete Kineto trace of the window [start, end) in us. */
static bool write_trace(const char *path, const struct kcfg *k, double start_us, double end_us, int pid)
{
	struct buf b = BUF_INIT;
	struct jw w;
	jw_init(&w, &b);
	int rank = envint("RANK", 0), world = envint("WORLD_SIZE", 1);
	jw_obj_begin(&w);
	kv_i64(&w, "schemaVersion", 1);
	jw_key(&w, "deviceProperties");
	jw_arr_begin(&w);
	jw_obj_begin(&w);
	kv_i64(&w, "id", 0);
	kv_str(&w, "name", "fake-kineto simulated GPU");
	kv_i64(&w, "totalGlobalMem", 85899345920ll);
	kv_i64(&w, "computeMajor", 9);
	kv_i64(&w, "computeMinor", 0);
	kv_i64(&w, "numSms", 132);
	jw_obj_end(&w);
	jw_arr_end(&w);
	/* Kineto pretty-prints this object; HTA finds a file's rank with the
	 * text pattern "rank":<whitespace><digits>, so keep the space. */
	jw_key(&w, "distributedInfo");
	char dist[160];
	int dn = snprintf(dist, sizeof dist, "{\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d}", rank, world);
	jw_raw(&w, dist, (size_t)dn);
	kv_str(&w, "trace_id", k->trace_id);
	kv_str(&w, "displayTimeUnit", "ms");
	ts_base_us = floor(start_us / 1e6) * 1e6;
	kv_i64(&w, "baseTimeNanoseconds", (int64_t)ts_base_us * 1000);
	jw_key(&w, "traceEvents");
	jw_arr_begin(&w);
	/* One "training step" every 20 ms: forward matmul + relu, an NCCL
	 * all-reduce on a second stream, each launched from the CPU. */
	double step_us = 20000;
	int64_t corr = 1;
	int step = 0;
	for (double t = start_us; t + step_us <= end_us || step == 0; t += step_us, step++) {
		char sname[64];
		snprintf(sname, sizeof sname, "ProfilerStep#%d", step);
		x_event(&w, "user_annotation", sname, pid, pid, t, step_us - 100);
		jw_key(&w, "args");
		jw_obj_begin(&w);
		kv_i64(&w, "External id", corr);
		jw_obj_end(&w);
		jw_obj_end(&w);
		static const char *ops[] = {"aten::mm", "aten::relu", "c10d::allreduce_"};
		static const char *kernels[] = {"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64",
						("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
						 "namespace)::launch_clamp_scalar(at::TensorIteratorBase&)>"),
						"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"};
		static const double kdur[] = {6000, 800, 4000};
		double cpu = t + 50, gpu = t + 200;
		for (int i = 0; i < 3; i++, corr++) {
			int stream = i == 2 ? 13 : 7;
			x_event(&w, "cpu_op", ops[i], pid, pid, cpu, 40);
			jw_key(&w, "args");
			jw_obj_begin(&w);
			kv_i64(&w, "External id", corr);
			kv_i64(&w, "Record function id", 0);
			jw_obj_end(&w);
			jw_obj_end(&w);
			x_event(&w, "cuda_runtime", "cudaLaunchKernel", pid, pid, cpu + 10, 8);
			jw_key(&w, "args");
			jw_obj_begin(&w);
			kv_i64(&w, "External id", corr);
			kv_i64(&w, "cbid", 211);
			kv_i64(&w, "correlation", corr);
			jw_obj_end(&w);
			jw_obj_end(&w);
			flow(&w, "s", corr, pid, pid, cpu + 10);
			if (i == 2)
				gpu += 100;
			x_event(&w, "kernel", kernels[i], 0, stream, gpu, kdur[i]);
			jw_key(&w, "args");
			jw_obj_begin(&w);
			kv_i64(&w, "External id", corr);
			kv_i64(&w, "queued", 0);
			kv_i64(&w, "device", 0);
			kv_i64(&w, "context", 1);
			kv_i64(&w, "stream", stream);
			kv_i64(&w, "correlation", corr);
			jw_key(&w, "grid");
			jw_arr_begin(&w);
			jw_i64(&w, 132);
			jw_i64(&w, 1);
			jw_i64(&w, 1);
			jw_arr_end(&w);
			jw_key(&w, "block");
			jw_arr_begin(&w);
			jw_i64(&w, 256);
			jw_i64(&w, 1);
			jw_i64(&w, 1);
			jw_arr_end(&w);
			if (i == 2) { /* what Kineto records for NCCL kernels */
				kv_str(&w, "Collective name", "allreduce");
				kv_i64(&w, "In msg nelems", 1048576);
				kv_i64(&w, "Out msg nelems", 1048576);
				kv_i64(&w, "Group size", world);
				kv_str(&w, "dtype", "Float");
				kv_str(&w, "Process Group Name", "0");
				kv_i64(&w, "Rank", rank);
			}
			jw_obj_end(&w);
			jw_obj_end(&w);
			flow(&w, "f", corr, 0, stream, gpu);
			cpu += 60;
			gpu += kdur[i] + 20;
		}
	}
	char pname[64];
	snprintf(pname, sizeof pname, "python3 (fake-kineto %d)", pid);
	meta(&w, "process_name", pid, 0, "name", pname, 0);
	meta(&w, "process_name", 0, 0, "name", "GPU 0", 0);
	meta(&w, "thread_name", 0, 7, "name", "stream 7 ", 0);
	meta(&w, "thread_name", 0, 13, "name", "stream 13 ", 0);
	char tname[64];
	snprintf(tname, sizeof tname, "thread %d (python3)", pid);
	meta(&w, "thread_name", pid, pid, "name", tname, 0);
	jw_arr_end(&w);
	kv_str(&w, "traceName", path);
	jw_obj_end(&w);
	buf_putc(&b, '\n');

	struct buf tmp = BUF_INIT;
	buf_printf(&tmp, "%s.tmp", path);
	bool ok = false;
	int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		ok = write(fd, b.data, b.len) == (ssize_t)b.len;
		ok = close(fd) == 0 && ok;
		if (ok) {
			unlink(path);
			ok = rename(tmp.data, path) == 0;
		}
	}
	if (!ok)
		printf("error: cannot write trace %s: %s\n", path, strerror(errno));
	buf_free(&tmp);
	buf_free(&b);
	return ok;
}

/* --flood: see the top of the file.  A full daemon queue (EAGAIN) is
 * waited out, so the daemon paces us rather than our datagrams dropping. */
static int flood(const char *daemon_name, int64_t n, int64_t nsock, int64_t npids, int64_t job, bool blocking,
		 bool ctxt)
{
	const char *dir = ipc_env_dir();
	int *fds = calloc((size_t)nsock, sizeof *fds);
	char (*names)[64] = calloc((size_t)nsock, sizeof *names);
	struct sockaddr_un to;
	socklen_t tolen;
	struct buf err = BUF_INIT, msg = BUF_INIT;
	int status = 1;
	uint64_t sent = 0, replies = 0;
	if (!fds || !names || !ipc_addr(daemon_name, dir, &to, &tolen, &err))
		goto out;
	for (int64_t i = 0; i < nsock; i++) {
		char uuid[37];
		uuid4(uuid);
		snprintf(names[i], sizeof names[i], "dynoconfigclient%s", uuid);
		fds[i] = ipc_bind(names[i], dir, &err);
		if (fds[i] < 0)
			goto out;
		if (blocking) {
			struct timeval tv = {.tv_sec = 1};
			if (fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) & ~O_NONBLOCK) < 0 ||
			    setsockopt(fds[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0) {
				buf_printf(&err, "blocking socket: %s", strerror(errno));
				goto out;
			}
		}
	}
	static uint8_t rx[IPC_MAX_DGRAM];
	int32_t pids[REG_MAX_PIDS];
	for (int64_t i = 0; i < n && !stop; i++) {
		for (int64_t j = 0; j < npids; j++)
			pids[j] = (int32_t)(1000000 + i * npids + j);
		buf_reset(&msg);
		if (ctxt)
			ipc_encode_ctxt(&msg, 0, pids[0], job + i);
		else
			ipc_encode_req(&msg, 2, job, pids, (int32_t)npids);
		int fd = fds[i % nsock];
		ssize_t w;
		int waits = 0;
		for (;;) {
			w = sendto(fd, msg.data, msg.len, 0, (struct sockaddr *)&to, tolen);
			if (w >= 0 || (errno != EINTR && errno != EAGAIN) || ++waits > 5000)
				break;
			if (errno == EAGAIN) /* the daemon's queue is full: let it drain */
				sleep_ms(1);
		}
		if (w != (ssize_t)msg.len) {
			buf_printf(&err, "send: %s", w < 0 ? strerror(errno) : "short");
			goto out;
		}
		sent++;
		while (recv(fd, rx, sizeof rx, MSG_DONTWAIT) >= 0)
			replies++;
	}
	sleep_ms(100);
	for (int64_t i = 0; i < nsock; i++)
		while (recv(fds[i], rx, sizeof rx, MSG_DONTWAIT) >= 0)
			replies++;
	printf("flood: sent %llu, replies %llu\n", (unsigned long long)sent, (unsigned long long)replies);
	status = 0;
out:
	if (status)
		fprintf(stderr, "fake-kineto: flood: %s\n", err.len ? err.data : "out of memory");
	for (int64_t i = 0; fds && names && i < nsock; i++) {
		if (fds[i] > 0)
			close(fds[i]);
		struct sockaddr_un me;
		socklen_t ml;
		if (dir && names[i][0] && ipc_addr(names[i], dir, &me, &ml, &err))
			unlink(me.sun_path);
	}
	free(fds);
	free(names);
	buf_free(&err);
	buf_free(&msg);
	return status;
}

int main(int argc, char **argv)
{
	const char *daemon_name = IPC_DAEMON_NAME, *job_s = NULL, *raw_hex = NULL;
	int64_t interval_ms = 5000, run_s = 0, max_traces = 0, warmup_ms = 0, ctxt_gpu = -1, phase_ms = 0;
	bool legacy = false, restrict_paths = false;
	int64_t flood_n = 0, flood_sockets = 1, flood_npids = 64;
	bool flood_blocking = false, flood_ctxt = false;
	const struct arg_opt opts[] = {
		{"daemon_name", 0, ARG_STRING, &daemon_name, "NAME", "daemon endpoint name", 0, 0, NULL},
		{"job_id", 0, ARG_STRING, &job_s, "N", "job id (default: $SLURM_JOB_ID, else 0)", 0, 0, NULL},
		{"poll_interval_ms", 0, ARG_INT, &interval_ms, "MS", "poll period (Kineto: 5000)", 1, 3600000, NULL},
		{"poll_phase_ms", 0, ARG_INT, &phase_ms, "MS", "delay the first poll by this long", 0, 3600000, NULL},
		{"late_replies", 0, ARG_BOOL, &late_replies, NULL,
		 "libkineto bug: a send that succeeds on a retry reports failure, so replies are read one poll late", 0,
		 0, NULL},
		{"run_s", 0, ARG_INT, &run_s, "S", "exit after this long (0: until SIGTERM)", 0, 86400, NULL},
		{"exit_after_traces", 0, ARG_INT, &max_traces, "N", "exit after writing N traces", 0, 1000000, NULL},
		{"warmup_ms", 0, ARG_INT, &warmup_ms, "MS",
		 "delay between receiving a config and tracing when PROFILE_START_TIME=0 (Kineto: ~7000)", 0,
		 600000, NULL},
		{"ctxt_gpu", 0, ARG_INT, &ctxt_gpu, "GPU", "send one legacy ctxt message for this GPU at start", -1,
		 1024, NULL},
		{"legacy", 0, ARG_BOOL, &legacy, NULL, "old Kineto poll types: 3 idle, 1 busy", 0, 0, NULL},
		{"raw", 0, ARG_STRING, &raw_hex, "HEX",
		 "send these bytes as one datagram, print the answer's size (or 'no reply'), exit", 0, 0, NULL},
		{"restrict_paths", 0, ARG_BOOL, &restrict_paths, NULL,
		 "newer Kineto: trace paths only under /tmp/ or $KINETO_ONDEMAND_TRACE_DIR", 0, 0, NULL},
		{"flood", 0, ARG_INT, &flood_n, "N",
		 "hostile mode: send N polls with made-up pid ancestries, print the count of replies, exit", 0,
		 100000000, NULL},
		{"flood_sockets", 0, ARG_INT, &flood_sockets, "K", "--flood over K endpoint names", 1, 4096, NULL},
		{"flood_npids", 0, ARG_INT, &flood_npids, "N", "pids per --flood poll", 1, REG_MAX_PIDS, NULL},
		{"flood_ctxt", 0, ARG_BOOL, &flood_ctxt, NULL, "--flood with ctxt datagrams, one new job id each", 0, 0,
		 NULL},
		{"flood_blocking", 0, ARG_BOOL, &flood_blocking, NULL,
		 "--flood with blocking sends: woken as soon as the daemon's queue has room", 0, 0, NULL},
		{NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL},
	};
	struct args a;
	const struct arg_cmd cmd = {
		.prog = "fake-kineto",
		.usage = "fake-kineto [options]",
		.description = "Poll the dynolog daemon like a PyTorch process with KINETO_USE_DAEMON=1 and write a "
			       "Kineto trace when asked.",
		.opts = opts,
		.max_pos = ARGS_ANY, /* ignored, as they always were */
	};
	int rc = args_cmd(&cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (!job_s)
		job_s = getenv("SLURM_JOB_ID");
	int64_t job = job_s ? strtoll(job_s, NULL, 10) : 0; /* numeric prefix, as Kineto */
	if (flood_n) {
		int frc = flood(daemon_name, flood_n, flood_sockets, flood_npids, job, flood_blocking, flood_ctxt);
		args_free(&a);
		return frc;
	}
	int pid = getpid();
	int32_t pids[11];
	int npids = procstat_ancestry(pids, 11);

	static struct client c;
	char uuid[37], name[64];
	uuid4(uuid);
	snprintf(name, sizeof name, "dynoconfigclient%s", uuid);
	const char *dir = ipc_env_dir();
	struct buf err = BUF_INIT;
	c.fd = ipc_bind(name, dir, &err);
	if (c.fd < 0 || !ipc_addr(daemon_name, dir, &c.daemon, &c.daemon_len, &err)) {
		fprintf(stderr, "fake-kineto: %s\n", err.data);
		buf_free(&err);
		args_free(&a);
		return 1;
	}
	buf_free(&err);
	struct buf msg = BUF_INIT;
	if (raw_hex) {
		/* test mode: any bytes at all, to probe the daemon's validation */
		for (const char *h = raw_hex; h[0] && h[1]; h += 2) {
			unsigned v;
			if (sscanf(h, "%2x", &v) != 1)
				break;
			buf_putc(&msg, (char)v);
		}
		int status = 1;
		if (send_dgram(&c, &msg)) {
			ssize_t r = recv_reply(&c);
			if (r < 0)
				printf("no reply\n");
			else
				printf("reply %zd bytes\n", r);
			status = 0;
		}
		buf_free(&msg);
		close(c.fd);
		args_free(&a);
		return status;
	}
	printf("fake-kineto %d: job %lld, ancestry", pid, (long long)job);
	for (int i = 0; i < npids; i++)
		printf(" %d", (int)pids[i]);
	printf(", endpoint %s\n", name);

	if (ctxt_gpu >= 0) {
		ipc_encode_ctxt(&msg, (int32_t)ctxt_gpu, pid, job);
		if (send_dgram(&c, &msg)) {
			ssize_t r = recv_reply(&c);
			int32_t count = -1;
			if (r >= IPC_HDR_LEN + 4)
				memcpy(&count, c.rx + IPC_HDR_LEN, 4);
			printf("ctxt gpu %lld: count %d\n", (long long)ctxt_gpu, (int)count);
		}
	}

	int64_t t0 = clock_mono_ns(), next_poll = t0 + phase_ms * NS_PER_MS, traces = 0;
	bool tracing = false, registered = false;
	int64_t trace_start_wall_us = 0, trace_end_mono = 0;
	struct kcfg k;
	uint64_t polls = 0, answered = 0, send_failed = 0, retried = 0;
	while (!stop) {
		int64_t now = clock_mono_ns();
		if (run_s && now - t0 >= run_s * NS_PER_SEC)
			break;
		if (tracing && now >= trace_end_mono) {
			struct buf path = BUF_INIT;
			output_path(k.log_file, pid, restrict_paths, &path);
			double end_us = (double)(clock_wall_ns() / 1000);
			if (k.memory)
				printf("memory snapshot mode is not simulated; no trace written\n");
			else if (write_trace(path.data, &k, (double)trace_start_wall_us, end_us, pid))
				printf("trace %s\n", path.data);
			buf_free(&path);
			tracing = false;
			traces++;
			if (max_traces && traces >= max_traces)
				break;
			continue;
		}
		if (now >= next_poll) {
			int32_t type = tracing ? (legacy ? 1 : 0) : (legacy ? 3 : 2);
			buf_reset(&msg);
			ipc_encode_req(&msg, type, job, pids, npids);
			next_poll = now + interval_ms * NS_PER_MS;
			polls++;
			bool sent_ok = send_dgram(&c, &msg);
			retried += send_retries > 0;
			if (!sent_ok) {
				send_failed += !stop;
				printf(send_lied ? "poll sent after retries but reported failed: replies will be read one "
						   "poll late\n"
						 : "poll failed: daemon unreachable\n");
				continue;
			}
			ssize_t r = recv_reply(&c);
			if (r < 0)
				continue; /* a late answer is taken by the next poll, as Kineto */
			answered++;
			if (!registered) {
				printf("registered\n");
				registered = true;
			}
			uint64_t size = 0;
			if (r >= IPC_HDR_LEN)
				memcpy(&size, c.rx, 8);
			if (r < IPC_HDR_LEN || size == 0 || size > (uint64_t)r - IPC_HDR_LEN)
				continue;
			if (tracing) {
				printf("config ignored: profiler busy\n");
				continue;
			}
			parse_config((const char *)c.rx + IPC_HDR_LEN, (size_t)size, &k, pid);
			printf("config %llu bytes: log_file=%s duration_ms=%lld trace_id=%s\n", (unsigned long long)size,
			       k.log_file, (long long)k.duration_ms, k.trace_id);
			int64_t wall_ms = clock_wall_ns() / NS_PER_MS;
			/* Kineto acts on the config at its next controller tick (up
			 * to 1 s: the worst case here) and needs its warm-up (5 s)
			 * before the start time, else it refuses the config. */
			if (k.start_time_ms > 0 && k.start_time_ms < wall_ms + KINETO_TICK_MS + KINETO_WARMUP_MS) {
				printf("config refused: start time too close (%lld ms after the poll that read it; Kineto "
				       "needs %d)\n",
				       (long long)(k.start_time_ms - wall_ms), KINETO_TICK_MS + KINETO_WARMUP_MS);
				continue;
			}
			int64_t start_ms = k.start_time_ms > 0 ? k.start_time_ms : wall_ms + warmup_ms;
			if (start_ms < wall_ms)
				start_ms = wall_ms;
			int64_t dur = k.iterations > 0 ? k.iterations * 20 : k.duration_ms;
			trace_start_wall_us = start_ms * 1000;
			trace_end_mono = now + (start_ms - wall_ms + dur) * NS_PER_MS;
			tracing = true;
			continue;
		}
		int64_t until = next_poll;
		if (tracing && trace_end_mono < until)
			until = trace_end_mono;
		if (run_s && t0 + run_s * NS_PER_SEC < until)
			until = t0 + run_s * NS_PER_SEC;
		sleep_ms((until - now + NS_PER_MS - 1) / NS_PER_MS);
	}
	printf("polls: %llu sent, %llu answered, %llu send failed, %llu retried\n", (unsigned long long)polls,
	       (unsigned long long)answered, (unsigned long long)send_failed, (unsigned long long)retried);
	buf_free(&msg);
	if (dir) {
		/* Kineto leaves its socket file behind; we tidy up. */
		struct sockaddr_un me;
		socklen_t ml;
		struct buf e2 = BUF_INIT;
		if (ipc_addr(name, dir, &me, &ml, &e2))
			unlink(me.sun_path);
		buf_free(&e2);
	}
	close(c.fd);
	args_free(&a);
	return 0;
}
