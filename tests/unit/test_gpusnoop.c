/*
 * test_gpusnoop.c - gpusnoop's parts that need no BPF: the ELF symbol
 * reader (on a real library, and on a hand-made ELF whose code segment's
 * address differs from its file offset, then corrupted field by field; its
 * table as .dynsym or as .symtab), the ledger (allocations, frees, lost
 * frees, invalid records, grouping by stack), the sync table, --events and
 * the kernel's uprobe check, the symbolizer's module ranges.  The probes themselves:
 * tests/integration/gpusnoop_*.sh.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpusnoop/elfsym.h"
#include "gpusnoop/symbolize.h"
#include "gpusnoop/calls.h"
#include "gpusnoop/demangle.h"
#include "gpusnoop/ledger.h"
#include "gpusnoop/probes.h"
#include "gpusnoop/sampler.h"
#include "test.h"

/* a file offset's bytes in the file and the function's bytes in memory agree */
TEST(gpusnoop_elfsym_real_library)
{
	const char *names[] = {"getpid", "sched_yield", "no_such_function_here"};
	void *fn = dlsym(RTLD_DEFAULT, "sched_yield");
	Dl_info info;
	REQUIRE(fn && dladdr(fn, &info) && info.dli_fname);
	uint64_t offs[3];
	struct buf err = BUF_INIT;
	CHECK_INT(elfsym_find_file(info.dli_fname, names, 3, offs, NULL, &err), 2);
	CHECK(offs[0] != 0 && offs[1] != 0);
	CHECK_INT(offs[2], 0);
	unsigned char file[16];
	int fd = open(info.dli_fname, O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK_INT(pread(fd, file, sizeof(file), (off_t)offs[1]), 16);
	close(fd);
	CHECK(memcmp(file, fn, sizeof(file)) == 0);
	CHECK_INT(elfsym_find_file("/nonexistent/lib.so", names, 3, offs, NULL, &err), -1);
	CHECK(strstr(err.data, "/nonexistent/lib.so: cannot open: No such file or directory"));
	buf_free(&err);
}

/* A minimal shared object: .dynstr, .dynsym (one defined function, one
 * undefined, one object), a code segment at address 0x10000, file offset
 * 0x1000. */
enum { F_SIZE = 0x1100, F_STR = 0x200, F_SYM = 0x240, F_SH = 0x300 };
static void make_elf(unsigned char *f)
{
	memset(f, 0, F_SIZE);
	Elf64_Ehdr eh = {.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT, .e_phoff = 64,
			 .e_shoff = F_SH, .e_ehsize = 64, .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2,
			 .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 3};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	memcpy(f, &eh, sizeof(eh));
	Elf64_Phdr ph[2] = {
		{.p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0, .p_filesz = 0x400},
		{.p_type = PT_LOAD, .p_offset = 0x1000, .p_vaddr = 0x10000, .p_filesz = 0x100},
	};
	memcpy(f + 64, ph, sizeof(ph));
	static const char str[] = "\0cudaMalloc\0cudaFree\0cudaMallocHost";
	memcpy(f + F_STR, str, sizeof(str));
	Elf64_Sym sym[4] = {
		{0},
		{.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1, .st_value = 0x10010},
		{.st_name = 12, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = SHN_UNDEF},
		{.st_name = 21, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), .st_shndx = 1, .st_value = 0x10020},
	};
	memcpy(f + F_SYM, sym, sizeof(sym));
	Elf64_Shdr sh[3] = {
		{0},
		{.sh_type = SHT_DYNSYM, .sh_offset = F_SYM, .sh_size = sizeof(sym), .sh_link = 2, .sh_entsize = sizeof(Elf64_Sym)},
		{.sh_type = SHT_STRTAB, .sh_offset = F_STR, .sh_size = sizeof(str)},
	};
	memcpy(f + F_SH, sh, sizeof(sh));
}

static int find_in(const unsigned char *f, size_t len, uint64_t *offs, struct buf *err)
{
	static const char *const names[] = {"cudaMalloc", "cudaFree", "cudaMallocHost"};
	struct elf_mem m = {f, len};
	struct elf_src s = elf_src_mem(&m);
	buf_reset(err);
	return elfsym_find(&s, names, 3, offs, NULL, err);
}

