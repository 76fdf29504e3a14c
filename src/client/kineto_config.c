/*
 * kineto_config.c - see kineto_config.h.  Byte-exactness with upstream is
 * the point of this file: the only JSON escaping applied to the config is
 * the one upstream's newline replacement produces for ordinary text (the
 * shared json_escape gives "\n" for a newline, and kineto_log_file_check
 * has refused every other byte it would escape differently).
 */
#include "client/kineto_config.h"

#include <string.h>

#include "core/json.h"

bool kineto_log_file_check(const char *path, struct buf *err)
{
	if (!path || !*path) {
		buf_printf(err, "--log-file is required (the trace path, e.g. /tmp/trace.json)");
		return false;
	}
	const unsigned char *s = (const unsigned char *)path;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] < 0x20 || s[i] == 0x7f) {
			buf_printf(err, "--log-file contains a control character (byte %zu)", i);
			return false;
		}
		if (s[i] == '=' || s[i] == '#') {
			/* Kineto splits config lines on every '=' and cuts at '#'. */
			buf_printf(err, "--log-file may not contain '%c': Kineto's config parser cannot read it",
				   s[i]);
			return false;
		}
		if (s[i] == '"' || s[i] == '\\') {
			/* Upstream pastes these unescaped (invalid JSON, the daemon drops
			 * the request); escaping them would still reach a different path
			 * than the user typed on older daemons' own parsers.  Refuse. */
			buf_printf(err, "--log-file may not contain '%c'", s[i]);
			return false;
		}
	}
	/* Valid UTF-8, or the daemon's JSON parser rejects the request. */
	struct buf tmp = BUF_INIT;
	json_escape(&tmp, path, strlen(path));
	bool same = tmp.len == strlen(path) + 2 && memcmp(tmp.data + 1, path, tmp.len - 2) == 0;
	buf_free(&tmp);
	if (!same) {
		buf_printf(err, "--log-file is not valid UTF-8");
		return false;
	}
	return true;
}

bool kineto_pids_check(const char *pids, struct buf *err)
{
	const char *p = pids;
	for (;;) {
		while (*p == ' ')
			p++;
		long long v = 0;
		const char *d = p;
		while (*p >= '0' && *p <= '9' && v <= INT32_MAX)
			v = v * 10 + (*p++ - '0');
		while (*p == ' ')
			p++;
		if (p == d || v > INT32_MAX || (*p != ',' && *p != 0)) {
			buf_printf(err, "--pids '%s': expected process ids (0..%d) separated by commas, e.g. 1234,1235",
				   pids, INT32_MAX);
			return false;
		}
		if (*p == 0)
			return true;
		p++;
	}
}

/* Values that would silently mean something else: --iterations 0 (Kineto
 * would take duration mode) and a trace of no duration. */
static bool trace_opts_meaningful(const struct trace_opts *o, struct buf *err)
{
	if (o->iterations == 0 || o->iterations < -1) {
		buf_printf(err, "--iterations %lld: a number of iterations (1 or more; without it: duration mode)",
			   (long long)o->iterations);
		return false;
	}
	if (o->iterations < 0 && o->duration_ms == 0) {
		buf_puts(err, "--duration-ms 0: a trace of no duration (1 ms or more)");
		return false;
	}
	return true;
}

bool kineto_config_build(const struct trace_opts *o, struct buf *out, struct buf *err)
{
	if (!trace_opts_meaningful(o, err))
		return false;
	if (!kineto_log_file_check(o->log_file, err))
		return false;
	if (o->profile_memory && o->iterations > 0) {
		buf_printf(err, "--profile-memory works in duration mode only (drop --iterations)");
		return false;
	}
	if (o->duration_ms < 0 || o->duration_ms > INT32_MAX) {
		buf_printf(err, "--duration-ms must be in 0..%d (a Kineto 32-bit value)", INT32_MAX);
		return false;
	}
	if (o->iterations > INT32_MAX || o->start_iteration_roundup < 0 || o->start_iteration_roundup > INT32_MAX) {
		buf_printf(err, "--iterations and --profile-start-iteration-roundup must be at most %d", INT32_MAX);
		return false;
	}
	if (o->profile_start_time < 0) {
		buf_printf(err, "--profile-start-time must be >= 0 (ms since the Unix epoch)");
		return false;
	}
	const char *tf[2] = {"false", "true"};
	buf_printf(out, "ACTIVITIES_LOG_FILE=%s\n", o->log_file);
	if (o->iterations > 0)
		buf_printf(out,
			   "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=%lld\nACTIVITIES_ITERATIONS=%lld\n",
			   (long long)o->start_iteration_roundup, (long long)o->iterations);
	else
		buf_printf(out, "PROFILE_START_TIME=%lld\nACTIVITIES_DURATION_MSECS=%lld\n",
			   (long long)o->profile_start_time, (long long)o->duration_ms);
	buf_printf(out, "PROFILE_REPORT_INPUT_SHAPES=%s\n", tf[o->record_shapes]);
	if (o->profile_memory)
		buf_printf(out, "PROFILE_PROFILE_MEMORY=true\nPROFILE_MEMORY=true\nPROFILE_MEMORY_DURATION_MSECS=%lld\n",
			   (long long)o->duration_ms);
	buf_printf(out, "PROFILE_WITH_STACK=%s\nPROFILE_WITH_FLOPS=%s\nPROFILE_WITH_MODULES=%s", tf[o->with_stacks],
		   tf[o->with_flops], tf[o->with_modules]);
	return true;
}

void kineto_request_build(const char *config, uint64_t job_id, const char *pids, int64_t process_limit,
			  struct buf *out)
{
	buf_puts(out, "\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": ");
	json_escape(out, config, strlen(config));
	buf_printf(out, ",\n    \"job_id\": %llu,\n    \"pids\": [%s],\n    \"process_limit\": %lld\n}",
		   (unsigned long long)job_id, pids, (long long)process_limit);
}

void dcgm_pause_request_build(int32_t duration_s, struct buf *out)
{
	buf_printf(out, "\n{\n    \"fn\": \"dcgmProfPause\",\n    \"duration_s\": %d\n}", (int)duration_s);
}

void kineto_trace_path(const char *log_file, int64_t pid, bool profile_memory, struct buf *out)
{
	if (profile_memory) {
		buf_printf(out, "/tmp/memory_snapshot_%lld.pickle", (long long)pid);
		return;
	}
	const char *m = strstr(log_file, ".pt.trace.json");
	if (!m)
		m = strstr(log_file, ".json");
	if (!m) {
		buf_puts(out, log_file);
		return;
	}
	buf_append(out, log_file, (size_t)(m - log_file));
	buf_printf(out, "_%lld%s", (long long)pid, m);
}

bool kineto_path_allowed_default(const char *path)
{
	return strncmp(path, "/tmp/", 5) == 0 && !strstr(path, "..");
}
