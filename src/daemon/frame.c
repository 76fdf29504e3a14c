/* frame.c - see frame.h. */
#include "frame.h"

#include <stdlib.h>
#include <string.h>

void frame_init(struct frame *f)
{
	memset(f, 0, sizeof *f);
	buf_init(&f->names);
}

void frame_reset(struct frame *f, int64_t wall_ns)
{
	f->n = 0;
	f->wall_ns = wall_ns;
	buf_reset(&f->names);
}

void frame_free(struct frame *f)
{
	free(f->vals);
	buf_free(&f->names);
	memset(f, 0, sizeof *f);
}

static uint32_t intern(struct frame *f, const char *s)
{
	uint32_t off = (uint32_t)f->names.len;
	buf_append(&f->names, s, strlen(s) + 1);
	return off;
}

static struct frame_value *add(struct frame *f, const char *key, enum fv_type t)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->vals = xrealloc(f->vals, f->cap * sizeof *f->vals);
	}
	struct frame_value *v = &f->vals[f->n++];
	v->type = t;
	v->key = intern(f, key);
	v->sval = 0;
	return v;
}

void frame_int(struct frame *f, const char *key, int64_t v) { add(f, key, FV_INT)->v.i = v; }
void frame_uint(struct frame *f, const char *key, uint64_t v) { add(f, key, FV_UINT)->v.u = v; }
void frame_float(struct frame *f, const char *key, double v) { add(f, key, FV_FLOAT)->v.f = v; }
void frame_str(struct frame *f, const char *key, const char *v)
{
	struct frame_value *x = add(f, key, FV_STRING);
	x->sval = intern(f, v);
}

void frame_append(struct frame *to, const struct frame *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct frame_value *v = &from->vals[i];
		const char *k = frame_key(from, v);
		switch (v->type) {
		case FV_INT: frame_int(to, k, v->v.i); break;
		case FV_UINT: frame_uint(to, k, v->v.u); break;
		case FV_FLOAT: frame_float(to, k, v->v.f); break;
		case FV_STRING: frame_str(to, k, from->names.data + v->sval); break;
		}
	}
}

static int cmp(const void *a, const void *b, void *names)
{
	const struct frame_value *x = a, *y = b;
	return strcmp((const char *)names + x->key, (const char *)names + y->key);
}

void frame_sort(struct frame *f)
{
	if (f->n < 2)
		return; /* and vals may still be NULL, which qsort_r must not see */
	qsort_r(f->vals, f->n, sizeof *f->vals, cmp, f->names.data);
}
