/*
 * tsz.h - a compact codec for (timestamp, double) streams, as time-series
 * databases store them ("Gorilla" coding): the first point raw, then each
 * timestamp as the change of its delta (delta-of-delta: 1 bit when points
 * are evenly spaced) and each value XORed with the previous one (1 bit when
 * unchanged, a few when only low mantissa bits change).  Lossless for any
 * int64 timestamps (deltas wrap modulo 2^64) and any double bit pattern
 * (NaN payloads, -0.0, infinities).
 *
 * A stream may instead hold decimal values: with a scale k, every value is
 * an integer m (|m| < 2^53) times 10^-k (k in TSZ_SCALE_MIN..TSZ_SCALE_MAX),
 * exactly -- the double m / 10^k (k >= 0) or m * 10^-k (k < 0) is the value
 * bit for bit -- and the stream codes m's change (zigzag, in a width that
 * is reused while it fits: 1 bit unchanged, 2 + width bits otherwise).
 * Readings that are integers or few decimals (a percent, mW as W, a ratio
 * to 1e-4) then cost their significant bits instead of a 50-60 bit XOR of
 * mantissas that change entirely.  tsz_scale() says whether a value is one;
 * a scaled stream refuses a value it cannot hold exactly (tsz_fits).
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

/* Value scales: TSZ_RAW, the double's bits XOR-coded; or a decimal scale
 * k, values m x 10^-k. */
#define TSZ_RAW (-128)
#define TSZ_SCALE_MIN (-15)
#define TSZ_SCALE_MAX 9

struct tsz_enc {
	uint8_t *buf;
	size_t cap_bits, nbits; /* capacity and bits written */
	uint32_t n;             /* points written */
	uint64_t t, dt, v;      /* previous timestamp, delta, value bits (raw) or m (scaled) */
	int lead, trail;        /* XOR window of the previous value (lead < 0: none yet); scaled: width in lead */
	int scale;              /* TSZ_RAW or a decimal scale */
	bool full;
};

struct tsz_dec {
	const uint8_t *buf;
	size_t nbits, pos;
	uint32_t left; /* points still to read */
	bool first, bad;
	uint64_t t, dt, v;
	int lead, trail;
	int scale;
};

/* The smallest decimal scale that holds v exactly, or TSZ_RAW (NaN, -0.0,
 * a double with more digits).  A few ns per scale tried. */
int tsz_scale(double v);
/* Whether a stream of that scale holds v exactly (TSZ_RAW: always). */
bool tsz_fits(int scale, double v);

/* Start a stream of the given scale in buf (cap bytes). */
void tsz_enc_init(struct tsz_enc *e, uint8_t *buf, size_t cap, int scale);
/* The stream's buffer moved (realloc) and holds cap bytes now, at least
 * the bytes written so far: go on there. */
void tsz_enc_move(struct tsz_enc *e, uint8_t *buf, size_t cap);
/* Append a point.  false: it does not fit in the buffer, or the stream's
 * scale cannot hold v (check with tsz_fits); the stream is unchanged (a
 * later, smaller point may still fit). */
bool tsz_put(struct tsz_enc *e, int64_t t, double v);

/* Read a stream of n points of that scale in nbits bits of buf. */
void tsz_dec_init(struct tsz_dec *d, const uint8_t *buf, size_t nbits, uint32_t n, int scale);
/* 1: a point in *t, *v; 0: the n points were read; -1: the bits are not a
 * valid stream (truncated or corrupt); the decoder then stays at -1. */
int tsz_next(struct tsz_dec *d, int64_t *t, double *v);

#endif
