/*
 * gpusnoop.c - the workload of bench/gpusnoop.sh: calls the stand-in CUDA
 * runtime (build/libcudart-fake.so, loaded with dlopen so this program
 * links like every bench; run with FAKE_CUDA_SYNC_US=0 so a sync returns at
 * once) in phases and prints one figure each:
 *   pair_ns    mean time of one cudaMalloc(256)+cudaFree pair (tight loop)
 *   launch_ns  one cudaLaunchKernel (which calls the driver's cuLaunchKernel)
 *   drv_ns     one cuLaunchKernel called directly
 *   sync_ns    one cudaStreamSynchronize
 *   slow_ms    a loop of 2000 pairs where each allocation takes ~100 us (a
 *              busy wait before the call stands for a real cudaMalloc's time)
 *   rate       pairs per second, tight loop, for RATE_SECONDS
 * The tight loops run for PHASE_SECONDS each (not a count: a probed call
 * costs 1000 times more on some virtual machines).  It waits for a line on
 * stdin before starting, so the script can attach gpusnoop first; run once
 * without it (baseline) and once with it.
 * Usage: gpusnoop LIBCUDART [RATE_SECONDS [PHASE_SECONDS]]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*malloc_fn)(void **p, size_t size);
typedef int (*free_fn)(void *p);
typedef struct {
	unsigned x, y, z;
} dim3;
typedef int (*launch_fn)(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
typedef int (*drv_launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			     unsigned shmem, void *stream, void **params, void **extra);
typedef int (*sync_fn)(void *stream);

static malloc_fn cmalloc;
static free_fn cfree;
static launch_fn claunch;
static drv_launch_fn dlaunch;
static sync_fn csync;

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

static int pair(void)
{
	void *p;
	return cmalloc(&p, 256) || cfree(p);
}
static int launch(void)
{
	dim3 g = {1, 1, 1};
	return claunch((void *)launch, g, g, NULL, 0, NULL);
}
static int drv_launch(void)
{
	return dlaunch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
}
static int sync_stream(void)
{
	return csync(NULL);
}

/* calls op in batches of 10 for at least secs; prints NAME_ns, the mean */
static int phase(const char *name, int (*op)(void), double secs)
{
	long n = 0;
	double t = now_s(), end = t + secs;
	while (now_s() < end)
		for (int i = 0; i < 10; i++, n++)
			if (op())
				return 1;
	printf("%s_ns %.1f\n", name, (now_s() - t) / (double)n * 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: gpusnoop LIBCUDART [RATE_SECONDS [PHASE_SECONDS]]\n");
		return 2;
	}
	double rate_s = argc > 2 ? atof(argv[2]) : 1.0, phase_s = argc > 3 ? atof(argv[3]) : 1.0;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "gpusnoop bench: %s\n", dlerror());
		return 1;
	}
	cmalloc = (malloc_fn)dlsym(h, "cudaMalloc");
	cfree = (free_fn)dlsym(h, "cudaFree");
	claunch = (launch_fn)dlsym(h, "cudaLaunchKernel");
	dlaunch = (drv_launch_fn)dlsym(h, "cuLaunchKernel");
	csync = (sync_fn)dlsym(h, "cudaStreamSynchronize");
	if (!cmalloc || !cfree || !claunch || !dlaunch || !csync) {
		fprintf(stderr, "gpusnoop bench: %s lacks a probed function\n", argv[1]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (phase("pair", pair, phase_s) || phase("launch", launch, phase_s) || phase("drv", drv_launch, phase_s) ||
	    phase("sync", sync_stream, phase_s))
		return 1;
	enum { SLOW = 2000 };
	double t = now_s();
	for (int i = 0; i < SLOW; i++) {
		spin_us(100);
		void *p;
		if (cmalloc(&p, 1 << 20) || cfree(p))
			return 1;
	}
	printf("slow_ms %.2f\n", (now_s() - t) * 1e3);
	long n = 0;
	t = now_s();
	double end = t + rate_s;
	while (now_s() < end) {
		for (int i = 0; i < 1000; i++)
			if (pair())
				return 1;
		n += 1000;
	}
	printf("rate %.0f\n", (double)n / (now_s() - t));
	fflush(stdout);
	return 0;
}
