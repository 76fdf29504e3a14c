/*
 * tests/fake/dcgm.c - a fake DCGM (build/libfake-dcgm.so) for the DCGM
 * collector's tests: the daemon dlopen()s it through --dcgm_library the way
 * it loads libdcgm.so.4, and it answers from a script named by
 * FAKE_DCGM_SCRIPT, read at dcgmInit.  The calls that matter to a test
 * (connect address, watched fields, pause, resume, shutdown) are appended,
 * one line each, to the file named by FAKE_DCGM_LOG.  Test code only; no
 * cost to the daemon.
 *
 * Script, one directive a line ('#' starts a comment):
 *   gpus N                     N GPUs, DCGM ids 0..N-1
 *   name GPU TEXT / uuid GPU TEXT
 *   field GPU ID V1,V2,...     the k-th dcgmGetLatestValues_v2 gives Vk
 *                              for that field (the last one repeats)
 *   call NAME V1,V2,...        the k-th call of entry point NAME returns Vk
 * Values: a number; B (DCGM's blank), NS (DCGM's "not supported" blank),
 * E<code> (a failed status for that value, or that return code for a
 * call: E-21 is "connection not valid"), H (the call never returns: a GPU
 * fallen off the bus), S<ms>=V (V after <ms> milliseconds).  NAME: init,
 * start (dcgmStartEmbedded), connect, devices, group, add, fgroup, watch,
 * latest, pause, resume.  A field in the watched group with no line for a
 * GPU answers DCGM's "not supported" blank, as DCGM does.  Field types
 * are DCGM's: strings for 50 and 54, doubles for 155 and 1001-1008,
 * integers otherwise.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/collect/dcgm_api.h"

#define MAXLINES 512
#define MAXGPU 32

struct line {
	char kind[8], name[16];
	int gpu;
	unsigned field;
	char vals[512];
	unsigned calls;
};

static struct line lines[MAXLINES];
static int nlines, ngpu;
static char names[MAXGPU][96], uuids[MAXGPU][96];
static unsigned short watched[64];
static int nwatched;

static void record(const char *fmt, ...)
{
	const char *p = getenv("FAKE_DCGM_LOG");
	FILE *f = p ? fopen(p, "a") : NULL;
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static void parse(void)
{
	nlines = ngpu = 0;
	memset(names, 0, sizeof names);
	memset(uuids, 0, sizeof uuids);
	const char *path = getenv("FAKE_DCGM_SCRIPT");
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return;
	char l[1024];
	while (fgets(l, sizeof l, f)) {
		l[strcspn(l, "\n")] = 0;
		char w[16] = "", a[32] = "", rest[600] = "";
		if (l[0] == '#' || sscanf(l, "%15s %31s %599[^\n]", w, a, rest) < 2)
			continue;
		if (strcmp(w, "gpus") == 0) {
			ngpu = atoi(a);
			if (ngpu > MAXGPU)
				ngpu = MAXGPU;
		} else if (strcmp(w, "name") == 0 || strcmp(w, "uuid") == 0) {
			int g = atoi(a);
			if (g >= 0 && g < MAXGPU)
				snprintf((w[0] == 'n' ? names : uuids)[g], 96, "%.95s", rest);
		} else if (nlines < MAXLINES && (strcmp(w, "field") == 0 || strcmp(w, "call") == 0)) {
			struct line *x = &lines[nlines++];
			memset(x, 0, sizeof *x);
			snprintf(x->kind, sizeof x->kind, "%.7s", w);
			if (w[0] == 'f') {
				x->gpu = atoi(a);
				char v[512] = "";
				sscanf(rest, "%u %511s", &x->field, v);
				snprintf(x->vals, sizeof x->vals, "%s", v);
			} else {
				snprintf(x->name, sizeof x->name, "%.15s", a);
				snprintf(x->vals, sizeof x->vals, "%.511s", rest);
			}
		}
	}
	fclose(f);
}

/* The next value of a line: its text (after a slow call's sleep); never
 * returns for H. */
static const char *next_val(struct line *x)
{
	const char *v = x->vals;
	for (unsigned k = 0; k < x->calls; k++) {
		const char *c = strchr(v, ',');
		if (!c)
			break;
		v = c + 1;
	}
	x->calls++;
	if (v[0] == 'H')
		for (;;)
			pause();
	if (v[0] == 'S') {
		usleep((useconds_t)atoi(v + 1) * 1000);
		const char *eq = strchr(v, '=');
		v = eq ? eq + 1 : "0";
	}
	return v;
}

