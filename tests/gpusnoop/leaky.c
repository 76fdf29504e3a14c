/*
 * leaky.c - the program gpusnoop's test watches: waits for a line on stdin
 * (sent once the probes are attached), then allocates through every probed
 * entry point of the stand-in CUDA libraries, frees most, and leaks a known
 * amount from known functions, also from two threads; then exits.
 *
 * Never freed (what the test expects):
 *   leak_here        cudaMalloc        3 x 1048576
 *   leak_async       cudaMallocAsync   2 x 4096
 *   leak_driver      cuMemAlloc_v2     1 x 12345
 *   leak_host        cudaMallocHost    1 x 777
 *   leak_in_thread   cudaMalloc        2 threads x 5 x 1000
 *   leak_handle      cuMemCreate       1 x 2097152 (handles)
 * memory: 3177042 bytes in 17 allocations; handles: 2097152 in 1.
 * (never_returns' cudaMallocManaged of 5555 bytes is never seen returning.)
 *
 * Launches (launch_some): cudaLaunchKernel 5 (each calling the driver's
 * cuLaunchKernel: not counted again), cuLaunchKernel 3, cuLaunchKernelEx 2,
 * cudaGraphLaunch 1: 11.
 * Synchronisations: sync_often cudaStreamSynchronize 4; sync_in_thread
 * cudaEventSynchronize 1 per thread (one stack, 2); sync_rarely
 * cudaDeviceSynchronize 1 and cudaEventSynchronize 1: 8, each >= 1 ms.
 *
 * LEAKY_CHURN=N adds N cudaMallocAsync+cudaFreeAsync pairs in a burst
 * (2 records each, nothing leaked): enough to overflow a small ring buffer.
 * LEAKY_HOLD=1: after the work, print "done" and wait for a second line
 * before exiting (the live table is looked at meanwhile).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "watched.h"

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
int cudaMallocAsync(void **p, size_t size, void *stream);
int cudaFreeAsync(void *p, void *stream);
int cudaMallocManaged(void **p, size_t size, unsigned flags);
extern void (*fake_cuda_managed_hook)(void);
int cudaMallocHost(void **p, size_t size);
int cudaFreeHost(void *p);
int cuMemAlloc_v2(uint64_t *dptr, size_t size);
int cuMemFree_v2(uint64_t dptr);
int cuMemCreate(uint64_t *handle, size_t size, const void *prop, unsigned long long flags);
int cuMemRelease(uint64_t handle);
int cuMemMap(uint64_t ptr, size_t size, size_t offset, uint64_t handle, unsigned long long flags);
int cuMemUnmap(uint64_t ptr, size_t size);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned shmem, void *stream, void **params, void **extra);
int cuLaunchKernelEx(const void *config, void *f, void **params, void **extra);
typedef struct {
	unsigned x, y, z;
} dim3;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
int cudaGraphLaunch(void *exec, void *stream);
int cudaDeviceSynchronize(void);
int cudaStreamSynchronize(void *stream);
int cudaEventSynchronize(void *event);

#define NOINLINE __attribute__((noinline))
/* keeps the compiler from turning a call in tail position into a jump (no frame left) */
static volatile int sink;

#define check(r, what) check_as("leaky", r, what)

/* a cudaMallocManaged left by longjmp: its return probe never fires, and
 * the next allocations on this thread must not be taken for nested calls */
static jmp_buf escape;
static void jump_out(void)
{
	longjmp(escape, 1);
}

NOINLINE static void never_returns(void)
{
	volatile char deep[4096]; /* a frame deeper than the next callers' */
	deep[0] = 1;
	void *p;
	fake_cuda_managed_hook = jump_out;
	if (setjmp(escape) == 0)
		cudaMallocManaged(&p, 5555, 1);
	fake_cuda_managed_hook = NULL;
	sink += deep[0];
}

NOINLINE static void leak_here(void)
{
	void *p;
	for (int i = 0; i < 3; i++)
		check(cudaMalloc(&p, 1048576), "cudaMalloc");
	sink++;
}

