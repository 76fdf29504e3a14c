/*
 * fake_cuda.c - a stand-in for the CUDA driver library (libcuda.so) for
 * gpusnoop's tests on machines without a GPU: exports the driver's memory
 * and launch entry points by their real names and calling conventions,
 * backed by host memory (a launch does nothing).  Only what gpusnoop
 * probes; not a CUDA emulation.  Also linked, hidden, into
 * libtorch_cuda-fake.so (a runtime linked statically into another library).
 */
#include <stdint.h>
#include <stdlib.h>

int cuMemAlloc_v2(uint64_t *dptr, size_t size);
int cuMemFree_v2(uint64_t dptr);
int cuMemCreate(uint64_t *handle, size_t size, const void *prop, unsigned long long flags);
int cuMemRelease(uint64_t handle);
int cuMemMap(uint64_t ptr, size_t size, size_t offset, uint64_t handle, unsigned long long flags);
int cuMemUnmap(uint64_t ptr, size_t size);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned shmem, void *stream, void **params, void **extra);
int cuLaunchKernelEx(const void *config, void *f, void **params, void **extra);

/* CUDA_ERROR_OUT_OF_MEMORY for absurd sizes, so a failing call can be tested */
#define FAKE_OOM 2
#define FAKE_TOO_BIG ((size_t)1 << 40)

int cuMemAlloc_v2(uint64_t *dptr, size_t size)
{
	if (size >= FAKE_TOO_BIG)
		return FAKE_OOM;
	*dptr = (uint64_t)(uintptr_t)malloc(size);
	return *dptr ? 0 : FAKE_OOM;
}

int cuMemFree_v2(uint64_t dptr)
{
	free((void *)(uintptr_t)dptr);
	return 0;
}

int cuMemCreate(uint64_t *handle, size_t size, const void *prop, unsigned long long flags)
{
	(void)prop, (void)flags;
	*handle = (uint64_t)(uintptr_t)malloc(size);
	return *handle ? 0 : FAKE_OOM;
}

int cuMemRelease(uint64_t handle)
{
	free((void *)(uintptr_t)handle);
	return 0;
}

int cuMemMap(uint64_t ptr, size_t size, size_t offset, uint64_t handle, unsigned long long flags)
{
	(void)ptr, (void)size, (void)offset, (void)handle, (void)flags;
	return 0;
}

int cuMemUnmap(uint64_t ptr, size_t size)
{
	(void)ptr, (void)size;
	return 0;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned shmem, void *stream, void **params, void **extra)
{
	(void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)stream;
	(void)params, (void)extra;
	return 0;
}

int cuLaunchKernelEx(const void *config, void *f, void **params, void **extra)
{
	(void)config, (void)f, (void)params, (void)extra;
	return 0;
}
