/*
 * fake_cudart.c - a stand-in for the CUDA runtime (libcudart.so) for
 * gpusnoop's tests: the runtime's memory entry points by their real names.
 * Like the real runtime, cudaMalloc/cudaFree go through the driver
 * (libcuda-fake.so), so the tests see nested probed calls counted once.
 */
#include <stdint.h>
#include <stdlib.h>

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

#define FAKE_OOM 2 /* cudaErrorMemoryAllocation */

int cudaMalloc(void **p, size_t size)
{
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