NOINLINE static void alloc_and_free(void)
{
	void *p;
	for (int i = 0; i < 4; i++) {
		check(cudaMalloc(&p, 65536), "cudaMalloc");
		check(cudaFree(p), "cudaFree");
	}
	check(cudaMallocManaged(&p, 8192, 1), "cudaMallocManaged");
	check(cudaFree(p), "cudaFree");
	check(cudaMallocHost(&p, 333), "cudaMallocHost");
	check(cudaFreeHost(p), "cudaFreeHost");
	/* fails: nothing allocated, nothing to report */
	if (cudaMalloc(&p, (size_t)1 << 41) == 0)
		exit(1);
	sink++;
}

NOINLINE static void leak_async(void)
{
	void *p;
	check(cudaMallocAsync(&p, 4096, NULL), "cudaMallocAsync");
	check(cudaMallocAsync(&p, 4096, NULL), "cudaMallocAsync");
	check(cudaMallocAsync(&p, 50000, NULL), "cudaMallocAsync");
	check(cudaFreeAsync(p, NULL), "cudaFreeAsync");
	sink++;
}

NOINLINE static void leak_driver(void)
{
	uint64_t d;
	check(cuMemAlloc_v2(&d, 999), "cuMemAlloc_v2");
	check(cuMemFree_v2(d), "cuMemFree_v2");
	check(cuMemAlloc_v2(&d, 12345), "cuMemAlloc_v2");
	sink++;
}

NOINLINE static void leak_host(void)
{
	void *p;
	check(cudaMallocHost(&p, 777), "cudaMallocHost");
	sink++;
}

NOINLINE static void leak_handle(void)
{
	uint64_t h, h2;
	check(cuMemCreate(&h, 2097152, NULL, 0), "cuMemCreate");
	check(cuMemMap(0x7f0000000000ull, 2097152, 0, h, 0), "cuMemMap");
	check(cuMemUnmap(0x7f0000000000ull, 2097152), "cuMemUnmap");
	check(cuMemCreate(&h2, 4194304, NULL, 0), "cuMemCreate");
	check(cuMemRelease(h2), "cuMemRelease");
	sink++;
}

NOINLINE static void leak_in_thread(void)
{
	void *p;
	for (int i = 0; i < 5; i++)
		check(cudaMalloc(&p, 1000), "cudaMalloc");
	sink++;
}

NOINLINE static void launch_some(void)
{
	dim3 g = {1, 1, 1};
	for (int i = 0; i < 5; i++)
		check(cudaLaunchKernel((void *)launch_some, g, g, NULL, 0, NULL), "cudaLaunchKernel");
	for (int i = 0; i < 3; i++)
		check(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
	for (int i = 0; i < 2; i++)
		check(cuLaunchKernelEx(NULL, NULL, NULL, NULL), "cuLaunchKernelEx");
	check(cudaGraphLaunch(NULL, NULL), "cudaGraphLaunch");
	sink++;
}

NOINLINE static void sync_often(void)
{
	for (int i = 0; i < 4; i++)
		check(cudaStreamSynchronize((void *)0x1234), "cudaStreamSynchronize");
	sink++;
}

NOINLINE static void sync_rarely(void)
{
	check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	check(cudaEventSynchronize((void *)0x5678), "cudaEventSynchronize");
	sink++;
}

NOINLINE static void sync_in_thread(void)
{
	check(cudaEventSynchronize((void *)0x9abc), "cudaEventSynchronize");
	sink++;
}

static void *thread_main(void *arg)
{
	(void)arg;
	leak_in_thread();
	sync_in_thread();
	sink++;
	return NULL;
}

int main(void)
{
	char line[16];
	if (!ready_then_wait())
		return 1;
	const char *churn = getenv("LEAKY_CHURN");
	for (long i = churn ? atol(churn) : 0; i > 0; i--) {
		void *p;
		check(cudaMallocAsync(&p, 64, NULL), "cudaMallocAsync");
		check(cudaFreeAsync(p, NULL), "cudaFreeAsync");
	}
	never_returns();
	leak_here();
	alloc_and_free();
	leak_async();
	leak_driver();
	leak_host();
	leak_handle();
	launch_some();
	sync_often();
	sync_rarely();
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (getenv("LEAKY_HOLD")) {
		printf("done\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	return 0;
}
