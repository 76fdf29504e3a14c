/*
 * wh_ingest.c - `dyno warehouse ingest TRACE_OR_DIR...` (wh_ingest.h; the
 * command's options are src/cli/warehouse.c, docs/fleet.md): a directory
 * is walked (every *.json / *.json.gz below it); a trace under
 * ROOT/JOB/HOST/... gets that job and host, one directly in ROOT the job
 * named like ROOT (--job / --host override).
 * Work goes in rounds of a few traces per core: each file is hashed (the
 * key) on the workers, the known ones are skipped, the new ones are loaded
 * and analysed one per core (wh_trace.c), and the main thread writes them
 * one transaction each (wh_store.c).  A damaged trace is recorded as
 * failed with its error and the rest go on; a database error stops the
 * ingest at once (what was committed stays; nothing half-written).
 *
 * Cost: the traces' load and analyses, once each; memory is one round of
 * traces' figures at a time.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/par.h"
#include "fleet/wh_ingest.h"
#include "fleet/wh_trace.h"

/* ---- the inputs ---- */

struct inputs {
	struct wh_trace *v;
	size_t n, cap;
};

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

static void add_input(struct inputs *in, const char *path, const char *job, const char *host)
{
	if (in->n == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 64;
		in->v = xrealloc(in->v, in->cap * sizeof *in->v);
	}
	struct wh_trace *t = &in->v[in->n++];
	memset(t, 0, sizeof *t);
	t->path = xstrdup(path);
	t->job = job ? xstrdup(job) : NULL;
	t->host = host ? xstrdup(host) : NULL;
}

/* nftw has no context pointer: the walk in progress */
static struct walk {
	struct inputs *in;
	const char *root;
	size_t root_len;
	const char *job, *host; /* --job / --host */
} walk;

/* The n-th component (0-based) of rel, "a/b/c", into out; false if none. */
static bool component(const char *rel, int n, char *out, size_t cap)
{
	for (; n > 0; n--) {
		rel = strchr(rel, '/');
		if (!rel)
			return false;
		rel++;
	}
	const char *end = strchr(rel, '/');
	if (!end)
		return false; /* the last one is the file */
	snprintf(out, cap, "%.*s", (int)(end - rel), rel);
	return true;
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type != FTW_F || !(has_suffix(path, ".json") || has_suffix(path, ".json.gz")))
		return 0;
	const char *rel = path + walk.root_len;
	while (*rel == '/')
		rel++;
	char job[256], host[256];
	bool has_job = component(rel, 0, job, sizeof job), has_host = component(rel, 1, host, sizeof host);
	if (!has_job) { /* directly in ROOT: the job is ROOT's name */
		const char *b = walk.root + walk.root_len;
		while (b > walk.root && b[-1] == '/')
			b--;
		const char *e = b;
		while (b > walk.root && b[-1] != '/')
			b--;
		snprintf(job, sizeof job, "%.*s", (int)(e - b), b);
		has_job = e > b;
	}
	add_input(walk.in, path, walk.job ? walk.job : has_job ? job : NULL, walk.host ? walk.host : has_host ? host : NULL);
	return 0;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(((const struct wh_trace *)a)->path, ((const struct wh_trace *)b)->path);
}

/* 0, or -1 with a message on stderr. */
static int list_inputs(struct inputs *in, char **pos, int npos, const char *job, const char *host)
{
	for (int i = 0; i < npos; i++) {
		struct stat st;
		if (stat(pos[i], &st) != 0) {
			perror(pos[i]);
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			/* a file: its directory's name is the job */
			char dir[256] = "";
			const char *slash = strrchr(pos[i], '/');
			if (slash) {
				const char *b = slash;
				while (b > pos[i] && b[-1] != '/')
					b--;
				snprintf(dir, sizeof dir, "%.*s", (int)(slash - b), b);
			}
			add_input(in, pos[i], job ? job : dir[0] ? dir : NULL, host);
			continue;
		}
		size_t first = in->n;
		walk = (struct walk){in, pos[i], strlen(pos[i]), job, host};
		if (nftw(pos[i], walk_one, 16, FTW_PHYS) != 0) {
			perror(pos[i]);
			return -1;
		}
		if (in->n == first) {
			fprintf(stderr, "dyno warehouse: %s: no *.json or *.json.gz traces below it\n", pos[i]);
			return -1;
		}
		qsort(in->v + first, in->n - first, sizeof *in->v, path_cmp);
	}
	return 0;
}

