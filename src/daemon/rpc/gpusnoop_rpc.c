/*
 * gpusnoop_rpc.c - see gpusnoop_rpc.h.  A session is a slot in a fixed
 * table: the child's pid and pidfd (readable when it exits: reaped then
 * with waitpid), the read end of its stderr pipe (each line logged), and a
 * deadline timer at duration + --gpusnoop_grace_s (30 s) that sends
 * SIGTERM and SIGCONT (gpusnoop then writes its report and exits, even if
 * it was stopped), then SIGKILL 10 s later.  The pid cannot be reused
 * before it is reaped here, so kill() by pid is safe.  The report file's
 * descriptor is kept: at a failure the daemon adds why to it, after what
 * gpusnoop wrote (they share the file offset).
 */
#include "daemon/rpc/gpusnoop_rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "daemon/rpc/security.h"

#define KILL_AFTER_S 10    /* after SIGTERM, before SIGKILL */
#define ERRTEXT_MAX 4096   /* of a session's stderr, kept for its report */
#define MAX_LINES 200      /* of a session's stderr, logged */
#define LINE_MAX_BYTES 400 /* a longer line is logged in pieces */

extern char **environ;

struct session {
	bool used;
	uint64_t id;
	pid_t pid;     /* gpusnoop */
	int pidfd;     /* readable when it exits */
	int errfd;     /* its stderr; -1 once at EOF */
	int reportfd;  /* the report file (its stdout), for the daemon's own lines */
	bool json;     /* --format json: what the daemon adds is JSON too */
	struct buf errtext; /* the first ERRTEXT_MAX bytes of its stderr, printable */
	int32_t watched;
	struct ev_timer *deadline;
	int signals;   /* 0, 1 (SIGTERM sent), 2 (SIGKILL sent) */
	unsigned lines;
	size_t linelen;
	char line[LINE_MAX_BYTES + 1];
	char *log_file;
	struct gpusnoop_rpc *owner;
};

struct gpusnoop_rpc {
	struct ev_loop *loop;
	struct path_policy policy;
	char *binary;
	int64_t max_sessions, max_duration_s, grace_s;
	uint64_t next_id;
	struct session s[GPUSNOOP_SESSIONS_MAX];
};

bool gpusnoop_rpc_available(const struct gpusnoop_rpc *g, struct buf *why)
{
	if (!g)
		buf_puts(why, "gpusnoop sessions are not available on this daemon");
	else if (g->max_sessions == 0)
		buf_puts(why, "gpusnoop sessions are off on this daemon (--gpusnoop_max_sessions=0)");
	else if (g->policy.n == 0)
		buf_puts(why, "gpusnoop sessions need the daemon to run with --trace_path_prefixes (it writes their files)");
	else
		return true;
	return false;
}

struct gpusnoop_rpc *gpusnoop_rpc_start(struct ev_loop *l, const struct gpusnoop_flags *f, const char *trace_prefixes,
					struct buf *err)
{
	struct gpusnoop_rpc *g = xcalloc(1, sizeof(*g));
	g->loop = l;
	g->max_sessions = f->max_sessions;
	g->max_duration_s = f->max_duration_s;
	g->grace_s = f->grace_s > 0 ? f->grace_s : 30;
	if (!path_policy_parse(&g->policy, trace_prefixes, err)) {
		free(g);
		return NULL;
	}
	if (f->path && *f->path) {
		g->binary = xstrdup(f->path);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		struct buf b = BUF_INIT;
		buf_printf(&b, "%s/gpusnoop", n > 0 ? dirname(self) : ".");
		g->binary = buf_detach(&b, NULL);
	}
	return g;
}

static void status_failed(struct buf *resp, const char *why)
{
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "error");
	jw_str(&w, why);
	jw_key(&w, "status");
	jw_str(&w, "failed");
	jw_obj_end(&w);
}

