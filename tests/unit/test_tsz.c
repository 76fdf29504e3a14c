/*
 * test_tsz.c - the (timestamp, double) stream codec: lossless round trips
 * of random and adversarial sequences (NaN payloads, infinities, -0.0,
 * extreme and irregular timestamps, gaps, constants, counters), full
 * blocks, compactness of regular series, and corrupt or truncated input;
 * decimal streams: which values have a scale, bit-exact round trips at
 * every scale, refusal of a value a scale cannot hold, and their size.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "core/tsz.h"
#include "test.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double from_bits(uint64_t b)
{
	double d;
	memcpy(&d, &b, sizeof d);
	return d;
}

/* Encode n points into one buffer of the given scale, decode, and compare
 * bit for bit; returns the bits used. */
static size_t round_trip_scaled(const int64_t *t, const double *v, size_t n, int scale)
{
	size_t cap = n * (TSZ_MAX_POINT_BITS / 8 + 1) + 16;
	uint8_t *buf = malloc(cap);
	struct tsz_enc e;
	tsz_enc_init(&e, buf, cap, scale);
	for (size_t i = 0; i < n; i++)
		if (!tsz_put(&e, t[i], v[i])) {
			test_fail(__FILE__, __LINE__, "point %zu refused", i);
			break;
		}
	struct tsz_dec d;
	tsz_dec_init(&d, buf, e.nbits, e.n, scale);
	size_t got = 0;
	int64_t tt;
	double vv;
	int r;
	while ((r = tsz_next(&d, &tt, &vv)) == 1) {
		if (got < n && (tt != t[got] || memcmp(&vv, &v[got], sizeof vv) != 0))
			test_fail(__FILE__, __LINE__, "point %zu differs", got);
		got++;
	}
	CHECK_INT(r, 0);
	CHECK_INT(got, n);
	CHECK_INT(d.pos, e.nbits); /* every bit written was read */
	free(buf);
	return e.nbits;
}

static size_t round_trip(const int64_t *t, const double *v, size_t n) { return round_trip_scaled(t, v, n, TSZ_RAW); }

TEST(tsz_round_trip_random)
{
	enum { N = 20000 };
	int64_t *t = malloc(N * sizeof *t);
	double *v = malloc(N * sizeof *v);
	for (size_t i = 0; i < N; i++) {
		t[i] = (int64_t)next_rand(); /* any int64, in any order */
		v[i] = from_bits(next_rand()); /* any bit pattern, NaNs included */
	}
	round_trip(t, v, N);
	/* small random steps: every delta-of-delta bucket and XOR window */
	int64_t now = 1700000000000;
	for (size_t i = 0; i < N; i++) {
		int shift = (int)(next_rand() % 40);
		now += (int64_t)(next_rand() % (1ull << shift)) - (int64_t)(1ull << shift) / 3;
		t[i] = now;
		v[i] = (double)(next_rand() % 1000) / (1 + (double)(next_rand() % 7));
	}
	round_trip(t, v, N);
	free(t);
	free(v);
}

TEST(tsz_round_trip_adversarial)
{
	const double special[] = {NAN,     -NAN,     INFINITY, -INFINITY, -0.0,        0.0,          DBL_MIN,
				  DBL_MAX, -DBL_MAX, 5e-324,   1.0,       from_bits(0x7ff0000000000001ull),
				  from_bits(0xfff8dead00000000ull), 0.1, 0.2};
	const int64_t times[] = {INT64_MIN, INT64_MAX, 0,  -1, 1, INT64_MIN, INT64_MIN, INT64_MAX,
				 INT64_MAX, 42,        41, 4000000000000000000, -4000000000000000000};
	enum { NS = sizeof special / sizeof special[0], NT = sizeof times / sizeof times[0] };
	int64_t t[NS * NT];
	double v[NS * NT];
	size_t n = 0;
	for (size_t i = 0; i < NT; i++)
		for (size_t j = 0; j < NS; j++, n++) {
			t[n] = times[(i + j) % NT];
			v[n] = special[(j * 7 + i) % NS];
		}
	round_trip(t, v, n);
	/* one point, two equal points, a repeated timestamp */
	round_trip(t, v, 1);
	int64_t same_t[3] = {5, 5, 5};
	double same_v[3] = {-0.0, -0.0, 0.0};
	round_trip(same_t, same_v, 3);
	round_trip(t, v, 0);
}