TEST(gpusnoop_elfsym_handmade)
{
	static unsigned char f[F_SIZE];
	make_elf(f);
	uint64_t offs[3];
	struct buf err = BUF_INIT;
	CHECK_INT(find_in(f, F_SIZE, offs, &err), 1);
	CHECK_INT(offs[0], 0x1010); /* 0x10010 - 0x10000 + 0x1000 */
	CHECK_INT(offs[1], 0);      /* undefined: imported, not ours to probe */
	CHECK_INT(offs[2], 0);      /* not a function */
	buf_free(&err);
}

/* the same table as .symtab (a library linked with the function hidden):
 * found there, and said to be unstripped; an import in .dynsym is said */
TEST(gpusnoop_elfsym_symtab)
{
	static unsigned char f[F_SIZE];
	uint64_t offs[3];
	unsigned flags = 0;
	static const char *const names[] = {"cudaMalloc", "cudaFree", "cudaMallocHost"};
	struct elf_mem m = {f, F_SIZE};
	struct elf_src src = elf_src_mem(&m);
	struct buf err = BUF_INIT;
	make_elf(f);
	CHECK_INT(elfsym_find(&src, names, 3, offs, &flags, &err), 1);
	CHECK_INT(flags, ELFSYM_DYNSYM | ELFSYM_IMPORTS); /* cudaFree: undefined, imported */
	uint32_t symtab = SHT_SYMTAB;
	memcpy(f + F_SH + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_type), &symtab, 4);
	CHECK_INT(elfsym_find(&src, names, 3, offs, &flags, &err), 1);
	CHECK_INT(offs[0], 0x1010);
	CHECK_INT(flags, ELFSYM_SYMTAB); /* an undefined name in .symtab is no import */
	/* a local (static) function is found just the same */
	make_elf(f);
	memcpy(f + F_SH + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_type), &symtab, 4);
	unsigned char local = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
	memcpy(f + F_SYM + sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_info), &local, 1);
	CHECK_INT(elfsym_find(&src, names, 3, offs, &flags, &err), 1);
	CHECK_INT(offs[0], 0x1010);
	buf_free(&err);
}

TEST(gpusnoop_elfsym_malformed)
{
	static unsigned char f[F_SIZE];
	uint64_t offs[3];
	struct buf err = BUF_INIT;
	struct {
		size_t at;
		uint64_t value;
		int width;
		const char *msg;
	} cases[] = {
		{0, 0, 1, "bad magic at offset 0"},
		{EI_CLASS, ELFCLASS32, 1, "only 64-bit little-endian"},
		{offsetof(Elf64_Ehdr, e_shoff), 0x10000, 8, "section header table at offset 65536 (192 bytes) lies outside the file"},
		{offsetof(Elf64_Ehdr, e_shentsize), 40, 2, "entry size 40/56"},
		/* .dynsym's size: far past the end */
		{F_SH + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size), 1ull << 40, 8, ".dynsym at offset 576"},
		/* .dynsym's string table link: no such section */
		{F_SH + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_link), 9, 4, "bad .dynsym section header at offset 832"},
		/* .dynstr's offset wraps around */
		{F_SH + 2 * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset), UINT64_MAX - 2, 8, ".dynstr at offset"},
		/* no symbol table at all */
		{F_SH + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS, 4, "no symbol table (no .dynsym, no .symtab"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_elf(f);
		memcpy(f + cases[i].at, &cases[i].value, (size_t)cases[i].width); /* little-endian host */
		CHECK_INT(find_in(f, F_SIZE, offs, &err), -1);
		if (!strstr(err.data, cases[i].msg))
			test_fail(__FILE__, __LINE__, "case %zu: '%s' lacks '%s'", i, err.data, cases[i].msg);
	}
	/* a symbol name offset past .dynstr, a symbol outside every segment: skipped, not read */
	make_elf(f);
	uint32_t bad_name = 4000;
	memcpy(f + F_SYM + sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_name), &bad_name, 4);
	CHECK_INT(find_in(f, F_SIZE, offs, &err), 0);
	make_elf(f);
	uint64_t far = 0x90000;
	memcpy(f + F_SYM + sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_value), &far, 8);
	CHECK_INT(find_in(f, F_SIZE, offs, &err), 0);
	/* every truncation of the file: an error or a clean answer, never a read past the end */
	make_elf(f);
	for (size_t len = 0; len < F_SIZE; len += 7)
		CHECK(find_in(f, len, offs, &err) <= 1);
	CHECK_INT(find_in(f, 10, offs, &err), -1);
	CHECK(strstr(err.data, "shorter than an ELF header"));
	buf_free(&err);
}

