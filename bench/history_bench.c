/*
 * history_bench.c - memory and getMetrics latency of the history over an
 * hour of 1 s ticks, for the host's keys alone and with 8 GPUs x 40 keys.
 *
 * Built twice by bench/history_bench.sh: as is, against the compressed
 * history, and with -DHISTORY_RING against the ring it replaced (taken
 * from git), so both print the same figures from the same synthetic hour.
 * Host keys are the live kernel collector's keys with values evolved by a
 * model (integers step like counters or gauges; floats take fresh full
 * precision: XOR coding's worst case).  GPU keys, 40 per GPU, are the keys
 * the NVML collector and the GPU accounting publish for a GPU (docs/
 * metrics.md), each in the form the daemon gives it, under a busy training
 * job: 11 constants (memory total, ECC and XID counts, throttle reasons,
 * memory clock, ...), 4 slow gauges (temperature, SM clock, memory used),
 * 2 integer percentages (utilization 96-100, memory 30-60), power in W to
 * the mW (600 +- 50 W), energy and the job's and user's energy in mJ a
 * tick, PCIe as KB/s x 1024, NVLink in bytes/s (GPM MiB/s rounded to
 * bytes), 9 GPM ratios to 1e-4 around their levels (SM active 0.85 +- 0.05,
 * ...), FLOP/s and the job's and user's FLOPs to 4 significant digits, the
 * % of peak to 0.01.  Every noisy reading is drawn afresh each tick,
 * uniformly over its range (real readings drift; this is the harder case).
 * GPU=idle: the same GPUs with nothing running (GPM ratios and FLOPs 0,
 * utilization 0, power 90 +- 2 W); GPU=random: every GPU reading fresh at
 * full precision (11 full-mantissa doubles, growing counters: the model
 * before the history coded decimals, its worst case).  Timestamps are 1 s
 * apart with +-5 ms of jitter.
 * Heap bytes come from mallinfo2 before and after the fill (the key table
 * and names included); VmHWM is this process's.  The key list is written
 * to KEYFILE, or read from it when it exists, so that both builds see the
 * same keys; answers are hashed so that the script can compare them.
 * Usage: history_bench TICKS QUERIES KEYFILE [busy|idle|random]; prints
 * "build.key value" lines, and with busy or idle what each kind of GPU key
 * costs ("kind.<kind> <keys> <bytes>").
 */
#include <malloc.h>
#include <math.h>
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
	 * 4 ratio in [0, 1], 5 fast counter, 6 slow integer gauge; the GPU
	 * model's: 7 a reading around lvl +- step to dec decimals (x mul, then
	 * clamped to lo..hi), 8 the same to 4 significant digits, 9 a slow gauge
	 * that moves by step one tick in ten */
	int kind;
	double v, step;
	double lvl, lo, hi, mul;
	int dec;
	const char *group; /* the GPU model's kind, for the cost table */
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
	case 7: {
		double x = k->lvl + k->step * (2 * unit() - 1), p = 1;
		x = x < k->lo ? k->lo : x > k->hi ? k->hi : x;
		for (int i = 0; i < k->dec; i++)
			p *= 10;
		k->v = (double)llround(x * p) / p * k->mul; /* as the daemon computes it: m / 10^dec */
		break;
	}
	case 8: {
		char t[32];
		snprintf(t, sizeof t, "%.3e", k->lvl + k->step * (2 * unit() - 1));
		k->v = strtod(t, NULL);
		break;
	}
	case 9:
		if (rnd() % 10 == 0)
			k->v += k->step * (double)((int)(rnd() % 3) - 1);
		break;
	}
}

