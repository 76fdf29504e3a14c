/*
 * elfsym.h - find named functions in an ELF shared object's dynamic symbol
 * table and give their file offsets (what a uprobe attaches to).  Reads
 * only the headers, .dynsym and .dynstr through a read callback, so a 1 GB
 * library costs a few MB of reads, and the same code runs on a file (pread)
 * or on bytes in memory (the fuzzer, the unit tests).  Malformed input is
 * an error naming the offset, never a crash.
 */
#ifndef DYNO_GPUSNOOP_ELFSYM_H
#define DYNO_GPUSNOOP_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct elf_src {
	/* read exactly n bytes at off into dst; 0 on success, -1 if short */
	int (*read)(void *ctx, uint64_t off, void *dst, size_t n);
	void *ctx;
	uint64_t size;
};

/* struct elf_src over bytes in memory */
struct elf_mem {
	const uint8_t *data;
	size_t len;
};
struct elf_src elf_src_mem(struct elf_mem *m);

/*
 * For each names[i] that the object defines as a function in .dynsym,
 * offs[i] = its file offset; the others get 0.  Returns how many were
 * found, or -1 with a message in err when the ELF is malformed or
 * unsupported (not ELF64 little-endian, no .dynsym).
 */
int elfsym_find(const struct elf_src *src, const char *const *names, size_t n, uint64_t *offs, struct buf *err);

/* The same on a file by path: opens, reads, closes. */
int elfsym_find_file(const char *path, const char *const *names, size_t n, uint64_t *offs, struct buf *err);

#endif
