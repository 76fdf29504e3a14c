/* security.c - see security.h. */
#include "security.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/secret.h"

/* Larger than any token plus its whitespace: bigger is not a token file. */
#define TOKEN_FILE_MAX 4096

bool sec_load_token(const char *path, char **token, struct buf *err)
{
	/* secret_read opens without blocking: a FIFO (or a device) must not
	 * wait for a writer while the daemon starts up with SIGTERM blocked.
	 * Readable by others is refused; by the group, said once. */
	struct secret s;
	switch (secret_read(path, 0004, TOKEN_FILE_MAX, &s)) {
	case SECRET_OK:
		break;
	case SECRET_OPEN:
		buf_printf(err, "cannot open token file %s: %s", path, strerror(s.err));
		return false;
	case SECRET_STAT:
		buf_printf(err, "cannot stat token file %s: %s", path, strerror(s.err));
		return false;
	case SECRET_NOT_REGULAR:
		buf_printf(err, "token file %s is not a regular file", path);
		return false;
	case SECRET_MODE:
		buf_printf(err, "token file %s is readable by other users (mode %03o): chmod o-r (0600 or 0640) it",
			   path, (unsigned)(s.mode & 0777));
		return false;
	case SECRET_TOO_BIG:
		buf_printf(err, "token file %s is larger than %d bytes: not a token", path, TOKEN_FILE_MAX);
		return false;
	case SECRET_READ:
		buf_printf(err, "cannot read token file %s: %s", path, strerror(s.err));
		return false;
	}
	if (s.mode & 0040)
		log_warn("token file %s is readable by its group (mode %03o)", path, (unsigned)(s.mode & 0777));
	bool ok = s.len >= 8 && s.len <= 1024 && !memchr(s.data, 0, s.len);
	if (ok)
		*token = xstrndup(s.data, s.len);
	else
		buf_printf(err, "token in %s must be 8 to 1024 bytes of text", path);
	secret_free(&s);
	return ok;
}

bool sec_token_eq(const char *a, size_t an, const char *b, size_t bn)
{
	/* Time depends only on the expected length, not on where bytes differ. */
	unsigned char d = an != bn;
	for (size_t i = 0; i < bn; i++)
		d |= (unsigned char)(b[i] ^ (i < an ? a[i] : 0));
	return d == 0;
}

const char *sec_printable(const char *s, size_t n, char *out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		out[k++] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
	if (cap)
		out[k] = 0;
	return out;
}

bool sec_flag_not_empty(const char *flag, bool given, const char *value, struct buf *err)
{
	if (!given)
		return true;
	for (const char *s = value ? value : ""; *s; s++)
		if (*s != ',' && *s != ' ' && *s != '\t')
			return true;
	buf_printf(err, "--%s was given an empty value, which would turn this protection off; leave the flag out "
		   "to mean 'no restriction'", flag);
	return false;
}