static int ev(struct ledger *l, uint32_t type, uint32_t fn, uint64_t ptr, uint64_t size, uint32_t space, int32_t stack)
{
	struct snoop_event e = {.type = type, .fn = fn, .tid = 1, .stack_id = stack, .ts_ns = 1000, .ptr = ptr,
				.size = size, .space = space};
	return ledger_event(l, &e, sizeof(e));
}

TEST(gpusnoop_ledger)
{
	struct ledger l;
	ledger_init(&l);
	/* 3000 allocations (the table grows), every other one freed */
	for (uint64_t i = 0; i < 3000; i++)
		CHECK_INT(ev(&l, EV_ALLOC, FN_CUDA_MALLOC, 0x1000 * (i + 1), 10, SPACE_PTR, (int32_t)(i % 3)), 1);
	for (uint64_t i = 0; i < 3000; i += 2)
		CHECK_INT(ev(&l, EV_FREE, FN_CUDA_FREE, 0x1000 * (i + 1), 0, SPACE_PTR, -1), 1);
	CHECK_INT(l.outstanding[SPACE_PTR], 15000);
	CHECK_INT(l.peak[SPACE_PTR], 30000);
	/* a free of an unknown pointer, the same value as a handle: different spaces */
	CHECK_INT(ev(&l, EV_FREE, FN_CU_MEM_FREE, 0x999999, 0, SPACE_PTR, -1), 0);
	CHECK_INT(ev(&l, EV_ALLOC, FN_CU_MEM_CREATE, 0x2000, 4096, SPACE_HANDLE, 7), 1);
	CHECK_INT(ev(&l, EV_FREE, FN_CU_MEM_RELEASE, 0x2000, 0, SPACE_PTR, -1), 1); /* 0x2000 is also a live pointer */
	CHECK_INT(l.outstanding[SPACE_HANDLE], 4096);
	CHECK_INT(l.unmatched_frees, 1);
	/* a pointer allocated again without its free: the free was lost */
	CHECK_INT(ev(&l, EV_ALLOC, FN_CUDA_MALLOC_ASYNC, 0x4000, 100, SPACE_PTR, 1), 1);
	CHECK_INT(l.replaced, 1);
	/* invalid records: counted, no effect */
	struct snoop_event bad = {.type = EV_ALLOC, .fn = FN_COUNT};
	CHECK_INT(ledger_event(&l, &bad, sizeof(bad)), -1);
	CHECK_INT(ledger_event(&l, &bad, 12), -1);
	bad.fn = 0, bad.space = SPACE_COUNT;
	CHECK_INT(ledger_event(&l, &bad, sizeof(bad)), -1);
	bad.space = 0, bad.type = 9;
	CHECK_INT(ledger_event(&l, &bad, sizeof(bad)), -1);
	CHECK_INT(l.invalid, 4);
	/* sizes saturate instead of wrapping */
	CHECK_INT(ev(&l, EV_ALLOC, FN_CUDA_MALLOC, 0x1, UINT64_MAX, SPACE_MAP, 2), 1);
	CHECK_INT(ev(&l, EV_ALLOC, FN_CUDA_MALLOC, 0x3, 5, SPACE_MAP, 2), 1);
	CHECK(l.outstanding[SPACE_MAP] == UINT64_MAX);

	size_t n;
	struct ledger_leak *g = ledger_leaks(&l, &n);
	/* live: 1500 pointers over stacks 0,1,2 (0x2000 freed, 0x4000 re-made from stack 1 by cudaMallocAsync),
	 * the handle (stack 7), the two mapped ones (stack 2, saturated) */
	REQUIRE(n == 5);
	CHECK(g[0].bytes == UINT64_MAX && g[0].count == 2 && g[0].space == SPACE_MAP);
	uint64_t total = 0, count = 0;
	for (size_t i = 1; i < n; i++)
		if (g[i].space == SPACE_PTR)
			total += g[i].bytes, count += g[i].count;
	CHECK_INT(count, 1499);
	CHECK_INT(total, l.outstanding[SPACE_PTR]);
	CHECK_INT(g[n - 1].space, SPACE_HANDLE);
	CHECK_INT(g[n - 1].bytes, 4096);
	for (size_t i = 1; i < n; i++)
		if (g[i].stack_id == 1)
			CHECK(g[i].fn_mask == ((1u << FN_CUDA_MALLOC) | (1u << FN_CUDA_MALLOC_ASYNC)));
	free(g);
	ledger_free(&l);
}

