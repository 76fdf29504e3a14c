/*
 * log.h - leveled logging to stderr, shared by both programs.
 *
 * Lines look like "2026-11-22T01:25:00.123Z I dynolog: message".  The level
 * is set once at start-up (--log-level / -v).  LOG_ONCE says a thing once
 * per process, for conditions that would otherwise repeat every tick ("no
 * PMU on this machine").
 */
#ifndef DYNO_LOG_H
#define DYNO_LOG_H

#include <stdbool.h>

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_init(const char *prog, enum log_level level);
void log_set_level(enum log_level level);
/* "error", "warn", "info", "debug" -> level; false if unknown. */
bool log_parse_level(const char *s, enum log_level *out);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define LOG_ONCE(level, ...)                                                                         \
	do {                                                                                         \
		static bool once_;                                                                   \
		if (!once_) {                                                                        \
			once_ = true;                                                                \
			log_msg(level, __VA_ARGS__);                                                 \
		}                                                                                    \
	} while (0)

#endif
