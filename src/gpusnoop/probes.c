/*
 * probes.c - see probes.h.  The table is the one place that knows each
 * probed function's calling convention: which argument holds the
 * out-pointer or the pointer freed, which the size, whether 0 means
 * success.  C++ methods take `this` as argument 0; a method returning a
 * C++ object by value (PyTorch's DataPtr) writes it through a hidden
 * pointer in argument 0 and `this` moves to argument 1.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpusnoop/elfsym.h"
#include "gpusnoop/probes.h"

#define CHECK COOKIE_CHECK_RC
#ifdef __x86_64__
#define LAUNCH_RET false
#else
#define LAUNCH_RET true
#endif
#define RET COOKIE_RET
/* c10::cuda::CUDACachingAllocator::Native:: */
#define C10N "_ZN3c104cuda20CUDACachingAllocator6Native"
#define C10NK "_ZNK3c104cuda20CUDACachingAllocator6Native"
#define NCA "22NativeCachingAllocator"

const struct probe_def probe_defs[FN_COUNT] = {
	/* cudaMalloc(void **p, size_t n): result through arg 0 */
	{FN_CUDA_MALLOC, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CUDA_MALLOC, SPACE_PTR, 0, 1, CHECK), "cudaMalloc", {"cudaMalloc"}},
	{FN_CUDA_FREE, GROUP_MEM, PROG_FREE, false, COOKIE(FN_CUDA_FREE, SPACE_PTR, 0, 0, 0), "cudaFree", {"cudaFree"}},
	{FN_CUDA_MALLOC_ASYNC, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CUDA_MALLOC_ASYNC, SPACE_PTR, 0, 1, CHECK), "cudaMallocAsync", {"cudaMallocAsync"}},
	{FN_CUDA_FREE_ASYNC, GROUP_MEM, PROG_FREE, false, COOKIE(FN_CUDA_FREE_ASYNC, SPACE_PTR, 0, 0, 0), "cudaFreeAsync", {"cudaFreeAsync"}},
	{FN_CUDA_MALLOC_MANAGED, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CUDA_MALLOC_MANAGED, SPACE_PTR, 0, 1, CHECK | DEVSRC_NONE), "cudaMallocManaged", {"cudaMallocManaged"}},
	{FN_CUDA_MALLOC_HOST, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CUDA_MALLOC_HOST, SPACE_PTR, 0, 1, CHECK | DEVSRC_HOST), "cudaMallocHost", {"cudaMallocHost"}},
	{FN_CUDA_FREE_HOST, GROUP_MEM, PROG_FREE, false, COOKIE(FN_CUDA_FREE_HOST, SPACE_PTR, 0, 0, 0), "cudaFreeHost", {"cudaFreeHost"}},
	{FN_CU_MEM_ALLOC, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CU_MEM_ALLOC, SPACE_PTR, 0, 1, CHECK), "cuMemAlloc_v2", {"cuMemAlloc_v2"}},
	{FN_CU_MEM_FREE, GROUP_MEM, PROG_FREE, false, COOKIE(FN_CU_MEM_FREE, SPACE_PTR, 0, 0, 0), "cuMemFree_v2", {"cuMemFree_v2"}},
	/* cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop, ...) */
	{FN_CU_MEM_CREATE, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CU_MEM_CREATE, SPACE_HANDLE, 0, 1, CHECK | DEVSRC_PROP), "cuMemCreate", {"cuMemCreate"}},
	{FN_CU_MEM_RELEASE, GROUP_MEM, PROG_FREE, false, COOKIE(FN_CU_MEM_RELEASE, SPACE_HANDLE, 0, 0, 0), "cuMemRelease", {"cuMemRelease"}},
	/* cuMemMap(CUdeviceptr p, size_t n, ...): the address is arg 0 itself */
	{FN_CU_MEM_MAP, GROUP_MEM, PROG_ALLOC, true, COOKIE(FN_CU_MEM_MAP, SPACE_MAP, 0, 1, CHECK | COOKIE_DIRECT | DEVSRC_NONE), "cuMemMap", {"cuMemMap"}},
	{FN_CU_MEM_UNMAP, GROUP_MEM, PROG_FREE, false, COOKIE(FN_CU_MEM_UNMAP, SPACE_MAP, 0, 0, 0), "cuMemUnmap", {"cuMemUnmap"}},

	/* the runtime's launch calls the driver's: on x86 the BPF program tells
	 * whether a driver launch is inside it by its return address, still
	 * in its slot while it runs; elsewhere a return probe marks its end */
	{FN_CUDA_LAUNCH_KERNEL, GROUP_LAUNCH, PROG_LAUNCH, LAUNCH_RET, COOKIE(FN_CUDA_LAUNCH_KERNEL, 0, 0, 0, COOKIE_OUTER), "cudaLaunchKernel", {"cudaLaunchKernel"}},
	{FN_CU_LAUNCH_KERNEL, GROUP_LAUNCH, PROG_LAUNCH, false, COOKIE(FN_CU_LAUNCH_KERNEL, 0, 0, 0, 0), "cuLaunchKernel", {"cuLaunchKernel"}},
	{FN_CU_LAUNCH_KERNEL_EX, GROUP_LAUNCH, PROG_LAUNCH, false, COOKIE(FN_CU_LAUNCH_KERNEL_EX, 0, 0, 0, 0), "cuLaunchKernelEx", {"cuLaunchKernelEx"}},
	{FN_CUDA_GRAPH_LAUNCH, GROUP_LAUNCH, PROG_LAUNCH, false, COOKIE(FN_CUDA_GRAPH_LAUNCH, 0, 0, 0, 0), "cudaGraphLaunch", {"cudaGraphLaunch"}},

	{FN_CUDA_DEVICE_SYNCHRONIZE, GROUP_SYNC, PROG_SYNC, true, COOKIE(FN_CUDA_DEVICE_SYNCHRONIZE, 0, 0, 0, 0), "cudaDeviceSynchronize", {"cudaDeviceSynchronize"}},
	{FN_CUDA_STREAM_SYNCHRONIZE, GROUP_SYNC, PROG_SYNC, true, COOKIE(FN_CUDA_STREAM_SYNCHRONIZE, 0, 0, 0, 0), "cudaStreamSynchronize", {"cudaStreamSynchronize"}},
	{FN_CUDA_EVENT_SYNCHRONIZE, GROUP_SYNC, PROG_SYNC, true, COOKIE(FN_CUDA_EVENT_SYNCHRONIZE, 0, 0, 0, 0), "cudaEventSynchronize", {"cudaEventSynchronize"}},

	/*
	 * PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp,
	 * PyTorch 2.x): every tensor's storage comes from
	 * NativeCachingAllocator::allocate(size_t) -> DataPtr (returned through
	 * a hidden pointer: arg 0; this: arg 1; size: arg 2; the DataPtr's
	 * first member is the device pointer) and goes back through
	 * local_raw_delete(void*), its deleter; cuBLAS/cuDNN workspaces through
	 * raw_alloc(size_t) -> void* and raw_delete(void*).  malloc(void**,
	 * device, size, stream) is what those call (nested: counted once);
	 * const allocate and an int device are the 2.0-2.2 signatures.  With
	 * PYTORCH_NO_CUDA_MEMORY_CACHING the deleter is uncached_delete, a
	 * static function: only in an unstripped .symtab.  So is
	 * local_raw_delete in newer builds (PyTorch 2.11's wheel: static,
	 * mangled with an L for internal linkage; the exported name found
	 * nothing on a real H200 run, and every tensor looked never freed).
	 */
	{FN_TORCH_ALLOCATE, GROUP_TORCH, PROG_ALLOC, true, COOKIE(FN_TORCH_ALLOCATE, SPACE_TORCH, 0, 2, COOKIE_TORCH | DEVSRC_NONE),
	 "NativeCachingAllocator::allocate", {C10N NCA "8allocateEm", C10NK NCA "8allocateEm"}},
	{FN_TORCH_MALLOC, GROUP_TORCH, PROG_ALLOC, true, COOKIE(FN_TORCH_MALLOC, SPACE_TORCH, 1, 3, COOKIE_TORCH | DEVSRC_NONE),
	 "NativeCachingAllocator::malloc", {C10N NCA "6mallocEPPvamP11CUstream_st", C10N NCA "6mallocEPPvimP11CUstream_st"}},
	{FN_TORCH_RAW_ALLOC, GROUP_TORCH, PROG_ALLOC, true, COOKIE(FN_TORCH_RAW_ALLOC, SPACE_TORCH, RET, 1, COOKIE_TORCH | DEVSRC_NONE),
	 "NativeCachingAllocator::raw_alloc", {C10N NCA "9raw_allocEm"}},
	{FN_TORCH_LOCAL_RAW_DELETE, GROUP_TORCH, PROG_FREE, false, COOKIE(FN_TORCH_LOCAL_RAW_DELETE, SPACE_TORCH, 0, 0, 0),
	 "local_raw_delete", {C10N "16local_raw_deleteEPv", C10N "L16local_raw_deleteEPv"}},
	{FN_TORCH_RAW_DELETE, GROUP_TORCH, PROG_FREE, false, COOKIE(FN_TORCH_RAW_DELETE, SPACE_TORCH, 1, 0, 0),
	 "NativeCachingAllocator::raw_delete", {C10N NCA "10raw_deleteEPv"}},
	{FN_TORCH_UNCACHED_DELETE, GROUP_TORCH, PROG_FREE, false, COOKIE(FN_TORCH_UNCACHED_DELETE, SPACE_TORCH, 0, 0, 0),
	 "uncached_delete", {C10N "L15uncached_deleteEPv", C10N "15uncached_deleteEPv"}},

	/*
	 * The thread's current device (--trace's per-device bytes).  The
	 * runtime's device is per host thread: cudaSetDevice(int) sets it,
	 * cudaGetDevice(int *) and the driver's cuCtxGetDevice(CUdevice *)
	 * tell it.  A driver context switch makes it unknown until one of
	 * those is seen again (the context's device is not known here).
	 */
	{FN_CUDA_SET_DEVICE, GROUP_DEVICE, PROG_DEV, true, COOKIE(FN_CUDA_SET_DEVICE, 0, 0, 0, COOKIE_DIRECT), "cudaSetDevice", {"cudaSetDevice"}},
	{FN_CUDA_GET_DEVICE, GROUP_DEVICE, PROG_DEV, true, COOKIE(FN_CUDA_GET_DEVICE, 0, 0, 0, 0), "cudaGetDevice", {"cudaGetDevice"}},
	{FN_CU_CTX_GET_DEVICE, GROUP_DEVICE, PROG_DEV, true, COOKIE(FN_CU_CTX_GET_DEVICE, 0, 0, 0, 0), "cuCtxGetDevice", {"cuCtxGetDevice"}},
	{FN_CU_CTX_SET_CURRENT, GROUP_DEVICE, PROG_DEV, false, COOKIE(FN_CU_CTX_SET_CURRENT, 0, 0, 0, COOKIE_FORGET), "cuCtxSetCurrent", {"cuCtxSetCurrent"}},
	{FN_CU_CTX_PUSH_CURRENT, GROUP_DEVICE, PROG_DEV, false, COOKIE(FN_CU_CTX_PUSH_CURRENT, 0, 0, 0, COOKIE_FORGET), "cuCtxPushCurrent_v2", {"cuCtxPushCurrent_v2"}},
	{FN_CU_CTX_POP_CURRENT, GROUP_DEVICE, PROG_DEV, false, COOKIE(FN_CU_CTX_POP_CURRENT, 0, 0, 0, COOKIE_FORGET), "cuCtxPopCurrent_v2", {"cuCtxPopCurrent_v2"}},
};