static int dev_ev(struct ledger *l, uint32_t type, uint64_t ptr, uint64_t size, uint32_t space, int32_t device)
{
	struct snoop_event e = {.type = type, .fn = FN_CUDA_MALLOC, .ts_ns = 1, .ptr = ptr, .size = size, .space = space,
				.device = device};
	return ledger_event(l, &e, sizeof(e));
}

/* the per-device bytes: device memory and handles only, each free from its allocation's device */
TEST(gpusnoop_ledger_devices)
{
	struct ledger l;
	ledger_init(&l);
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x10, 100, SPACE_PTR, 1), 1);
	CHECK_INT(l.last_dev_slot, LEDGER_SLOT_DEV0 + 1);
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x20, 200, SPACE_HANDLE, 1), 1);
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x30, 300, SPACE_PTR, DEV_HOST), 1);
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x40, 400, SPACE_PTR, DEV_UNKNOWN), 1);
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x50, 500, SPACE_PTR, LEDGER_MAX_DEVICES), 1); /* beyond the table: unknown */
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x60, 600, SPACE_MAP, 1), 1);                  /* the same bytes again: not counted */
	CHECK_INT(l.last_dev_slot, -1);
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x70, 700, SPACE_TORCH, 2), 1);
	CHECK_INT(l.dev_bytes[LEDGER_SLOT_DEV0 + 1], 300);
	CHECK_INT(l.dev_bytes[LEDGER_SLOT_HOST], 300);
	CHECK_INT(l.dev_bytes[LEDGER_SLOT_UNKNOWN], 900);
	CHECK(!ledger_dev_seen(&l, LEDGER_SLOT_DEV0 + 2));
	/* a free, whatever device its record says, leaves the allocation's device */
	CHECK_INT(dev_ev(&l, EV_FREE, 0x10, 0, SPACE_PTR, DEV_UNKNOWN), 1);
	CHECK_INT(l.last_dev_slot, LEDGER_SLOT_DEV0 + 1);
	CHECK_INT(l.dev_bytes[LEDGER_SLOT_DEV0 + 1], 200);
	CHECK_INT(l.dev_bytes[LEDGER_SLOT_UNKNOWN], 900);
	CHECK(ledger_dev_seen(&l, LEDGER_SLOT_DEV0 + 1));
	/* a device below DEV_HOST is no device: the record is invalid */
	CHECK_INT(dev_ev(&l, EV_ALLOC, 0x80, 1, SPACE_PTR, DEV_HOST - 1), -1);
	CHECK_INT(l.invalid, 1);
	char tmp[16];
	CHECK_STR(ledger_dev_name(LEDGER_SLOT_DEV0 + 3, tmp, sizeof(tmp)), "3");
	CHECK_STR(ledger_dev_name(LEDGER_SLOT_HOST, tmp, sizeof(tmp)), "host");
	CHECK_STR(ledger_dev_name(LEDGER_SLOT_UNKNOWN, tmp, sizeof(tmp)), "unknown");
	ledger_free(&l);
}

static int sync_ev(struct calls *c, uint32_t fn, int32_t stack, uint64_t ns)
{
	struct snoop_event e = {.type = EV_SYNC, .fn = fn, .tid = 1, .stack_id = stack, .ts_ns = 1000, .size = ns};
	return calls_sync_event(c, &e, sizeof(e), NULL);
}