TEST(tsz_regular_series_are_compact)
{
	enum { N = 3600 };
	static int64_t t[N];
	static double v[N], c[N], g[N];
	for (size_t i = 0; i < N; i++) {
		/* 1 s ticks with a gap of an hour in the middle */
		t[i] = 1764000000000 + (int64_t)i * 1000 + (i >= N / 2 ? 3600000 : 0);
		v[i] = 12.5;                            /* a constant */
		c[i] = (double)(1000000 + i * 4096);    /* a counter */
		g[i] = (double)(next_rand() % 101);     /* a percentage */
	}
	size_t bits = round_trip(t, v, N);
	/* raw first point, then 2 bits a point (16 for the first delta, 2 x 37 for the gap) */
	CHECK(bits <= 128 + 2 * N + 16 + 74);
	bits = round_trip(t, c, N);
	CHECK(bits < 24 * N);
	bits = round_trip(t, g, N);
	CHECK(bits < 32 * N);
}

TEST(tsz_full_block_refuses_and_keeps_stream)
{
	uint8_t buf[64];
	memset(buf, 0xff, sizeof buf); /* a recycled buffer: stale bits everywhere */
	struct tsz_enc e;
	tsz_enc_init(&e, buf, sizeof buf, TSZ_RAW);
	int64_t t[64];
	double v[64];
	size_t n = 0;
	for (;; n++) {
		t[n] = (int64_t)n * 1000 + (int64_t)(next_rand() % 3);
		v[n] = from_bits(next_rand());
		if (!tsz_put(&e, t[n], v[n]))
			break;
	}
	CHECK(n >= 2 && n < 64);
	size_t nbits = e.nbits;
	CHECK(nbits <= sizeof buf * 8);
	/* a refused random point; an unchanged value still fits after it */
	t[n] = t[n - 1] + 1000;
	v[n] = v[n - 1];
	if (tsz_put(&e, t[n], v[n]))
		n++;
	struct tsz_dec d;
	tsz_dec_init(&d, buf, e.nbits, e.n, TSZ_RAW);
	int64_t tt;
	double vv;
	size_t got = 0;
	while (tsz_next(&d, &tt, &vv) == 1) {
		CHECK(tt == t[got] && memcmp(&vv, &v[got], sizeof vv) == 0);
		got++;
	}
	CHECK_INT(got, n);
	CHECK_INT(e.n, n);
}

TEST(tsz_corrupt_and_truncated_input)
{
	enum { N = 100 };
	int64_t t[N];
	double v[N];
	uint8_t buf[N * 20];
	struct tsz_enc e;
	tsz_enc_init(&e, buf, sizeof buf, TSZ_RAW);
	for (size_t i = 0; i < N; i++) {
		t[i] = (int64_t)(next_rand() >> 1);
		v[i] = from_bits(next_rand());
		REQUIRE(tsz_put(&e, t[i], v[i]));
	}
	/* cut short: the points before the cut, then -1 for good */
	struct tsz_dec d;
	tsz_dec_init(&d, buf, e.nbits - 1, e.n, TSZ_RAW);
	int64_t tt;
	double vv;
	size_t got = 0;
	int r;
	while ((r = tsz_next(&d, &tt, &vv)) == 1)
		got++;
	CHECK_INT(r, -1);
	CHECK_INT(got, N - 1);
	CHECK_INT(tsz_next(&d, &tt, &vv), -1);
	/* claims more points than the bits hold */
	tsz_dec_init(&d, buf, e.nbits, e.n + 5, TSZ_RAW);
	got = 0;
	while ((r = tsz_next(&d, &tt, &vv)) == 1)
		got++;
	CHECK_INT(r, -1);
	CHECK(got >= N && d.pos <= e.nbits);
	/* a '10' value (previous window) with no window yet is invalid */
	uint8_t bad[17] = {0};
	bad[16] = 0x40; /* after the raw point: timestamp '0', value '10' */
	tsz_dec_init(&d, bad, sizeof bad * 8, 2, TSZ_RAW);
	CHECK_INT(tsz_next(&d, &tt, &vv), 1);
	CHECK_INT(tsz_next(&d, &tt, &vv), -1);
	/* random bytes decode to points or -1, never past their end */
	for (int k = 0; k < 2000; k++) {
		size_t len = next_rand() % 64;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)next_rand();
		int scale = k % 3 ? TSZ_RAW : TSZ_SCALE_MIN + k % (TSZ_SCALE_MAX - TSZ_SCALE_MIN + 1);
		tsz_dec_init(&d, buf, len * 8, (uint32_t)(next_rand() % 1000), scale);
		while ((r = tsz_next(&d, &tt, &vv)) == 1)
			;
		CHECK(d.pos <= len * 8);
	}
	/* a scale no encoder writes is not a stream */
	tsz_dec_init(&d, buf, e.nbits, e.n, TSZ_SCALE_MAX + 1);
	CHECK_INT(tsz_next(&d, &tt, &vv), -1);
}

