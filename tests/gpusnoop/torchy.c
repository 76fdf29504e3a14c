/*
 * torchy.c - build/gpusnoop-torchy, the program the --torch and static-
 * runtime tests watch.  Loads a library with dlopen (so the test picks the
 * file), prints "ready", waits for a line on stdin (the probes are
 * attached), runs, exits.
 *
 *   gpusnoop-torchy static LIB   calls LIB's torchfake_step()
 *                                (libtorch_cuda-fake.so, torch_cuda_fake.c)
 *   gpusnoop-torchy torch LIB    uses LIB as PyTorch's caching allocator
 *                                (libc10_cuda-fake.so, c10_cuda_fake.c) the
 *                                way PyTorch does, by its C++ symbols:
 *     leak_tensors   allocate 3 x 1000, one freed by its DataPtr's deleter
 *     workspace      raw_alloc 5000, raw_delete
 *     synchronize    c10::cuda::device_synchronize() twice (a C++ frame in
 *                    the sync stack: cudaDeviceSynchronize inside it)
 *   never freed (torch): 2000 bytes in 2 allocations, from leak_tensors.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
static volatile int sink;

/* c10::DataPtr as returned by value: the device pointer first (the C ABI
 * returns a struct this size through a hidden pointer, as C++ does) */
struct data_ptr {
	void *data;
	void *ctx;
	void (*deleter)(void *);
	long device;
};
#define C10N "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator"
typedef struct data_ptr (*allocate_fn)(void *self, size_t n);
typedef void *(*raw_alloc_fn)(void *self, size_t n);
typedef void (*raw_delete_fn)(void *self, void *p);

static void *lib;
static void *sym(const char *name)
{
	void *f = dlsym(lib, name);
	if (!f) {
		fprintf(stderr, "torchy: %s\n", dlerror());
		exit(1);
	}
	return f;
}

NOINLINE static void leak_tensors(void *allocator)
{
	allocate_fn allocate = (allocate_fn)sym(C10N "8allocateEm");
	struct data_ptr t[3];
	for (int i = 0; i < 3; i++)
		t[i] = allocate(allocator, 1000);
	t[1].deleter(t[1].data); /* a tensor's storage going away */
	sink++;
}

NOINLINE static void workspace(void *allocator)
{
	void *w = ((raw_alloc_fn)sym(C10N "9raw_allocEm"))(allocator, 5000);
	((raw_delete_fn)sym(C10N "10raw_deleteEPv"))(allocator, w);
	sink++;
}

NOINLINE static void synchronize(void)
{
	void (*device_synchronize)(void) = (void (*)(void))sym("_ZN3c104cuda18device_synchronizeEv");
	for (int i = 0; i < 2; i++)
		device_synchronize();
	sink++;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "static") != 0 && strcmp(argv[1], "torch") != 0)) {
		fprintf(stderr, "usage: gpusnoop-torchy static|torch LIB\n");
		return 2;
	}
	lib = dlopen(argv[2], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "torchy: %s\n", dlerror());
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (strcmp(argv[1], "static") == 0) {
		((void (*)(void))sym("torchfake_step"))();
	} else {
		void *allocator = sym("_ZN3c104cuda20CUDACachingAllocator6Native9allocatorE");
		leak_tensors(allocator);
		workspace(allocator);
		synchronize();
	}
	sink++;
	return 0;
}
