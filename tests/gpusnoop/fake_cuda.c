/*
 * fake_cuda.c - a stand-in for the CUDA driver library (libcuda.so) for
 * gpusnoop's tests on machines without a GPU: exports the driver's memory
 * and launch entry points by their real names and calling conventions,
 * backed by host memory (a launch does nothing).  Only what gpusnoop
 * probes; not a CUDA emulation.  Also linked, hidden, into
 * libtorch_cuda-fake.so (a runtime linked statically into another library).
 *
 * Contexts: FAKE_NDEV devices, each with one primary context (a CUcontext
 * is a pointer into fake_ctx[]); each thread has a current context (none
 * at first) and a stack of pushed ones, as the driver does.
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
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuCtxGetCurrent(void **ctx);
int cuCtxPushCurrent_v2(void *ctx);
int cuCtxPopCurrent_v2(void **ctx);
int cuCtxGetDevice(int *dev);

#define FAKE_NDEV 8
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_DEVICE 101
static char fake_ctx[FAKE_NDEV];
#define FAKE_STACK 8
static __thread void *ctx_stack[FAKE_STACK]; /* [depth - 1] is the current one */
static __thread int ctx_depth;

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

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	if (dev < 0 || dev >= FAKE_NDEV)
		return CUDA_ERROR_INVALID_DEVICE;
	*ctx = &fake_ctx[dev];
	return 0;
}

static int valid_ctx(const void *ctx)
{
	return ctx >= (void *)fake_ctx && ctx < (void *)(fake_ctx + FAKE_NDEV);
}

/* replaces the top of the thread's stack (or pushes one on an empty stack) */
int cuCtxSetCurrent(void *ctx)
{
	if (ctx && !valid_ctx(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_depth)
		ctx_depth = 1;
	ctx_stack[ctx_depth - 1] = ctx;
	return 0;
}

int cuCtxGetCurrent(void **ctx)
{
	*ctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
	return 0;
}

int cuCtxPushCurrent_v2(void *ctx)
{
	if (!valid_ctx(ctx) || ctx_depth == FAKE_STACK)
		return CUDA_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = ctx;
	return 0;
}

int cuCtxPopCurrent_v2(void **ctx)
{
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	void *c = ctx_stack[--ctx_depth];
	if (ctx)
		*ctx = c;
	return 0;
}

int cuCtxGetDevice(int *dev)
{
	void *c = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = (int)((char *)c - fake_ctx);
	return 0;
}
