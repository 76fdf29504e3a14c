/*
 * security.h - the daemon's protections beyond upstream for on-demand
 * tracing (threat model: docs/security.md).
 *
 * - Shared token: --rpc_token_file holds a secret; when set, every RPC
 *   request must carry it as the string member "token" of its JSON object.
 *   Compared in constant time.
 * - Trace-path policy: --trace_path_prefixes lists the directories a
 *   setKinetOnDemandRequest may make a traced process write into.  The
 *   config text is read with Kineto's own line rules, every
 *   ACTIVITIES_LOG_FILE line is checked (Kineto keeps the last good one),
 *   the default path Kineto uses when none is given is checked too, and
 *   ".." anywhere, relative paths and values Kineto would mis-parse are
 *   refused.  Paths and prefixes are compared with symlinks resolved
 *   (realpath of the longest existing ancestor, at every request: a few
 *   syscalls per path).  Refusals carry a one-line reason for the caller.
 * - Start-up checks: a token file must be a private regular file (opened
 *   non-blocking, so a FIFO cannot hang start-up), and a protection flag
 *   given with an empty value is an error rather than "off".
 * Network allow-lists and --rpc_bind live in core/net.h and rpc.c.
 */
#ifndef DYNO_SECURITY_H
#define DYNO_SECURITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* Read the token (trailing whitespace stripped, must be 8..1024 bytes). */
bool sec_load_token(const char *path, char **token, struct buf *err);
/* Constant-time equality of two byte strings. */
bool sec_token_eq(const char *a, size_t an, const char *b, size_t bn);

/* Client-controlled text made safe for a log line: at most cap-1 bytes,
 * control and non-ASCII bytes shown as '?', so a request cannot forge log
 * lines.  Returns out. */
const char *sec_printable(const char *s, size_t n, char *out, size_t cap);

/* A security flag given explicitly with nothing in it ("", ",,", " , ")
 * would silently mean "no protection": false with a message then.  given:
 * the flag was on the command line (its default, "", means off). */
bool sec_flag_not_empty(const char *flag, bool given, const char *value, struct buf *err);

struct path_policy {
	char **prefixes; /* each absolute and ending in '/' */
	size_t n;
};

/* "/tmp/,/data/traces" -> prefixes ('/' appended when missing).  An empty
 * spec means no policy (upstream behaviour: any path). */
bool path_policy_parse(struct path_policy *p, const char *spec, struct buf *err);
void path_policy_free(struct path_policy *p);
/* True when the config may be delivered; otherwise why gets the reason.
 * Beyond the ACTIVITIES_LOG_FILE value itself, the names Kineto derives
 * from it are checked (docs/wire-protocols.md 5.5): <name>_<pid>.json,
 * written as <name>_<pid>.json.tmp then renamed; EVENTS_LOG_FILE values
 * likewise.  path_policy_check_pids checks them for each pid Kineto will
 * use (the leaf pids of the processes the request reaches): such a name
 * must lie under a prefix with symlinks resolved and, where it exists
 * already, be a regular file with one link, not a symlink (a user who can
 * write in the prefix planted a link at the .tmp name and a root process's
 * trace went through it).  Without pids (a trigger's definition) the
 * derived names are checked with pid 0, which covers their directory. */
bool path_policy_check(const struct path_policy *p, const char *config, size_t len, struct buf *why);
bool path_policy_check_pids(const struct path_policy *p, const char *config, size_t len, const int32_t *pids,
			    size_t npids, struct buf *why);
/* Kineto's output name for pid (docs/wire-protocols.md 5.5): the first
 * ".pt.trace.json", else the first ".json", gets "_<pid>" in front; a path
 * with neither is used as it is. */
void kineto_output_name(const char *path, size_t n, int32_t pid, struct buf *out);
/* One output path by the same rules (absolute, no "..", under a prefix
 * with symlinks resolved): the files the daemon writes itself (gpusnoop
 * sessions).  True without a policy. */
bool path_policy_check_path(const struct path_policy *p, const char *path, size_t len, struct buf *why);

#endif
