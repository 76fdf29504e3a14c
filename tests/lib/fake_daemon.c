/* fake_daemon.c - see fake_daemon.h. */
#include "fake_daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "sock.h"

static void fake_record(struct fake_daemon *f, int idx, const char *b, size_t n)
{
	pthread_mutex_lock(&f->mu);
	if (f->nreqs == f->capreqs) {
		f->capreqs = f->capreqs ? f->capreqs * 2 : 16;
		f->reqs = xrealloc(f->reqs, f->capreqs * sizeof *f->reqs);
	}
	struct fake_request *r = &f->reqs[f->nreqs++];
	r->port_index = idx;
	buf_init(&r->body);
	buf_append(&r->body, b, n);
	pthread_mutex_unlock(&f->mu);
}

static void fake_answer(int fd, const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	buf_put_u32(&b, (uint32_t)n);
	buf_append(&b, s, n);
	sock_write_all(fd, b.data, b.len);
	buf_free(&b);
}

static bool fake_pid_listed(const struct json_value *pids, int64_t pid)
{
	for (uint32_t i = 0; i < pids->len; i++) {
		int64_t v;
		if (json_value_i64(&pids->u.items[i], &v) && v == pid)
			return true;
	}
	return false;
}

/* Upstream's setKinetOnDemandRequest semantics over the fake registry. */
static void fake_trace_request(struct fake_daemon *f, int idx, const struct json_value *root,
						       struct buf *out)
{
	const struct json_value *pids = json_get(root, "pids"), *cfg = json_get(root, "config");
	if (!pids || !cfg) {
		buf_puts(out, "{\"status\":\"failed\"}");
		return;
	}
	int64_t job = 0, limit = 1000;
	const struct json_value *jv = json_get(root, "job_id");
	if (pids->type != JV_ARRAY || cfg->type != JV_STRING || (jv && !json_value_i64(jv, &job)) ||
	    (json_get(root, "process_limit") && !json_get_i64(root, "process_limit", &limit))) {
		buf_puts(out, "{\"status\":\"failed with exception = [json.exception.type_error.302] type must be "
			      "number, but is string\"}");
		return;
	}
	char jobs[24];
	snprintf(jobs, sizeof jobs, "%lld", (long long)(int32_t)job);
	bool all = pids->len == 0;
	int64_t first;
	if (pids->len == 1 && json_value_i64(&pids->u.items[0], &first) && first == 0)
		all = true;
	struct buf matched = BUF_INIT, trig = BUF_INIT;
	int64_t busy = 0, ntrig = 0;
	for (int i = 0; strcmp(jobs, f->job) == 0 && i < f->nprocs; i++) {
		struct fake_proc *p = &f->procs[i];
		bool *pend = &f->pending[idx * FAKE_MAX_PROCS + i];
		if (!all && !fake_pid_listed(pids, p->pid) && !fake_pid_listed(pids, p->parent))
			continue;
		buf_printf(&matched, "%s%lld", matched.len ? "," : "", (long long)p->pid);
		if (ntrig >= limit)
			continue;
		if (*pend) {
			busy++;
		} else {
			*pend = true;
			ntrig++;
			buf_printf(&trig, "%s%lld", trig.len ? "," : "", (long long)p->pid);
		}
	}
	buf_printf(out,
		   "{\"activityProfilersBusy\":%lld,\"activityProfilersTriggered\":[%s],\"eventProfilersBusy\":0,"
		   "\"eventProfilersTriggered\":[],\"processesMatched\":[%s]}",
		   (long long)busy, trig.data, matched.data);
	buf_free(&matched);
	buf_free(&trig);
}

