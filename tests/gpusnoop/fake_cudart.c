/*
 * fake_cudart.c - a stand-in for the CUDA runtime (libcudart.so) for
 * gpusnoop's tests: the runtime's memory, launch and synchronisation entry
 * points by their real names.  Like the real runtime, cudaMalloc/cudaFree
 * and cudaLaunchKernel go through the driver (libcuda-fake.so), so the
 * tests see nested probed calls counted once.  A synchronisation sleeps
 * 1 ms, standing for the wait (FAKE_CUDA_SYNC_US=N: N us; 0: no wait, for
 * the bench).
 *
 * The current device is the driver's current context's, as in the real
 * runtime: cudaSetDevice makes the device's primary context current
 * (through cuCtxSetCurrent, a probed call made inside a probed one),
 * cudaGetDevice asks the driver (device 0 on a thread with no context, the
 * runtime's default).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

int cuMemAlloc_v2(uint64_t *dptr, size_t size);
int cuMemFree_v2(uint64_t dptr);

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
int cudaMallocAsync(void **p, size_t size, void *stream);
int cudaFreeAsync(void *p, void *stream);
int cudaMallocManaged(void **p, size_t size, unsigned flags);
extern void (*fake_cuda_managed_hook)(void);
int cudaMallocHost(void **p, size_t size);
int cudaFreeHost(void *p);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned shmem, void *stream, void **params, void **extra);

typedef struct {
	unsigned x, y, z;
} dim3;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
int cudaGraphLaunch(void *exec, void *stream);
int cudaDeviceSynchronize(void);
int cudaStreamSynchronize(void *stream);
int cudaEventSynchronize(void *event);
int cudaSetDevice(int dev);
int cudaGetDevice(int *dev);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuCtxGetDevice(int *dev);

#define FAKE_OOM 2 /* cudaErrorMemoryAllocation */

int cuCtxGetCurrent(void **ctx);

/* the runtime's lazy start: a thread with no context gets device 0's
 * primary one, switched to inside the first call that needs it */
static void ensure_context(void)
{
	void *ctx = NULL;
	cuCtxGetCurrent(&ctx);
	if (!ctx && cuDevicePrimaryCtxRetain(&ctx, 0) == 0)
		cuCtxSetCurrent(ctx);
}

int cudaMalloc(void **p, size_t size)
{
	ensure_context();
	uint64_t d = 0;
	int r = cuMemAlloc_v2(&d, size);
	*p = (void *)(uintptr_t)d;
	return r;
}

int cudaFree(void *p)
{
	return cuMemFree_v2((uint64_t)(uintptr_t)p);
}

static int host_alloc(void **p, size_t size)
{
	*p = malloc(size);
	return *p ? 0 : FAKE_OOM;
}

int cudaMallocAsync(void **p, size_t size, void *stream)
{
	(void)stream;
	return host_alloc(p, size);
}

int cudaFreeAsync(void *p, void *stream)
{
	(void)stream;
	free(p);
	return 0;
}

/* tests only: called by cudaMallocManaged before it returns, so a test can
 * leave it with longjmp, as an exception through a real runtime would */
void (*fake_cuda_managed_hook)(void);

int cudaMallocManaged(void **p, size_t size, unsigned flags)
{
	(void)flags;
	int r = host_alloc(p, size);
	if (fake_cuda_managed_hook)
		fake_cuda_managed_hook();
	return r;
}

int cudaMallocHost(void **p, size_t size)
{
	return host_alloc(p, size);
}

int cudaFreeHost(void *p)
{
	free(p);
	return 0;
}

/* not a tail call, so the driver's launch runs below this frame as in the real runtime */
static volatile int launched;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, void *stream)
{
	int r = cuLaunchKernel((void *)func, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem,
			       stream, args, NULL);
	launched++;
	return r;
}

int cudaGraphLaunch(void *exec, void *stream)
{
	(void)exec, (void)stream;
	return 0;
}

static int wait_a_little(void)
{
	static long us = -1;
	if (us < 0) {
		const char *e = getenv("FAKE_CUDA_SYNC_US");
		us = e ? atol(e) : 1000;
		us = us < 0 ? 0 : us;
	}
	struct timespec ts = {us / 1000000, us % 1000000 * 1000};
	if (us)
		nanosleep(&ts, NULL);
	return 0;
}

int cudaDeviceSynchronize(void)
{
	return wait_a_little();
}

int cudaStreamSynchronize(void *stream)
{
	(void)stream;
	return wait_a_little();
}

int cudaEventSynchronize(void *event)
{
	(void)event;
	return wait_a_little();
}

int cudaSetDevice(int dev)
{
	void *ctx;
	if (cuDevicePrimaryCtxRetain(&ctx, dev) != 0)
		return 101; /* cudaErrorInvalidDevice */
	int r = cuCtxSetCurrent(ctx);
	launched++; /* not a tail call: the driver runs below this frame */
	return r;
}

int cudaGetDevice(int *dev)
{
	int r = cuCtxGetDevice(dev);
	if (r != 0)
		*dev = 0;
	launched++;
	return 0;
}