TEST(gpusnoop_calls_syncs)
{
	struct calls c;
	calls_init(&c);
	/* 300 stacks (the table grows), stack k synchronised k+1 times for 10 ns each */
	for (int32_t k = 0; k < 300; k++)
		for (int32_t i = 0; i <= k; i++)
			CHECK_INT(sync_ev(&c, FN_CUDA_STREAM_SYNCHRONIZE, k, 10), 1);
	/* stack 5 also by cudaDeviceSynchronize, once for long */
	CHECK_INT(sync_ev(&c, FN_CUDA_DEVICE_SYNCHRONIZE, 5, 1000000), 1);
	/* stacks not recorded: one group, whatever negative id */
	CHECK_INT(sync_ev(&c, FN_CUDA_EVENT_SYNCHRONIZE, -14, 7), 1);
	CHECK_INT(sync_ev(&c, FN_CUDA_EVENT_SYNCHRONIZE, -1, 7), 1);
	/* invalid: not a sync function, another type, a short record */
	CHECK_INT(sync_ev(&c, FN_CUDA_MALLOC, 1, 1), -1);
	CHECK_INT(sync_ev(&c, FN_COUNT, 1, 1), -1);
	struct snoop_event bad = {.type = EV_ALLOC, .fn = FN_CUDA_STREAM_SYNCHRONIZE};
	CHECK_INT(calls_sync_event(&c, &bad, sizeof(bad), NULL), -1);
	CHECK_INT(calls_sync_event(&c, &bad, 20, NULL), -1);
	CHECK_INT(c.invalid, 4);
	CHECK_INT(c.sync_records, 300 * 301 / 2 + 3);
	CHECK_INT(c.sync_ns, 10 * (300 * 301 / 2) + 1000000 + 14);
	/* a wait that would wrap the sums saturates */
	size_t n;
	struct sync_group *g = calls_sync_top(&c, &n);
	REQUIRE(n == 301);
	CHECK_INT(g[0].stack_id, 299);
	CHECK_INT(g[0].count, 300);
	CHECK_INT(g[0].total_ns, 3000);
	for (size_t i = 1; i < n; i++)
		CHECK(g[i - 1].count > g[i].count || (g[i - 1].count == g[i].count && g[i - 1].total_ns >= g[i].total_ns));
	for (size_t i = 0; i < n; i++) {
		if (g[i].stack_id == 5) {
			CHECK_INT(g[i].count, 7);
			CHECK_INT(g[i].max_ns, 1000000);
			CHECK(g[i].fn_mask == ((1u << FN_CUDA_STREAM_SYNCHRONIZE) | (1u << FN_CUDA_DEVICE_SYNCHRONIZE)));
		}
		if (g[i].stack_id < 0) {
			CHECK_INT(g[i].stack_id, -1);
			CHECK_INT(g[i].count, 2);
		}
	}
	free(g);
	CHECK_INT(sync_ev(&c, FN_CUDA_STREAM_SYNCHRONIZE, 0, UINT64_MAX), 1);
	CHECK(c.sync_ns == UINT64_MAX);
	c.count[FN_CUDA_LAUNCH_KERNEL] = 5, c.count[FN_CU_LAUNCH_KERNEL] = 3, c.count[FN_CUDA_GRAPH_LAUNCH] = 1;
	CHECK_INT(calls_sum(&c, FN_CUDA_LAUNCH_KERNEL, FN_CUDA_GRAPH_LAUNCH), 9);
	calls_free(&c);
}