const char *snoop_fn_name(uint32_t fn)
{
	return fn < FN_COUNT ? probe_defs[fn].name : "?";
}

const char *snoop_space_name(uint32_t space)
{
	static const char *const n[SPACE_COUNT] = {"memory", "handles", "mapped", "torch"};
	return space < SPACE_COUNT ? n[space] : "?";
}

unsigned probe_spaces(unsigned groups)
{
	unsigned s = 0;
	for (uint32_t k = 0; k < FN_COUNT; k++)
		if ((probe_defs[k].group & groups) && (probe_defs[k].prog == PROG_ALLOC || probe_defs[k].prog == PROG_FREE))
			s |= 1u << COOKIE_SPACE(probe_defs[k].cookie);
	return s;
}

bool probe_parse_events(const char *spec, unsigned *groups, struct buf *err)
{
	static const struct {
		const char *word;
		unsigned group;
	} words[] = {{"mem", GROUP_MEM}, {"launch", GROUP_LAUNCH}, {"sync", GROUP_SYNC}};
	*groups = 0;
	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");
		unsigned g = 0;
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i].word) == n && memcmp(p, words[i].word, n) == 0)
				g = words[i].group;
		if (!g) {
			buf_printf(err, "--events: unknown event '%.*s' (expected mem, launch, sync)", (int)n, p);
			return false;
		}
		*groups |= g;
		p += n + (p[n] == ',');
	}
	if (!*groups) {
		buf_puts(err, "--events: empty (expected some of mem, launch, sync)");
		return false;
	}
	return true;
}

