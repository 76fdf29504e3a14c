/*
 * hosts.h - which daemons a dyno command talks to.
 *
 * Every RPC subcommand accepts upstream's --hostname/--port (one daemon,
 * upstream's output) and, for many daemons, --hostnames a,b:1779,[::1]:5,
 * --hostfile FILE (one host per line, first word, '#' comments; MPI host
 * files work) or --slurm-job ID (the job's nodes from squeue/scontrol).
 * HOST_ARG_OPTS puts the shared options into a command's arg_opt table;
 * hosts_collect turns them into a deduplicated target list and loads the
 * token of --token-file (or $DYNO_TOKEN_FILE), which every request then
 * carries, for daemons started with --rpc_token_file.
 */
#ifndef DYNO_CLI_HOSTS_H
#define DYNO_CLI_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/rpc_client.h"
#include "core/args.h"
#include "core/buf.h"

/* The daemon's token is 8 to 1024 bytes (docs/security.md). */
#define HOST_TOKEN_MIN 8
#define HOST_TOKEN_MAX 1024
/* The environment variable naming a token file when --token-file is not given. */
#define HOST_TOKEN_ENV "DYNO_TOKEN_FILE"

struct host_opts {
	const char *hostname;
	int64_t port;
	const char *hostnames;
	const char *hostfile;
	const char *slurm_job;
	double timeout_s;
	int64_t parallel;
	bool hostname_seen;
	const char *token_file;
	/* loaded by hosts_collect from token_file or $DYNO_TOKEN_FILE; "" when none */
	char token[HOST_TOKEN_MAX + 1];
};

#define HOST_OPTS_INIT {"localhost", NET_RPC_PORT, NULL, NULL, NULL, RPC_DEFAULT_TIMEOUT_MS / 1000.0, \
			RPC_DEFAULT_PARALLEL, false, NULL, ""}

/* the number of entries HOST_ARG_OPTS expands to */
#define HOST_ARG_COUNT 8
#define HOST_ARG_OPTS(h)                                                                             \
	{"hostname", 0, ARG_STRING, &(h)->hostname, "HOST", "daemon host", 0, 0, &(h)->hostname_seen}, \
	{"port", 0, ARG_INT, &(h)->port, "PORT", "daemon RPC port", 1, 65535, NULL},          \
	{"hostnames", 0, ARG_STRING, &(h)->hostnames, "H1,H2,...",                                   \
	 "many daemons at once: comma-separated HOST or HOST:PORT ([v6]:PORT)", 0, 0, NULL},          \
	{"hostfile", 0, ARG_STRING, &(h)->hostfile, "FILE",                                          \
	 "many daemons: one HOST[:PORT] per line, first word, '#' comments", 0, 0, NULL},             \
	{"slurm-job", 0, ARG_STRING, &(h)->slurm_job, "JOBID",                                       \
	 "the nodes of this SLURM job (squeue/scontrol), contacted at --port", 0, 0, NULL},          \
	{"timeout-s", 0, ARG_DOUBLE, &(h)->timeout_s, "SECONDS",                                     \
	 "per daemon: connect, send and answer", 0, 0, NULL},                            \
	{"parallel", 0, ARG_INT, &(h)->parallel, "N", "connections in flight at once", 1, 65536, NULL}, \
	{"token-file", 0, ARG_STRING, &(h)->token_file, "FILE",                                      \
	 "send the secret in FILE (daemon's --rpc_token_file; default $" HOST_TOKEN_ENV ")", 0, 0, NULL}

struct target {
	char *host;    /* no brackets */
	char port[8];  /* decimal */
	char *label;   /* how it is shown: "host" or "host:port" */
};

struct targets {
	struct target *t;
	size_t n;
	bool many; /* --hostnames/--hostfile/--slurm-job: per-host table output */
};

/* Build the target list and load the token into o->token; false with a
 * message in err. */
bool hosts_collect(struct host_opts *o, struct targets *out, struct buf *err);
void targets_free(struct targets *t);
/* Parse "host", "host:port", "[v6]:port" or a bare IPv6 address and append
 * it (unless already present).  Exposed for tests and the fuzzer. */
bool targets_add(struct targets *t, const char *spec, size_t len, int64_t default_port, struct buf *err);
/* Append every entry of a comma/space-separated list (targets_add each). */
bool targets_add_list(struct targets *t, const char *list, int64_t default_port, struct buf *err);
/* Append the nodes of SLURM job `job` (squeue, then scontrol show hostnames
 * for a compressed list) at port. */
bool hosts_slurm_job(const char *job, struct targets *t, int64_t port, struct buf *err);
/* Parse host-file text (one host per line). */
bool targets_parse_hostfile(struct targets *t, const char *text, size_t len, int64_t default_port,
			    const char *fname, struct buf *err);
/* Read a token file: a regular file of at most 4 KiB whose text, trailing
 * whitespace stripped (as the daemon does), is 8..1024 bytes of UTF-8
 * without NUL.  out gets the token, NUL-terminated. */
bool hosts_token_load(const char *path, char out[HOST_TOKEN_MAX + 1], struct buf *err);
/* Client options from the shared options (after hosts_collect). */
struct rpc_client_opts hosts_rpc_opts(const struct host_opts *o);
/* Fill jobs[i] for every target with one request body. */
void hosts_jobs(const struct targets *t, struct rpc_job *jobs, const char *req, size_t len);

/* Run argv (PATH lookup), capture stdout (<= 16 MiB); returns the exit code,
 * -1 when it could not run (err set).  Used for squeue/scontrol. */
int hosts_run_capture(char *const argv[], struct buf *out, struct buf *err);

#endif
