/*
 * elfsym.c - see elfsym.h.  Walks section headers to .dynsym (and .symtab)
 * and their string tables, then the program headers to turn a symbol's
 * virtual address into the file offset the kernel's uprobe wants.  Every size and
 * offset read from the file is checked against the file size before use
 * (with overflow-safe arithmetic); tables are bounded at 256 MiB.
 * Cost: one pass over each table read, a first-byte compare per function and name.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "gpusnoop/elfsym.h"

#define ELFSYM_MAX_TABLE (256u << 20)

static int mem_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	const struct elf_mem *m = ctx;
	if (off > m->len || n > m->len - off)
		return -1;
	memcpy(dst, m->data + off, n);
	return 0;
}

struct elf_src elf_src_mem(struct elf_mem *m)
{
	return (struct elf_src){.read = mem_read, .ctx = m, .size = m->len};
}

static int fd_read(void *ctx, uint64_t off, void *dst, size_t n)
{
	int fd = *(int *)ctx;
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(fd, (char *)dst + done, n - done, (off_t)(off + done));
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/* read a table of count entries of entsize bytes at off, bounded */
static void *read_table(const struct elf_src *s, uint64_t off, uint64_t bytes, const char *what, struct buf *err)
{
	if (bytes > ELFSYM_MAX_TABLE || off > s->size || bytes > s->size - off) {
		buf_printf(err, "%s at offset %llu (%llu bytes) lies outside the file (%llu bytes)", what,
			   (unsigned long long)off, (unsigned long long)bytes, (unsigned long long)s->size);
		return NULL;
	}
	void *p = xmalloc(bytes ? bytes : 1);
	if (s->read(s->ctx, off, p, bytes)) {
		buf_printf(err, "short read of %s at offset %llu", what, (unsigned long long)off);
		free(p);
		return NULL;
	}
	return p;
}

/* the PT_LOAD segment holding a symbol's address gives its file offset; 0: none */
static uint64_t file_offset(const struct elf_src *s, const Elf64_Phdr *ph, unsigned nph, uint64_t addr)
{
	for (unsigned p = 0; p < nph; p++) {
		/* a segment that claims bytes past the end of the file would
		 * give an offset no probe can use */
		if (ph[p].p_type != PT_LOAD || addr < ph[p].p_vaddr || addr - ph[p].p_vaddr >= ph[p].p_filesz ||
		    ph[p].p_offset > s->size || ph[p].p_filesz > s->size - ph[p].p_offset)
			continue;
		return addr - ph[p].p_vaddr + ph[p].p_offset;
	}
	return 0;
}

/* one symbol table (.dynsym or .symtab) against the names still missing: how many found, or -1 */
static int scan_table(const struct elf_src *s, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, unsigned tab,
		      const Elf64_Phdr *ph, const char *const *names, size_t n, uint64_t *offs, unsigned *flags,
		      struct buf *err)
{
	const Elf64_Shdr *t = &sh[tab];
	const char *what = t->sh_type == SHT_DYNSYM ? ".dynsym" : ".symtab";
	if (t->sh_link >= eh->e_shnum || t->sh_entsize != sizeof(Elf64_Sym)) {
		buf_printf(err, "bad %s section header at offset %llu (link %u, entry size %llu)", what,
			   (unsigned long long)(eh->e_shoff + (uint64_t)tab * sizeof(Elf64_Shdr)), t->sh_link,
			   (unsigned long long)t->sh_entsize);
		return -1;
	}
	const Elf64_Shdr *strh = &sh[t->sh_link];
	uint64_t nsym = t->sh_size / sizeof(Elf64_Sym);
	Elf64_Sym *syms = read_table(s, t->sh_offset, nsym * sizeof(Elf64_Sym), what, err);
	char *str = syms ? read_table(s, strh->sh_offset, strh->sh_size, t->sh_type == SHT_DYNSYM ? ".dynstr" : ".strtab", err) : NULL;
	if (!str) {
		free(syms);
		return -1;
	}
	int found = 0;
	for (uint64_t k = 0; k < nsym; k++) {
		const Elf64_Sym *y = &syms[k];
		if (y->st_name >= strh->sh_size)
			continue;
		const char *nm = str + y->st_name;
		size_t room = strh->sh_size - y->st_name;
		bool undef = y->st_shndx == SHN_UNDEF;
		if (!undef && (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_value == 0))
			continue;
		for (size_t i = 0; i < n; i++) {
			size_t l = strlen(names[i]);
			if (offs[i] || nm[0] != names[i][0] || l >= room || memcmp(nm, names[i], l + 1) != 0)
				continue;
			if (undef) {
				if (t->sh_type == SHT_DYNSYM)
					*flags |= ELFSYM_IMPORTS;
				continue;
			}
			offs[i] = file_offset(s, ph, eh->e_phnum, y->st_value);
			found += offs[i] != 0;
		}
	}
	free(syms);
	free(str);
	return found;
}

