/* log.c - see log.h.  One write(2) per line so lines from threads never interleave. */
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

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > g_level)
		return;
	char ts[40];
	clock_fmt_iso8601(ts, sizeof ts, clock_wall_ns());
	struct buf b = BUF_INIT;
	buf_printf(&b, "%s %c %s: ", ts, "EWID"[level], g_prog);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	buf_putc(&b, '\n');
	ssize_t w = write(STDERR_FILENO, b.data, b.len);
	(void)w;
	buf_free(&b);
}
