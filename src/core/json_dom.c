/*
 * json_dom.c - a small tree built from the tokenizer, for the small JSON
 * documents of the project (RPC requests, IPC payloads, config files).
 * Traces never go through here: they are streamed token by token.
 *
 * All nodes and strings of one document live in one arena, freed at once.
 */
#include "json.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

static void *arena_alloc(struct json_doc *d, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct arena_block *b = d->arena;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 8192 ? n : 8192;
		struct arena_block *nb = xmalloc(sizeof *nb + cap);
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		d->arena = b = nb;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

static const char *arena_str(struct json_doc *d, const char *s, size_t n)
{
	char *p = arena_alloc(d, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static bool build(struct json_reader *r, enum json_tok t, struct json_doc *d, struct json_value *out)
{
	memset(out, 0, sizeof *out);
	switch (t) {
	case JSON_NULL: out->type = JV_NULL; return true;
	case JSON_TRUE:
	case JSON_FALSE:
		out->type = JV_BOOL;
		out->u.b = t == JSON_TRUE;
		return true;
	case JSON_NUMBER:
		out->type = JV_NUMBER;
		out->u.num.raw = arena_str(d, r->tstart, r->tlen);
		out->u.num.n = r->num;
		out->len = (uint32_t)r->tlen;
		return true;
	case JSON_STRING:
		if (r->slen > UINT32_MAX)
			return json_fail_at(r, json_tok_offset(r), "string too long");
		out->type = JV_STRING;
		out->u.str = arena_str(d, r->sval, r->slen);
		out->len = (uint32_t)r->slen;
		return true;
	case JSON_ARR_BEGIN: {
		struct buf items = BUF_INIT;
		uint32_t n = 0;
		for (;;) {
			enum json_tok c = json_next(r);
			if (c == JSON_ARR_END)
				break;
			struct json_value v;
			if (c == JSON_ERROR || !build(r, c, d, &v)) {
				buf_free(&items);
				return false;
			}
			buf_append(&items, &v, sizeof v);
			n++;
		}
		out->type = JV_ARRAY;
		out->len = n;
		out->u.items = arena_alloc(d, items.len);
		memcpy(out->u.items, items.data, items.len);
		buf_free(&items);
		return true;
	}
	case JSON_OBJ_BEGIN: {
		struct buf mem = BUF_INIT;
		uint32_t n = 0;
		for (;;) {
			enum json_tok c = json_next(r);
			if (c == JSON_OBJ_END)
				break;
			if (c != JSON_KEY) {
				buf_free(&mem);
				return false;
			}
			struct json_member m;
			m.key = arena_str(d, r->sval, r->slen);
			m.key_len = (uint32_t)r->slen;
			c = json_next(r);
			if (c == JSON_ERROR || !build(r, c, d, &m.value)) {
				buf_free(&mem);
				return false;
			}
			buf_append(&mem, &m, sizeof m);
			n++;
		}
		out->type = JV_OBJECT;
		out->len = n;
		out->u.members = arena_alloc(d, mem.len);
		memcpy(out->u.members, mem.data, mem.len);
		buf_free(&mem);
		return true;
	}
	default: return false;
	}
}

bool json_parse(const char *s, size_t n, struct json_doc *doc, struct json_error *err)
{
	struct json_reader r;
	json_reader_init_mem(&r, s, n, 0);
	doc->root = NULL;
	doc->arena = NULL;
	struct json_value *root = arena_alloc(doc, sizeof *root);
	enum json_tok t = json_next(&r);
	bool ok = t != JSON_ERROR && build(&r, t, doc, root) && json_next(&r) == JSON_EOF;
	if (ok)
		doc->root = root;
	else {
		if (err)
			*err = r.err;
		json_doc_free(doc);
	}
	json_reader_free(&r);
	return ok;
}

void json_doc_free(struct json_doc *doc)
{
	struct arena_block *b = doc->arena;
	while (b) {
		struct arena_block *n = b->next;
		free(b);
		b = n;
	}
	doc->arena = NULL;
	doc->root = NULL;
}

const struct json_value *json_get(const struct json_value *v, const char *key)
{
	if (!v || v->type != JV_OBJECT)
		return NULL;
	size_t kl = strlen(key);
	for (uint32_t i = 0; i < v->len; i++)
		if (v->u.members[i].key_len == kl && memcmp(v->u.members[i].key, key, kl) == 0)
			return &v->u.members[i].value;
	return NULL;
}

bool json_get_str(const struct json_value *obj, const char *key, const char **s, size_t *len)
{
	const struct json_value *v = json_get(obj, key);
	if (!v || v->type != JV_STRING)
		return false;
	*s = v->u.str;
	if (len)
		*len = v->len;
	return true;
}

bool json_value_i64(const struct json_value *v, int64_t *out)
{
	return v && v->type == JV_NUMBER && json_num_i64(&v->u.num.n, out);
}

bool json_get_i64(const struct json_value *obj, const char *key, int64_t *out)
{
	return json_value_i64(json_get(obj, key), out);
}

bool json_get_bool(const struct json_value *obj, const char *key, bool *out)
{
	const struct json_value *v = json_get(obj, key);
	if (!v || v->type != JV_BOOL)
		return false;
	*out = v->u.b;
	return true;
}

double json_value_f64(const struct json_value *v)
{
	if (!v || v->type != JV_NUMBER)
		return 0.0 / 0.0;
	return json_num_f64(&v->u.num.n, v->u.num.raw, v->len);
}