int elfsym_find(const struct elf_src *s, const char *const *names, size_t n, uint64_t *offs, unsigned *flags,
		struct buf *err)
{
	unsigned ignored;
	if (!flags)
		flags = &ignored;
	*flags = 0;
	for (size_t i = 0; i < n; i++)
		offs[i] = 0;
	Elf64_Ehdr eh;
	if (s->size < sizeof(eh) || s->read(s->ctx, 0, &eh, sizeof(eh))) {
		buf_puts(err, "not an ELF file (shorter than an ELF header)");
		return -1;
	}
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		buf_puts(err, "not an ELF file (bad magic at offset 0)");
		return -1;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		buf_puts(err, "unsupported ELF: only 64-bit little-endian (offset 4)");
		return -1;
	}
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		buf_printf(err, "bad ELF header: section/program header entry size %u/%u (offset 58)",
			   eh.e_shentsize, eh.e_phentsize);
		return -1;
	}
	int found = -1;
	Elf64_Phdr *ph = NULL;
	Elf64_Shdr *sh = read_table(s, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), "section header table", err);
	if (!sh)
		goto out;
	ph = read_table(s, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), "program header table", err);
	if (!ph)
		goto out;
	unsigned dyn = 0, sym = 0; /* section 0 is never a symbol table */
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM && !dyn)
			dyn = i;
		if (sh[i].sh_type == SHT_SYMTAB && !sym)
			sym = i;
	}
	*flags = (dyn ? ELFSYM_DYNSYM : 0) | (sym ? ELFSYM_SYMTAB : 0);
	if (!dyn && !sym) {
		buf_puts(err, "no symbol table (no .dynsym, no .symtab: a stripped static executable?)");
		goto out;
	}
	found = 0;
	/* exported names first; the full table only for what is still missing */
	for (int pass = 0; pass < 2; pass++) {
		unsigned tab = pass == 0 ? dyn : sym;
		if (!tab || (size_t)found == n)
			continue;
		int r = scan_table(s, &eh, sh, tab, ph, names, n, offs, flags, err);
		if (r < 0) {
			found = -1;
			goto out;
		}
		found += r;
	}
out:
	free(sh);
	free(ph);
	return found;
}

int elfsym_find_file(const char *path, const char *const *names, size_t n, uint64_t *offs, unsigned *flags,
		     struct buf *err)
{
	if (flags)
		*flags = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	off_t end = lseek(fd, 0, SEEK_END);
	struct elf_src s = {.read = fd_read, .ctx = &fd, .size = end < 0 ? 0 : (uint64_t)end};
	struct buf e = BUF_INIT;
	int r = elfsym_find(&s, names, n, offs, flags, &e);
	if (r < 0)
		buf_printf(err, "%s: %.*s", path, (int)e.len, e.data);
	buf_free(&e);
	close(fd);
	return r;
}
