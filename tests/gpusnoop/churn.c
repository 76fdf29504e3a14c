/*
 * churn.c - build/gpusnoop-churn: allocation traffic at the rates a
 * PyTorch training loop makes (tens of thousands of allocations and
 * launches a second, from several threads at once, in bursts, from
 * thousands of distinct deep stacks) over the stand-in CUDA runtime, with
 * leaks planted among it.  What gpusnoop_churn.sh and bench/gpusnoop.sh
 * watch.  Prints "ready", waits for a line on stdin (the probes are
 * attached), runs, prints one line of figures, exits.
 *
 * Each thread does CHURN_PAIRS cudaMalloc+cudaFree pairs of 256 bytes,
 * keeping the last CHURN_WINDOW allocations live (a free gives back the
 * oldest, as tensors die a while after they are made), in bursts of
 * CHURN_BURST pairs with CHURN_PAUSE_US of sleep between.  Each pair is
 * made from one of CHURN_STACKS distinct stacks (a power of two: a path
 * of two functions chosen bit by bit, under CHURN_DEPTH more frames of
 * recursion), so the stack map fills as a real program's would.
 * CHURN_RATE (pairs a second per thread; 0: as fast as it goes) adds
 * 1/CHURN_RATE s of CPU work after each pair (a loop of arithmetic,
 * calibrated at start on the thread's CPU clock), the compute between
 * allocations: a fixed amount of work, not a schedule to catch up with, so
 * the loop without probes runs at about that rate and the time the probes
 * add shows whole in its CPU time (the bench's slowdown: CPU time, not
 * wall time, as the machine it runs on may be shared).
 * CHURN_LAUNCH=N: N cudaLaunchKernel per pair (each calling the driver's
 * cuLaunchKernel); CHURN_DRV=1: then a direct cuLaunchKernel per pair from
 * three frames deeper than those (not inside a runtime launch: counted);
 * CHURN_SYNC=N: a cudaStreamSynchronize every N pairs.
 * CHURN_PACE_US=N: pair i waits until N*i us after its thread started (a
 * wall-clock schedule: the rate stays what it is whatever the probes cost,
 * as long as a pair takes less than N us; gpusnoop_sample.sh).
 *
 * Planted leaks: CHURN_LEAKS per thread, cudaMalloc of 65536 bytes from
 * plant_leak(), never freed, all from one call site: the first before the
 * traffic (its stack is in the stack map before the traffic's could
 * collide with it), the others spread through it.  So never freed (memory): CHURN_THREADS x CHURN_LEAKS
 * x 65536 bytes, all from plant_leak; nothing else (the window is freed at
 * the end).
 *
 * Output: "done pairs=P seconds=S cpu=C leaked=B" (P over all threads; S
 * wall, C the CPU seconds of the working threads, user and system: the
 * probes' traps are system time of the thread that takes them).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "watched.h"

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
typedef struct {
	unsigned x, y, z;
} dim3;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
int cudaStreamSynchronize(void *stream);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned shmem, void *stream, void **params, void **extra);

#define NOINLINE __attribute__((noinline))
#define LEAK_BYTES 65536
#define MAX_WINDOW 4096

static long threads, pairs, burst, pause_us, stacks, depth, leaks, window, launch, drv, sync_every, pace_us;
static double rate;
static long work_per_pair; /* iterations of compute() per pair (CHURN_RATE) */
static volatile int sink;
static volatile unsigned long acc;

static long env(const char *name, long def, long min, long max)
{
	const char *v = getenv(name);
	long x = v ? atol(v) : def;
	if (x < min || x > max) {
		fprintf(stderr, "churn: %s=%ld not in [%ld, %ld]\n", name, x, min, max);
		exit(2);
	}
	return x;
}