void probe_set_add(struct probe_set *s, const char *path, bool named)
{
	struct stat st = {0};
	bool known = stat(path, &st) == 0;
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->f[i].path, path) == 0 || (known && s->f[i].dev == st.st_dev && s->f[i].ino == st.st_ino)) {
			s->f[i].named |= named;
			return;
		}
	s->f = xrealloc(s->f, (size_t)(s->n + 1) * sizeof(*s->f));
	struct probe_file *f = &s->f[s->n];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	/* unknown (unstatable) files never match another by inode */
	f->dev = known ? st.st_dev : (dev_t)-1;
	f->ino = known ? st.st_ino : (ino_t)-1 - (ino_t)s->n;
	f->named = named;
	s->n++;
}

int probe_set_add_maps(struct probe_set *s, pid_t pid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	FILE *m = fopen(p, "re");
	if (!m)
		return -1;
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof(line), m)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		path[strcspn(path, "\n")] = 0;
		if (strstr(path, " (deleted)"))
			continue; /* replaced on disk: its symbols no longer describe the mapping */
		char full[PATH_MAX + 64];
		snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);
		probe_set_add(s, full, false);
	}
	fclose(m);
	return 0;
}

/* a file named like a CUDA or PyTorch library */
static bool cuda_like(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	char low[256];
	size_t i = 0;
	for (; b[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)b[i]);
	low[i] = 0;
	return strstr(low, "cuda") || strstr(low, "torch");
}

