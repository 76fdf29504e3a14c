/*
 * fixture.h - helpers for tests that drive collectors over the fixture
 * procfs/sysfs trees in tests/data/procfs/<scenario>/<tick>/{proc,sys}.
 *
 * fixture_tick() lays the tick's tree out under <tmp>/proc and <tmp>/sys,
 * rewriting files in place, so one collector instance (which keeps its
 * files open) sees the contents change between reads as on a live host.
 */
#ifndef DYNO_TEST_FIXTURE_H
#define DYNO_TEST_FIXTURE_H

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/frame.h"
#include "test.h"

static inline void fixture_tick(const char *scenario, const char *tick)
{
	/* Files are rewritten in place (same inode), as procfs contents change
	 * under an open descriptor: the kernel collector keeps its files open.
	 * A file the new tick lacks is emptied (unreadable content), not removed. */
	char data[PATH_MAX], cmd[4 * PATH_MAX];
	if (!realpath("tests/data/procfs", data)) {
		test_fail(__FILE__, __LINE__, "tests/data/procfs not found (run from the repository root)");
		test_abort();
	}
	snprintf(cmd, sizeof cmd,
		 "set -e; src='%s/%s/%s'; dst='%s'; mkdir -p \"$dst/proc\" \"$dst/sys\"; "
		 "(cd \"$src\" && find . -type f) | while read -r f; do "
		 "mkdir -p \"$dst/$(dirname \"$f\")\"; cat \"$src/$f\" >\"$dst/$f\"; done; "
		 "(cd \"$dst\" && find proc sys -type f) | while read -r f; do "
		 "[ -e \"$src/$f\" ] || : >\"$dst/$f\"; done",
		 data, scenario, tick, test_tmpdir());
	if (system(cmd) != 0) {
		test_fail(__FILE__, __LINE__, "cannot lay out fixture %s/%s", scenario, tick);
		test_abort();
	}
}

static inline const char *fixture_path(const char *part)
{
	static char p[2][2 * PATH_MAX];
	int i = strcmp(part, "sys") == 0;
	snprintf(p[i], sizeof p[i], "%s/%s", test_tmpdir(), part);
	return p[i];
}

/* The numeric value of key in f, NAN when absent. */
static inline double fval(const struct frame *f, const char *key)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		if (strcmp(frame_key(f, v), key) != 0)
			continue;
		switch (v->type) {
		case FV_INT: return (double)v->v.i;
		case FV_UINT: return (double)v->v.u;
		case FV_FLOAT: return v->v.f;
		default: return NAN;
		}
	}
	return NAN;
}

static inline const char *fstr(const struct frame *f, const char *key)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->vals[i].type == FV_STRING && strcmp(frame_key(f, &f->vals[i]), key) == 0)
			return f->names.data + f->vals[i].sval;
	return NULL;
}

static inline int fcount_prefix(const struct frame *f, const char *prefix)
{
	int n = 0;
	for (size_t i = 0; i < f->n; i++)
		if (strncmp(frame_key(f, &f->vals[i]), prefix, strlen(prefix)) == 0)
			n++;
	return n;
}

#define ABSENT(f, key) CHECK(isnan(fval((f), (key))))

#endif
