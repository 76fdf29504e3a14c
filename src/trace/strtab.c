/*
 * strtab.c - string interning for the trace model (see model.h).
 *
 * A trace has millions of events but only thousands of distinct names and
 * categories, so every name is stored once and events hold a 32-bit id.
 * Open addressing with linear probing over a power-of-two table of ids;
 * the hash mixes 8 bytes per step, since kernel names are long.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/model.h"

static inline uint32_t str_hash(const char *s, size_t len)
{
	/* 8 bytes per step (kernel names are long); multiply-xorshift mix */
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		len -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return (uint32_t)h;
}

void trace_strtab_init(struct trace_strtab *t)
{
	memset(t, 0, sizeof *t);
	t->hcap = 1024;
	t->hash = xcalloc(t->hcap, sizeof *t->hash);
}

void trace_strtab_free(struct trace_strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->len);
	free(t->hash);
	memset(t, 0, sizeof *t);
}

static void rehash(struct trace_strtab *t)
{
	uint32_t ncap = t->hcap * 2;
	uint32_t *nh = xcalloc(ncap, sizeof *nh);
	for (uint32_t id = 0; id < t->n; id++) {
		uint32_t slot = str_hash(t->s[id], t->len[id]) & (ncap - 1);
		while (nh[slot])
			slot = (slot + 1) & (ncap - 1);
		nh[slot] = id + 1;
	}
	free(t->hash);
	t->hash = nh;
	t->hcap = ncap;
}

uint32_t trace_strtab_find(const struct trace_strtab *t, const char *s, size_t len)
{
	if (!t->hash)
		return TRACE_NO_STR;
	uint32_t slot = str_hash(s, len) & (t->hcap - 1);
	for (;;) {
		uint32_t v = t->hash[slot];
		if (!v)
			return TRACE_NO_STR;
		uint32_t id = v - 1;
		if (t->len[id] == len && memcmp(t->s[id], s, len) == 0)
			return id;
		slot = (slot + 1) & (t->hcap - 1);
	}
}

/* Fingerprint for the recent-ids cache: length and three 8-byte samples
 * (names share long prefixes and suffixes, so the middle counts too). */
static inline uint32_t recent_slot(const char *s, size_t len)
{
	uint64_t a = 0, b = 0, c = 0;
	if (len >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + len - 8, 8);
		memcpy(&c, s + len / 2 - 4, 8);
	} else if (len >= 4) { /* fixed-size loads: a variable-length copy to the
				* stack and an 8-byte load back stalls the CPU */
		uint32_t x, y;
		memcpy(&x, s, 4);
		memcpy(&y, s + len - 4, 4);
		a = x;
		b = y;
	} else if (len > 0) {
		a = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << 8 |
		    (uint64_t)(unsigned char)s[len - 1] << 16;
	}
	uint64_t h = (a ^ (b * 0x9E3779B97F4A7C15ull) ^ (c * 0xC2B2AE3D27D4EB4Full) ^ len) * 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 55); /* 9 bits: 512 slots */
}

uint32_t trace_strtab_intern(struct trace_strtab *t, const char *s, size_t len)
{
	if (!t->hash)
		trace_strtab_init(t);
	uint32_t rs = recent_slot(s, len), rv = t->recent[rs];
	if (rv && t->len[rv - 1] == len && memcmp(t->s[rv - 1], s, len) == 0)
		return rv - 1;
	uint32_t slot = str_hash(s, len) & (t->hcap - 1);
	for (;;) {
		uint32_t v = t->hash[slot];
		if (!v)
			break;
		uint32_t id = v - 1;
		if (t->len[id] == len && memcmp(t->s[id], s, len) == 0) {
			t->recent[rs] = id + 1;
			return id;
		}
		slot = (slot + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->s = xrealloc(t->s, t->cap * sizeof *t->s);
		t->len = xrealloc(t->len, t->cap * sizeof *t->len);
	}
	uint32_t id = t->n++;
	/* memcpy, not strndup: a name may hold an escaped NUL */
	t->s[id] = xmalloc(len + 1);
	memcpy(t->s[id], s, len);
	t->s[id][len] = 0;
	t->len[id] = (uint32_t)len;
	t->hash[slot] = id + 1;
	t->recent[rs] = id + 1;
	if ((uint64_t)t->n * 2 > t->hcap)
		rehash(t);
	return id;
}