/* log what the child wrote, line by line, client-controlled bytes made printable */
static void log_lines(struct session *s, const char *p, size_t n, bool flush)
{
	for (size_t i = 0; i <= n; i++) {
		bool end = i == n;
		if (!end && p[i] != '\n' && s->linelen < LINE_MAX_BYTES) {
			s->line[s->linelen++] = p[i];
			continue;
		}
		if (end && !(flush && s->linelen))
			break;
		if (s->lines < MAX_LINES) {
			char safe[LINE_MAX_BYTES + 1];
			const char *line = sec_printable(s->line, s->linelen, safe, sizeof(safe));
			log_info("gpusnoop session %" PRIu64 ": %s", s->id, line);
			if (s->errtext.len + strlen(line) + 1 <= ERRTEXT_MAX)
				buf_printf(&s->errtext, "%s\n", line);
		} else if (s->lines == MAX_LINES) {
			log_info("gpusnoop session %" PRIu64 ": (more lines not logged)", s->id);
		}
		s->lines++;
		s->linelen = 0;
		if (!end && p[i] != '\n') /* a long line goes on in the next piece */
			s->line[s->linelen++] = p[i];
	}
}

static void drain(struct session *s, bool flush)
{
	char b[4096];
	for (;;) {
		ssize_t r = s->errfd >= 0 ? read(s->errfd, b, sizeof(b)) : 0;
		if (r > 0) {
			log_lines(s, b, (size_t)r, false);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN && !flush)
			return;
		break; /* EOF, an error, or the end with nothing left */
	}
	log_lines(s, "", 0, true);
	if (s->errfd >= 0) {
		ev_io_del(s->owner->loop, s->errfd);
		close(s->errfd);
		s->errfd = -1;
	}
}

static void on_stderr(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l, (void)fd, (void)events;
	drain(ud, false);
}

static void release(struct session *s)
{
	struct ev_loop *l = s->owner->loop;
	if (s->errfd >= 0) {
		ev_io_del(l, s->errfd);
		close(s->errfd);
	}
	if (s->pidfd >= 0) {
		ev_io_del(l, s->pidfd);
		close(s->pidfd);
	}
	if (s->reportfd >= 0)
		close(s->reportfd);
	if (s->deadline)
		ev_timer_del(l, s->deadline);
	buf_free(&s->errtext);
	free(s->log_file);
	memset(s, 0, sizeof(*s));
}

static const char *exit_meaning(int code)
{
	switch (code) {
	case 0: return "report written";
	case 2: return "usage";
	case 3: return "no such process";
	case 4: return "not permitted, or no uprobes";
	case 5: return "no CUDA library mapped";
	}
	return "failed";
}

/* whole, or said in the log: a report file is a regular file (no EAGAIN) */
static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w, n -= (size_t)w;
	}
	return true;
}

/*
 * What the report file gets from the daemon when the session did not end
 * well: the outcome and gpusnoop's stderr lines (its reason).  A table
 * report gets text after whatever gpusnoop wrote; a JSON one, which a
 * failed gpusnoop leaves empty, gets one JSON object - unless gpusnoop
 * wrote its report (exit 0 at the deadline), which stays valid JSON.
 */
static void tell_report(struct session *s, const char *outcome, bool report_written)
{
	if (s->reportfd < 0 || (s->json && report_written))
		return;
	struct buf b = BUF_INIT;
	if (s->json) {
		struct jw w;
		jw_init(&w, &b);
		jw_obj_begin(&w);
		jw_key(&w, "error"), jw_str(&w, outcome);
		jw_key(&w, "session"), jw_u64(&w, s->id);
		jw_key(&w, "pid"), jw_i64(&w, s->watched);
		jw_key(&w, "stderr"), jw_strn(&w, s->errtext.data ? s->errtext.data : "", s->errtext.len);
		jw_obj_end(&w);
		buf_puts(&b, "\n");
	} else {
		buf_printf(&b, "%sgpusnoop session %" PRIu64 " (pid %d watched): %s\n", report_written ? "\n" : "", s->id,
			   (int)s->watched, outcome);
		if (s->errtext.len && !report_written)
			buf_printf(&b, "gpusnoop said:\n%s", s->errtext.data);
	}
	if (!write_all(s->reportfd, b.data, b.len))
		log_warn("gpusnoop session %" PRIu64 ": cannot add to its report %s: %s", s->id, s->log_file, strerror(errno));
	buf_free(&b);
}