bool path_policy_parse(struct path_policy *p, const char *spec, struct buf *err)
{
	memset(p, 0, sizeof *p);
	const char *s = spec ? spec : "";
	while (*s) {
		size_t n = strcspn(s, ",");
		if (n) {
			if (s[0] != '/' || memmem(s, n, "..", 2)) {
				buf_printf(err, "trace path prefix '%.*s' must be absolute and without '..'", (int)n, s);
				path_policy_free(p);
				return false;
			}
			struct buf b = BUF_INIT;
			buf_append(&b, s, n);
			if (s[n - 1] != '/')
				buf_putc(&b, '/');
			p->prefixes = xrealloc(p->prefixes, (p->n + 1) * sizeof *p->prefixes);
			p->prefixes[p->n++] = buf_detach(&b, NULL);
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return true;
}

void path_policy_free(struct path_policy *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->prefixes[i]);
	free(p->prefixes);
	memset(p, 0, sizeof *p);
}

/* Where a path really leads, as far as the file system knows now: the
 * realpath() of its longest existing ancestor, with the components that
 * do not exist yet appended.  A component that exists but cannot be
 * resolved (a dangling symlink: Kineto would create its target; a loop; no
 * permission) is refused, since the file would be opened through it.
 * False with a reason in why; out gets the resolved path. */
static bool resolve(const char *path, size_t n, struct buf *out, struct buf *why)
{
	char cur[PATH_MAX], real[PATH_MAX];
	if (n >= sizeof cur) {
		buf_printf(why, "trace path '%.*s' is too long", (int)(n > 200 ? 200 : n), path);
		return false;
	}
	memcpy(cur, path, n);
	cur[n] = 0;
	size_t len = n; /* cur[0..len) is the ancestor tried, path + len the tail */
	for (;;) {
		char save = cur[len];
		cur[len] = 0;
		const char *try = len ? cur : "/";
		if (realpath(try, real)) {
			buf_reset(out);
			buf_puts(out, real);
			if (len < n) {
				if (out->len && out->data[out->len - 1] == '/')
					out->data[--out->len] = 0;
				buf_append(out, path + len, n - len); /* starts with '/' */
			}
			return true;
		}
		int e = errno;
		struct stat st;
		if (len == 0 || (e != ENOENT && e != ENOTDIR) || lstat(try, &st) == 0) {
			buf_printf(why, "trace path '%.*s' cannot be resolved at '%s': %s", (int)n, path, try,
				   e == ENOENT ? "dangling symlink" : strerror(e));
			return false;
		}
		cur[len] = save;
		while (len > 0 && cur[len - 1] != '/')
			len--; /* drop the last component... */
		while (len > 0 && cur[len - 1] == '/')
			len--; /* ...and its slashes; 0 leaves the root */
	}
}

static bool under(const char *path, size_t n, const char *prefix)
{
	size_t pl = strlen(prefix);
	return n > pl && memcmp(path, prefix, pl) == 0;
}

static void list_prefixes(const struct path_policy *p, struct buf *why)
{
	buf_puts(why, " (");
	for (size_t i = 0; i < p->n; i++)
		buf_printf(why, "%s%s", i ? ", " : "", p->prefixes[i]);
	buf_puts(why, ")");
}

static bool path_ok(const struct path_policy *p, const char *path, size_t n, struct buf *why)
{
	if (n == 0 || path[0] != '/') {
		buf_printf(why, "trace path '%.*s' is not absolute", (int)n, path);
		return false;
	}
	if (memmem(path, n, "..", 2)) {
		buf_printf(why, "trace path '%.*s' contains '..'", (int)n, path);
		return false;
	}
	/* Symlinks: the resolved path must lie under a resolved prefix (a prefix
	 * may itself be a symlink, e.g. /tmp/traces -> /data/traces; a path
	 * through a link inside a prefix may leave it).  Resolved
	 * at every request, as links can change; what changes between this
	 * check and Kineto's open() is the residual risk docs/security.md
	 * names (keep the prefixes writable by trusted users only). */
	struct buf rp = BUF_INIT, rpre = BUF_INIT;
	if (!resolve(path, n, &rp, why)) {
		buf_free(&rp);
		return false;
	}
	bool ok = false;
	for (size_t i = 0; i < p->n && !ok; i++) {
		struct buf ignore = BUF_INIT;
		if (resolve(p->prefixes[i], strlen(p->prefixes[i]), &rpre, &ignore)) {
			if (!rpre.len || rpre.data[rpre.len - 1] != '/')
				buf_putc(&rpre, '/');
			ok = under(rp.data, rp.len, rpre.data);
		}
		buf_free(&ignore);
	}
	if (!ok) {
		if (rp.len == n && memcmp(rp.data, path, n) == 0)
			buf_printf(why, "trace path '%.*s' is outside the allowed prefixes", (int)n, path);
		else
			buf_printf(why, "trace path '%.*s' resolves to '%s', outside the allowed prefixes", (int)n,
				   path, rp.data);
		list_prefixes(p, why);
	}
	buf_free(&rp);
	buf_free(&rpre);
	return ok;
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n'; }

void kineto_output_name(const char *path, size_t n, int32_t pid, struct buf *out)
{
	buf_reset(out);
	const char *at = memmem(path, n, ".pt.trace.json", 14);
	if (!at)
		at = memmem(path, n, ".json", 5);
	if (!at) {
		buf_append(out, path, n);
		return;
	}
	buf_append(out, path, (size_t)(at - path));
	buf_printf(out, "_%d", (int)pid);
	buf_append(out, at, n - (size_t)(at - path));
}

/* A derived name that exists already must be a plain file: Kineto opens
 * the .tmp name with O_TRUNC (a symlink or a hard link there would have a
 * root process truncate and write another file) and renames it over the
 * final name. */
static bool existing_ok(const char *name, struct buf *why)
{
	struct stat st;
	if (lstat(name, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR;
	if (S_ISLNK(st.st_mode)) {
		buf_printf(why, "trace path '%s' (a name Kineto writes) exists as a symlink", name);
		return false;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
		buf_printf(why, "trace path '%s' (a name Kineto writes) exists and is not a plain file", name);
		return false;
	}
	return true;
}

/* The names Kineto writes for one pid: <final>.tmp and <final>.  Each goes
 * through path_ok (prefix, symlinks resolved) when its directory differs
 * from the one already checked (dir: the last one), else only lstat: two
 * system calls a process for the usual request. */
static bool derived_ok(const struct path_policy *p, const char *path, size_t n, int32_t pid, struct buf *dir,
		       struct buf *why)
{
	struct buf fin = BUF_INIT, tmp = BUF_INIT;
	kineto_output_name(path, n, pid, &fin);
	buf_printf(&tmp, "%s.tmp", fin.data);
	const char *slash = strrchr(fin.data, '/');
	size_t dl = slash ? (size_t)(slash - fin.data) + 1 : 0;
	bool ok = true;
	if (dir->len != dl || memcmp(dir->data, fin.data, dl) != 0) {
		ok = path_ok(p, fin.data, fin.len, why) && path_ok(p, tmp.data, tmp.len, why);
		buf_reset(dir);
		buf_append(dir, fin.data, dl);
	}
	ok = ok && existing_ok(tmp.data, why) && existing_ok(fin.data, why);
	buf_free(&fin);
	buf_free(&tmp);
	return ok;
}

/* path itself, then Kineto's derived names for each pid (pid 0 without). */
static bool output_ok(const struct path_policy *p, const char *path, size_t n, const int32_t *pids, size_t npids,
		      struct buf *why)
{
	if (!path_ok(p, path, n, why))
		return false;
	struct buf dir = BUF_INIT;
	bool ok = true;
	for (size_t i = 0; i < (npids ? npids : 1) && ok; i++)
		ok = derived_ok(p, path, n, npids ? pids[i] : 0, &dir, why);
	buf_free(&dir);
	return ok;
}

bool path_policy_check(const struct path_policy *p, const char *config, size_t len, struct buf *why)
{
	return path_policy_check_pids(p, config, len, NULL, 0, why);
}

bool path_policy_check_pids(const struct path_policy *p, const char *config, size_t len, const int32_t *pids,
			    size_t npids, struct buf *why)
{
	if (!p || p->n == 0)
		return true;
	bool seen = false, memory = false;
	const char *s = config, *end = config + len;
	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		const char *le = eol ? eol : end;
		const char *hash = memchr(s, '#', (size_t)(le - s));
		if (hash)
			le = hash;
		const char *eq = memchr(s, '=', (size_t)(le - s));
		if (eq) {
			const char *k = s, *ke = eq, *v = eq + 1, *ve = le;
			while (k < ke && is_ws(*k))
				k++;
			while (ke > k && is_ws(ke[-1]))
				ke--;
			while (v < ve && is_ws(*v))
				v++;
			while (ve > v && is_ws(ve[-1]))
				ve--;
			size_t kn = (size_t)(ke - k);
			bool act = kn == 19 && memcmp(k, "ACTIVITIES_LOG_FILE", 19) == 0;
			if (act || (kn == 15 && memcmp(k, "EVENTS_LOG_FILE", 15) == 0)) {
				if (memchr(v, '=', (size_t)(ve - v))) {
					buf_printf(why, "%.*s value contains '='", (int)kn, k);
					return false;
				}
				if (!output_ok(p, v, (size_t)(ve - v), pids, npids, why))
					return false;
				seen = seen || act;
			} else if (kn == 14 && memcmp(k, "PROFILE_MEMORY", 14) == 0) {
				memory = (ve - v == 4 && strncasecmp(v, "true", 4) == 0) ||
					 (ve - v == 1 && (*v == '1' || *v == 't' || *v == 'T' || *v == 'y' || *v == 'Y')) ||
					 (ve - v == 3 && strncasecmp(v, "yes", 3) == 0);
			}
		}
		s = eol ? eol + 1 : end;
	}
	/* Where Kineto writes when the config names no file, or when
	 * PROFILE_MEMORY resets the path. */
	if (!seen && !output_ok(p, "/tmp/libkineto_activities.json", 30, pids, npids, why))
		return false;
	if (memory && !path_ok(p, "/tmp/memory_snapshot_0.pickle", 29, why))
		return false;
	for (size_t i = 0; memory && i < npids; i++) { /* written there directly: no planted link */
		char snap[64];
		snprintf(snap, sizeof snap, "/tmp/memory_snapshot_%d.pickle", (int)pids[i]);
		if (!existing_ok(snap, why))
			return false;
	}
	return true;
}

bool path_policy_check_path(const struct path_policy *p, const char *path, size_t len, struct buf *why)
{
	return !p || p->n == 0 || path_ok(p, path, len, why);
}
