/*
 * scan.h - the byte scans of the JSON hot paths, 16 bytes per step: the end
 * of a whitespace run and the end of a plain string run.  Shared by the
 * tokenizer (json.c) and the trace loader's fast path (trace/load_fast.c),
 * so both read strings and whitespace by the same rules at the same speed.
 *
 * SSE2 is the x86-64 baseline; DYNO_SSE2 is the one test for it (0 or 1,
 * from the compiler's __SSE2__, never from a HAVE_* macro some other header
 * may define).  Elsewhere the scans are plain loops over the same sets of
 * bytes.  Everything is inline: these run once or more per JSON token.
 */
#ifndef DYNO_CORE_SCAN_H
#define DYNO_CORE_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define DYNO_SSE2 1
#else
#define DYNO_SSE2 0
#endif

/* JSON whitespace (RFC 8259): space, \n, \r, \t; most bytes fail the
 * first compare. */
static inline bool scan_is_ws(unsigned char c)
{
	return c <= ' ' && (c == ' ' || c == '\n' || c == '\r' || c == '\t');
}

/* Bytes that end a plain run inside a string: the closing quote, an
 * escape, a control byte (invalid) or a byte >= 0x80 (UTF-8 to check). */
static inline bool scan_is_str_special(unsigned char c)
{
	return c == '"' || c == '\\' || c < 0x20 || c >= 0x80;
}

#if DYNO_SSE2
/* Bit i set: s[i] is not whitespace. */
static inline unsigned scan16_nonws(const char *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	__m128i w = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
	return (unsigned)_mm_movemask_epi8(w) ^ 0xffffu;
}

/* Bit i set: s[i] is special in a string (scan_is_str_special). */
static inline unsigned scan16_str_special(const char *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	/* signed compare: < 0x20 catches control bytes and bytes >= 0x80 */
	__m128i m = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
		_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
	return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* The first byte of [s, e) that is not whitespace, or e.  Runs between
 * JSON tokens are 0 to ~10 bytes ("\n      " before a key): the usual
 * cases (nothing, or the one space after ':' or ',') are settled first,
 * then one 16-byte compare settles most of the rest without a loop whose
 * mispredicted exit would cost more than the bytes. */
static inline __attribute__((always_inline)) const char *scan_ws(const char *s, const char *e)
{
	if (__builtin_expect(e - s >= 2, 1)) {
		if (!scan_is_ws((unsigned char)s[0]))
			return s;
		if (s[0] == ' ' && !scan_is_ws((unsigned char)s[1]))
			return s + 1;
	}
#if DYNO_SSE2
	while (e - s >= 16) {
		unsigned m = scan16_nonws(s);
		if (m)
			return s + __builtin_ctz(m);
		s += 16;
	}
#endif
	while (s < e && scan_is_ws((unsigned char)*s))
		s++;
	return s;
}

/* The first byte of [s, e) that is special in a string, or e. */
static inline __attribute__((always_inline)) const char *scan_str(const char *s, const char *e)
{
#if DYNO_SSE2
	while (e - s >= 16) {
		unsigned m = scan16_str_special(s);
		if (m)
			return s + __builtin_ctz(m);
		s += 16;
	}
#endif
	while (s < e && !scan_is_str_special((unsigned char)*s))
		s++;
	return s;
}

/* Most strings are keys and short values: for the string whose opening
 * quote is at p, the length of its text when the closing quote comes
 * within 16 bytes with nothing special before it, settled by one 16-byte
 * compare; -1 otherwise (the caller scans it in full). */
static inline __attribute__((always_inline)) int scan_short_str(const char *p, const char *e)
{
#if DYNO_SSE2
	if (e - p >= 17) {
		unsigned m = scan16_str_special(p + 1);
		if (m) {
			unsigned k = (unsigned)__builtin_ctz(m);
			if (p[1 + k] == '"')
				return (int)k;
		}
	}
#else
	(void)p;
	(void)e;
#endif
	return -1;
}

#endif
