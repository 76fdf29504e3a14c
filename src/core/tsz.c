/*
 * tsz.c - the (timestamp, double) stream codec (see tsz.h).
 *
 * Bits are written most significant first.  After the raw first point
 * (64-bit timestamp, 64-bit value):
 *   timestamp delta-of-delta d:  '0' d = 0;  '10' + 7 bits;  '110' + 9 bits;
 *     '1110' + 12 bits;  '11110' + 32 bits;  '11111' + 64 bits
 *     (two's complement; the shortest that holds d)
 *   value x = bits XOR previous bits:  '0' x = 0;  '10' + the bits of x in
 *     the previous window (when x's leading and trailing zeros cover it);
 *     '11' + 5 bits leading zeros (at most 31) + 6 bits length (64 as 0)
 *     + that many bits: a new window.
 *   scaled streams: the first value's m as 64 bits; then d = m - previous
 *     m, sign and magnitude, the magnitude's significant bits in a window
 *     [shift, width): '0' d = 0;  '10' + sign + the bits in the previous
 *     window;  '11' + 6 bits width + 6 bits shift + sign + the bits: a new
 *     window.  The encoder keeps a window while d fits in it with at most
 *     12 bits to spare (a new one costs 12 bits), so a noisy reading settles
 *     on its noise's width, and a reading in steps of 2^k (KB/s x 1024)
 *     does not pay for its k zero bits.  |m| < 2^53: a window is at most 54
 *     bits wide.
 * Writing goes a byte at a time; reading loads 8 bytes at once where
 * they lie within the stream (byte at a time near its end).
 */
#include "tsz.h"

#include <math.h>
#include <string.h>

/* 10^0 .. 10^22: every one exactly a double */
static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
				   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#define TWO52 4503599627370496.0
#define TWO53 9007199254740992.0

/* the integer nearest x, |x| < 2^53, without libm (the daemon links libm
 * statically, where nearbyint is an ifunc): at and above 2^52 every
 * double is an integer; below it x + 0.5 is exact enough for a value
 * within a few ulps of an integer, the only ones to_scaled keeps */
