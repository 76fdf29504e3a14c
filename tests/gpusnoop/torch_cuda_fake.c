/*
 * torch_cuda_fake.c - with fake_cudart.c and fake_cuda.c compiled in
 * hidden (-fvisibility=hidden), libtorch_cuda-fake.so: a library with a CUDA
 * runtime and driver linked in statically, their functions in .symtab only
 * (as local symbols), none exported - as in a libtorch_cuda.so built with a
 * static cudart.  Its one export, torchfake_step(), allocates through them
 * and leaks from static_leak():
 *   memory: 8192 bytes in 2 allocations via cudaMalloc (100 bytes freed).
 * libtorch_cuda-fake-stripped.so is the same file without .symtab.
 */
#include <stddef.h>

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);

#define EXPORT __attribute__((visibility("default")))
#define NOINLINE __attribute__((noinline))
static volatile int sink;

NOINLINE static void static_leak(void)
{
	void *p;
	for (int i = 0; i < 2; i++)
		cudaMalloc(&p, 4096);
	cudaMalloc(&p, 100);
	cudaFree(p);
	sink++;
}

EXPORT void torchfake_step(void);
void torchfake_step(void)
{
	static_leak();
	sink++;
}