int probe_set_find(struct probe_set *s, unsigned groups, struct buf *skipped, struct buf *err)
{
	/* every name of the chosen groups, flattened; owner: its function */
	const char *names[FN_COUNT * PROBE_MAX_NAMES];
	uint32_t owner[FN_COUNT * PROBE_MAX_NAMES];
	size_t nn = 0;
	for (uint32_t k = 0; k < FN_COUNT; k++)
		if (probe_defs[k].group & groups)
			for (int a = 0; probe_defs[k].syms[a]; a++)
				names[nn] = probe_defs[k].syms[a], owner[nn++] = k;
	uint64_t offs[FN_COUNT * PROBE_MAX_NAMES];
	bool seen[FN_COUNT] = {0}, dropped[FN_COUNT] = {0};
	s->nfound = s->nfiles = 0;
	s->found_groups = 0;
	s->nstripped = 0;
	for (int i = 0; i < s->n; i++) {
		struct probe_file *f = &s->f[i];
		struct buf e = BUF_INIT;
		int r = elfsym_find_file(f->path, names, nn, offs, &f->elf_flags, &e);
		if (r < 0) {
			if (f->named) {
				buf_printf(err, "%s", e.data);
				buf_free(&e);
				return -1;
			}
			if (skipped)
				buf_printf(skipped, "gpusnoop: skipping %s\n", e.data);
			buf_free(&e);
			continue;
		}
		buf_free(&e);
		/* the first alternative found of each function */
		for (size_t j = 0; j < nn; j++)
			if (offs[j] && !f->off[owner[j]]) {
				f->off[owner[j]] = offs[j];
				f->nfound++;
				seen[owner[j]] = true;
				s->found_groups |= probe_defs[owner[j]].group;
			}
		s->nfound += f->nfound;
		s->nfiles += f->nfound > 0;
		if (f->nfound == 0 && f->named)
			buf_printf(&s->warnings, "gpusnoop: warning: %s holds none of the probed functions\n", f->path);
		else if (f->nfound == 0 && !(f->elf_flags & (ELFSYM_SYMTAB | ELFSYM_IMPORTS)) && cuda_like(f->path) &&
			 ++s->nstripped)
			buf_printf(&s->warnings,
				   "gpusnoop: warning: %s is stripped (no .symtab) and exports none of the probed functions:"
				   " a CUDA runtime linked into it cannot be found without its symbols\n",
				   f->path);
	}
	/* NativeCachingAllocator::malloc is what allocate and raw_alloc call
	 * (in PyTorch, nothing else): with both probed, its calls are all
	 * nested ones, counted once as the outer call and recorded nowhere,
	 * two traps per tensor for nothing; not probed then. */
	if ((groups & GROUP_TORCH) && seen[FN_TORCH_MALLOC] && seen[FN_TORCH_ALLOCATE] && seen[FN_TORCH_RAW_ALLOC] &&
	    seen[FN_TORCH_LOCAL_RAW_DELETE]) {
		for (int i = 0; i < s->n; i++) {
			struct probe_file *f = &s->f[i];
			if (!f->off[FN_TORCH_MALLOC])
				continue;
			f->off[FN_TORCH_MALLOC] = 0;
			f->nfound--;
			s->nfound--;
			if (f->nfound == 0)
				s->nfiles--;
		}
		seen[FN_TORCH_MALLOC] = false;
		dropped[FN_TORCH_MALLOC] = true;
	}
	/* Tensors go back through local_raw_delete alone.  Without it (a
	 * stripped build where it is static) every tensor block would look
	 * never freed, so the tensor path (allocate, and malloc nested in it)
	 * is not probed either; raw_alloc/raw_delete pair by themselves and
	 * stay, and the CUDA calls under the cache are watched as ever. */
	if ((groups & GROUP_TORCH) && !seen[FN_TORCH_LOCAL_RAW_DELETE] &&
	    (seen[FN_TORCH_ALLOCATE] || seen[FN_TORCH_MALLOC])) {
		static const uint32_t drop[] = {FN_TORCH_ALLOCATE, FN_TORCH_MALLOC};
		for (int i = 0; i < s->n; i++) {
			struct probe_file *f = &s->f[i];
			int had = f->nfound;
			for (size_t d = 0; d < sizeof drop / sizeof drop[0]; d++)
				if (f->off[drop[d]]) {
					f->off[drop[d]] = 0;
					f->nfound--;
					s->nfound--;
				}
			if (had > 0 && f->nfound == 0)
				s->nfiles--;
		}
		seen[FN_TORCH_ALLOCATE] = seen[FN_TORCH_MALLOC] = false;
		dropped[FN_TORCH_ALLOCATE] = dropped[FN_TORCH_MALLOC] = true;
		buf_printf(&s->warnings,
			   "gpusnoop: warning: --torch: PyTorch's tensor deleter (local_raw_delete) is in no mapped file (static"
			   " in newer builds, and this one has no .symtab): tensor blocks would all look never freed, so"
			   " NativeCachingAllocator::allocate and ::malloc are not probed; raw_alloc/raw_delete and the CUDA"
			   " calls under the cache are\n");
		s->found_groups &= ~(unsigned)GROUP_TORCH;
		for (uint32_t k = 0; k < FN_COUNT; k++)
			if (seen[k] && probe_defs[k].group == GROUP_TORCH)
				s->found_groups |= GROUP_TORCH;
	}
	/* a group asked for but not (wholly) found: say what is missing */
	static const struct {
		unsigned group;
		const char *what;
	} gname[] = {{GROUP_LAUNCH, "--events launch"}, {GROUP_SYNC, "--events sync"}, {GROUP_TORCH, "--torch"}};
	for (size_t g = 0; g < sizeof(gname) / sizeof(gname[0]); g++) {
		if (!(groups & gname[g].group))
			continue;
		struct buf miss = BUF_INIT;
		for (uint32_t k = 0; k < FN_COUNT; k++)
			if (probe_defs[k].group == gname[g].group && !seen[k] && !dropped[k])
				buf_printf(&miss, "%s%s", miss.len ? ", " : "", probe_defs[k].name);
		if (miss.len && !(s->found_groups & gname[g].group))
			buf_printf(&s->warnings, "gpusnoop: warning: %s: none of its functions found in any mapped file (%s)\n",
				   gname[g].what, miss.data);
		else if (miss.len)
			buf_printf(&s->warnings, "gpusnoop: %s: not found in any mapped file, not probed: %s\n", gname[g].what,
				   miss.data);
		buf_free(&miss);
	}
	return s->nfound;
}

