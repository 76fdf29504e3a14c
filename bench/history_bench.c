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

#ifndef HISTORY_RING
/* The whole window in pages of max bytes (what dyno metrics does against
 * the daemon's default bound): the first page's time (best of reps) and
 * all pages' (best of reps), *pages the count. */
static void paged_us(struct history *h, size_t max, int reps, double *first_us, double *all_us, int *pages)
{
	history_set_max_answer(h, max);
	struct buf out = BUF_INIT, req = BUF_INIT;
	double best_first = 1e30, best_all = 1e30;
	for (int r = 0; r < reps; r++) {
		buf_reset(&req);
		buf_puts(&req, "{\"fn\":\"getMetrics\"}");
		double all = 0;
		*pages = 0;
		for (;;) {
			struct json_doc d, a;
			struct json_error e;
			if (!json_parse(req.data, req.len, &d, &e))
				abort();
			buf_reset(&out);
			double t0 = now_s();
			history_rpc(h, d.root, 1764000000000ll + 3600 * 1000ll, &out);
			double t = now_s() - t0;
			json_doc_free(&d);
			if (++*pages == 1 && t < best_first)
				best_first = t;
			all += t;
			if (!json_parse(out.data, out.len, &a, &e))
				abort();
			const struct json_value *n = json_get(a.root, "next");
			const char *key;
			int64_t from_ms, tick, until;
			if (!n || !json_get_str(n, "key", &key, NULL) || !json_get_i64(n, "from_ms", &from_ms) ||
			    !json_get_i64(n, "tick", &tick) || !json_get_i64(n, "until_tick", &until)) {
				json_doc_free(&a);
				break;
			}
			buf_reset(&req);
			struct jw w;
			jw_init(&w, &req);
			jw_obj_begin(&w);
			jw_key(&w, "fn");
			jw_str(&w, "getMetrics");
			jw_key(&w, "next");
			jw_obj_begin(&w);
			jw_key(&w, "from_ms");
			jw_i64(&w, from_ms);
			jw_key(&w, "key");
			jw_str(&w, key);
			jw_key(&w, "tick");
			jw_i64(&w, tick);
			jw_key(&w, "until_tick");
			jw_i64(&w, until);
			jw_obj_end(&w);
			jw_obj_end(&w);
			json_doc_free(&a);
		}
		if (all < best_all)
			best_all = all;
	}
	history_set_max_answer(h, 0);
	buf_free(&out);
	buf_free(&req);
	*first_us = best_first * 1e6;
	*all_us = best_all * 1e6;
}
#endif

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
#ifndef HISTORY_RING
	double page_first = 0, pages_all = 0;
	int npages = 0;
	paged_us(h, 1 << 20, reps, &page_first, &pages_all, &npages);
#endif
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
#ifndef HISTORY_RING
	printf("%s.page_first_us %.1f\n%s.pages_all_us %.1f\n%s.pages %d\n", which, page_first, which, pages_all, which,
	       npages);
#endif
	printf("%s.vm_hwm_kb %ld\n%s.answers_fnv %llu\n", which, hwm, which, (unsigned long long)answer_hash);
	free(keys);
	return 0;
}
