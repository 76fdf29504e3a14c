/*
 * trace_out.c - the file side of the trace writers (trace_out.h): plain or
 * gzip by the name, written as given, removed on failure.
 */
#include <errno.h>
#include <string.h>

#include "analyze/trace_out.h"

int trace_out_open(struct trace_out *o, const char *path, struct buf *err)
{
	size_t len = strlen(path);
	o->path = path;
	o->f = NULL;
	o->gz = NULL;
	if (len > 3 && strcmp(path + len - 3, ".gz") == 0)
		o->gz = gzopen(path, "wb");
	else
		o->f = fopen(path, "wb");
	if (!o->gz && !o->f) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

bool trace_out_write(struct trace_out *o, const void *p, size_t n)
{
	if (!n)
		return true;
	if (o->gz)
		return gzwrite(o->gz, p, (unsigned)n) == (int)n;
	return fwrite(p, 1, n, o->f) == n;
}

bool trace_out_flush(struct trace_out *o, struct buf *b, bool force)
{
	if (!force && b->len < (1u << 20))
		return true;
	bool ok = trace_out_write(o, b->data, b->len);
	buf_reset(b);
	return ok;
}

int trace_out_close(struct trace_out *o, bool ok, struct buf *err)
{
	int rc = o->gz ? gzclose(o->gz) : fclose(o->f);
	if (ok && rc != 0) {
		buf_printf(err, "%s: write failed: %s", o->path, strerror(errno));
		ok = false;
	}
	if (!ok)
		remove(o->path);
	return ok ? 0 : -1;
}