static void on_exit_ready(struct ev_loop *l, int fd, uint32_t events, void *ud)
{
	(void)l, (void)fd, (void)events;
	struct session *s = ud;
	int st = 0;
	pid_t r = waitpid(s->pid, &st, WNOHANG);
	if (r == 0 || (r < 0 && errno == EINTR))
		return; /* not yet */
	drain(s, true);
	char outcome[160];
	if (r < 0) {
		log_warn("gpusnoop session %" PRIu64 ": cannot reap pid %d: %s", s->id, (int)s->pid, strerror(errno));
	} else if (WIFEXITED(st)) {
		int code = WEXITSTATUS(st);
		log_info("gpusnoop session %" PRIu64 " (pid %d watched) ended: exit %d (%s)%s, report in %s", s->id,
			 (int)s->watched, code, exit_meaning(code), s->signals ? ", stopped at its deadline" : "",
			 s->log_file);
		if (code != 0)
			snprintf(outcome, sizeof(outcome), "gpusnoop failed: exit %d (%s)%s", code, exit_meaning(code),
				 s->signals ? ", stopped at its deadline" : "");
		else
			snprintf(outcome, sizeof(outcome), "stopped by the daemon %" PRId64 " s past its duration (SIGTERM):"
				 " the report above is what was seen until then", s->owner->grace_s);
		if (code != 0 || s->signals)
			tell_report(s, outcome, code == 0);
	} else {
		log_warn("gpusnoop session %" PRIu64 " (pid %d watched) ended by signal %d%s; its report in %s may be "
			 "incomplete", s->id, (int)s->watched, WTERMSIG(st), s->signals ? " (past its deadline)" : "",
			 s->log_file);
		snprintf(outcome, sizeof(outcome), "gpusnoop ended by signal %d%s: its report is incomplete or missing",
			 WTERMSIG(st), s->signals ? " (killed past its deadline)" : "");
		tell_report(s, outcome, false);
	}
	release(s);
}

static void on_deadline(struct ev_loop *l, struct ev_timer *t, void *ud)
{
	(void)l;
	struct session *s = ud;
	s->signals++;
	log_warn("gpusnoop session %" PRIu64 " still running past its duration: %s", s->id,
		 s->signals == 1 ? "SIGTERM" : "SIGKILL");
	kill(s->pid, s->signals == 1 ? SIGTERM : SIGKILL);
	if (s->signals == 1) /* a stopped gpusnoop (job control, a debugger) handles it too */
		kill(s->pid, SIGCONT);
	if (s->signals == 1)
		ev_timer_set(t, (int64_t)KILL_AFTER_S * 1000000000, 0);
}

/* a new file for the child to write, by the path policy; -1 with why */
static int open_output(struct gpusnoop_rpc *g, const struct json_value *v, const char *what, struct buf *why)
{
	if (v->type != JV_STRING || v->len == 0 || memchr(v->u.str, 0, v->len)) {
		buf_printf(why, "%s must be a path", what);
		return -1;
	}
	if (!path_policy_check_path(&g->policy, v->u.str, v->len, why))
		return -1;
	/* new files only, never through a symlink: a client cannot make the
	 * daemon truncate or write into a file that is there */
	int fd = open(v->u.str, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0640);
	if (fd < 0) {
		buf_printf(why, "cannot create %s %s: %s%s", what, v->u.str, strerror(errno),
			   errno == EEXIST ? " (gpusnoop writes new files only)" : "");
		return -1;
	}
	/* above the descriptors the child's stdio is made of, so the dup2s cannot collide */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	if (high < 0)
		buf_printf(why, "cannot keep %s open: %s", what, strerror(errno));
	return high;
}

