/*
 * demangle.h - C++ function names made readable for gpusnoop's reports
 * (PyTorch's frames: _ZN3c104cuda...allocateEm ->
 * c10::cuda::...::allocate(unsigned long)), by libstdc++'s own demangler,
 * __cxa_demangle, dlopen'ed from libstdc++.so.6: gpusnoop links no C++
 * runtime, and where there is none the names stay mangled.  The names come
 * from the watched process's files, so the input is bounded and anything
 * the demangler refuses keeps its mangled form.
 *
 * Cost: one dlopen the first time; then one __cxa_demangle per name (a
 * few us; the symbolizer caches its answers).
 */
#ifndef DYNO_GPUSNOOP_DEMANGLE_H
#define DYNO_GPUSNOOP_DEMANGLE_H

#include <stddef.h>

/* names longer than this are left mangled: the demangler keeps arrays
 * proportional to its input on the stack */
#define DEMANGLE_MAX_IN 8192

/* The readable name (malloc'd: free it), or NULL: not a C++ name ("_Z..."),
 * too long, not a valid one, or no libstdc++ to ask. */
char *demangle(const char *name);

#endif