/* The GPU model (see the top): per GPU, what the daemon publishes for it */
static const struct gpu_key {
	const char *name, *group;
	int kind;
	double lvl, step, lo, hi, mul;
	int dec;
	double idle_lvl, idle_step; /* GPU=idle */
} gpu_model[] = {
	{"gpu_memory_total_bytes", "constant", 2, 85899345920.0, 0, 0, 0, 1, 0, 85899345920.0, 0},
	{"gpu_ecc_corrected_errors", "constant", 2, 0, 0, 0, 0, 1, 0, 0, 0},
	{"gpu_ecc_uncorrected_errors", "constant", 2, 0, 0, 0, 0, 1, 0, 0, 0},
	{"xid_errors", "constant", 2, 0, 0, 0, 0, 1, 0, 0, 0},
	{"xid_last", "constant", 2, 0, 0, 0, 0, 1, 0, 0, 0},
	{"gpu_throttle_reasons", "constant", 2, 4, 0, 0, 0, 1, 0, 1, 0},
	{"gpu_memory_frequency_mhz", "constant", 2, 2619, 0, 0, 0, 1, 0, 2619, 0},
	{"gpu_processes", "constant", 2, 1, 0, 0, 0, 1, 0, 0, 0},
	{"fp64_active", "constant", 2, 0, 0, 0, 0, 1, 0, 0, 0},
	{"gpu_job_seconds", "constant", 2, 1, 0, 0, 0, 1, 0, 0, 0},
	{"gpu_user_seconds", "constant", 2, 1, 0, 0, 0, 1, 0, 0, 0},
	{"gpu_temperature_c", "slow gauge", 9, 65, 1, 0, 0, 1, 0, 35, 1},
	{"gpu_frequency_mhz", "slow gauge", 9, 1980, 15, 0, 0, 1, 0, 345, 15},
	{"gpu_memory_used_bytes", "slow gauge", 9, 70e9, 2097152, 0, 0, 1, 0, 5e8, 0},
	{"gpu_process_memory_bytes", "slow gauge", 9, 69e9, 2097152, 0, 0, 1, 0, 0, 0},
	{"gpu_device_utilization", "percent", 7, 98, 2, 0, 100, 1, 0, 0, 0},
	{"gpu_memory_utilization", "percent", 7, 45, 15, 0, 100, 1, 0, 0, 0},
	{"gpu_power_draw", "W to the mW", 7, 600, 50, 0, 1e9, 1, 3, 90, 2},
	{"gpu_energy_mj", "mJ a tick", 7, 600000, 50000, 0, 1e12, 1, 0, 90000, 2000},
	{"gpu_job_energy_mj", "mJ a tick", 7, 600000, 50000, 0, 1e12, 1, 0, 0, 0},
	{"gpu_user_energy_mj", "mJ a tick", 7, 600000, 50000, 0, 1e12, 1, 0, 0, 0},
	{"pcie_tx_bytes", "KB/s x 1024", 7, 20000, 20000, 0, 1e9, 1024, 0, 10, 10},
	{"pcie_rx_bytes", "KB/s x 1024", 7, 20000, 20000, 0, 1e9, 1024, 0, 10, 10},
	{"nvlink_tx_bytes", "bytes/s", 7, 5e10, 2e10, 0, 1e12, 1, 0, 0, 0},
	{"nvlink_rx_bytes", "bytes/s", 7, 5e10, 2e10, 0, 1e12, 1, 0, 0, 0},
	{"graphics_engine_active_ratio", "GPM ratio", 7, 0.95, 0.03, 0, 1, 1, 4, 0, 0},
	{"sm_active_ratio", "GPM ratio", 7, 0.85, 0.05, 0, 1, 1, 4, 0, 0},
	{"sm_occupancy", "GPM ratio", 7, 0.45, 0.05, 0, 1, 1, 4, 0, 0},
	{"tensorcore_active", "GPM ratio", 7, 0.55, 0.1, 0, 1, 1, 4, 0, 0},
	{"fp16_active", "GPM ratio", 7, 0.08, 0.03, 0, 1, 1, 4, 0, 0},
	{"fp32_active", "GPM ratio", 7, 0.12, 0.03, 0, 1, 1, 4, 0, 0},
	{"integer_active", "GPM ratio", 7, 0.1, 0.03, 0, 1, 1, 4, 0, 0},
	{"hbm_mem_bw_util", "GPM ratio", 7, 0.6, 0.1, 0, 1, 1, 4, 0, 0},
	{"gpu_flops_peak_pct", "percent to 0.01", 7, 50, 10, 0, 200, 1, 2, 0, 0},
	{"gpu_flops", "4 significant digits", 8, 5e14, 1e14, 0, 0, 1, 0, 0, 0},
	{"gpu_job_flop", "4 significant digits", 8, 5e14, 1e14, 0, 0, 1, 0, 0, 0},
	{"gpu_user_flop", "4 significant digits", 8, 5e14, 1e14, 0, 0, 1, 0, 0, 0},
	{"pcie_replays", "constant", 2, 0, 0, 0, 0, 1, 0, 0, 0},
	{"gpu_job_memory_bytes", "slow gauge", 9, 69e9, 2097152, 0, 0, 1, 0, 0, 0},
	{"gpu_power_limit", "constant", 2, 700, 0, 0, 0, 1, 0, 700, 0},
};
#define GPU_KEYS (sizeof gpu_model / sizeof gpu_model[0])
_Static_assert(GPU_KEYS == 40, "the issue's 40 series per GPU");

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
	bool random = argc > 4 && strcmp(argv[4], "random") == 0;
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
			if (v->type == FV_STRING || frame_key_export_only(frame_key(&f, v)))
				continue; /* strings and '@' keys (Prometheus' totals) are not history series */
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
			const struct gpu_key *gk = &gpu_model[m];
			if (random) { /* the model before decimal coding */
				snprintf(k->name, sizeof k->name, "gpu_m%02d.gpu%d", m, g);
				static const int kinds[] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 6, 6, 6, 6, 6, 6, 3, 3,
							    3, 3, 0, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1};
				k->kind = kinds[m];
				k->v = k->kind == 2 ? 1e9 * (m + 1) : k->kind == 6 ? 40 + m : 0;
				k->step = k->kind == 0 ? 50000 : k->kind == 1 ? 1e15 : 300000.0 * (m + 1);
				k->group = "random";
				continue;
			}
			snprintf(k->name, sizeof k->name, "%s.%d", gk->name, g);
			k->group = gk->group;
			k->kind = gk->kind;
			k->lvl = idle ? gk->idle_lvl : gk->lvl;
			k->step = idle ? gk->idle_step : gk->step;
			k->lo = gk->lo;
			k->hi = gk->hi;
			k->mul = gk->mul;
			k->dec = gk->dec;
			k->v = k->lvl;
			if (idle && k->kind == 8 && k->lvl == 0)
				k->kind = 2; /* no FLOPs: 0 */
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
	uint64_t host_hash = answer_hash;

	rs = seed;
	h = history_new(3600, 1, 0, 20000);
	size_t all_bytes = fill(h, keys, nhost + ngpu, ticks);
	size_t len_gpu;
	double q_gpu = query_us(h, "{\"fn\":\"getMetrics\",\"names\":[\"gpu_*\"]}", reps, &len_gpu);
	long hwm = vm_hwm_kb();
