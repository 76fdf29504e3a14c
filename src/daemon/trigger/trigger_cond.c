/* trigger_cond.c - see trigger_cond.h.  Costs a few comparisons a tick. */
#include "trigger_cond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

static const char *const op_text[] = {"<", "<=", ">", ">=", "==", "!="};

const char *trig_op_str(enum trig_op op) { return op_text[op]; }

static bool key_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       strchr("_.-:/@", ch) != NULL;
}

static size_t skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

bool trig_duration_parse(const char *s, size_t n, int64_t max, int64_t *out)
{
	size_t i = 0;
	int64_t v = 0;
	if (n == 0 || s[0] < '0' || s[0] > '9')
		return false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (max - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	int64_t mul = 1;
	if (i < n) {
		switch (s[i]) {
		case 's': mul = 1; break;
		case 'm': mul = 60; break;
		case 'h': mul = 3600; break;
		case 'd': mul = 86400; break;
		default: return false;
		}
		if (++i != n)
			return false;
	}
	if (v > max / mul)
		return false;
	*out = v * mul;
	return true;
}

bool trig_cond_parse(const char *s, size_t n, struct trig_cond *c, struct buf *err)
{
	memset(c, 0, sizeof *c);
	size_t i = skip_space(s, n, 0), k0 = i;
	while (i < n && key_char(s[i]))
		i++;
	if (i == k0) {
		buf_printf(err, "column %zu: a metric key was expected (e.g. \"cpu_util > 90 for 60s\")", i + 1);
		return false;
	}
	if (i - k0 > TRIG_KEY_MAX) {
		buf_printf(err, "column %zu: the metric key is longer than %d bytes", k0 + 1, TRIG_KEY_MAX);
		return false;
	}
	memcpy(c->key, s + k0, i - k0);
	i = skip_space(s, n, i);
	size_t o0 = i;
	while (i < n && strchr("<>=!", s[i]))
		i++;
	bool op_ok = false;
	for (int o = 0; o < 6 && !op_ok; o++)
		if (strlen(op_text[o]) == i - o0 && memcmp(op_text[o], s + o0, i - o0) == 0) {
			c->op = (enum trig_op)o;
			op_ok = true;
		}
	if (!op_ok) {
		buf_printf(err, "column %zu: one of < <= > >= == != was expected after \"%s\"", o0 + 1, c->key);
		return false;
	}
	i = skip_space(s, n, i);
	size_t v0 = i;
	while (i < n && s[i] != ' ' && s[i] != '\t')
		i++;
	struct json_num num;
	if (i == v0 || !json_parse_number(s + v0, i - v0, &num)) {
		buf_printf(err, "column %zu: a number was expected after \"%s\"", v0 + 1, op_text[c->op]);
		return false;
	}
	char tmp[64];
	size_t vl = i - v0 < sizeof tmp - 1 ? i - v0 : sizeof tmp - 1;
	memcpy(tmp, s + v0, vl);
	tmp[vl] = 0;
	c->value = json_num_f64(&num, tmp, vl);
	if (!isfinite(c->value)) {
		buf_printf(err, "column %zu: the number is out of range", v0 + 1);
		return false;
	}
	i = skip_space(s, n, i);
	if (i == n)
		return true;
	if (n - i < 3 || memcmp(s + i, "for", 3) != 0 || (n - i > 3 && s[i + 3] != ' ' && s[i + 3] != '\t')) {
		buf_printf(err, "column %zu: \"for DURATION\" or the end was expected", i + 1);
		return false;
	}
	i = skip_space(s, n, i + 3);
	size_t d0 = i;
	while (i < n && s[i] != ' ' && s[i] != '\t')
		i++;
	if (!trig_duration_parse(s + d0, i - d0, TRIG_FOR_MAX_S, &c->for_s)) {
		buf_printf(err, "column %zu: a duration (90, 90s, 5m, 2h) of at most %d days was expected", d0 + 1,
			   TRIG_FOR_MAX_S / 86400);
		return false;
	}
	if (skip_space(s, n, i) != n) {
		buf_printf(err, "column %zu: unexpected text after the duration", skip_space(s, n, i) + 1);
		return false;
	}
	return true;
}

void trig_cond_format(const struct trig_cond *c, struct buf *out)
{
	char num[32];
	json_fmt_f64(num, c->value);
	buf_printf(out, "%s %s %s", c->key, op_text[c->op], num);
	if (c->for_s)
		buf_printf(out, " for %llds", (long long)c->for_s);
}

bool trig_cond_true(const struct trig_cond *c, double v)
{
	switch (c->op) {
	case TRIG_LT: return v < c->value;
	case TRIG_LE: return v <= c->value;
	case TRIG_GT: return v > c->value;
	case TRIG_GE: return v >= c->value;
	case TRIG_EQ: return v == c->value;
	case TRIG_NE: return v != c->value;
	}
	return false;
}

bool trig_window_step(const struct trig_cond *c, struct trig_window *w, int src, int64_t interval_s, bool present,
		      double value, bool gate)
{
	if (!present) {
		/* absent in the frame of its own collector: unavailable */
		if (w->src == src) {
			w->held_s = 0;
			w->have_last = false;
		}
		return false;
	}
	w->src = src;
	w->last = value;
	w->have_last = true;
	if (!gate || isnan(value) || !trig_cond_true(c, value)) {
		w->held_s = 0;
		return false;
	}
	if (w->held_s < TRIG_FOR_MAX_S + interval_s)
		w->held_s += interval_s > 0 ? interval_s : 1;
	return w->held_s >= c->for_s;
}
