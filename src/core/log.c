/* log.c - see log.h.  One write(2) per line so lines from threads never
 * interleave.  A rate-limited line costs one clock read more. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"

static const char *g_prog = "dynolite";
static enum log_level g_level = LOG_LEVEL_INFO;

void log_init(const char *prog, enum log_level level)
{
	g_prog = prog;
	g_level = level;
}

void log_set_level(enum log_level level) { g_level = level; }

bool log_parse_level(const char *s, enum log_level *out)
{
	static const char *names[] = {"error", "warn", "info", "debug"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return true;
		}
	return false;
}

static void emit(enum log_level level, uint64_t suppressed, const char *fmt, va_list ap)
{
	char ts[40];
	clock_fmt_iso8601(ts, sizeof ts, clock_wall_ns());
	struct buf b = BUF_INIT;
	buf_printf(&b, "%s %c %s: ", ts, "EWID"[level], g_prog);
	buf_vprintf(&b, fmt, ap);
	if (suppressed)
		buf_printf(&b, " (%llu similar lines suppressed)", (unsigned long long)suppressed);
	buf_putc(&b, '\n');
	ssize_t w = write(STDERR_FILENO, b.data, b.len);
	(void)w;
	buf_free(&b);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > g_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(level, 0, fmt, ap);
	va_end(ap);
}

/* Token bucket: LOG_RL_PER_MIN lines a minute, LOG_RL_BURST at once.  Kept
 * in thousandths of a line so the refill is exact with integer maths. */
void log_msg_ratelimited(struct log_ratelimit *rl, enum log_level level, const char *fmt, ...)
{
	if (level > g_level)
		return; /* not shown anyway: neither spent nor counted */
	int64_t now = clock_mono_ns();
	const int64_t cap = (int64_t)LOG_RL_BURST * 1000;
	if (!rl->started) {
		rl->started = true;
		rl->tokens_ms = cap;
		rl->last_ns = now;
	}
	int64_t dt = now - rl->last_ns;
	if (dt > 0) {
		/* ns per thousandth of a line: 60e9 / (per_min * 1000) */
		int64_t step = 60 * NS_PER_SEC / ((int64_t)LOG_RL_PER_MIN * 1000);
		int64_t add = dt / step;
		if (add > 0) {
			rl->tokens_ms = add >= cap - rl->tokens_ms ? cap : rl->tokens_ms + add;
			rl->last_ns = add >= cap ? now : rl->last_ns + add * step;
		}
	}
	if (rl->tokens_ms < 1000) {
		rl->suppressed++;
		return;
	}
	rl->tokens_ms -= 1000;
	uint64_t n = rl->suppressed;
	rl->suppressed = 0;
	va_list ap;
	va_start(ap, fmt);
	emit(level, n, fmt, ap);
	va_end(ap);
}

uint64_t log_ratelimit_pending(const struct log_ratelimit *rl) { return rl->suppressed; }
