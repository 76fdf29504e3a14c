/*
 * tests/fake/nvml.c - a fake NVML (build/libfake-nvml.so) for the GPU
 * collector's tests: the daemon dlopen()s it through --nvml_library the
 * way it loads libnvidia-ml.so.1, and it answers from a script named by
 * FAKE_NVML_SCRIPT, read at nvmlInit_v2.  Built twice: libfake-nvml.so
 * exports every entry point the collector uses; libfake-nvml-old.so
 * (-DFAKE_OLD_DRIVER) lacks GPM, nvmlDeviceGetTotalEnergyConsumption,
 * nvmlDeviceGetMemoryInfo_v2 and the event entry points (no XID events),
 * like an old pre-Hopper driver.  With FAKE_NVML_COUNTS=FILE set,
 * nvmlShutdown writes how many times each entry point was called, one
 * "CALL DEV N" line each (CALL as in the script, DEV "-" for none), so a
 * test can check what the collector asks once and what every tick.
 * Test code only; no cost to the daemon.
 *
 * Script, one directive a line ('#' starts a comment):
 *   gpus N                     N GPUs, devices "0".."N-1"
 *   name DEV TEXT / uuid DEV TEXT
 *   mig GPU N                  MIG on, N instances "GPU/migK" (one more empty slot)
 *   nogpm GPU                  the device says GPM is unsupported
 *   noevents GPU               nvmlDeviceRegisterEvents answers NOT_SUPPORTED
 *   xid GPU V1,V2,...          the k-th drain of the event set (a wait made
 *                              when none is pending, then waits until one
 *                              times out) finds the XIDs of Vk pending on GPU:
 *                              XID[@GI][+XID[@GI]...] (GI: the MIG GPU
 *                              instance), '-' none; Ecode fails that wait
 *   CALL DEV V1,V2,...         the k-th call returns Vk (the last one repeats)
 *   gpm DEV METRIC_ID V1,...   the same for one GPM metric
 * CALL: init (DEV ignored, write 0), count (0), util (V = gpu:mem), mem
 * (V = total:used[:reserved]: the v2 query answers them, the v1 query
 * used + reserved as used), mem_v2 (the v2 query's own status: E25 a
 * driver that knows no such struct version; no line: as mem), power (mW),
 * energy (mJ), clock_sm, clock_mem (MHz), enc, dec (%),
 * temp, pcie_tx, pcie_rx (KB/s), ecc_corr, ecc_uncorr, throttle,
 * memtemp (C; typed a double with the value in uiVal, as R545 drivers
 * do; memtemp_double: a real double), pcie_replay, remap_cor, remap_unc,
 * remap_fail (the field values 82, 94, 142, 143, 145),
 * gpm_sample, nvlink_tx and nvlink_rx (NVLink data KiB since the driver
 * loaded, the fields nvmlDeviceGetFieldValues gives for all links; the
 * k-th call's values are stamped k seconds after a fixed time, as NVML
 * stamps each value), procs and gprocs (compute / graphics processes: V =
 * PID[:BYTES][+PID[:BYTES]...], "-" for none, no BYTES: memory not
 * available).  A value Ecode returns that NVML error (E3 not supported,
 * E15 GPU lost); H never returns (a GPU fallen off the bus); S<ms>=V
 * returns V after <ms> milliseconds (a hang that ends); a number written
 * R<lo>~<hi> is drawn afresh each call, uniformly from lo..hi (full
 * digits: bench/gpu_collect.sh's busy GPUs), and +N (+R<lo>~<hi>) adds
 * it to the line's running total, which the call returns (a counter: the
 * energy).  A call with no line for its
 * device answers NVML_ERROR_NOT_SUPPORTED.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/collect/nvml_api.h"

#define MAXDEV 64
#define MAXLINES 512

struct nvmlDevice_st {
	char name[48]; /* "0", "0/mig1" */
	int gpu;       /* index of its GPU */
	int migs;      /* MIG instances (a GPU with MIG on) */
	int nogpm, noevents;
	unsigned field_calls; /* nvmlDeviceGetFieldValues calls: their timestamps */
};

