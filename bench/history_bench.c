/*
 * history_bench.c - memory and getMetrics latency of the history over an
 * hour of 1 s ticks, for the host's keys alone and with 8 GPUs x 40 keys.
 *
 * Built twice by bench/history_bench.sh: as is, against the compressed
 * history, and with -DHISTORY_RING against the ring it replaced (taken
 * from git), so both print the same figures from the same synthetic hour.
 * Host keys are the live kernel collector's keys with values evolved by a
 * model (integers step like counters or gauges; floats take fresh full
 * precision: XOR coding's worst case); GPU keys follow NVML's kinds, per
 * GPU: 12 constants (memory total, limits, ECC/XID counts), 6 slow integer
 * gauges (temperature, clocks, memory used), 4 integer percentages, power
 * in mW, 6 counters (energy, PCIe/NVLink bytes), and 11 doubles at full
 * precision (GPM activity ratios, FLOPs/s) -- or, with GPU=idle, those 11
 * at 0 (no GPM activity).  Timestamps are 1 s apart with +-5 ms of jitter.
 * Heap bytes come from mallinfo2 before and after the fill (the key table
 * and names included); VmHWM is this process's.  The key list is written
 * to KEYFILE, or read from it when it exists, so that both builds see the
 * same keys; answers are hashed so that the script can compare them.
 * Usage: history_bench TICKS QUERIES KEYFILE [busy|idle]; prints
 * "build.key value" lines.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/log.h"
#include "daemon/collect/kernel.h"
#include "daemon/publish/history.h"

static uint64_t rs = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}
static double unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

struct key {
	char name[64];
	/* 0 integer counter, 1 full-precision double, 2 constant, 3 percent,
	 * 4 ratio in [0, 1], 5 fast counter, 6 slow integer gauge */
	int kind;
	double v, step;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long vm_hwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void step(struct key *k)
{
	switch (k->kind) {
	case 0: k->v += (double)(rnd() % (uint64_t)(k->step + 1)); break;
	case 1: k->v = k->step * unit(); break;
	case 2: break;
	case 3: k->v = (double)(rnd() % 101); break;
	case 4: k->v = unit(); break;
	case 5: k->v += k->step + (double)(rnd() % 1000); break;
	case 6:
		if (rnd() % 10 == 0)
			k->v += (double)(rnd() % 3) - 1;
		break;
	}
}

/* Fill h with ticks of keys; returns the heap bytes it took. */
static size_t fill(struct history *h, struct key *keys, size_t nk, int ticks)
{
	struct frame f;
	frame_init(&f);
	size_t before = mallinfo2().uordblks;
	for (int t = 0; t < ticks; t++) {
		frame_reset(&f, (1764000000000ll + t * 1000ll + (int64_t)(rnd() % 11) - 5) * 1000000);
		for (size_t i = 0; i < nk; i++) {
			step(&keys[i]);
			frame_float(&f, keys[i].name, keys[i].v);
		}
		history_add(h, &f);
	}
	frame_free(&f);
	/* the frame is freed: what is left is the history's */
	return mallinfo2().uordblks - before;
}

static uint64_t answer_hash;

static double query_us(struct history *h, const char *req, int reps, size_t *len)
{
	struct json_doc d;
	struct json_error e;
	if (!json_parse(req, strlen(req), &d, &e))
		abort();
	struct buf out = BUF_INIT;
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		buf_reset(&out);
		double t0 = now_s();
		history_rpc(h, d.root, 1764000000000ll + 3600 * 1000ll, &out);
		double t = now_s() - t0;
		if (t < best)
			best = t;
	}
	*len = out.len;
	for (size_t i = 0; i < out.len; i++) /* FNV-1a of every answer, in order */
		answer_hash = (answer_hash ^ (unsigned char)out.data[i]) * 1099511628211ull;
	buf_free(&out);
	json_doc_free(&d);
	return best * 1e6;
}

