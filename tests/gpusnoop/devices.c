/*
 * devices.c - the program gpusnoop's per-device timeline test watches
 * (tests/integration/gpusnoop_devices.sh): waits for a line on stdin (sent
 * once the probes are attached), then allocates on several devices of the
 * stand-in runtime (cudaSetDevice, cudaGetDevice, the driver's contexts)
 * and leaks known amounts; then exits.  Nothing is freed but what is said.
 *
 * Never freed, by the device gpusnoop must attribute it to:
 *   unknown  1000 (cudaMalloc, the thread's device never seen), 7000
 *            (cuMemAlloc_v2 after cuCtxSetCurrent), 9000 (after
 *            cuCtxPushCurrent_v2), 10000 (after cuCtxPopCurrent_v2),
 *            13000 (cudaMallocManaged), 15000 (cuMemCreate, no location)
 *            = 55000
 *   host     12000 (cudaMallocHost) + 14000 (cuMemCreate on a host
 *            location) = 26000
 *   0        20000 + 21000 (a thread whose cudaGetDevice said 0; its
 *            first cudaMalloc switches context inside) = 41000
 *   1        16777216 (cudaMalloc) + 2097152 (cudaMallocAsync) = 18874368
 *   2        4194304 + 5000 (cuMemAlloc_v2) + 6000 (after a failed
 *            cudaSetDevice(99)) = 4205304
 *   3        8000 (after cuCtxGetDevice) + 11000 (after cudaGetDevice) = 19000
 *   5        2097152 (cuMemCreate on device 5's location: handles)
 *   6        23000 (a thread that set device 6; 22000 freed)
 * memory 23214672 bytes, handles 2126152.  Allocations of at least 2 MiB,
 * in order: 16777216, 3145728 (freed), 2097152 (async), 4194304, 2097152
 * (cuMemCreate).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "watched.h"

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
int cudaMallocAsync(void **p, size_t size, void *stream);
int cudaMallocManaged(void **p, size_t size, unsigned flags);
int cudaMallocHost(void **p, size_t size);
int cudaSetDevice(int dev);
int cudaGetDevice(int *dev);
int cuMemAlloc_v2(uint64_t *dptr, size_t size);
int cuMemCreate(uint64_t *handle, size_t size, const void *prop, unsigned long long flags);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuCtxPushCurrent_v2(void *ctx);
int cuCtxPopCurrent_v2(void **ctx);
int cuCtxGetDevice(int *dev);

/* CUmemAllocationProp's head, as the driver's header lays it out */
struct mem_prop {
	int type, handle_types;
	struct {
		int type, id;
	} location;
	void *win32;
	unsigned char flags[8];
};
#define LOC_DEVICE 1
#define LOC_HOST 2

#define check(r, what) check_as("devices", r, what)

static void *dmalloc(size_t n)
{
	void *p;
	check(cudaMalloc(&p, n), "cudaMalloc");
	return p;
}

static void drv_alloc(size_t n)
{
	uint64_t d;
	check(cuMemAlloc_v2(&d, n), "cuMemAlloc_v2");
}

static void *thread_dev0(void *arg)
{
	(void)arg;
	int d = -1;
	check(cudaGetDevice(&d), "cudaGetDevice");
	if (d != 0)
		exit(1);
	dmalloc(20000);
	dmalloc(21000);
	return NULL;
}

static void *thread_dev6(void *arg)
{
	(void)arg;
	check(cudaSetDevice(6), "cudaSetDevice");
	check(cudaFree(dmalloc(22000)), "cudaFree");
	dmalloc(23000);
	return NULL;
}

int main(void)
{
	if (!ready_then_wait())
		return 1;
	void *p, *ctx;
	uint64_t h;
	int d;

	dmalloc(1000); /* no device call seen on this thread */

	check(cudaSetDevice(1), "cudaSetDevice");
	dmalloc(16777216);
	check(cudaFree(dmalloc(3145728)), "cudaFree");
	check(cudaMallocAsync(&p, 2097152, NULL), "cudaMallocAsync");

	check(cudaSetDevice(2), "cudaSetDevice");
	dmalloc(4194304);
	drv_alloc(5000);
	if (cudaSetDevice(99) == 0) /* no such device: still on 2 */
		return 1;
	dmalloc(6000);

	check(cuDevicePrimaryCtxRetain(&ctx, 3), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	drv_alloc(7000);
	check(cuCtxGetDevice(&d), "cuCtxGetDevice");
	drv_alloc(8000);
	check(cuDevicePrimaryCtxRetain(&ctx, 4), "cuDevicePrimaryCtxRetain");
	check(cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent_v2");
	drv_alloc(9000);
	check(cuCtxPopCurrent_v2(NULL), "cuCtxPopCurrent_v2");
	drv_alloc(10000);
	check(cudaGetDevice(&d), "cudaGetDevice");
	if (d != 3)
		return 1;
	dmalloc(11000);

	check(cudaMallocHost(&p, 12000), "cudaMallocHost");
	check(cudaMallocManaged(&p, 13000, 1), "cudaMallocManaged");
	struct mem_prop on_dev = {.location = {LOC_DEVICE, 5}}, on_host = {.location = {LOC_HOST, 0}};
	check(cuMemCreate(&h, 2097152, &on_dev, 0), "cuMemCreate");
	check(cuMemCreate(&h, 14000, &on_host, 0), "cuMemCreate");
	check(cuMemCreate(&h, 15000, NULL, 0), "cuMemCreate");

	pthread_t t[2];
	pthread_create(&t[0], NULL, thread_dev0, NULL);
	pthread_create(&t[1], NULL, thread_dev6, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