/* an event set: the devices registered, and the events of the drain in
 * progress */
#define MAXEV 64
struct nvmlEventSet_st {
	int reg[MAXDEV];
	nvmlEventData_t q[MAXEV];
	int nq, qi, draining;
};

struct nvmlGpmSample_st {
	struct nvmlDevice_st *d;
};

struct line {
	char call[16], dev[32];
	unsigned metric;
	char vals[512];
	unsigned calls;
	double acc; /* a '+' value's running total */
};

static struct nvmlDevice_st devs[MAXDEV];
static int ndev, ngpu;
static struct line lines[MAXLINES];
static int nlines;
static char names[MAXDEV][96], uuids[MAXDEV][96];

/* calls per (entry point, device), for FAKE_NVML_COUNTS */
#define MAXCOUNT 1024
static struct {
	char call[16], dev[48];
	unsigned long n;
} counts[MAXCOUNT];
static int ncounts;

static void count(const char *call, const struct nvmlDevice_st *d)
{
	const char *dn = d ? d->name : "-";
	for (int i = 0; i < ncounts; i++)
		if (strcmp(counts[i].call, call) == 0 && strcmp(counts[i].dev, dn) == 0) {
			counts[i].n++;
			return;
		}
	if (ncounts < MAXCOUNT) {
		snprintf(counts[ncounts].call, sizeof counts[ncounts].call, "%s", call);
		snprintf(counts[ncounts].dev, sizeof counts[ncounts].dev, "%s", dn);
		counts[ncounts++].n = 1;
	}
}

static struct nvmlDevice_st *find_dev(const char *name)
{
	for (int i = 0; i < ndev; i++)
		if (strcmp(devs[i].name, name) == 0)
			return &devs[i];
	return NULL;
}

static void parse(void)
{
	const char *path = getenv("FAKE_NVML_SCRIPT");
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return;
	char l[1024];
	while (fgets(l, sizeof l, f)) {
		l[strcspn(l, "\n")] = 0;
		char w[32] = "", dev[32] = "", rest[600] = "";
		if (l[0] == '#' || sscanf(l, "%31s %31s %599[^\n]", w, dev, rest) < 2)
			continue;
		if (strcmp(w, "gpus") == 0) {
			ngpu = atoi(dev);
			for (int i = 0; i < ngpu && ndev < MAXDEV; i++, ndev++) {
				snprintf(devs[ndev].name, sizeof devs[ndev].name, "%d", i);
				devs[ndev].gpu = i;
			}
		} else if (strcmp(w, "mig") == 0) {
			struct nvmlDevice_st *g = find_dev(dev);
			if (!g)
				continue;
			g->migs = atoi(rest);
			for (int m = 0; m < g->migs && ndev < MAXDEV; m++, ndev++) {
				snprintf(devs[ndev].name, sizeof devs[ndev].name, "%.24s/mig%d", dev, m);
				devs[ndev].gpu = g->gpu;
			}
		} else if (strcmp(w, "nogpm") == 0 || strcmp(w, "noevents") == 0) {
			struct nvmlDevice_st *g = find_dev(dev);
			if (g && w[2] == 'g')
				g->nogpm = 1;
			else if (g)
				g->noevents = 1;
		} else if (strcmp(w, "name") == 0 || strcmp(w, "uuid") == 0) {
			struct nvmlDevice_st *g = find_dev(dev);
			if (g)
				snprintf((w[0] == 'n' ? names : uuids)[g - devs], 96, "%.95s", rest);
		} else if (nlines < MAXLINES) {
			struct line *x = &lines[nlines++];
			snprintf(x->call, sizeof x->call, "%.15s", w);
			snprintf(x->dev, sizeof x->dev, "%s", dev);
			if (strcmp(w, "gpm") == 0) {
				char v[512] = "";
				sscanf(rest, "%u %511s", &x->metric, v);
				snprintf(x->vals, sizeof x->vals, "%s", v);
			} else {
				snprintf(x->vals, sizeof x->vals, "%.511s", rest);
			}
		}
	}
	fclose(f);
}