TEST(tsz_scale_of_values)
{
	static const struct {
		double v;
		int scale;
	} cases[] = {
		{0.15, 2},     {250.5, 1},       {312.456, 3}, {0.1234, 4},   {45.0, 0},
		{250.0, -1},   {1.234e14, -11},  {0.0, TSZ_SCALE_MIN},        {1e-9, 9},
		{1.0 / 3, TSZ_RAW}, {-0.0, TSZ_RAW}, {NAN, TSZ_RAW}, {INFINITY, TSZ_RAW}, {1e-10, TSZ_RAW},
		{12.345678901234567, TSZ_RAW}, {-17.25, 2}, {85899345920.0, -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int got = tsz_scale(cases[i].v);
		if (got != cases[i].scale)
			test_fail(__FILE__, __LINE__, "tsz_scale(%.17g) = %d, want %d", cases[i].v, got, cases[i].scale);
		/* a value holds at its scale and at every larger one its digits allow */
		if (got != TSZ_RAW) {
			CHECK(tsz_fits(got, cases[i].v));
			CHECK(got == TSZ_SCALE_MIN || !tsz_fits(got - 1, cases[i].v) || cases[i].v == 0);
		}
		CHECK(tsz_fits(TSZ_RAW, cases[i].v));
	}
	CHECK(tsz_fits(4, 0.5) && tsz_fits(9, 0.5) && !tsz_fits(0, 0.5));
	CHECK(!tsz_fits(9, 1e10)); /* 1e10 x 1e9 is past 2^53 */
}

TEST(tsz_scaled_round_trips_bit_for_bit)
{
	enum { N = 5000 };
	int64_t *t = malloc(N * sizeof *t);
	double *v = malloc(N * sizeof *v);
	static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	for (int scale = TSZ_SCALE_MIN; scale <= TSZ_SCALE_MAX; scale++) {
		/* random m, small and large steps, signs, every width; m x 10^-scale */
		int64_t m = 0;
		for (size_t i = 0; i < N; i++) {
			t[i] = 1764000000000 + (int64_t)i * 1000 + (int64_t)(next_rand() % 7);
			int shift = (int)(next_rand() % 40);
			m += (int64_t)(next_rand() % (1ull << shift)) - (int64_t)(1ull << shift) / 2;
			if (i % 97 == 0)
				m = -m;
			double x = scale >= 0 ? (double)m / p10[scale] : (double)m * p10[-scale];
			v[i] = tsz_fits(scale, x) ? x : 0.0;
		}
		round_trip_scaled(t, v, N, scale);
	}
	/* the extremes of m */
	int64_t tt[4] = {1, 2, 3, 4};
	double big[4] = {9007199254740991.0, -9007199254740991.0, 0.0, 9007199254740991.0};
	round_trip_scaled(tt, big, 4, 0);
	free(t);
	free(v);
}

TEST(tsz_scaled_refuses_what_it_cannot_hold)
{
	uint8_t buf[256];
	struct tsz_enc e;
	tsz_enc_init(&e, buf, sizeof buf, 2);
	CHECK(tsz_put(&e, 1000, 12.25));
	CHECK(!tsz_put(&e, 2000, 12.125)); /* three decimals */
	CHECK(!tsz_put(&e, 2000, -0.0));
	CHECK(!tsz_put(&e, 2000, NAN));
	CHECK(tsz_put(&e, 2000, 12.5));
	struct tsz_dec d;
	tsz_dec_init(&d, buf, e.nbits, e.n, 2);
	int64_t t;
	double v;
	CHECK(tsz_next(&d, &t, &v) == 1 && t == 1000 && v == 12.25);
	CHECK(tsz_next(&d, &t, &v) == 1 && t == 2000 && v == 12.5);
	CHECK_INT(tsz_next(&d, &t, &v), 0);
}

TEST(tsz_scaled_series_are_compact)
{
	enum { N = 3600 };
	static int64_t t[N];
	static double ratio[N], watts[N], pct[N], xr[N];
	double level = 0.85;
	for (size_t i = 0; i < N; i++) {
		t[i] = 1764000000000 + (int64_t)i * 1000;
		/* a GPM ratio to 1e-4 around a level, +-0.05 */
		int64_t m = (int64_t)(level * 1e4) + (int64_t)(next_rand() % 1001) - 500;
		ratio[i] = (double)m / 1e4;
		/* power in W with mW resolution, 600 W +- 50 */
		watts[i] = (double)(600000 + (int64_t)(next_rand() % 100001) - 50000) / 1e3;
		pct[i] = (double)(next_rand() % 101);
		xr[i] = ratio[i];
	}
	/* +-500 is 10 bits of zigzag: 1 + 2 + 10 a point, not the ~60 of the XOR */
	size_t bits = round_trip_scaled(t, ratio, N, 4);
	CHECK(bits < 15 * N);
	size_t raw = round_trip(t, xr, N);
	CHECK(raw > 3 * bits);
	bits = round_trip_scaled(t, watts, N, 3);
	CHECK(bits < 22 * N);
	bits = round_trip_scaled(t, pct, N, 0);
	CHECK(bits < 12 * N);
}
