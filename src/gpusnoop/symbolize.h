/*
 * symbolize.h - user addresses of the watched process to function names and
 * file:line, with elfutils' libdw (DWARF where the object has it, else the
 * ELF symbol table: function+offset, else the module and its offset);
 * C++ names demangled (demangle.c), the mangled one kept beside.
 * Opened while the process lives (its maps are read then), used at the
 * report, when it may have exited: the objects are re-read by path.
 *
 * Cost: libdw reads an object's symbols and DWARF the first time one of
 * its addresses is asked about; nothing for objects no stack touches.  A
 * C++ name is demangled once (cached by libdw's string).
 */
#ifndef DYNO_GPUSNOOP_SYMBOLIZE_H
#define DYNO_GPUSNOOP_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

struct sym_frame {
	const char *function; /* NULL: unknown; C++ names demangled */
	const char *symbol;   /* the mangled name, where function is its demangled form; else NULL */
	uint64_t offset;      /* from the function's start */
	const char *file;     /* NULL: no line info */
	int line;
	const char *module;   /* NULL: the address is in no mapped object */
	uint64_t module_offset;
};

/* NULL when the process cannot be read (gone); frames then stay unnamed. */
struct symbolizer *sym_open(pid_t pid);
/* A frame of a user stack; return_addr: the address is a return address
 * (its call is the instruction before it, which gives the right line). */
void sym_lookup(struct symbolizer *s, uint64_t addr, bool return_addr, struct sym_frame *out);
void sym_close(struct symbolizer *s);

/* How many of a stack's first k addresses to show: up to the first that no
 * user code can be at (0, or at or above 2^47, the top of the address space
 * a process gets unless it asks for 5-level paging's).  A frame-pointer walk
 * through code built without them (PyTorch on a real H200) goes on from
 * there with stack addresses and data: 0x6400000006ff01, 0xc7481b74ff8548. */
int sym_plausible_frames(const uint64_t *ips, int k);

#endif
