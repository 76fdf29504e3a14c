/*
 * utf8.h - the one UTF-8 sequence check, shared by the JSON reader (which
 * validates input) and the JSON writer (which must never emit invalid UTF-8).
 */
#ifndef DYNO_UTF8_H
#define DYNO_UTF8_H

/* Length of the valid UTF-8 sequence at s (s < e, *s >= 0x80): 2..4; 0 if
 * invalid (overlong forms, UTF-16 surrogates, > U+10FFFF, bad continuation
 * bytes); -1 if it may be valid but is cut by e. */
static inline int utf8_seq(const unsigned char *s, const unsigned char *e)
{
	unsigned c = s[0];
	int n;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* no UTF-16 surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (int i = 1; i < n; i++) {
		if (s + i >= e)
			return -1;
		unsigned b = s[i];
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
			return 0;
	}
	return n;
}

#endif
