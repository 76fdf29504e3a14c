/*
 * gpusnoop.c - the workload of bench/gpusnoop.sh: calls the stand-in CUDA
 * runtime (build/libcudart-fake.so, loaded with dlopen so this program
 * links like every bench) in three phases and prints one figure each:
 *   pair_ns   mean time of one cudaMalloc(256)+cudaFree pair (tight loop)
 *   slow_ms   a loop of 2000 pairs where each allocation takes ~100 us (a
 *             busy wait before the call stands for a real cudaMalloc's time)
 *   rate      pairs per second, tight loop, for RATE_SECONDS
 * It waits for a line on stdin before starting, so the script can attach
 * gpusnoop first; run once without it (baseline) and once with it.
 * Usage: gpusnoop LIBCUDART [RATE_SECONDS]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*malloc_fn)(void **p, size_t size);
typedef int (*free_fn)(void *p);

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin_us(double us)
{
	double end = now_s() + us / 1e6;
	while (now_s() < end)
		;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: gpusnoop LIBCUDART [RATE_SECONDS]\n");
		return 2;
	}
	double rate_s = argc > 2 ? atof(argv[2]) : 1.0;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "gpusnoop bench: %s\n", dlerror());
		return 1;
	}
	malloc_fn cmalloc = (malloc_fn)dlsym(h, "cudaMalloc");
	free_fn cfree = (free_fn)dlsym(h, "cudaFree");
	if (!cmalloc || !cfree) {
		fprintf(stderr, "gpusnoop bench: %s lacks cudaMalloc/cudaFree\n", argv[1]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	void *p;
	enum { PAIRS = 200000, SLOW = 2000 };
	double t = now_s();
	for (int i = 0; i < PAIRS; i++) {
		if (cmalloc(&p, 256) || cfree(p))
			return 1;
	}
	printf("pair_ns %.1f\n", (now_s() - t) / PAIRS * 1e9);
	t = now_s();
	for (int i = 0; i < SLOW; i++) {
		spin_us(100);
		if (cmalloc(&p, 1 << 20) || cfree(p))
			return 1;
	}
	printf("slow_ms %.2f\n", (now_s() - t) * 1e3);
	long n = 0;
	t = now_s();
	double end = t + rate_s;
	while (now_s() < end) {
		for (int i = 0; i < 1000; i++)
			if (cmalloc(&p, 256) || cfree(p))
				return 1;
		n += 1000;
	}
	printf("rate %.0f\n", (double)n / (now_s() - t));
	fflush(stdout);
	return 0;
}