size_t probe_entry_skip(const uint8_t *c, size_t n)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	return n >= sizeof endbr64 + 1 && memcmp(c, endbr64, sizeof endbr64) == 0 ? sizeof endbr64 : 0;
}

/* What arch/x86/kernel/uprobes.c emulates (branch_setup_xol_ops,
 * push_setup_xol_ops): jmp rel8/rel32, call rel32, jcc rel8/rel32, nop,
 * push of a register (with a REX.B prefix for r8-r15).  Anything else is
 * single-stepped. */
enum probe_insn probe_insn_class(const uint8_t *c, size_t n, char *what, size_t what_size)
{
	const char *w = NULL;
	if (n >= 1 && c[0] >= 0x50 && c[0] <= 0x57)
		w = "push";
	else if (n >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
		w = "push";
	else if (n >= 1 && (c[0] == 0xe9 || c[0] == 0xeb))
		w = "jmp";
	else if (n >= 1 && c[0] == 0xe8)
		w = "call";
	else if ((n >= 1 && c[0] >= 0x70 && c[0] <= 0x7f) || (n >= 2 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f))
		w = "jcc";
	else if (n >= 1 && c[0] == 0x90)
		w = "nop";
	if (w) {
		snprintf(what, what_size, "%s", w);
		return INSN_EMULATED;
	}
	if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		snprintf(what, what_size, "endbr64");
	else if (n >= 1)
		snprintf(what, what_size, "opcode %02x%s%02x", c[0], n >= 2 ? " " : "", n >= 2 ? c[1] : 0);
	else
		snprintf(what, what_size, "?");
	return INSN_STEPPED;
}

void probe_set_place(struct probe_set *s, bool at_entry)
{
	s->nstepped = 0;
#ifdef __x86_64__
	for (int i = 0; i < s->n; i++) {
		struct probe_file *f = &s->f[i];
		if (f->nfound == 0)
			continue;
		int fd = open(f->path, O_RDONLY | O_CLOEXEC);
		for (uint32_t k = 0; k < FN_COUNT; k++) {
			if (!f->off[k])
				continue;
			uint8_t code[16];
			ssize_t n = fd < 0 ? -1 : pread(fd, code, sizeof code, (off_t)f->off[k]);
			if (n <= 0) {
				f->insn[k] = INSN_UNKNOWN;
				buf_printf(&s->placement, "gpusnoop: probe %s in %s+0x%" PRIx64 ": its code cannot be read\n",
					   probe_defs[k].name, f->path, f->off[k]);
				continue;
			}
			size_t skip = at_entry ? 0 : probe_entry_skip(code, (size_t)n);
			char what[32];
			f->insn[k] = (uint8_t)probe_insn_class(code + skip, (size_t)n - skip, what, sizeof what);
			f->skipped[k] = (uint8_t)skip;
			f->off[k] += skip;
			s->nstepped += f->insn[k] == INSN_STEPPED;
			buf_printf(&s->placement, "gpusnoop: probe %s in %s+0x%" PRIx64 "%s: %s, %s\n", probe_defs[k].name,
				   f->path, f->off[k], skip ? " (after its endbr64)" : "", what,
				   f->insn[k] == INSN_EMULATED ? "emulated in the trap" : "single-stepped (a second trap)");
		}
		if (fd >= 0)
			close(fd);
	}
#else
	(void)at_entry;
#endif
}

void probe_set_free(struct probe_set *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->f[i].path);
	free(s->f);
	buf_free(&s->warnings);
	buf_free(&s->placement);
	memset(s, 0, sizeof(*s));
}

bool probe_kernel_has_uprobes(const char *root, struct buf *why)
{
	static const char *const paths[] = {"/sys/bus/event_source/devices/uprobe/type",
					    "/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s%s", root, paths[i]);
		if (access(p, F_OK) == 0)
			return true;
	}
	buf_printf(why, "this kernel offers no uprobes (no %s%s, no tracefs uprobe_events): it was built without "
			"CONFIG_UPROBE_EVENTS, or tracefs is not mounted", root, paths[0]);
	return false;
}