/* The next value text of (call, dev[, metric]) into *val (its line into
 * *from); returns the NVML status; never returns for H. */
static nvmlReturn_t next_text(const char *call, const struct nvmlDevice_st *d, unsigned metric, const char **val,
			      struct line **from)
{
	const char *dn = d ? d->name : "0";
	for (int i = 0; i < nlines; i++) {
		struct line *x = &lines[i];
		if (strcmp(x->call, call) != 0 || strcmp(x->dev, dn) != 0 || x->metric != metric)
			continue;
		/* the k-th comma-separated value, or the last */
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
		if (v[0] == 'S') { /* S<ms>=<value>: a slow call that comes back */
			usleep((useconds_t)atoi(v + 1) * 1000);
			const char *eq = strchr(v, '=');
			v = eq ? eq + 1 : "0";
		}
		if (v[0] == 'E')
			return atoi(v + 1);
		*val = v;
		if (from)
			*from = x;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_NOT_SUPPORTED;
}

/* One number of a value: N, or R<lo>~<hi> (uniform, a fixed seed) */
static double num(const char *p, char **end)
{
	static unsigned long long rs = 0x9E3779B97F4A7C15ull;
	if (*p != 'R')
		return strtod(p, end);
	double lo = strtod(p + 1, end), hi = **end == '~' ? strtod(*end + 1, end) : lo;
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return lo + (hi - lo) * (double)(rs >> 11) / 9007199254740992.0;
}

/* The next value of (call, dev[, metric]) into a and b ("A:B"). */
static nvmlReturn_t next(const char *call, const struct nvmlDevice_st *d, unsigned metric, double *a, double *b)
{
	const char *v;
	struct line *x = NULL;
	nvmlReturn_t r = next_text(call, d, metric, &v, &x);
	if (r != NVML_SUCCESS)
		return r;
	char *end;
	*a = *v == '+' ? (x->acc += num(v + 1, &end)) : num(v, &end);
	if (b)
		*b = *end == ':' ? num(end + 1, &end) : 0;
	return NVML_SUCCESS;
}

#define ONE(call, d, out, type)                                                                              \
	do {                                                                                                 \
		double a_ = 0;                                                                               \
		nvmlReturn_t r_ = next(call, d, 0, &a_, NULL);                                               \
		if (r_ == NVML_SUCCESS)                                                                      \
			*(out) = (type)a_;                                                                   \
		return r_;                                                                                   \
	} while (0)

nvmlReturn_t nvmlInit_v2(void)
{
	count("init", NULL);
	ndev = ngpu = nlines = 0;
	memset(devs, 0, sizeof devs);
	memset(names, 0, sizeof names);
	memset(uuids, 0, sizeof uuids);
	parse();
	double a;
	nvmlReturn_t r = next("init", NULL, 0, &a, NULL); /* no "init" line: success */
	return r == NVML_ERROR_NOT_SUPPORTED ? NVML_SUCCESS : r;
}

nvmlReturn_t nvmlShutdown(void)
{
	const char *path = getenv("FAKE_NVML_COUNTS");
	FILE *f = path ? fopen(path, "w") : NULL;
	for (int i = 0; f && i < ncounts; i++)
		fprintf(f, "%s %s %lu\n", counts[i].call, counts[i].dev, counts[i].n);
	if (f)
		fclose(f);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	count("count", NULL);
	*n = (unsigned)ngpu;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
	char n[16];
	snprintf(n, sizeof n, "%u", i);
	struct nvmlDevice_st *d = find_dev(n);
	if (!d)
		return NVML_ERROR_INVALID_ARGUMENT;
	count("handle", d);
	*h = d;
	return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(const char *s, char *out, unsigned len)
{
	if (!s[0])
		return NVML_ERROR_NOT_SUPPORTED;
	snprintf(out, len, "%s", s);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *out, unsigned int len)
{
	count("uuid", d);
	return copy_str(uuids[d - devs], out, len);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned int len)
{
	count("name", d);
	return copy_str(names[d - devs], out, len);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	double a = 0, b = 0;
	count("util", d);
	nvmlReturn_t r = next("util", d, 0, &a, &b);
	if (r == NVML_SUCCESS) {
		u->gpu = (unsigned)a;
		u->memory = (unsigned)b;
	}
	return r;
}

/* "mem" V = total:used:reserved into t, u, r */
static nvmlReturn_t mem3(nvmlDevice_t d, unsigned long long *t, unsigned long long *u, unsigned long long *r)
{
	const char *v;
	nvmlReturn_t st = next_text("mem", d, 0, &v, NULL);
	if (st != NVML_SUCCESS)
		return st;
	char *end;
	*t = strtoull(v, &end, 10);
	*u = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
	*r = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
	return NVML_SUCCESS;
}

/* v1: the reserved memory counts as used, as the real v1 query has it */
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	unsigned long long t, u, res;
	count("mem", d);
	nvmlReturn_t r = mem3(d, &t, &u, &res);
	if (r == NVML_SUCCESS) {
		m->total = t;
		m->used = u + res;
		m->free = t - m->used;
	}
	return r;
}

#ifndef FAKE_OLD_DRIVER
/* v2: used without reserved; the struct's version checked as NVML does */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	count("mem_v2", d);
	if (m->version != NVML_MEMORY_V2_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	const char *v;
	nvmlReturn_t r = next_text("mem_v2", d, 0, &v, NULL);
	if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED)
		return r; /* a scripted failure of the v2 query itself */
	unsigned long long t, u, res;
	if ((r = mem3(d, &t, &u, &res)) != NVML_SUCCESS)
		return r;
	m->total = t;
	m->used = u;
	m->reserved = res;
	m->free = t - u - res;
	return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int *util, unsigned int *period_us)
{
	count("enc", d);
	*period_us = 167000;
	ONE("enc", d, util, unsigned);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int *util, unsigned int *period_us)
{
	count("dec", d);
	*period_us = 167000;
	ONE("dec", d, util, unsigned);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	count("power", d);
	ONE("power", d, mw, unsigned);
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	count("energy", d);
	ONE("energy", d, mj, unsigned long long);
}
#endif

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	count(type == NVML_CLOCK_SM ? "clock_sm" : type == NVML_CLOCK_MEM ? "clock_mem" : "clock_other", d);
	if (type == NVML_CLOCK_SM)
		ONE("clock_sm", d, mhz, unsigned);
	if (type == NVML_CLOCK_MEM)
		ONE("clock_mem", d, mhz, unsigned);
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
	count("temp", d);
	if (sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	ONE("temp", d, c, unsigned);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *kbs)
{
	count(counter == NVML_PCIE_UTIL_TX_BYTES ? "pcie_tx" : "pcie_rx", d);
	if (counter == NVML_PCIE_UTIL_TX_BYTES)
		ONE("pcie_tx", d, kbs, unsigned);
	if (counter == NVML_PCIE_UTIL_RX_BYTES)
		ONE("pcie_rx", d, kbs, unsigned);
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *n)
{
	count(type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "ecc_corr" : "ecc_uncorr", d);
	if (counter != NVML_VOLATILE_ECC)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (type == NVML_MEMORY_ERROR_TYPE_CORRECTED)
		ONE("ecc_corr", d, n, unsigned long long);
	if (type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED)
		ONE("ecc_uncorr", d, n, unsigned long long);
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *mask)
{
	count("throttle", d);
	ONE("throttle", d, mask, unsigned long long);
}

