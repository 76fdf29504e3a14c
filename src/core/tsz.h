/*
 * tsz.h - a compact codec for (timestamp, double) streams, as time-series
 * databases store them ("Gorilla" coding): the first point raw, then each
 * timestamp as the change of its delta (delta-of-delta: 1 bit when points
 * are evenly spaced) and each value XORed with the previous one (1 bit when
 * unchanged, a few when only low mantissa bits change).  Lossless for any
 * int64 timestamps (deltas wrap modulo 2^64) and any double bit pattern
 * (NaN payloads, -0.0, infinities).
 *
 * The caller owns the buffer: an encoder fills a fixed-size block and says
 * when the next point does not fit; a decoder needs the bit length and the
 * point count the encoder reached, and never reads past that bit length
 * whatever the bytes hold.  Cost: a few ns per point each way, no
 * allocation.
 */
#ifndef DYNO_TSZ_H
#define DYNO_TSZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Worst case bits for one point (5 + 64 timestamp, 2 + 5 + 6 + 64 value),
 * the raw first point being 128. */
#define TSZ_MAX_POINT_BITS 146

struct tsz_enc {
	uint8_t *buf;
	size_t cap_bits, nbits; /* capacity and bits written */
	uint32_t n;             /* points written */
	uint64_t t, dt, v;      /* previous timestamp, delta, value bits */
	int lead, trail;        /* XOR window of the previous value (lead < 0: none yet) */
	bool full;
};

struct tsz_dec {
	const uint8_t *buf;
	size_t nbits, pos;
	uint32_t left; /* points still to read */
	bool first, bad;
	uint64_t t, dt, v;
	int lead, trail;
};

/* Start a stream in buf (cap bytes). */
void tsz_enc_init(struct tsz_enc *e, uint8_t *buf, size_t cap);
/* Append a point.  false: it does not fit in the buffer; the stream is
 * unchanged (a later, smaller point may still fit). */
bool tsz_put(struct tsz_enc *e, int64_t t, double v);

/* Read a stream of n points in nbits bits of buf. */
void tsz_dec_init(struct tsz_dec *d, const uint8_t *buf, size_t nbits, uint32_t n);
/* 1: a point in *t, *v; 0: the n points were read; -1: the bits are not a
 * valid stream (truncated or corrupt); the decoder then stays at -1. */
int tsz_next(struct tsz_dec *d, int64_t *t, double *v);

#endif
