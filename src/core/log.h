/*
 * log.h - leveled logging to stderr, shared by both programs.
 *
 * Lines look like "2026-11-22T01:25:00.123Z I dynolog: message".  The level
 * is set once at start-up (--log-level / -v).  LOG_ONCE says a thing once
 * per process, for conditions that would otherwise repeat every tick ("no
 * PMU on this machine").  LOG_RATELIMITED is for lines a client can
 * cause at will (a registration, a refused request): each call site has a
 * small token bucket (a burst of LOG_RL_BURST lines, then LOG_RL_PER_MIN a
 * minute); lines beyond are dropped and counted, and the next line that
 * gets through says "(N similar lines suppressed)".  The buckets are plain
 * statics: for single-threaded callers (the daemon's loop).
 */
#ifndef DYNO_LOG_H
#define DYNO_LOG_H

#include <stdbool.h>
#include <stdint.h>

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

#define LOG_RL_BURST 20
#define LOG_RL_PER_MIN 60

/* One call site's budget; zero-initialized. */
struct log_ratelimit {
	int64_t last_ns;   /* monotonic time of the last refill */
	int64_t tokens_ms; /* budget in thousandths of a line */
	uint64_t suppressed;
	bool started;
};

void log_msg_ratelimited(struct log_ratelimit *rl, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Lines dropped by rl so far and not yet reported (0 after a line got through). */
uint64_t log_ratelimit_pending(const struct log_ratelimit *rl);

#define LOG_RATELIMITED(level, ...)                                                                  \
	do {                                                                                         \
		static struct log_ratelimit rl_;                                                     \
		log_msg_ratelimited(&rl_, level, __VA_ARGS__);                                       \
	} while (0)

#endif
