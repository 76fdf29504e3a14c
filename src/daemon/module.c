/* module.c - see module.h: config instances described by option rows, and
 * the self-metrics list. */
#include "module.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static void *field(const struct arg_opt *row, const void *cfg) { return (char *)cfg + (uintptr_t)row->ptr; }

void *mod_config_new(const struct mod_config *m)
{
	void *c = xmalloc(m->size ? m->size : 1);
	memcpy(c, m->defaults, m->size);
	return c;
}

void *mod_config_clone(const struct mod_config *m, const void *cfg)
{
	void *c = xmalloc(m->size ? m->size : 1);
	memcpy(c, cfg, m->size);
	for (const struct arg_opt *o = m->opts; o->name; o++) {
		if (o->type != ARG_STRING)
			continue;
		const char **s = field(o, c);
		*s = *s ? xstrdup(*s) : NULL;
	}
	return c;
}

void mod_config_free(const struct mod_config *m, void *cfg)
{
	if (!cfg)
		return;
	for (const struct arg_opt *o = m->opts; o->name; o++)
		if (o->type == ARG_STRING)
			free(*(char **)field(o, cfg));
	free(cfg);
}

bool mod_opt_changed(const struct arg_opt *row, const void *a, const void *b)
{
	const void *x = field(row, a), *y = field(row, b);
	switch (row->type) {
	case ARG_BOOL: return *(const bool *)x != *(const bool *)y;
	case ARG_INT: return *(const int64_t *)x != *(const int64_t *)y;
	case ARG_DOUBLE: return memcmp(x, y, sizeof(double)) != 0;
	case ARG_STRING: {
		const char *s = *(const char *const *)x, *t = *(const char *const *)y;
		return strcmp(s ? s : "", t ? t : "") != 0;
	}
	}
	return true;
}

void mod_opt_copy(const struct arg_opt *row, void *dst, const void *src)
{
	void *d = field(row, dst);
	const void *s = field(row, src);
	if (row->type == ARG_STRING) {
		const char *v = *(const char *const *)s;
		free(*(char **)d);
		*(char **)d = v ? xstrdup(v) : NULL;
		return;
	}
	memcpy(d, s, row->type == ARG_BOOL ? sizeof(bool) : row->type == ARG_INT ? sizeof(int64_t) : sizeof(double));
}

size_t mod_rows_count(const struct mod_config *m)
{
	size_t n = 0;
	while (m->opts && m->opts[n].name)
		n++;
	return n;
}

size_t mod_rows_bind(const struct mod_config *m, void *cfg, struct arg_opt *out, bool *seen)
{
	size_t n = mod_rows_count(m);
	for (size_t i = 0; i < n; i++) {
		out[i] = m->opts[i];
		out[i].ptr = field(&m->opts[i], cfg);
		out[i].seen = seen ? &seen[i] : NULL;
	}
	return n;
}

void self_add(struct self_metrics *s, const char *name, const char *help, const char *type, const char *label,
	      const char *label_value, double value)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = (struct self_metric){name, help, type, label, label_value, value};
}

void self_metrics_free(struct self_metrics *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}