/* ---- the rounds ---- */

struct round {
	struct wh_trace *v;
	bool *skip;      /* known, or unreadable */
	char **hash_err; /* why a file could not be hashed */
};

static void hash_task(void *ctx, size_t i)
{
	struct round *r = ctx;
	struct buf err = BUF_INIT;
	if (wh_hash_file(r->v[i].path, r->v[i].hash, &err) != 0) {
		r->hash_err[i] = buf_detach(&err, NULL);
		r->skip[i] = true;
	}
	buf_free(&err);
}

static void extract_task(void *ctx, size_t i)
{
	struct round *r = ctx;
	if (!r->skip[i])
		wh_trace_extract(&r->v[i]);
}

int wh_ingest(char **pos, int npos, const char *db_spec, const char *job, const char *host, int64_t threads,
	      bool quiet)
{
	int rc;
	struct inputs in = {0};
	struct wh_db db;
	struct buf err = BUF_INIT;
	rc = 1;
	if (list_inputs(&in, pos, npos, job, host) != 0)
		goto out_args;
	if (wh_db_open(&db, db_spec, &err) != 0) {
		fprintf(stderr, "dyno %s\n", err.data);
		goto out_args;
	}
	int nthreads = par_threads((int)threads);
	size_t per_round = (size_t)nthreads * 4;
	size_t added = 0, failed = 0, known = 0, unreadable = 0;
	uint64_t events = 0;
	int64_t t0 = clock_mono_ns();
	bool db_ok = true;
	for (size_t at = 0; at < in.n && db_ok; at += per_round) {
		size_t n = in.n - at < per_round ? in.n - at : per_round;
		struct round r = {in.v + at, xcalloc(n, sizeof(bool)), xcalloc(n, sizeof(char *))};
		par_for(n, nthreads, hash_task, &r);
		for (size_t i = 0; i < n && db_ok; i++) {
			if (r.hash_err[i]) {
				fprintf(stderr, "dyno warehouse: %s\n", r.hash_err[i]);
				unreadable++;
				continue;
			}
			/* the same content twice in this round: once */
			for (size_t j = 0; j < i && !r.skip[i]; j++)
				r.skip[i] = !r.hash_err[j] && strcmp(r.v[j].hash, r.v[i].hash) == 0;
			int k = r.skip[i] ? 1 : wh_trace_known(&db, r.v[i].hash, &err);
			if (k < 0)
				db_ok = false;
			else if (k > 0)
				r.skip[i] = true, known++;
		}
		if (db_ok)
			par_for(n, nthreads, extract_task, &r);
		for (size_t i = 0; i < n && db_ok; i++) {
			if (r.skip[i])
				continue;
			const struct wh_trace *t = &r.v[i];
			if (wh_trace_store(&db, t, clock_wall_ns(), &err) != 0) {
				db_ok = false;
				break;
			}
			if (t->failed) {
				failed++;
				fprintf(stderr, "dyno warehouse: recorded as failed: %s\n", t->error);
			} else {
				added++;
				events += t->events;
			}
		}
		for (size_t i = 0; i < n; i++) {
			free(r.hash_err[i]);
			wh_trace_free(&r.v[i]);
		}
		free(r.skip);
		free(r.hash_err);
	}
	double secs = (double)(clock_mono_ns() - t0) / 1e9;
	if (!db_ok)
		fprintf(stderr, "dyno %s\ndyno warehouse: ingest stopped: %zu traces were added before it\n", err.data,
			added + failed);
	else if (!quiet)
		printf("%zu traces added (%llu events), %zu recorded as failed, %zu already in the warehouse, "
		       "%zu unreadable; %.2f s, %.1f traces/s, %.0f events/s into %s\n",
		       added, (unsigned long long)events, failed, known, unreadable, secs,
		       secs > 0 ? (double)(added + failed) / secs : 0.0, secs > 0 ? (double)events / secs : 0.0,
		       db.target);
	rc = db_ok && unreadable == 0 ? 0 : 1;
	wh_db_close(&db);
out_args:
	for (size_t i = 0; i < in.n; i++)
		wh_trace_free(&in.v[i]);
	free(in.v);
	buf_free(&err);
	return rc;
}
