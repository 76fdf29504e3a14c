/*
 * elfsym.h - find named functions in an ELF object's symbol tables and give
 * their file offsets (what a uprobe attaches to): .dynsym (exported) first,
 * then .symtab for the names still missing (functions linked in but not
 * exported, such as a CUDA runtime linked statically into libtorch_cuda.so;
 * a stripped file has no .symtab).  Reads only the headers and those tables
 * through a read callback, so a 1 GB library costs a few MB of reads (its
 * .symtab only when .dynsym lacks a name), and the same code runs on a file
 * (pread) or on bytes in memory (the fuzzer, the unit tests).  Malformed
 * input is an error naming the offset, never a crash.
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

/* what elfsym_find saw besides the names (*flags) */
#define ELFSYM_DYNSYM 1u  /* the object has a .dynsym */
#define ELFSYM_SYMTAB 2u  /* the object has a .symtab (not stripped) */
#define ELFSYM_IMPORTS 4u /* .dynsym names one of the names as undefined: it lives in another object */

/*
 * For each names[i] that the object defines as a function (.dynsym, else
 * .symtab, local symbols included), offs[i] = its file offset; the others
 * get 0.  Returns how many were found, or -1 with a message in err when the
 * ELF is malformed or unsupported (not ELF64 little-endian, no symbol
 * table at all).  flags (may be NULL) gets ELFSYM_* bits.
 */
int elfsym_find(const struct elf_src *src, const char *const *names, size_t n, uint64_t *offs, unsigned *flags,
		struct buf *err);

/* The same on a file by path: opens, reads, closes. */
int elfsym_find_file(const char *path, const char *const *names, size_t n, uint64_t *offs, unsigned *flags,
		     struct buf *err);

#endif