/* The return code scripted for the next call of NAME (no line: OK). */
static dcgmReturn_t call(const char *name)
{
	for (int i = 0; i < nlines; i++)
		if (lines[i].kind[0] == 'c' && strcmp(lines[i].name, name) == 0) {
			const char *v = next_val(&lines[i]);
			return v[0] == 'E' ? atoi(v + 1) : atoi(v);
		}
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmInit(void)
{
	parse();
	return call("init");
}

dcgmReturn_t dcgmShutdown(void)
{
	record("dcgmShutdown");
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmStartEmbedded(int mode, dcgmHandle_t *h)
{
	if (mode != DCGM_OPERATION_MODE_AUTO && mode != DCGM_OPERATION_MODE_MANUAL)
		return DCGM_ST_BADPARAM;
	dcgmReturn_t r = call("start");
	if (r == DCGM_ST_OK) {
		*h = 1;
		record("dcgmStartEmbedded %d", mode);
	}
	return r;
}

dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t h)
{
	record("dcgmStopEmbedded %lu", (unsigned long)h);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmConnect(const char *addr, dcgmHandle_t *h)
{
	record("dcgmConnect %s", addr);
	dcgmReturn_t r = call("connect");
	if (r == DCGM_ST_OK)
		*h = 2;
	return r;
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t h)
{
	record("dcgmDisconnect %lu", (unsigned long)h);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t h, unsigned int ids[DCGM_MAX_NUM_DEVICES], int *count)
{
	(void)h;
	dcgmReturn_t r = call("devices");
	if (r != DCGM_ST_OK)
		return r;
	for (int i = 0; i < ngpu; i++)
		ids[i] = (unsigned)i;
	*count = ngpu;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupCreate(dcgmHandle_t h, int type, char *name, dcgmGpuGrp_t *grp)
{
	(void)h;
	if (type != DCGM_GROUP_EMPTY || !name || !name[0])
		return DCGM_ST_BADPARAM;
	*grp = 7;
	return call("group");
}

dcgmReturn_t dcgmGroupAddEntity(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgm_field_entity_group_t eg, dcgm_field_eid_t id)
{
	(void)h;
	if (grp != 7 || eg != DCGM_FE_GPU || (int)id >= ngpu)
		return DCGM_ST_BADPARAM;
	return call("add");
}

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t h, int n, unsigned short *ids, char *name, dcgmFieldGrp_t *fgrp)
{
	(void)h;
	if (n <= 0 || n > 64 || !name)
		return DCGM_ST_BADPARAM;
	nwatched = n;
	memcpy(watched, ids, (size_t)n * sizeof *ids);
	*fgrp = 9;
	return call("fgroup");
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmFieldGrp_t fgrp, long long us, double age, int n)
{
	(void)h;
	if (grp != 7 || fgrp != 9 || us <= 0 || age <= 0 || n <= 0)
		return DCGM_ST_BADPARAM;
	char list[512] = "";
	for (int i = 0; i < nwatched; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%u", i ? "," : "", watched[i]);
	record("dcgmWatchFields %s every %lld us", list, us);
	return call("watch");
}

static char field_type(unsigned id)
{
	if (id == 50 || id == 54)
		return DCGM_FT_STRING;
	if (id == 155 || (id >= 1001 && id <= 1008))
		return DCGM_FT_DOUBLE;
	return DCGM_FT_INT64;
}

static void fill(dcgmFieldValue_v1 *v, int gpu, unsigned id)
{
	memset(v, 0, sizeof *v);
	v->version = 1;
	v->fieldId = (unsigned short)id;
	v->fieldType = (unsigned short)field_type(id);
	v->status = DCGM_ST_OK;
	const char *val = "NS";
	if (v->fieldType == DCGM_FT_STRING) {
		const char *s = id == 50 ? names[gpu] : uuids[gpu];
		snprintf(v->value.str, sizeof v->value.str, "%.95s", s[0] ? s : "<<<NOT_SUPPORTED>>>");
		return;
	}
	for (int i = 0; i < nlines; i++)
		if (lines[i].kind[0] == 'f' && lines[i].gpu == gpu && lines[i].field == id) {
			val = next_val(&lines[i]);
			break;
		}
	bool dbl = v->fieldType == DCGM_FT_DOUBLE;
	if (val[0] == 'E') {
		v->status = atoi(val + 1);
	} else if (val[0] == 'B') {
		if (dbl)
			v->value.dbl = DCGM_FP64_BLANK;
		else
			v->value.i64 = DCGM_INT64_BLANK;
	} else if (val[0] == 'N') {
		if (dbl)
			v->value.dbl = DCGM_FP64_NOT_SUPPORTED;
		else
			v->value.i64 = DCGM_INT64_NOT_SUPPORTED;
	} else if (dbl) {
		v->value.dbl = strtod(val, NULL);
	} else {
		v->value.i64 = strtoll(val, NULL, 10);
	}
}

dcgmReturn_t dcgmGetLatestValues_v2(dcgmHandle_t h, dcgmGpuGrp_t grp, dcgmFieldGrp_t fgrp,
				    dcgmFieldValueEntityEnumeration_f cb, void *ud)
{
	(void)h;
	if (grp != 7 || fgrp != 9 || !cb)
		return DCGM_ST_BADPARAM;
	dcgmReturn_t r = call("latest");
	if (r != DCGM_ST_OK)
		return r;
	static dcgmFieldValue_v1 vals[64];
	for (int g = 0; g < ngpu; g++) {
		for (int i = 0; i < nwatched; i++)
			fill(&vals[i], g, watched[i]);
		if (cb(DCGM_FE_GPU, (dcgm_field_eid_t)g, vals, nwatched, ud) < 0)
			break;
	}
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmProfPause(dcgmHandle_t h)
{
	dcgmReturn_t r = call("pause");
	record("dcgmProfPause %lu -> %d", (unsigned long)h, r);
	return r;
}

dcgmReturn_t dcgmProfResume(dcgmHandle_t h)
{
	dcgmReturn_t r = call("resume");
	record("dcgmProfResume %lu -> %d", (unsigned long)h, r);
	return r;
}