static int64_t nearest(double x)
{
	if (x >= TWO52 || x <= -TWO52)
		return (int64_t)x;
	return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

/* m x 10^-scale as the decoder computes it */
static double unscale(int64_t m, int scale)
{
	return scale >= 0 ? (double)m / pow10_tab[scale] : (double)m * pow10_tab[-scale];
}

/* v as m x 10^-scale, exactly (bit for bit back), |m| < 2^53 */
static bool to_scaled(double v, int scale, int64_t *m)
{
	if (scale < TSZ_SCALE_MIN || scale > TSZ_SCALE_MAX)
		return false;
	double x = scale >= 0 ? v * pow10_tab[scale] : v / pow10_tab[-scale];
	if (!(fabs(x) < TWO53)) /* NaN too */
		return false;
	int64_t r = nearest(x);
	double back = unscale(r, scale);
	if (memcmp(&back, &v, sizeof v) != 0) /* -0.0 comes back as 0.0: raw */
		return false;
	*m = r;
	return true;
}

bool tsz_fits(int scale, double v)
{
	int64_t m;
	return scale == TSZ_RAW || to_scaled(v, scale, &m);
}

int tsz_scale(double v)
{
	int64_t m;
	if (!(fabs(v) < 9.2e18)) /* NaN, infinities, past int64: no m */
		return TSZ_RAW;
	/* an integer may take a negative scale (fewer digits in m); a
	 * fraction needs a positive one */
	for (int k = v == (double)(int64_t)v ? TSZ_SCALE_MIN : 1; k <= TSZ_SCALE_MAX; k++)
		if (to_scaled(v, k, &m))
			return k;
	return TSZ_RAW;
}

static void put_bits(struct tsz_enc *e, uint64_t v, unsigned n)
{
	if (e->nbits + n > e->cap_bits) {
		e->full = true;
		return;
	}
	while (n) {
		size_t byte = e->nbits >> 3;
		unsigned room = 8 - (unsigned)(e->nbits & 7);
		unsigned take = n < room ? n : room;
		unsigned shift = room - take;
		uint8_t mask = (uint8_t)(((1u << take) - 1) << shift);
		uint8_t bits = (uint8_t)(((v >> (n - take)) & ((1u << take) - 1)) << shift);
		/* clear as well as set: bits past a refused point may be stale */
		e->buf[byte] = (uint8_t)((e->buf[byte] & ~mask) | bits);
		e->nbits += take;
		n -= take;
	}
}

void tsz_enc_init(struct tsz_enc *e, uint8_t *buf, size_t cap, int scale)
{
	memset(e, 0, sizeof *e);
	e->buf = buf;
	e->cap_bits = cap * 8;
	e->lead = -1;
	e->scale = scale;
}

void tsz_enc_move(struct tsz_enc *e, uint8_t *buf, size_t cap)
{
	e->buf = buf;
	e->cap_bits = cap * 8;
}

/* a scaled stream's value: m's change (see the top) */
static void put_scaled(struct tsz_enc *e, int64_t m)
{
	uint64_t d = (uint64_t)m - e->v;
	if (d == 0) {
		put_bits(e, 0, 1);
		return;
	}
	uint64_t neg = d >> 63, mag = neg ? 0 - d : d; /* |d| < 2^54 */
	int w = 64 - __builtin_clzll(mag), tz = __builtin_ctzll(mag);
	if (e->lead > 0 && w <= e->lead && tz >= e->trail && (e->lead - e->trail) - (w - tz) <= 12) {
		put_bits(e, (UINT64_C(2) << 1) | neg, 3);
		put_bits(e, mag >> e->trail, (unsigned)(e->lead - e->trail));
	} else {
		put_bits(e, (UINT64_C(3) << 13) | ((uint64_t)w << 7) | ((uint64_t)tz << 1) | neg, 15);
		put_bits(e, mag >> tz, (unsigned)(w - tz));
		e->lead = w;
		e->trail = tz;
	}
}

static bool fits(int64_t d, unsigned k) { return d >= -(INT64_C(1) << (k - 1)) && d < (INT64_C(1) << (k - 1)); }

static uint64_t low(int64_t d, unsigned k) { return (uint64_t)d & ((UINT64_C(1) << k) - 1); }

bool tsz_put(struct tsz_enc *e, int64_t t, double v)
{
	struct tsz_enc saved = *e;
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	if (e->scale != TSZ_RAW) {
		int64_t m;
		if (!to_scaled(v, e->scale, &m))
			return false;
		bits = (uint64_t)m; /* what the stream codes, and keeps as the previous value */
	}
	if (e->n == 0) {
		put_bits(e, (uint64_t)t, 64);
		put_bits(e, bits, 64);
		e->dt = 0;
	} else {
		uint64_t dt = (uint64_t)t - e->t; /* wraps: any two int64 have a delta mod 2^64 */
		int64_t d = (int64_t)(dt - e->dt);
		if (d == 0)
			put_bits(e, 0, 1);
		else if (fits(d, 7))
			put_bits(e, (UINT64_C(2) << 7) | low(d, 7), 9);
		else if (fits(d, 9))
			put_bits(e, (UINT64_C(6) << 9) | low(d, 9), 12);
		else if (fits(d, 12))
			put_bits(e, (UINT64_C(14) << 12) | low(d, 12), 16);
		else if (fits(d, 32))
			put_bits(e, (UINT64_C(30) << 32) | low(d, 32), 37);
		else {
			put_bits(e, 31, 5);
			put_bits(e, (uint64_t)d, 64);
		}
		e->dt = dt;
		uint64_t x = bits ^ e->v;
		if (e->scale != TSZ_RAW) {
			put_scaled(e, (int64_t)bits);
		} else if (x == 0) {
			put_bits(e, 0, 1);
		} else {
			int lead = __builtin_clzll(x), trail = __builtin_ctzll(x);
			if (lead > 31)
				lead = 31;
			if (e->lead >= 0 && lead >= e->lead && trail >= e->trail) {
				put_bits(e, 2, 2);
				put_bits(e, x >> e->trail, 64u - (unsigned)(e->lead + e->trail));
			} else {
				unsigned len = 64u - (unsigned)(lead + trail);
				put_bits(e, (UINT64_C(3) << 11) | ((uint64_t)lead << 6) | (len & 63), 13);
				put_bits(e, x >> trail, len);
				e->lead = lead;
				e->trail = trail;
			}
		}
	}
	if (e->full) {
		*e = saved;
		return false;
	}
	e->t = (uint64_t)t;
	e->v = bits;
	e->n++;
	return true;
}

void tsz_dec_init(struct tsz_dec *d, const uint8_t *buf, size_t nbits, uint32_t n, int scale)
{
	memset(d, 0, sizeof *d);
	d->buf = buf;
	d->nbits = nbits;
	d->left = n;
	d->first = true;
	d->lead = -1;
	d->scale = scale;
	if (scale != TSZ_RAW && (scale < TSZ_SCALE_MIN || scale > TSZ_SCALE_MAX))
		d->bad = true;
}

/* The 8 bytes at the read position, most significant first, when all 8
 * lie within the stream's bytes (the fast path: one load, no loop). */
static inline bool peek64(const struct tsz_dec *d, uint64_t *w)
{
	size_t byte = d->pos >> 3;
	if (byte + 8 > (d->nbits + 7) >> 3)
		return false;
	memcpy(w, d->buf + byte, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*w = __builtin_bswap64(*w);
#endif
	*w <<= d->pos & 7;
	return true;
}

/* n bits (1..64) into *out; false when fewer than n are left */
static inline bool get_bits(struct tsz_dec *d, unsigned n, uint64_t *out)
{
	if (n > d->nbits - d->pos)
		return false;
	uint64_t w;
	if (n <= 56 && peek64(d, &w)) { /* at most 7 bits were shifted out */
		*out = w >> (64 - n);
		d->pos += n;
		return true;
	}
	uint64_t v = 0;
	while (n) {
		unsigned off = (unsigned)(d->pos & 7), room = 8 - off;
		unsigned take = n < room ? n : room;
		unsigned b = d->buf[d->pos >> 3];
		v = (v << take) | ((b >> (room - take)) & ((1u << take) - 1));
		d->pos += take;
		n -= take;
	}
	*out = v;
	return true;
}

/* count of leading 1 bits, up to max (the bucket prefixes), and the 0
 * that ends them when fewer than max */
static inline bool get_ones(struct tsz_dec *d, unsigned max, unsigned *ones)
{
	uint64_t w;
	if (peek64(d, &w)) {
		unsigned k = ~w ? (unsigned)__builtin_clzll(~w) : 64;
		k = k < max ? k : max;
		unsigned used = k + (k < max);
		if (used > d->nbits - d->pos)
			return false;
		d->pos += used;
		*ones = k;
		return true;
	}
	unsigned k = 0;
	uint64_t b;
	while (k < max) {
		if (!get_bits(d, 1, &b))
			return false;
		if (!b)
			break;
		k++;
	}
	*ones = k;
	return true;
}

static int64_t sext(uint64_t x, unsigned k)
{
	uint64_t m = UINT64_C(1) << (k - 1);
	return (int64_t)((x ^ m) - m);
}

int tsz_next(struct tsz_dec *d, int64_t *t, double *v)
{
	if (d->bad)
		return -1;
	if (d->left == 0)
		return 0;
	uint64_t a, x = 0;
	if (d->first) {
		if (!get_bits(d, 64, &d->t) || !get_bits(d, 64, &d->v))
			goto bad;
		d->first = false;
	} else {
		static const unsigned width[] = {0, 7, 9, 12, 32, 64};
		unsigned ones;
		if (!get_ones(d, 5, &ones))
			goto bad;
		int64_t dd = 0;
		if (ones) {
			if (!get_bits(d, width[ones], &a))
				goto bad;
			dd = ones == 5 ? (int64_t)a : sext(a, width[ones]);
		}
		d->dt += (uint64_t)dd;
		d->t += d->dt;
		if (!get_ones(d, 2, &ones))
			goto bad;
		if (d->scale != TSZ_RAW) {
			if (ones == 2) {
				if (!get_bits(d, 12, &a))
					goto bad;
				int w = (int)(a >> 6), tz = (int)(a & 63);
				if (w == 0 || tz >= w)
					goto bad;
				d->lead = w;
				d->trail = tz;
			} else if (ones == 1 && d->lead <= 0) {
				goto bad;
			}
			if (ones) {
				uint64_t neg, mag;
				if (!get_bits(d, 1, &neg) || !get_bits(d, (unsigned)(d->lead - d->trail), &mag))
					goto bad;
				mag <<= d->trail;
				d->v += neg ? 0 - mag : mag; /* m's change; wraps like the encoder's */
			}
		} else if (ones == 1) {
			if (d->lead < 0 || !get_bits(d, 64u - (unsigned)(d->lead + d->trail), &x))
				goto bad;
			x <<= d->trail;
		} else if (ones == 2) {
			if (!get_bits(d, 11, &a))
				goto bad;
			unsigned lead = (unsigned)(a >> 6), len = (unsigned)(a & 63);
			if (len == 0)
				len = 64;
			if (lead + len > 64 || !get_bits(d, len, &x))
				goto bad;
			d->lead = (int)lead;
			d->trail = (int)(64 - lead - len);
			x <<= d->trail;
		}
		d->v ^= x;
	}
	d->left--;
	*t = (int64_t)d->t;
	if (d->scale != TSZ_RAW)
		*v = unscale((int64_t)d->v, d->scale);
	else
		memcpy(v, &d->v, sizeof *v);
	return 1;
bad:
	d->bad = true;
	return -1;
}