static void fake_serve(struct fake_daemon *f, int idx, int fd)
{
	int32_t len;
	if (sock_read_n(fd, &len, 4, 2000) != 4 || len <= 0 || len > (1 << 20)) {
		close(fd);
		return;
	}
	char *body = xmalloc((size_t)len + 1);
	if (sock_read_n(fd, body, (size_t)len, 2000) != len) {
		free(body);
		close(fd);
		return;
	}
	body[len] = 0;
	fake_record(f, idx, body, (size_t)len);
	struct buf out = BUF_INIT;
	switch (f->mode) {
	case FAKE_SILENT: {
		/* how many earlier connections has the client still open? (it
		 * closes each one at its timeout: recv then sees end of file) */
		int open_now = 1;
		for (int k = 0; k < f->nheld; k++) {
			char c;
			ssize_t r = recv(f->held[k], &c, 1, MSG_PEEK | MSG_DONTWAIT);
			open_now += !(r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK));
		}
		if (open_now > f->max_open)
			f->max_open = open_now;
		if (f->nheld < 1024) {
			f->held[f->nheld++] = fd;
			fd = -1;
		}
		break;
	}
	case FAKE_CLOSE: break;
	case FAKE_NEG_LEN: sock_write_all(fd, "\xfb\xff\xff\xff{}", 6); break;
	case FAKE_HUGE_LEN: sock_write_all(fd, "\xff\xff\xff\x7f{\"status\":1}", 16); break;
	case FAKE_TRUNCATED: sock_write_all(fd, "\x64\x00\x00\x00{\"status\"", 14); break;
	case FAKE_SHORT_PREFIX: sock_write_all(fd, "\x0c\x00", 2); break;
	case FAKE_GARBAGE: fake_answer(fd, "status: fine", 12); break;
	case FAKE_FAILED: fake_answer(fd, "{\"status\":\"failed\"}", 19); break;
	case FAKE_DRIP:
	case FAKE_UPSTREAM:
	case FAKE_EXTENDED: {
		struct json_doc doc;
		struct json_error je;
		const char *fn = NULL;
		size_t fnl = 0;
		if (json_parse(body, (size_t)len, &doc, &je)) {
			if (!json_get_str(doc.root, "fn", &fn, &fnl))
				fn = NULL;
			if (!fn) {
			} else if (strcmp(fn, "getStatus") == 0) {
				/* a dynolite daemon names its extensions when asked */
				buf_puts(&out, f->mode == FAKE_EXTENDED && json_get(doc.root, "extensions")
						       ? "{\"extensions\":[\"getMetrics\",\"getProcesses\"],\"status\":1}"
						       : "{\"status\":1}");
			} else if (strcmp(fn, "getVersion") == 0) {
				buf_puts(&out, "{\"version\":\"0.6.0\"}");
			} else if (strcmp(fn, "dcgmProfResume") == 0) {
				buf_puts(&out, "{\"status\":true}");
			} else if (strcmp(fn, "dcgmProfPause") == 0) {
				buf_puts(&out, json_get(doc.root, "duration_s") ? "{\"status\":true}" : "{\"status\":\"failed\"}");
			} else if (strcmp(fn, "setKinetOnDemandRequest") == 0) {
				fake_trace_request(f, idx, doc.root, &out);
			} else if (f->mode == FAKE_EXTENDED && strcmp(fn, "getProcesses") == 0) {
				buf_printf(&out, "{\"count\":%d,\"processes\":[", f->nprocs);
				for (int i = 0; i < f->nprocs; i++)
					buf_printf(&out,
						   "%s{\"jobId\":\"%s\",\"lastSeenMs\":%lld,\"pid\":%lld,\"pids\":[%lld,%lld],"
						   "\"state\":\"%s\"}",
						   i ? "," : "", f->job, (long long)f->procs[i].last_seen_ms,
						   (long long)f->procs[i].pid, (long long)f->procs[i].pid,
						   (long long)f->procs[i].parent,
						   f->pending[idx * FAKE_MAX_PROCS + i] ? "pending" : "idle");
				buf_puts(&out, "]}");
			} else if (f->mode == FAKE_EXTENDED && strcmp(fn, "getMetrics") == 0) {
				buf_puts(&out, "{\"interval_s\":1,\"metrics\":{");
				if (f->metric_samples > 0) {
					buf_puts(&out, "\"big\":[");
					for (int k = 0; k < f->metric_samples; k++)
						buf_printf(&out, "%s[%lld,%d.25]", k ? "," : "", 1795300000000ll + k, k);
					buf_puts(&out, "],");
				}
				buf_puts(&out, "\"cpu_util\":[[1795300000000,12.5],"
					       "[1795300001000,37.5]],\"uptime\":[[1795300001000,4242]]},\"window_s\":600}");
			}
			json_doc_free(&doc);
		}
		if (out.len && f->mode == FAKE_DRIP) {
			struct buf fr = BUF_INIT;
			buf_put_u32(&fr, (uint32_t)out.len);
			buf_append(&fr, out.data, out.len);
			for (size_t k = 0; k < fr.len; k++) {
				sock_write_all(fd, fr.data + k, 1);
				usleep(1000);
			}
			buf_free(&fr);
		} else if (out.len) {
			fake_answer(fd, out.data, out.len);
		}
		break;
	}
	}
	buf_free(&out);
	free(body);
	if (fd >= 0)
		close(fd);
}

