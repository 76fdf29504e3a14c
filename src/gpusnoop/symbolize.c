/*
 * symbolize.c - see symbolize.h.  A Dwfl reported from /proc/PID/maps once
 * at open; lookups are dwfl_addrmodule + dwfl_module_addrinfo + getsrc.
 * Demangled names are cached in a chained hash keyed by the address of
 * libdw's name string (stable while the Dwfl lives), failures too.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/buf.h"
#include "gpusnoop/demangle.h"
#include "gpusnoop/symbolize.h"

struct readable {
	struct readable *next;
	const char *mangled;
	char *name; /* NULL: not demangled */
};

#define SYM_BUCKETS 1024
struct symbolizer {
	Dwfl *dwfl;
	struct readable *bucket[SYM_BUCKETS];
};

static const char *readable_name(struct symbolizer *s, const char *mangled)
{
	size_t h = (size_t)(((uintptr_t)mangled * 0x9E3779B97F4A7C15ull) >> 40) % SYM_BUCKETS;
	for (struct readable *r = s->bucket[h]; r; r = r->next)
		if (r->mangled == mangled)
			return r->name;
	struct readable *r = xmalloc(sizeof(*r));
	*r = (struct readable){.next = s->bucket[h], .mangled = mangled, .name = demangle(mangled)};
	s->bucket[h] = r;
	return r->name;
}

struct symbolizer *sym_open(pid_t pid)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = NULL,
	};
	s->dwfl = dwfl_begin(&cb);
	if (!s->dwfl) {
		free(s);
		return NULL;
	}
	dwfl_report_begin(s->dwfl);
	int r = dwfl_linux_proc_report(s->dwfl, pid);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (r != 0) {
		sym_close(s);
		return NULL;
	}
	return s;
}

void sym_lookup(struct symbolizer *s, uint64_t addr, bool return_addr, struct sym_frame *out)
{
	*out = (struct sym_frame){0};
	if (!s)
		return;
	/* a return address is after its call: look up the call itself */
	Dwarf_Addr a = return_addr && addr ? addr - 1 : addr;
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, a);
	if (!m)
		return;
	Dwarf_Addr start, end;
	const char *module = dwfl_module_info(m, NULL, &start, &end, NULL, NULL, NULL, NULL);
	/* elfutils (0.188) gives the last module for any address above it: a
	 * frame of garbage (a frame-pointer walk through code built without
	 * them, as PyTorch's) then read "ld-linux-x86-64.so.2+0x63805c27b31f01"
	 * on a real H200 run.  Outside the module's range it is no module. */
	if (a < start || a >= end)
		return;
	out->module = module;
	out->module_offset = addr - start;
	GElf_Off off = 0;
	GElf_Sym sym;
	out->function = dwfl_module_addrinfo(m, a, &off, &sym, NULL, NULL, NULL);
	if (out->function) {
		out->offset = off + (a != addr);
		const char *r = readable_name(s, out->function);
		if (r)
			out->symbol = out->function, out->function = r;
	}
	Dwfl_Line *l = dwfl_module_getsrc(m, a);
	if (l) {
		int line = 0;
		const char *f = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		if (f && line > 0) {
			out->file = f;
			out->line = line;
		}
		return;
	}
	/* dwfl_module_getsrc finds the unit through .debug_aranges, which clang
	 * does not emit by default (elfutils 0.188): ask each unit instead */
	Dwarf_Addr bias;
	for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(m, cu, &bias));) {
		if (dwarf_haspc(cu, a - bias) <= 0)
			continue;
		Dwarf_Line *dl = dwarf_getsrc_die(cu, a - bias);
		int line = 0;
		const char *f = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
		if (f && dwarf_lineno(dl, &line) == 0 && line > 0) {
			out->file = f;
			out->line = line;
		}
		return;
	}
}

void sym_close(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t i = 0; i < SYM_BUCKETS; i++)
		for (struct readable *r = s->bucket[i], *nx; r; r = nx) {
			nx = r->next;
			free(r->name);
			free(r);
		}
	free(s);
}

int sym_plausible_frames(const uint64_t *ips, int k)
{
	int n = 0;
	while (n < k && ips[n] != 0 && ips[n] < (1ull << 47))
		n++;
	return n;
}
