/* dl.c - see dl.h. */
#include "dl.h"

#include <dlfcn.h>
#include <string.h>

bool dl_load(struct dl_lib *l, struct buf *err)
{
	if (l->loaded)
		return true;
	struct buf why = BUF_INIT;
	void *h = NULL;
	const char *so = NULL;
	for (size_t i = 0; l->sonames[i] && !h; i++) {
		so = l->sonames[i];
		h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();
			buf_printf(&why, "%s%s", why.len ? "; " : "", e ? e : so);
		}
	}
	if (!h) {
		buf_printf(err, "%s: %s", l->purpose, why.len ? why.data : "no library named");
		buf_free(&why);
		return false;
	}
	buf_reset(&why); /* the sonames that failed before this one do not matter */
	/* resolve every entry point before deciding, so the message names every gap */
	for (size_t i = 0; i < l->nsyms; i++) {
		void *p = dlsym(h, l->syms[i].name);
		memcpy((char *)l->api + l->syms[i].offset, &p, sizeof p);
		if (!p)
			buf_printf(&why, "%s%s", why.len ? ", " : "", l->syms[i].name);
	}
	if (why.len) {
		/* the handle stays open: dlopen() of it again is cheap and gives the same answer */
		buf_printf(err, "%s lacks %s (too old?)", so, why.data);
		buf_free(&why);
		return false;
	}
	buf_free(&why);
	l->loaded = so;
	return true;
}
