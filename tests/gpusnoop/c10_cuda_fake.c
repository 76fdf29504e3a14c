/*
 * c10_cuda_fake.c - libc10_cuda-fake.so, a stand-in for PyTorch's caching
 * allocator (c10/cuda/CUDACachingAllocator.cpp) for gpusnoop --torch tests:
 * the C++ entry points by their mangled names and calling conventions
 * (this: argument 0; allocate returns its DataPtr through a hidden pointer,
 * which C does for a struct this size too), over the stand-in runtime.
 * Like the real one it keeps a segment obtained with cudaMalloc and carves
 * blocks out of it, never giving the segment back (a cache); with
 * PYTORCH_NO_CUDA_MEMORY_CACHING set, allocate calls cudaMalloc per block
 * and the DataPtr's deleter is uncached_delete (a static function: in
 * .symtab only) calling cudaFree; raw_alloc caches either way.  Also
 * c10::cuda::device_synchronize() (c10/cuda/CUDAFunctions.cpp, what
 * torch.cuda.synchronize() calls): a C++ frame in a sync stack.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static volatile int sync_sink;

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
int cudaDeviceSynchronize(void);
void _ZN3c104cuda18device_synchronizeEv(void);

void _ZN3c104cuda18device_synchronizeEv(void)
{
	if (cudaDeviceSynchronize() != 0)
		abort();
	sync_sink++; /* not a tail call: this frame stays on the stack */
}

struct data_ptr {
	void *data;
	void *ctx;
	void (*deleter)(void *);
	long device;
};

/* c10::cuda::CUDACachingAllocator::Native::allocator, the one instance */
struct native_allocator {
	char *segment;
	size_t used;
	struct {
		void *p;
		size_t size;
		int live;
	} blocks[64];
	int nblocks;
} _ZN3c104cuda20CUDACachingAllocator6Native9allocatorE;
#define ALLOC _ZN3c104cuda20CUDACachingAllocator6Native9allocatorE

#define SEGMENT (2u << 20)
#define NCA(x) _ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator##x

void NCA(6mallocEPPvamP11CUstream_st)(struct native_allocator *self, void **out, signed char device, size_t size,
				      void *stream);
struct data_ptr NCA(8allocateEm)(struct native_allocator *self, size_t size);
void *NCA(9raw_allocEm)(struct native_allocator *self, size_t size);
void NCA(10raw_deleteEPv)(struct native_allocator *self, void *p);
/* the tensor deleter: exported, or (FAKE_STATIC_DELETER) static as in newer
 * PyTorch builds, where the compiler mangles it with an L (internal linkage)
 * and only .symtab has it */
#ifdef FAKE_STATIC_DELETER
#define LOCAL_RAW_DELETE _ZN3c104cuda20CUDACachingAllocator6NativeL16local_raw_deleteEPv
static
#else
#define LOCAL_RAW_DELETE _ZN3c104cuda20CUDACachingAllocator6Native16local_raw_deleteEPv
#endif
void LOCAL_RAW_DELETE(void *p);

/* a free block that fits, else a new one from the segment (512-byte rounded) */
void NCA(6mallocEPPvamP11CUstream_st)(struct native_allocator *self, void **out, signed char device, size_t size,
				      void *stream)
{
	(void)device, (void)stream;
	size = (size + 511) & ~(size_t)511;
	for (int i = 0; i < self->nblocks; i++)
		if (!self->blocks[i].live && self->blocks[i].size >= size) {
			self->blocks[i].live = 1;
			*out = self->blocks[i].p;
			return;
		}
	if (!self->segment && cudaMalloc((void **)&self->segment, SEGMENT) != 0)
		abort();
	if (self->used + size > SEGMENT || self->nblocks == 64)
		abort(); /* the tests stay far below */
	self->blocks[self->nblocks].p = self->segment + self->used;
	self->blocks[self->nblocks].size = size;
	self->blocks[self->nblocks++].live = 1;
	self->used += size;
	*out = self->segment + self->used - size;
}

static void block_free(struct native_allocator *self, void *p)
{
	for (int i = 0; i < self->nblocks; i++)
		if (self->blocks[i].p == p)
			self->blocks[i].live = 0;
}

#ifdef FAKE_STATIC_DELETER
static
#endif
void LOCAL_RAW_DELETE(void *p)
{
	block_free(&ALLOC, p);
}

static void _ZN3c104cuda20CUDACachingAllocator6NativeL15uncached_deleteEPv(void *p)
{
	cudaFree(p);
}

struct data_ptr NCA(8allocateEm)(struct native_allocator *self, size_t size)
{
	struct data_ptr d = {0};
	if (getenv("PYTORCH_NO_CUDA_MEMORY_CACHING")) {
		if (cudaMalloc(&d.data, size) != 0)
			abort();
		d.deleter = _ZN3c104cuda20CUDACachingAllocator6NativeL15uncached_deleteEPv;
	} else {
		NCA(6mallocEPPvamP11CUstream_st)(self, &d.data, 0, size, NULL);
		d.deleter = LOCAL_RAW_DELETE;
	}
	d.ctx = d.data;
	return d;
}

void *NCA(9raw_allocEm)(struct native_allocator *self, size_t size)
{
	void *p = NULL;
	NCA(6mallocEPPvamP11CUstream_st)(self, &p, 0, size, NULL);
	return p;
}

void NCA(10raw_deleteEPv)(struct native_allocator *self, void *p)
{
	block_free(self, p);
}