static void check(int r, const char *what)
{
	check_as("churn", r, what);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static void compute(long n)
{
	unsigned long x = acc;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	acc = x;
}

/* iterations of compute() that take 1/rate s of CPU: the best of a few tries */
static long calibrate(double per_s)
{
	double best = 1e9;
	const long n = 1000000;
	for (int k = 0; k < 5; k++) {
		double t = thread_cpu_s();
		compute(n);
		t = thread_cpu_s() - t;
		if (t > 0 && t < best)
			best = t;
	}
	return (long)((double)n / best / per_s);
}

struct worker {
	void *live[MAX_WINDOW];
	long head, n, done;
	double cpu;
};

/* a driver launch made below the frame the runtime launches were made from */
NOINLINE static void drv_launch(int down)
{
	if (down)
		drv_launch(down - 1);
	else
		check(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
	sink++;
}

/* one pair: a new allocation, the oldest of the window freed */
NOINLINE static int pair(struct worker *w)
{
	void *p;
	check(cudaMalloc(&p, 256), "cudaMalloc");
	if (w->n == window) {
		check(cudaFree(w->live[w->head]), "cudaFree");
		w->live[w->head] = p;
		w->head = (w->head + 1) % window;
	} else {
		w->live[(w->head + w->n++) % window] = p;
	}
	for (long i = 0; i < launch; i++) {
		dim3 g = {1, 1, 1};
		check(cudaLaunchKernel((void *)pair, g, g, NULL, 0, NULL), "cudaLaunchKernel");
	}
	if (drv)
		drv_launch(2);
	return 0;
}

NOINLINE static void plant_leak(void)
{
	void *p;
	check(cudaMalloc(&p, LEAK_BYTES), "cudaMalloc");
	sink++; /* not a tail call: this frame is the leak's first */
}

/* the path's bits pick left or right at each level: a distinct stack per path */
static int go(struct worker *w, unsigned path, int bits, int pad);
NOINLINE static int left(struct worker *w, unsigned path, int bits, int pad)
{
	int r = go(w, path >> 1, bits - 1, pad);
	sink++;
	return r;
}
NOINLINE static int right(struct worker *w, unsigned path, int bits, int pad)
{
	int r = go(w, path >> 1, bits - 1, pad);
	sink += 2;
	return r;
}
NOINLINE static int deeper(struct worker *w, int pad)
{
	int r = pad ? deeper(w, pad - 1) : pair(w);
	sink++;
	return r;
}
static int go(struct worker *w, unsigned path, int bits, int pad)
{
	if (bits == 0)
		return deeper(w, pad);
	return path & 1 ? left(w, path, bits, pad) : right(w, path, bits, pad);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	double cpu0 = thread_cpu_s();
	int bits = 0;
	while ((1L << bits) < stacks)
		bits++;
	long planted = 0, leak_every = pairs / (leaks ? leaks : 1);
	double start = now_s();
	for (long i = 0; i < pairs; i++) {
		if (pace_us) { /* pair i at start + i x pace: a rate the probes do not change */
			double due = start + (double)i * (double)pace_us / 1e6, left = due - now_s();
			if (left > 0) {
				struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
				nanosleep(&ts, NULL);
			}
		}
		/* one call site for every leak: the first before any traffic */
		while (planted < leaks && i >= planted * leak_every) {
			plant_leak();
			planted++;
		}
		if (burst && i && i % burst == 0 && pause_us) {
			struct timespec ts = {pause_us / 1000000, pause_us % 1000000 * 1000};
			nanosleep(&ts, NULL);
		}
		compute(work_per_pair); /* between two allocations */
		go(w, (unsigned)(i * 2654435761u) & (unsigned)(stacks - 1), bits, (int)depth);
		if (sync_every && i % sync_every == 0)
			check(cudaStreamSynchronize(NULL), "cudaStreamSynchronize");
		w->done++;
	}
	for (; w->n; w->n--, w->head = (w->head + 1) % window)
		check(cudaFree(w->live[w->head]), "cudaFree");
	w->cpu = thread_cpu_s() - cpu0;
	return NULL;
}

int main(void)
{
	threads = env("CHURN_THREADS", 4, 1, 64);
	pairs = env("CHURN_PAIRS", 10000, 1, 1L << 40);
	burst = env("CHURN_BURST", 0, 0, 1L << 40);
	pause_us = env("CHURN_PAUSE_US", 0, 0, 10000000);
	stacks = env("CHURN_STACKS", 1024, 1, 1 << 20);
	depth = env("CHURN_DEPTH", 20, 0, 200);
	leaks = env("CHURN_LEAKS", 5, 0, 1000);
	window = env("CHURN_WINDOW", 64, 1, MAX_WINDOW);
	launch = env("CHURN_LAUNCH", 0, 0, 16);
	drv = env("CHURN_DRV", 0, 0, 1);
	sync_every = env("CHURN_SYNC", 0, 0, 1L << 40);
	rate = (double)env("CHURN_RATE", 0, 0, 100000000);
	pace_us = env("CHURN_PACE_US", 0, 0, 10000000);
	if (stacks & (stacks - 1)) {
		fprintf(stderr, "churn: CHURN_STACKS must be a power of two\n");
		return 2;
	}
	struct worker *w = calloc((size_t)threads, sizeof(*w));
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	if (!w || !t)
		return 1;
	work_per_pair = rate > 0 ? calibrate(rate) : 0;
	if (!ready_then_wait())
		return 1;
	double t0 = now_s();
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, work, &w[i]))
			return 1;
	long done = 0;
	double cpu = 0;
	for (long i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		done += w[i].done;
		cpu += w[i].cpu;
	}
	printf("done pairs=%ld seconds=%.3f cpu=%.3f leaked=%ld\n", done, now_s() - t0, cpu,
	       threads * leaks * (long)LEAK_BYTES);
	fflush(stdout);
	free(w);
	free(t);
	return 0;
}