/* One call's process list; a list longer than *n answers
 * INSUFFICIENT_SIZE with the count and gives the value back, so the
 * caller's retry gets the same list. */
static nvmlReturn_t procs(const char *call, nvmlDevice_t d, unsigned *n, nvmlProcessInfo_t *out)
{
	const char *v;
	struct line *x = NULL;
	count(call, d);
	nvmlReturn_t r = next_text(call, d, 0, &v, &x);
	if (r != NVML_SUCCESS)
		return r;
	unsigned k = 0;
	size_t len = strcspn(v, ",");
	for (const char *p = v; p < v + len && *p != '-';) {
		char *end;
		unsigned pid = (unsigned)strtoul(p, &end, 10);
		unsigned long long mem = NVML_VALUE_NOT_AVAILABLE;
		if (*end == ':')
			mem = strtoull(end + 1, &end, 10);
		if (k < *n)
			out[k] = (nvmlProcessInfo_t){pid, mem, 0xFFFFFFFFu, 0xFFFFFFFFu};
		k++;
		p = *end == '+' ? end + 1 : v + len;
	}
	if (k > *n) {
		*n = k;
		x->calls--;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*n = k;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs("procs", d, n, p);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs("gprocs", d, n, p);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pending)
{
	count("mig_mode", d);
	if (strchr(d->name, '/'))
		return NVML_ERROR_NOT_SUPPORTED;
	*cur = *pending = d->migs ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *n)
{
	*n = d->migs ? (unsigned)d->migs + 1 : 0; /* the last slot stays empty */
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i, nvmlDevice_t *h)
{
	char n[64];
	snprintf(n, sizeof n, "%.40s/mig%u", d->name, i);
	struct nvmlDevice_st *m = find_dev(n);
	if (!m)
		return NVML_ERROR_NOT_FOUND;
	*h = m;
	return NVML_SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s)
{
	count("gpm_support", d);
	if (s->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->isSupportedDevice = !d->nogpm;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s)
{
	*s = calloc(1, sizeof **s);
	return *s ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s)
{
	free(s);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s)
{
	double a;
	count("gpm_sample", d);
	nvmlReturn_t r = next("gpm_sample", d, 0, &a, NULL);
	if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED)
		return r;
	s->d = d;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *g)
{
	count("gpm_get", g->sample2 ? g->sample2->d : NULL);
	if (g->version != NVML_GPM_METRICS_GET_VERSION || !g->sample1 || !g->sample2 || !g->sample2->d ||
	    g->sample1->d != g->sample2->d || g->numMetrics > NVML_GPM_METRIC_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < g->numMetrics; i++) {
		double a = 0;
		g->metrics[i].nvmlReturn = next("gpm", g->sample2->d, g->metrics[i].metricId, &a, NULL);
		g->metrics[i].value = a;
	}
	return NVML_SUCCESS;
}
#endif

/* ---- field values: the NVLink data counters ---- */

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v)
{
	count("fields", d);
	if (n < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	long long stamp = 1700000000000000ll + (long long)d->field_calls++ * 1000000;
	for (int i = 0; i < n; i++) {
		static const struct {
			unsigned id;
			const char *call;
			int type;
		} known[] = {
			{NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, "nvlink_tx", NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
			{NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, "nvlink_rx", NVML_VALUE_TYPE_UNSIGNED_LONG_LONG},
			/* as R545 drivers: the temperature in uiVal, the type saying double */
			{NVML_FI_DEV_MEMORY_TEMP, "memtemp", NVML_VALUE_TYPE_DOUBLE},
			{NVML_FI_DEV_PCIE_REPLAY_COUNTER, "pcie_replay", NVML_VALUE_TYPE_UNSIGNED_INT},
			{NVML_FI_DEV_REMAPPED_COR, "remap_cor", NVML_VALUE_TYPE_UNSIGNED_INT},
			{NVML_FI_DEV_REMAPPED_UNC, "remap_unc", NVML_VALUE_TYPE_UNSIGNED_INT},
			{NVML_FI_DEV_REMAPPED_FAILURE, "remap_fail", NVML_VALUE_TYPE_UNSIGNED_INT},
		};
		const char *call = NULL;
		int type = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			if (known[k].id == v[i].fieldId)
				call = known[k].call, type = known[k].type;
		double a = 0;
		/* memtemp_double: a driver that gives the temperature as a real double */
		if (v[i].fieldId == NVML_FI_DEV_MEMORY_TEMP && next("memtemp_double", d, 0, &a, NULL) == NVML_SUCCESS) {
			v[i].nvmlReturn = NVML_SUCCESS;
			v[i].valueType = NVML_VALUE_TYPE_DOUBLE;
			v[i].value.dVal = a;
			v[i].timestamp = stamp;
			continue;
		}
		bool nvlink = v[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ||
			      v[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
		if (!call)
			v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		else if (nvlink && v[i].scopeId != NVML_SCOPE_ALL_LINKS)
			v[i].nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
		else
			v[i].nvmlReturn = next(call, d, 0, &a, NULL);
		v[i].valueType = type;
		memset(&v[i].value, 0, sizeof v[i].value);
		if (type == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
			v[i].value.ullVal = (unsigned long long)a;
		else
			v[i].value.uiVal = (unsigned)a;
		v[i].timestamp = stamp;
		v[i].latencyUsec = 10;
	}
	return NVML_SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
/* ---- events: XIDs ---- */

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	*set = calloc(1, sizeof **set);
	return *set ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	free(set);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
	count("ev_register", d);
	if (d->noevents || strchr(d->name, '/'))
		return NVML_ERROR_NOT_SUPPORTED;
	if (types != NVML_EVENT_TYPE_XID_CRITICAL_ERROR)
		return NVML_ERROR_INVALID_ARGUMENT; /* the fake knows only XIDs */
	set->reg[d - devs] = 1;
	return NVML_SUCCESS;
}

/* A drain's first wait loads every registered device's next "xid" value;
 * later waits hand the events out; the wait after the last times out and
 * ends the drain.  A timeout other than 0 is refused: the daemon must never
 * block here. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms)
{
	count("ev_wait", NULL);
	if (timeout_ms != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!set->draining) {
		set->nq = set->qi = 0;
		set->draining = 1;
		for (int i = 0; i < ndev; i++) {
			const char *v;
			if (!set->reg[i])
				continue;
			nvmlReturn_t r = next_text("xid", &devs[i], 0, &v, NULL);
			if (r == NVML_ERROR_NOT_SUPPORTED)
				continue; /* no line: no XIDs */
			if (r != NVML_SUCCESS) {
				set->draining = 0;
				return r;
			}
			size_t len = strcspn(v, ",");
			for (const char *p = v; p < v + len && *p != '-' && set->nq < MAXEV;) {
				char *end;
				nvmlEventData_t *e = &set->q[set->nq++];
				e->device = &devs[i];
				e->eventType = NVML_EVENT_TYPE_XID_CRITICAL_ERROR;
				e->eventData = strtoull(p, &end, 10);
				e->gpuInstanceId = e->computeInstanceId = 0xFFFFFFFFu;
				if (*end == '@')
					e->gpuInstanceId = (unsigned)strtoul(end + 1, &end, 10);
				p = *end == '+' ? end + 1 : v + len;
			}
		}
	}
	if (set->qi < set->nq) {
		*data = set->q[set->qi++];
		return NVML_SUCCESS;
	}
	set->draining = 0;
	return NVML_ERROR_TIMEOUT;
}
#endif
