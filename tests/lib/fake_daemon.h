/*
 * fake_daemon.h - a recording, answering stand-in for dynolog's RPC
 * server, for the dyno CLI tests and the fan-out bench (tests/lib: linked
 * into both).  It is not the real server on purpose: it records the exact
 * request bytes (the CLI tests compare them with upstream's), serves one
 * connection at a time like upstream's server (the bench's baseline), and
 * misbehaves on demand (bad lengths, cut answers, silence); the real
 * server is tested against dyno in tests/integration/cli_*.sh.
 *
 * fake_start() listens on N loopback ports (kernel-chosen) and serves them
 * from one thread with the core event loop.  Like upstream's server it
 * handles one connection at a time: read the int32 length and the body,
 * record the exact bytes, answer, close.  Answers follow upstream
 * (wire-protocols.md §2.4): getStatus, getVersion, setKinetOnDemandRequest
 * (matching its registered processes by job id and pid ancestry, honouring
 * process_limit and keeping a pending config busy), dcgmProfPause/Resume;
 * anything else, getProcesses and getMetrics included, is closed without
 * an answer.  FAKE_EXTENDED also answers getProcesses and getMetrics like a
 * dynolite daemon.  The other modes misbehave on purpose.
 */
#ifndef DYNO_TEST_FAKE_DAEMON_H
#define DYNO_TEST_FAKE_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/loop.h"
#include "loop_thread.h"

enum fake_mode {
	FAKE_UPSTREAM,    /* upstream dynolog 0.6.0 */
	FAKE_EXTENDED,    /* plus getProcesses / getMetrics */
	FAKE_SILENT,      /* accept, read, never answer, keep the connection */
	FAKE_CLOSE,       /* read the request, close without a byte */
	FAKE_NEG_LEN,     /* length prefix -5 */
	FAKE_HUGE_LEN,    /* length prefix 0x7fffffff */
	FAKE_TRUNCATED,   /* announces 100 bytes, sends 10, closes */
	FAKE_GARBAGE,     /* a well-framed answer that is not JSON */
	FAKE_SHORT_PREFIX, /* 2 bytes of a length, then close */
	FAKE_FAILED,       /* {"status":"failed"} to everything */
	FAKE_DRIP          /* upstream answers, one byte per write, 1 ms apart */
};

#define FAKE_MAX_PROCS 8

struct fake_proc {
	int64_t pid, parent;
	int64_t last_seen_ms;
};

struct fake_request {
	int port_index;
	struct buf body;
};

struct fake_daemon {
	enum fake_mode mode;
	int n;
	int *fds, *ports;
	/* registered Kineto processes (same on every port), under job id `job` */
	char job[24];
	struct fake_proc procs[FAKE_MAX_PROCS];
	int nprocs;
	/* pending[port * FAKE_MAX_PROCS + proc]: a config waits for that
	 * process on that daemon (each port is a separate daemon) */
	bool *pending;
	/* getMetrics in FAKE_EXTENDED: this many extra samples of "big" */
	int metric_samples;
	/* recorded requests */
	pthread_mutex_t mu;
	struct fake_request *reqs;
	size_t nreqs, capreqs;
	/* silent mode keeps these open */
	int held[1024];
	int nheld;
	int max_open; /* most client connections open at once (silent mode) */
	/* the thread */
	struct ev_loop *loop;
	struct loop_thread lt;
};

/* Listen on n loopback ports of family AF_INET or AF_INET6 (::1) and serve
 * them from a thread; false when the sockets cannot be set up (call
 * fake_stop anyway). */
bool fake_start_family(struct fake_daemon *f, int n, enum fake_mode mode, int family);
/* fake_start_family with AF_INET */
bool fake_start(struct fake_daemon *f, int n, enum fake_mode mode);
/* Register a process (before any request). */
void fake_add_proc(struct fake_daemon *f, int64_t pid, int64_t parent, int64_t last_seen_ms);
void fake_stop(struct fake_daemon *f);
/* "127.0.0.1:p1,127.0.0.1:p2,..." */
void fake_hostnames(const struct fake_daemon *f, struct buf *out);
/* Run the dyno binary next to the running program (build/dyno for
 * build/unit-tests, ../dyno for build/bench/x) with argv (argv[0] ignored);
 * stdout and stderr are captured.  Returns the exit status, -1 if it could
 * not run or was killed (after timeout_s). */
int run_dyno(char *const argv[], struct buf *out, struct buf *err, int timeout_s);

#endif
