/*
 * json_write.c - the JSON writer: escaping and a comma-placing emitter.
 * Output is compact (no spaces); callers that need sorted keys (upstream
 * RPC responses, the JSON metric line) write keys in sorted order.
 */
#include "json.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_escape(struct buf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *e = s + n, *run = s;
	buf_reserve(b, n + 2);
	buf_putc(b, '"');
	while (s < e) {
		unsigned c = *s;
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0x80) {
			int l = utf8_seq(s, e);
			if (l > 0) {
				s += l;
				continue;
			}
		}
		buf_append(b, run, (size_t)(s - run));
		switch (c) {
		case '"': buf_append(b, "\\\"", 2); break;
		case '\\': buf_append(b, "\\\\", 2); break;
		case '\n': buf_append(b, "\\n", 2); break;
		case '\r': buf_append(b, "\\r", 2); break;
		case '\t': buf_append(b, "\\t", 2); break;
		case '\b': buf_append(b, "\\b", 2); break;
		case '\f': buf_append(b, "\\f", 2); break;
		default:
			if (c < 0x20) {
				char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				buf_append(b, u, 6);
			} else {
				buf_append(b, "\\ufffd", 6); /* invalid UTF-8 byte */
			}
		}
		s++;
		run = s;
	}
	buf_append(b, run, (size_t)(s - run));
	buf_putc(b, '"');
}

int json_fmt_f64(char *out, double v)
{
	if (v == 0)
		return snprintf(out, 32, signbit(v) ? "-0.0" : "0.0");
	for (int prec = 15; prec <= 17; prec++) {
		int n = snprintf(out, 32, "%.*g", prec, v);
		if (prec == 17 || strtod(out, NULL) == v)
			return n;
	}
	return 0;
}

void jw_init(struct jw *w, struct buf *b)
{
	memset(w, 0, sizeof *w);
	w->b = b;
}

static void pre(struct jw *w)
{
	if (w->after_key)
		w->after_key = false;
	else if (w->need_comma)
		buf_putc(w->b, ',');
	w->need_comma = true;
}

static void open(struct jw *w, char c)
{
	pre(w);
	buf_putc(w->b, c);
	w->depth++;
	w->need_comma = false;
}

static void close_(struct jw *w, char c)
{
	if (w->depth)
		w->depth--;
	buf_putc(w->b, c);
	w->need_comma = true;
	w->after_key = false;
}

void jw_obj_begin(struct jw *w) { open(w, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr_begin(struct jw *w) { open(w, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

void jw_keyn(struct jw *w, const char *k, size_t n)
{
	if (w->need_comma)
		buf_putc(w->b, ',');
	json_escape(w->b, k, n);
	buf_putc(w->b, ':');
	w->need_comma = true;
	w->after_key = true;
}

void jw_key(struct jw *w, const char *k) { jw_keyn(w, k, strlen(k)); }

void jw_strn(struct jw *w, const char *s, size_t n)
{
	pre(w);
	json_escape(w->b, s, n);
}

void jw_str(struct jw *w, const char *s) { jw_strn(w, s, strlen(s)); }

void jw_i64(struct jw *w, int64_t v)
{
	pre(w);
	buf_put_i64(w->b, v);
}

void jw_u64(struct jw *w, uint64_t v)
{
	pre(w);
	buf_put_u64(w->b, v);
}

void jw_f64(struct jw *w, double v)
{
	pre(w);
	if (!isfinite(v)) {
		buf_append(w->b, "null", 4);
		return;
	}
	char t[32];
	int n = json_fmt_f64(t, v);
	buf_append(w->b, t, (size_t)n);
}

void jw_bool(struct jw *w, bool v)
{
	pre(w);
	buf_puts(w->b, v ? "true" : "false");
}

void jw_null(struct jw *w)
{
	pre(w);
	buf_append(w->b, "null", 4);
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
	pre(w);
	buf_append(w->b, s, n);
}

void jw_value(struct jw *w, const struct json_value *v)
{
	switch (v->type) {
	case JV_NULL: jw_null(w); break;
	case JV_BOOL: jw_bool(w, v->u.b); break;
	case JV_NUMBER: jw_raw(w, v->u.num.raw, v->len); break;
	case JV_STRING: jw_strn(w, v->u.str, v->len); break;
	case JV_ARRAY:
		jw_arr_begin(w);
		for (uint32_t i = 0; i < v->len; i++)
			jw_value(w, &v->u.items[i]);
		jw_arr_end(w);
		break;
	case JV_OBJECT:
		jw_obj_begin(w);
		for (uint32_t i = 0; i < v->len; i++) {
			jw_keyn(w, v->u.members[i].key, v->u.members[i].key_len);
			jw_value(w, &v->u.members[i].value);
		}
		jw_obj_end(w);
		break;
	}
}