/* the sync groups as read from the kernel's map: validated, replaced at each read */
TEST(gpusnoop_calls_sync_groups)
{
	struct calls c;
	calls_init(&c);
	for (int round = 0; round < 2; round++) {
		calls_sync_reset(&c);
		/* 200 stacks (the table grows) */
		for (int32_t k = -1; k < 199; k++) {
			struct sync_group g = {.stack_id = k, .fn_mask = 1u << FN_CUDA_STREAM_SYNCHRONIZE,
					       .count = (uint64_t)k + 2, .total_ns = 10, .max_ns = 5};
			CHECK_INT(calls_sync_group(&c, &g), 1);
		}
		CHECK_INT(c.n, 200);
		CHECK_INT(c.sync_records, 200 * 201 / 2);
		CHECK_INT(c.sync_ns, 2000);
	}
	/* invalid: a stack id below -1, no count, no function, a function not a sync */
	struct sync_group bad[] = {{.stack_id = -2, .fn_mask = 1u << FN_CUDA_DEVICE_SYNCHRONIZE, .count = 1},
				   {.stack_id = 1, .fn_mask = 1u << FN_CUDA_DEVICE_SYNCHRONIZE, .count = 0},
				   {.stack_id = 1, .fn_mask = 0, .count = 1},
				   {.stack_id = 1, .fn_mask = 1u << FN_CUDA_MALLOC, .count = 1}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(calls_sync_group(&c, &bad[i]), -1);
	CHECK_INT(c.invalid, 4);
	CHECK_INT(c.n, 200);
	/* sums saturate */
	struct sync_group big = {.stack_id = 7, .fn_mask = 1u << FN_CUDA_EVENT_SYNCHRONIZE, .count = UINT64_MAX,
				 .total_ns = UINT64_MAX, .max_ns = 99};
	CHECK_INT(calls_sync_group(&c, &big), 1);
	CHECK(c.sync_records == UINT64_MAX && c.sync_ns == UINT64_MAX);
	size_t n;
	struct sync_group *g = calls_sync_top(&c, &n);
	REQUIRE(n == 200);
	CHECK_INT(g[0].stack_id, 7);
	CHECK_INT(g[0].max_ns, 99);
	CHECK(g[0].fn_mask == ((1u << FN_CUDA_STREAM_SYNCHRONIZE) | (1u << FN_CUDA_EVENT_SYNCHRONIZE)));
	free(g);
	calls_free(&c);
}

TEST(gpusnoop_events_option)
{
	unsigned g = 0;
	struct buf err = BUF_INIT;
	CHECK(probe_parse_events("mem", &g, &err) && g == GROUP_MEM);
	CHECK(probe_parse_events("sync,launch,mem", &g, &err) && g == (GROUP_MEM | GROUP_LAUNCH | GROUP_SYNC));
	CHECK(!probe_parse_events("mem,launches", &g, &err));
	CHECK(strstr(err.data, "unknown event 'launches'"));
	buf_reset(&err);
	CHECK(!probe_parse_events("", &g, &err));
	CHECK(strstr(err.data, "--events: empty"));
	buf_reset(&err);
	CHECK(probe_parse_events("mem,", &g, &err) && g == GROUP_MEM); /* a trailing comma: harmless */
	/* every probed function has a name, a group and a cookie naming itself */
	for (uint32_t f = 0; f < FN_COUNT; f++) {
		CHECK_INT(probe_defs[f].fn, f);
		CHECK_INT(COOKIE_FN(probe_defs[f].cookie), f);
		CHECK(probe_defs[f].group && probe_defs[f].syms[0] && strcmp(snoop_fn_name(f), "?") != 0);
	}
	buf_free(&err);
}

/* where a probe goes: past a leading endbr64 (never emulated by the
 * kernel), onto an instruction the kernel emulates or single-steps */
TEST(gpusnoop_probe_placement)
{
	char what[32];
	static const uint8_t cet_push[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5};
	static const uint8_t cet_r15[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57};
	static const uint8_t cet_only[] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const uint8_t mov[] = {0x48, 0x89, 0xfb};
	static const uint8_t xor_eax[] = {0x31, 0xc0, 0xc3};
	CHECK_INT(probe_entry_skip(cet_push, sizeof cet_push), 4);
	CHECK_INT(probe_entry_skip(cet_r15, sizeof cet_r15), 4);
	CHECK_INT(probe_entry_skip(cet_only, sizeof cet_only), 0); /* nothing known after it: left alone */
	CHECK_INT(probe_entry_skip(mov, sizeof mov), 0);
	CHECK_INT(probe_entry_skip(cet_push + 4, sizeof cet_push - 4), 0);
	CHECK_INT(probe_insn_class(cet_push + 4, 4, what, sizeof what), INSN_EMULATED);
	CHECK_STR(what, "push");
	CHECK_INT(probe_insn_class(cet_r15 + 4, 2, what, sizeof what), INSN_EMULATED);
	CHECK_STR(what, "push");
	CHECK_INT(probe_insn_class(cet_push, sizeof cet_push, what, sizeof what), INSN_STEPPED);
	CHECK_STR(what, "endbr64");
	CHECK_INT(probe_insn_class(mov, sizeof mov, what, sizeof what), INSN_STEPPED);
	CHECK_STR(what, "opcode 48 89");
	CHECK_INT(probe_insn_class(xor_eax, sizeof xor_eax, what, sizeof what), INSN_STEPPED);
	static const uint8_t jmp[] = {0xe9, 0, 0, 0, 0}, call[] = {0xe8, 0, 0, 0, 0}, jcc[] = {0x0f, 0x84, 0, 0, 0, 0};
	static const uint8_t jcc8[] = {0x74, 0x05}, nop[] = {0x90}, jmp8[] = {0xeb, 0x02};
	CHECK_INT(probe_insn_class(jmp, sizeof jmp, what, sizeof what), INSN_EMULATED);
	CHECK_STR(what, "jmp");
	CHECK_INT(probe_insn_class(jmp8, sizeof jmp8, what, sizeof what), INSN_EMULATED);
	CHECK_INT(probe_insn_class(call, sizeof call, what, sizeof what), INSN_EMULATED);
	CHECK_STR(what, "call");
	CHECK_INT(probe_insn_class(jcc, sizeof jcc, what, sizeof what), INSN_EMULATED);
	CHECK_INT(probe_insn_class(jcc8, sizeof jcc8, what, sizeof what), INSN_EMULATED);
	CHECK_STR(what, "jcc");
	CHECK_INT(probe_insn_class(nop, sizeof nop, what, sizeof what), INSN_EMULATED);
	/* a REX prefix alone, or an empty read: single-stepped, never past the end */
	static const uint8_t rex[] = {0x41};
	CHECK_INT(probe_insn_class(rex, sizeof rex, what, sizeof what), INSN_STEPPED);
	CHECK_INT(probe_insn_class(rex, 0, what, sizeof what), INSN_STEPPED);
	CHECK_STR(what, "?");
}

/* --launch-sample's schedule, with a made-up clock: a window at the start
 * of each period, late wake-ups, and the counting time from the marks */
TEST(gpusnoop_launch_sampler)
{
	const int64_t S = 1000000000, MS = 1000000, T0 = 5 * S;
	struct sampler s;
	sampler_init(&s, 10, 10 * S, T0);
	CHECK_INT(s.window_ns, 1 * S);
	CHECK_INT(sampler_due(&s, T0), SAMPLER_ON);
	sampler_mark(&s, true, T0 + 8 * MS); /* the attach took 8 ms */
	CHECK_INT(sampler_wait_ns(&s, T0 + 8 * MS), S - 8 * MS);
	CHECK_INT(sampler_due(&s, T0 + 500 * MS), SAMPLER_NONE); /* woken early */
	CHECK_INT(sampler_due(&s, T0 + S), SAMPLER_OFF);
	sampler_mark(&s, false, T0 + S);
	CHECK_INT(sampler_on_ns(&s, T0 + 3 * S), S - 8 * MS);
	CHECK_INT(sampler_wait_ns(&s, T0 + 3 * S), 7 * S);
	CHECK_INT(sampler_due(&s, T0 + 3 * S), SAMPLER_NONE);
	/* the second window, opened 2 ms late: it closes on the schedule */
	CHECK_INT(sampler_due(&s, T0 + 10 * S + 2 * MS), SAMPLER_ON);
	sampler_mark(&s, true, T0 + 10 * S + 10 * MS);
	CHECK_INT(sampler_on_ns(&s, T0 + 10 * S + 510 * MS), S - 8 * MS + 500 * MS);
	CHECK_INT(sampler_wait_ns(&s, T0 + 10 * S + 10 * MS), 990 * MS);
	CHECK_INT(sampler_due(&s, T0 + 11 * S), SAMPLER_OFF);
	sampler_mark(&s, false, T0 + 11 * S);
	CHECK_INT(sampler_on_ns(&s, T0 + 12 * S), 2 * S - 18 * MS);
	CHECK(sampler_partial(&s, T0 + 12 * S));
	/* a wake-up after a whole window passed: that window is skipped */
	CHECK_INT(sampler_due(&s, T0 + 21 * S + 1), SAMPLER_NONE);
	CHECK_INT(sampler_wait_ns(&s, T0 + 21 * S + 1), 9 * S - 1);
	CHECK_INT(sampler_due(&s, T0 + 30 * S), SAMPLER_ON);
	CHECK_INT(s.windows, 3);

	/* a run that ends inside the first window saw every launch */
	sampler_init(&s, 10, 10 * S, T0);
	CHECK_INT(sampler_due(&s, T0), SAMPLER_ON);
	sampler_mark(&s, true, T0);
	sampler_mark(&s, false, T0 + 700 * MS);
	CHECK(!sampler_partial(&s, T0 + 700 * MS));
	CHECK(sampler_partial(&s, T0 + 1200 * MS));

	/* 100%: on once, never off, never partial */
	sampler_init(&s, 100, 10 * S, T0);
	CHECK_INT(sampler_due(&s, T0), SAMPLER_ON);
	CHECK_INT(sampler_wait_ns(&s, T0), INT64_MAX);
	CHECK_INT(sampler_due(&s, T0 + 100 * S), SAMPLER_NONE);
	sampler_mark(&s, true, T0);
	CHECK(!sampler_partial(&s, T0 + 100 * S));
	CHECK_INT(sampler_on_ns(&s, T0 + 100 * S), 100 * S);

	/* a small share: the window is at least 100 ms, never the whole period */
	sampler_init(&s, 1, S / 5, T0);
	CHECK_INT(s.window_ns, SAMPLER_MIN_WINDOW_NS);
	sampler_init(&s, 1, S / 20, T0);
	CHECK_INT(s.window_ns, S / 20);
}

/* the kernel's uprobe support, on fixture trees: none, the PMU, tracefs */
TEST(gpusnoop_uprobe_check)
{
	char root[512], p[1200];
	snprintf(root, sizeof(root), "%s/sys-none", test_tmpdir());
	struct buf why = BUF_INIT;
	CHECK(!probe_kernel_has_uprobes(root, &why));
	CHECK(strstr(why.data, "this kernel offers no uprobes"));
	CHECK(strstr(why.data, "CONFIG_UPROBE_EVENTS"));
	snprintf(root, sizeof(root), "%s/sys-pmu", test_tmpdir());
	snprintf(p, sizeof(p), "mkdir -p %s/sys/bus/event_source/devices/uprobe && echo 9 > %s/sys/bus/event_source/devices/uprobe/type",
		 root, root);
	REQUIRE(system(p) == 0);
	CHECK(probe_kernel_has_uprobes(root, &why));
	snprintf(root, sizeof(root), "%s/sys-tracefs", test_tmpdir());
	snprintf(p, sizeof(p), "mkdir -p %s/sys/kernel/tracing && touch %s/sys/kernel/tracing/uprobe_events", root, root);
	REQUIRE(system(p) == 0);
	CHECK(probe_kernel_has_uprobes(root, &why));
	buf_free(&why);
}

/* C++ names through libstdc++'s demangler; anything else left alone */
TEST(gpusnoop_demangle)
{
	char *d = demangle("_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator8allocateEm");
	REQUIRE(d);
	CHECK_STR(d, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)");
	free(d);
	d = demangle("_ZN3c104cuda20CUDACachingAllocator6NativeL15uncached_deleteEPv");
	REQUIRE(d);
	CHECK_STR(d, "c10::cuda::CUDACachingAllocator::Native::uncached_delete(void*)");
	free(d);
	CHECK(!demangle("cudaMalloc"));       /* a C name */
	CHECK(!demangle(NULL));
	CHECK(!demangle("_Z"));               /* not a valid one */
	CHECK(!demangle("_ZN3foo"));
	CHECK(!demangle("_ZZZZZZ\xff\x01"));
	/* too long: left mangled, not handed to the demangler */
	char *big = xmalloc(DEMANGLE_MAX_IN + 2);
	memset(big, 'v', DEMANGLE_MAX_IN + 1);
	memcpy(big, "_Z1fv", 5);
	big[DEMANGLE_MAX_IN + 1] = 0;
	CHECK(!demangle(big));
	big[DEMANGLE_MAX_IN - 1] = 0; /* _Z1f and then v...: f(void, void, ...) is not valid either, but asked */
	free(demangle(big));
	free(big);
	d = demangle("_Z1fv");
	REQUIRE(d);
	CHECK_STR(d, "f()");
	free(d);
}

/* An address in no mapping is no module: elfutils gives the last module
 * for any address above it, which named garbage frames (a frame-pointer
 * walk through PyTorch, on a real H200) "ld-linux-x86-64.so.2+0x6380...". */
TEST(gpusnoop_symbolizer_outside_every_module)
{
	struct symbolizer *s = sym_open(getpid());
	REQUIRE(s);
	struct sym_frame fr;
	sym_lookup(s, (uint64_t)(uintptr_t)&test_gpusnoop_symbolizer_outside_every_module, false, &fr);
	REQUIRE(fr.module != NULL); /* this test's own code: the unit-test binary */
	CHECK(strstr(fr.module, "unit-tests") != NULL);
	CHECK(fr.function && strstr(fr.function, "symbolizer_outside_every_module"));
	const uint64_t bad[] = {0x00ff000000000000ull, 0x0063805c27b31f01ull + 0x7f0000000000ull, 0xffffffffff600000ull, 0x1000};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		sym_lookup(s, bad[i], true, &fr);
		CHECK(fr.module == NULL && fr.function == NULL && fr.module_offset == 0);
	}
	sym_close(s);
}

/* A stack is cut at the first address no user code can be at. */
TEST(gpusnoop_stack_cut_at_implausible_frames)
{
	const uint64_t h200[] = {0x7f0fc457746cull, 0x7f0fabad035full, 0x7f0fabad0aaaull, 0x6400000006ff01ull,
				 0xc7481b74ff8548ull};
	CHECK_INT(sym_plausible_frames(h200, 5), 3);
	const uint64_t ok[] = {0x401000, 0x7ffffffff000ull};
	CHECK_INT(sym_plausible_frames(ok, 2), 2);
	const uint64_t zero[] = {0x401000, 0, 0x401000};
	CHECK_INT(sym_plausible_frames(zero, 3), 1);
	const uint64_t top[] = {0x800000000000ull};
	CHECK_INT(sym_plausible_frames(top, 1), 0);
	CHECK_INT(sym_plausible_frames(h200, 0), 0);
}
