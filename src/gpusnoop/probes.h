/*
 * probes.h - what gpusnoop probes and where: the table of probed functions
 * (each one's symbol names - C names, or the C++ mangled names PyTorch's
 * releases used -, the event group it belongs to, its BPF program and
 * cookie), and the search of a process's mapped files (plus --lib) for
 * them, per file, in .dynsym and .symtab (elfsym.c).  No BPF here: the
 * loader (main.c) attaches what this finds; the unit tests drive it on
 * files.
 *
 * Cost: one read of /proc/PID/maps; per mapped file its headers and
 * symbol tables (a few MB for a 1 GB library; its .symtab only when its
 * .dynsym lacks a name).
 */
#ifndef DYNO_GPUSNOOP_PROBES_H
#define DYNO_GPUSNOOP_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/buf.h"
#include "gpusnoop/event.h"

/* event groups (--events mem,launch,sync; --torch; the current device, with --trace) */
enum { GROUP_MEM = 1, GROUP_LAUNCH = 2, GROUP_SYNC = 4, GROUP_TORCH = 8, GROUP_DEVICE = 16 };

enum probe_prog { PROG_ALLOC, PROG_FREE, PROG_LAUNCH, PROG_SYNC, PROG_DEV };

#define PROBE_MAX_NAMES 3
struct probe_def {
	uint32_t fn;          /* enum snoop_fn, its index in probe_defs */
	unsigned group;
	enum probe_prog prog; /* entry program */
	bool ret;             /* and a return probe (PROG_ALLOC, PROG_SYNC, cudaLaunchKernel, device queries) */
	uint32_t cookie;      /* COOKIE(...), event.h */
	const char *name;     /* what the report calls it */
	const char *syms[PROBE_MAX_NAMES + 1]; /* symbol names, NULL-ended: the first found in a file is probed */
};

extern const struct probe_def probe_defs[FN_COUNT];

const char *snoop_fn_name(uint32_t fn);
const char *snoop_space_name(uint32_t space);
/* the spaces (bit per enum snoop_space) the groups' functions fill */
unsigned probe_spaces(unsigned groups);
/* "mem,launch,sync" -> GROUP_* bits; false with a message for an unknown word */
bool probe_parse_events(const char *spec, unsigned *groups, struct buf *err);

struct probe_file {
	char *path;
	dev_t dev;
	ino_t ino;
	bool named;              /* given with --lib (its errors are the user's to see) */
	unsigned elf_flags;      /* ELFSYM_* */
	int nfound;
	uint64_t off[FN_COUNT];  /* file offset of each probed function; 0: not in this file */
	/* probe_set_place: bytes of a leading endbr64 the probe sits after
	 * (0 or 4), and whether the kernel single-steps the instruction the
	 * probe replaces (enum probe_insn) */
	uint8_t skipped[FN_COUNT];
	uint8_t insn[FN_COUNT];
};

struct probe_set {
	struct probe_file *f;
	int n;
	int nfound, nfiles;      /* functions found, over files holding at least one */
	unsigned found_groups;   /* GROUP_* of what was found */
	int nstripped;           /* files named like CUDA libraries, stripped, holding none of them */
	struct buf warnings;     /* lines for stderr: stripped CUDA-looking files, missing PyTorch symbols */
	int nstepped;            /* probes (after probe_set_place) on an instruction the kernel single-steps */
	struct buf placement;    /* a line per probe: where it sits, its instruction (-v) */
};

/* Adds a file unless the same file (path or device+inode) is there. */
void probe_set_add(struct probe_set *s, const char *path, bool named);
/* The files /proc/PID/maps names, seen through /proc/PID/root (containers);
 * -1 (errno set) when the maps cannot be read. */
int probe_set_add_maps(struct probe_set *s, pid_t pid);
/*
 * Looks up the groups' functions in every file.  A named file that cannot
 * be read is an error (-1, message in err); mapped files that are not ELF
 * are skipped (said in err_verbose lines when wanted).  Fills warnings.
 */
int probe_set_find(struct probe_set *s, unsigned groups, struct buf *skipped, struct buf *err);
void probe_set_free(struct probe_set *s);

/*
 * Where a uprobe costs least.  On x86 the kernel emulates a few first
 * instructions (push of a register, jmp, call, jcc, nop) in the trap
 * itself; any other one it copies out of line and single-steps: a second
 * trap (#DB), ~3x the cost on bare metal, ~10-25x in a virtual machine
 * (measured on the 2-core VM: 0.6 us against 14-16 us).  A function built
 * with -fcf-protection starts with endbr64, never emulated: the probe goes
 * 4 bytes in, onto the instruction after it (registers and stack are as
 * at entry there: endbr64 changes neither, and without user-space
 * indirect-branch tracking, which Linux does not enable, it is a nop).
 * INSN_UNKNOWN: not x86, or the code could not be read.
 */
enum probe_insn { INSN_UNKNOWN, INSN_EMULATED, INSN_STEPPED };
/* bytes of code at a function's entry -> bytes to skip (0 or 4) */
size_t probe_entry_skip(const uint8_t *code, size_t n);
/* the class of the instruction at code; *what names it ("push", "jmp", ...,
 * or its first opcode byte in hex when single-stepped) */
enum probe_insn probe_insn_class(const uint8_t *code, size_t n, char *what, size_t what_size);
/* Reads each found function's first bytes, moves its probe past a leading
 * endbr64 (unless at_entry), classifies the instruction the probe lands
 * on; fills nstepped and placement.  x86-64 only (elsewhere: nothing). */
void probe_set_place(struct probe_set *s, bool at_entry);

/* Does the kernel offer uprobes (the uprobe PMU, or tracefs' uprobe_events
 * that libbpf falls back to)?  root prefixes the paths ("" on a host; a
 * fixture tree in tests).  false with the reason in why. */
bool probe_kernel_has_uprobes(const char *root, struct buf *why);

#endif