#ifndef HISTORY_RING
	/* where the bytes go: each kind of GPU key's blocks */
	for (size_t m = 0; m < 40 && !random; m++) {
		const char *grp = keys[nhost + m].group;
		bool seen = false;
		for (size_t j = 0; j < m; j++)
			seen = seen || strcmp(keys[nhost + j].group, grp) == 0;
		if (seen)
			continue;
		size_t nk = 0, bytes = 0;
		for (size_t i = nhost; i < nhost + ngpu; i++)
			if (strcmp(keys[i].group, grp) == 0) {
				nk++;
				bytes += history_key_bytes(h, keys[i].name);
			}
		printf("kind.%s\t%zu\t%zu\n", grp, nk, bytes);
	}
#endif
	history_free(h);

	printf("%s.ticks %d\n%s.host_keys %zu\n%s.gpu_keys %zu\n", which, ticks, which, nhost, which, ngpu);
	printf("%s.host_bytes %zu\n%s.host_gpu_bytes %zu\n%s.gpu_bytes %zu\n", which, host_bytes, which, all_bytes,
	       which, all_bytes - host_bytes);
	printf("%s.query_all_us %.1f\n%s.query_all_len %zu\n", which, q_all, which, len_all);
	size_t ngpu_q = 0; /* the keys gpu_* selects */
	for (size_t i = 0; i < nhost + ngpu; i++)
		ngpu_q += strncmp(keys[i].name, "gpu_", 4) == 0;
	printf("%s.query_one_us %.2f\n%s.query_gpu_us %.1f\n%s.query_gpu_len %zu\n%s.query_gpu_keys %zu\n", which, q_one,
	       which, q_gpu, which, len_gpu, which, ngpu_q);
#ifndef HISTORY_RING
	printf("%s.page_first_us %.1f\n%s.pages_all_us %.1f\n%s.pages %d\n", which, page_first, which, pages_all, which,
	       npages);
#endif
	printf("%s.vm_hwm_kb %ld\n%s.answers_fnv %llu\n%s.host_answers_fnv %llu\n", which, hwm, which,
	       (unsigned long long)answer_hash, which, (unsigned long long)host_hash);
	free(keys);
	return 0;
}