int main(int argc, char **argv)
{
	int ticks = argc > 1 ? atoi(argv[1]) : 3601;
	int reps = argc > 2 ? atoi(argv[2]) : 10;
	log_init("history_bench", LOG_LEVEL_ERROR);

	const char *keyfile = argc > 3 ? argv[3] : "/dev/null";
	bool idle = argc > 4 && strcmp(argv[4], "idle") == 0;
	size_t nhost = 0, ngpu = 8 * 40, cap = 4096;
	struct key *keys = calloc(cap, sizeof *keys);
	FILE *kf = fopen(keyfile, "r");
	if (kf) { /* the other build's keys */
		while (nhost < cap - ngpu && fscanf(kf, "%63s %d %lf %lf", keys[nhost].name, &keys[nhost].kind,
						    &keys[nhost].v, &keys[nhost].step) == 4)
			nhost++;
		fclose(kf);
	} else { /* the host's keys, from the live kernel collector */
		struct kernel_collector *kc = kernel_collector_new("/proc", "/sys", NULL);
		struct frame f;
		frame_init(&f);
		kernel_collect(kc, &f);
		frame_reset(&f, 1);
		kernel_collect(kc, &f);
		for (size_t i = 0; i < f.n && nhost < cap - ngpu; i++) {
			const struct frame_value *v = &f.vals[i];
			if (v->type == FV_STRING)
				continue;
			struct key *k = &keys[nhost++];
			snprintf(k->name, sizeof k->name, "%s", frame_key(&f, v));
			if (v->type == FV_FLOAT) {
				k->kind = 1;
				k->step = v->v.f > 1 ? v->v.f * 2 : 100;
			} else {
				k->kind = 0;
				k->v = v->type == FV_INT ? (double)v->v.i : (double)v->v.u;
				k->step = k->v > 1000 ? k->v / 1000 : 10;
			}
		}
		frame_free(&f);
		kernel_collector_free(kc);
		kf = fopen(keyfile, "w");
		for (size_t i = 0; kf && i < nhost; i++)
			fprintf(kf, "%s %d %.17g %.17g\n", keys[i].name, keys[i].kind, keys[i].v, keys[i].step);
		if (kf)
			fclose(kf);
	}
	/* 40 keys per GPU (see the top) */
	for (int g = 0; g < 8; g++)
		for (int m = 0; m < 40; m++) {
			struct key *k = &keys[nhost + (size_t)g * 40 + m];
			snprintf(k->name, sizeof k->name, "gpu_m%02d.gpu%d", m, g);
			static const int kinds[] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 6, 6, 6, 6, 6, 6, 3, 3,
						    3, 3, 0, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1};
			k->kind = kinds[m];
			k->v = k->kind == 2 ? 1e9 * (m + 1) : k->kind == 6 ? 40 + m : 0;
			k->step = k->kind == 0 ? 50000 : k->kind == 1 ? 1e15 : 300000.0 * (m + 1);
			if (idle && (k->kind == 4 || k->kind == 1))
				k->kind = 2; /* no GPM activity: 0 */
		}

#ifdef HISTORY_RING
	const char *which = "ring";
#else
	const char *which = "blocks";
#endif
	uint64_t seed = rs;
	struct history *h = history_new(3600, 1, 0, 20000);
	size_t host_bytes = fill(h, keys, nhost, ticks);
	size_t len_all, len_one;
	double q_all = query_us(h, "{\"fn\":\"getMetrics\"}", reps, &len_all);
	char req[128];
	snprintf(req, sizeof req, "{\"fn\":\"getMetrics\",\"names\":[\"%s\"]}", keys[0].name);
	double q_one = query_us(h, req, reps * 10, &len_one);
	history_free(h);

	rs = seed;
	h = history_new(3600, 1, 0, 20000);
	size_t all_bytes = fill(h, keys, nhost + ngpu, ticks);
	size_t len_gpu;
	double q_gpu = query_us(h, "{\"fn\":\"getMetrics\",\"names\":[\"gpu_*\"]}", reps, &len_gpu);
	long hwm = vm_hwm_kb();
	history_free(h);

	printf("%s.ticks %d\n%s.host_keys %zu\n%s.gpu_keys %zu\n", which, ticks, which, nhost, which, ngpu);
	printf("%s.host_bytes %zu\n%s.host_gpu_bytes %zu\n%s.gpu_bytes %zu\n", which, host_bytes, which, all_bytes,
	       which, all_bytes - host_bytes);
	printf("%s.query_all_us %.1f\n%s.query_all_len %zu\n", which, q_all, which, len_all);
	printf("%s.query_one_us %.2f\n%s.query_gpu_us %.1f\n%s.query_gpu_len %zu\n", which, q_one, which, q_gpu,
	       which, len_gpu);
	printf("%s.vm_hwm_kb %ld\n%s.answers_fnv %llu\n", which, hwm, which, (unsigned long long)answer_hash);
	free(keys);
	return 0;
}
