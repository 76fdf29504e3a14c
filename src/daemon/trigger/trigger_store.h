/*
 * trigger_store.h - what a trigger is (its definition as the addTrigger RPC
 * and the trigger file carry it) and the trigger file the daemon owns
 * (--trigger_file): parsed as an input boundary through the one JSON
 * reader (a clear message with the byte offset, or the trigger's index and
 * field), written whole to a temporary file, synced and renamed over the
 * old one, so a crash leaves the old file or the new one, never half.
 *
 * File: {"version":1,"next_fire":N,"triggers":[<definition>,...],
 *        "last_fired":[{"id":"NAME","job":"ID","time_ms":N},...]}
 * "last_fired" (optional) is the rate limits' state: when each trigger last
 * fired for each job (Unix ms), so a restart does not let a trigger fire
 * again sooner than its min_interval_s allows; entries of triggers that
 * are not in the file are dropped.
 * Definition (unknown members are refused, so a typo is not silently a
 * trigger that never fires):
 *   {"id":"NAME","when":"KEY OP NUM for DUR" | "every_s":N (or neither:
 *    fired by RPC only),"job":"ID","while_job":bool,"config":"<Kineto
 *    on-demand config>","min_interval_s":N,"process_limit":N,
 *    "gpusnoop_s":N,"gpusnoop_log":"PATH-PREFIX","peers":"ADDR[:PORT],...",
 *    "peers_delay_s":N}
 * Cost: one small allocation per trigger plus its config text (at most
 * TRIG_CONFIG_MAX bytes).
 */
#ifndef DYNO_TRIGGER_STORE_H
#define DYNO_TRIGGER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "daemon/trigger/trigger_cond.h"

#define TRIG_ID_MAX 64
#define TRIG_JOB_MAX 23          /* a decimal int64, as the registry renders job ids */
#define TRIG_CONFIG_MAX 4096     /* a Kineto config is a few hundred bytes */
#define TRIG_PATH_MAX 256
#define TRIG_MAX_INTERVAL_S (7 * 86400)
#define TRIG_DEFAULT_MIN_INTERVAL_S 300
#define TRIG_DEFAULT_PROCESS_LIMIT 1000
#define TRIG_FILE_MAX_BYTES (16u << 20)
#define TRIG_DEFAULT_PEERS_DELAY_S 20 /* as dyno gputrace: Kineto's worst case (a 5 s poll, 6 s of warm-up) and margin */
#define TRIG_MAX_TRIGGERS 128 /* --trigger_max's upper bound: listTriggers stays under 2 MiB */

enum trig_kind { TRIG_MANUAL, TRIG_METRIC, TRIG_CADENCE };

struct trig_def {
	char id[TRIG_ID_MAX + 1];
	enum trig_kind kind;
	struct trig_cond cond;       /* TRIG_METRIC */
	int64_t every_s;             /* TRIG_CADENCE */
	char job[TRIG_JOB_MAX + 1];  /* "": every registered job */
	bool while_job;              /* TRIG_METRIC: holds only while the job (any job) has processes */
	char *config;                /* malloc'ed, NUL-free */
	int64_t min_interval_s;      /* per job */
	int64_t process_limit;
	int64_t gpusnoop_s;          /* 0: no gpusnoop session */
	char gpusnoop_log[TRIG_PATH_MAX + 1];
	char *peers;                 /* NULL, or "ADDR[:PORT],...": their daemons trace too (trigger_peers.h) */
	int64_t peers_delay_s;       /* the common PROFILE_START_TIME this far ahead */
};

/* Fill d from a definition object; false with "FIELD: reason" in err.
 * Free with trig_def_free (also after a failure). */
bool trig_def_parse(const struct json_value *v, struct trig_def *d, struct buf *err);
void trig_def_free(struct trig_def *d);
/* The definition as an object (the canonical "when" text). */
void trig_def_write(const struct trig_def *d, struct jw *w);

/* When a trigger last fired for a job (the rate limit across restarts). */
struct trig_last {
	char id[TRIG_ID_MAX + 1];
	char job[TRIG_JOB_MAX + 1];
	int64_t time_ms; /* Unix ms */
};
#define TRIG_JOBS_KEPT 64 /* jobs whose state one trigger keeps (trigger.h TRIG_JOBS_PER_TRIGGER) */

struct trig_file {
	struct trig_def *defs;
	size_t n;
	uint64_t next_fire;
	struct trig_last *last; /* of triggers in defs only */
	size_t nlast;
};

/* Parse the file's text (name is used in messages).  False with the
 * reason in err; f is then empty.  More than max triggers is an error. */
bool trig_file_parse(const char *name, const char *text, size_t len, size_t max, struct trig_file *f,
		     struct buf *err);
/* Read path: a missing file is an empty set; anything else unreadable, not
 * a regular file, over TRIG_FILE_MAX_BYTES or malformed is an error. */
bool trig_file_load(const char *path, size_t max, struct trig_file *f, struct buf *err);
void trig_file_text(const struct trig_file *f, struct buf *out);
/* Write atomically (PATH.tmp, fsync, rename, fsync of the directory). */
bool trig_file_save(const char *path, const struct buf *text, struct buf *err);
void trig_file_free(struct trig_file *f);

#endif
