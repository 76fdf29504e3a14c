/* demangle.c - see demangle.h. */
#include <stdlib.h>
#include <string.h>

#include "core/dl.h"
#include "gpusnoop/demangle.h"

/* the Itanium C++ ABI's demangler (cxxabi.h), as libstdc++ exports it */
struct cxxabi_api {
	char *(*cxa_demangle)(const char *mangled, char *out, size_t *len, int *status);
};

static struct cxxabi_api api;
static const char *const sonames[] = {"libstdc++.so.6", NULL};
static const struct dl_sym syms[] = {DL_SYM(struct cxxabi_api, cxa_demangle, "__cxa_demangle")};
static struct dl_lib lib = {
	.purpose = "readable C++ names need libstdc++ (Debian: libstdc++6)",
	.sonames = sonames,
	.syms = syms,
	.nsyms = 1,
	.api = &api,
};

char *demangle(const char *name)
{
	static int state; /* 0 not tried, 1 loaded, -1 not there (asked once) */
	if (!name || strncmp(name, "_Z", 2) != 0 || strnlen(name, DEMANGLE_MAX_IN + 1) > DEMANGLE_MAX_IN)
		return NULL;
	if (!state) {
		struct buf err = BUF_INIT;
		state = dl_load(&lib, &err) ? 1 : -1;
		buf_free(&err);
	}
	if (state < 0)
		return NULL;
	/* no status: libstdc++'s takes NULL, and a NULL result says failure */
	char *out = api.cxa_demangle(name, NULL, NULL, NULL);
	if (!out || !*out) {
		free(out);
		return NULL;
	}
	return out;
}
