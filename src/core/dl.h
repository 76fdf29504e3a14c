/*
 * dl.h - optional shared libraries, loaded at run time with dlopen().
 *
 * The daemon keeps its resident set small by not linking what most hosts
 * never switch on (libcurl for OTLP, libmicrohttpd for Prometheus,
 * libsystemd for readiness; NVML, DCGM and libbpf next).  A user declares
 * the library once -- the sonames to try, a hint naming the package, and a
 * table of the entry points it calls, each stored into a field of its own
 * struct of typed function pointers -- and calls dl_load() when the feature
 * is switched on.  On failure the message says in one line which library
 * or which symbols are missing (every missing symbol, not just the first).
 *
 * Cost: one dlopen() and a dlsym() per entry point, the first time only; a
 * loaded library is never unloaded (its code may be running).  A library
 * that was not found, or lacked an entry point, is looked for again on the
 * next call, so installing the package and reloading the daemon is enough.
 */
#ifndef DYNO_DL_H
#define DYNO_DL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

/* One entry point: its symbol name and where it goes in the API struct. */
struct dl_sym {
	const char *name;
	size_t offset; /* offsetof(struct my_api, field); the field is a function pointer */
};
#define DL_SYM(type, field, symbol) {symbol, offsetof(type, field)}

struct dl_lib {
	const char *purpose;          /* "OTLP needs libcurl (Debian: apt install libcurl4)" */
	const char *const *sonames;   /* tried in order, NULL-terminated */
	const struct dl_sym *syms;    /* the entry points, all required */
	size_t nsyms;
	void *api;                    /* struct of function pointers filled by dl_load */
	const char *loaded;           /* set by dl_load: the soname that loaded */
};

/* Load l (once: true at once when already loaded) and fill its API struct.
 * False with the reason appended to err: "<purpose>: <dlerror of each
 * soname tried>" when none loads, "<soname> lacks a, b (too old?)" when
 * entry points are missing.  Not thread-safe (the daemon has one thread). */
bool dl_load(struct dl_lib *l, struct buf *err);

#endif