static bool run_session(const struct json_value *req, struct buf *resp, void *ud)
{
	struct gpusnoop_rpc *g = ud;
	const struct json_value *pid = json_get(req, "pid"), *dur = json_get(req, "duration_s");
	const struct json_value *log_file = json_get(req, "log_file"), *trace_file = json_get(req, "trace_file");
	const struct json_value *events = json_get(req, "events"), *format = json_get(req, "format");
	const struct json_value *torch = json_get(req, "torch");
	struct buf why = BUF_INIT;
	int64_t p = 0;
	double d = dur && dur->type == JV_NUMBER ? json_value_f64(dur) : NAN;
	struct session *s = NULL;
	int logfd = -1, tracefd = -1, pipefd[2] = {-1, -1};
	for (int i = 0; i < g->max_sessions && !s; i++)
		if (!g->s[i].used)
			s = &g->s[i];
	if (g->max_sessions == 0)
		buf_puts(&why, "gpusnoop sessions are off on this daemon (--gpusnoop_max_sessions=0)");
	else if (g->policy.n == 0)
		buf_puts(&why, "gpusnoop sessions need the daemon to run with --trace_path_prefixes (it writes their files)");
	else if (!pid || !json_value_i64(pid, &p) || p <= 0 || p > INT32_MAX)
		buf_puts(&why, "pid must be a positive integer");
	else if (!(d > 0) || d > (double)g->max_duration_s)
		buf_printf(&why, "duration_s must be a number of seconds in (0, %" PRId64 "] (--gpusnoop_max_duration_s)",
			   g->max_duration_s);
	else if (!log_file)
		buf_puts(&why, "log_file (where the report goes) is required");
	else if (events && (events->type != JV_STRING || events->len == 0 || events->len > 32 ||
			    strspn(events->u.str, "abcdefghijklmnopqrstuvwxyz,") != events->len))
		buf_puts(&why, "events must be a list like \"mem,launch,sync\"");
	else if (format && (format->type != JV_STRING || (strcmp(format->u.str, "table") && strcmp(format->u.str, "json"))))
		buf_puts(&why, "format must be \"table\" or \"json\"");
	else if (torch && torch->type != JV_BOOL)
		buf_puts(&why, "torch must be true or false");
	else if (!s)
		buf_printf(&why, "%" PRId64 " gpusnoop sessions are running already (--gpusnoop_max_sessions)", g->max_sessions);
	else if (kill((pid_t)p, 0) != 0 && errno == ESRCH)
		buf_printf(&why, "no process %" PRId64, p);
	if (why.len)
		goto refuse;
	if ((logfd = open_output(g, log_file, "log_file", &why)) < 0)
		goto refuse;
	if (trace_file && (tracefd = open_output(g, trace_file, "trace_file", &why)) < 0)
		goto refuse;
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) {
		buf_printf(&why, "pipe: %s", strerror(errno));
		goto refuse;
	}

	char pid_s[24], dur_s[32];
	snprintf(pid_s, sizeof(pid_s), "%" PRId64, p);
	snprintf(dur_s, sizeof(dur_s), "%.3f", d);
	const char *argv[16];
	int k = 0;
	argv[k++] = "gpusnoop";
	argv[k++] = "--pid", argv[k++] = pid_s, argv[k++] = "--duration", argv[k++] = dur_s;
	argv[k++] = "--format", argv[k++] = format ? format->u.str : "table";
	if (events)
		argv[k++] = "--events", argv[k++] = events->u.str;
	if (torch && torch->u.b)
		argv[k++] = "--torch";
	if (tracefd >= 0)
		argv[k++] = "--trace", argv[k++] = "/dev/fd/3";
	argv[k] = NULL;

	/* stdin /dev/null, stdout the report, stderr our pipe, 3 the timeline;
	 * the daemon's blocked signals (its signalfd) and ignored SIGPIPE reset */
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	if (tracefd >= 0)
		posix_spawn_file_actions_adddup2(&fa, tracefd, 3);
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pid_t child;
	int e = posix_spawn(&child, g->binary, &fa, &at, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e != 0) {
		buf_printf(&why, "cannot run %s: %s (--gpusnoop_path)", g->binary, strerror(e));
		goto refuse;
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	if (tracefd >= 0)
		close(tracefd);
	tracefd = -1;

	*s = (struct session){.used = true, .id = ++g->next_id, .pid = child, .errfd = pipefd[0], .reportfd = logfd,
			      .watched = (int32_t)p, .json = format && strcmp(format->u.str, "json") == 0, .owner = g,
			      .log_file = xstrndup(log_file->u.str, log_file->len)};
	logfd = -1;
	s->pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	s->deadline = ev_timer_add(g->loop, (int64_t)((d + (double)g->grace_s) * 1e9), 0, on_deadline, s);
	if (s->pidfd < 0 || ev_io_add(g->loop, s->pidfd, EPOLLIN, on_exit_ready, s) < 0 ||
	    ev_io_add(g->loop, s->errfd, EPOLLIN, on_stderr, s) < 0 || !s->deadline) {
		/* cannot watch it: stop it rather than leave it unbounded */
		log_warn("gpusnoop session %" PRIu64 ": cannot watch pid %d (%s): stopped", s->id, (int)child, strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		release(s); /* closes the pipe's read end */
		pipefd[0] = -1;
		buf_puts(&why, "cannot watch the session on the daemon's loop");
		goto refuse_spawned;
	}
	log_info("gpusnoop session %" PRIu64 ": watching pid %" PRId64 " for %s s (gpusnoop pid %d), report in %s", s->id, p,
		 dur_s, (int)child, s->log_file);
	struct jw w;
	jw_init(&w, resp);
	jw_obj_begin(&w);
	jw_key(&w, "duration_s"), jw_f64(&w, d);
	jw_key(&w, "log_file"), jw_strn(&w, log_file->u.str, log_file->len);
	jw_key(&w, "pid"), jw_i64(&w, p);
	jw_key(&w, "session"), jw_u64(&w, s->id);
	jw_key(&w, "snoop_pid"), jw_i64(&w, child);
	jw_key(&w, "status"), jw_str(&w, "started");
	if (trace_file)
		jw_key(&w, "trace_file"), jw_strn(&w, trace_file->u.str, trace_file->len);
	jw_obj_end(&w);
	buf_free(&why);
	return true;

refuse:
	/* files made for a session that does not run are removed again */
	if (logfd >= 0)
		unlink(log_file->u.str);
	if (tracefd >= 0)
		unlink(trace_file->u.str);
refuse_spawned:
	if (logfd >= 0)
		close(logfd);
	if (tracefd >= 0)
		close(tracefd);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	{
		char safe[512];
		LOG_RATELIMITED(LOG_LEVEL_WARN, "gpusnoop request refused: %s", sec_printable(why.data, why.len, safe, sizeof(safe)));
	}
	status_failed(resp, why.data);
	buf_free(&why);
	return true;
}

bool gpusnoop_rpc_call(struct gpusnoop_rpc *g, const struct json_value *req, struct buf *resp)
{
	if (!g) {
		status_failed(resp, "gpusnoop sessions are not running on this daemon");
		return true;
	}
	return run_session(req, resp, g);
}

void gpusnoop_rpc_register(struct gpusnoop_rpc *g, struct rpc_server *s)
{
	if (g && s)
		rpc_register_fn(s, "gpusnoop", run_session, g);
}

void gpusnoop_rpc_stop(struct gpusnoop_rpc *g)
{
	if (!g)
		return;
	for (int i = 0; i < GPUSNOOP_SESSIONS_MAX; i++)
		if (g->s[i].used) {
			log_info("gpusnoop session %" PRIu64 ": SIGTERM at the daemon's exit (it writes its report to %s)",
				 g->s[i].id, g->s[i].log_file);
			kill(g->s[i].pid, SIGTERM);
			release(&g->s[i]);
		}
	path_policy_free(&g->policy);
	free(g->binary);
	free(g);
}