static void fake_on_accept(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l;
	(void)events;
	struct fake_daemon *f = ud;
	int idx = 0;
	while (idx < f->n && f->fds[idx] != fd)
		idx++;
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return;
		fake_serve(f, idx, c);
	}
}

/* Listen on n loopback ports of family AF_INET or AF_INET6 (::1); false
 * when the sockets cannot be set up. */
bool fake_start_family(struct fake_daemon *f, int n, enum fake_mode mode, int family)
{
	memset(f, 0, sizeof *f);
	f->mode = mode;
	f->n = n;
	snprintf(f->job, sizeof f->job, "0");
	pthread_mutex_init(&f->mu, NULL);
	f->fds = xcalloc((size_t)n, sizeof *f->fds);
	f->ports = xcalloc((size_t)n, sizeof *f->ports);
	f->pending = xcalloc((size_t)n * FAKE_MAX_PROCS, sizeof *f->pending);
	f->loop = ev_loop_new();
	if (!f->loop)
		return false;
	for (int i = 0; i < n; i++) {
		int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct sockaddr_storage ss = {0};
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		if (family == AF_INET6) {
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = in6addr_loopback;
		} else {
			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		}
		socklen_t sl = family == AF_INET6 ? sizeof *s6 : sizeof *s4;
		if (s < 0 || bind(s, (struct sockaddr *)&ss, sl) < 0 || listen(s, 128) < 0 ||
		    getsockname(s, (struct sockaddr *)&ss, &sl) < 0) {
			if (s >= 0)
				close(s);
			f->n = i;
			return false;
		}
		f->fds[i] = s;
		f->ports[i] = ntohs(family == AF_INET6 ? s6->sin6_port : s4->sin_port);
		ev_io_add(f->loop, s, EPOLLIN, fake_on_accept, f);
	}
	return loop_thread_start(&f->lt, f->loop);
}

bool fake_start(struct fake_daemon *f, int n, enum fake_mode mode)
{
	return fake_start_family(f, n, mode, AF_INET);
}

/* Register a process (before any request). */
void fake_add_proc(struct fake_daemon *f, int64_t pid, int64_t parent, int64_t last_seen_ms)
{
	if (f->nprocs < FAKE_MAX_PROCS)
		f->procs[f->nprocs++] = (struct fake_proc){pid, parent, last_seen_ms};
}

void fake_stop(struct fake_daemon *f)
{
	loop_thread_stop(&f->lt);
	for (int i = 0; i < f->n; i++)
		close(f->fds[i]);
	for (int i = 0; i < f->nheld; i++)
		close(f->held[i]);
	if (f->loop)
		ev_loop_free(f->loop);
	for (size_t i = 0; i < f->nreqs; i++)
		buf_free(&f->reqs[i].body);
	free(f->reqs);
	free(f->fds);
	free(f->ports);
	free(f->pending);
	pthread_mutex_destroy(&f->mu);
}

/* "127.0.0.1:p1,127.0.0.1:p2,..." */
void fake_hostnames(const struct fake_daemon *f, struct buf *out)
{
	for (int i = 0; i < f->n; i++)
		buf_printf(out, "%s127.0.0.1:%d", i ? "," : "", f->ports[i]);
}

/* Run the dyno binary next to the running program (build/dyno for
 * build/unit-tests, ../dyno for build/bench/x) with argv (argv[0] ignored);
 * stdout and stderr are captured.  Returns the exit status, -1 if it could
 * not run or was killed (after timeout_s). */
int run_dyno(char *const argv[], struct buf *out, struct buf *err, int timeout_s)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	*slash = 0;
	if (strcmp(slash - 6 > self ? slash - 6 : self, "/bench") == 0)
		*(slash - 6) = 0;
	strcat(self, "/dyno");
	char of[] = "/tmp/dyno-out-XXXXXX", ef[] = "/tmp/dyno-err-XXXXXX";
	int ofd = mkstemp(of), efd = mkstemp(ef);
	if (ofd < 0 || efd < 0)
		return -1;
	unlink(of);
	unlink(ef);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		alarm((unsigned)timeout_s);
		execv(self, argv);
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	for (int k = 0; k < 2; k++) {
		int fd = k ? efd : ofd;
		struct buf *b = k ? err : out;
		lseek(fd, 0, SEEK_SET);
		char tmp[65536];
		ssize_t r;
		while (b && (r = read(fd, tmp, sizeof tmp)) > 0)
			buf_append(b, tmp, (size_t)r);
		close(fd);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

