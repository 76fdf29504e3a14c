/*
 * test_tsz.c - the (timestamp, double) stream codec: lossless round trips
 * of random and adversarial sequences (NaN payloads, infinities, -0.0,
 * extreme and irregular timestamps, gaps, constants, counters), full
 * blocks, compactness of regular series, and corrupt or truncated input.
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

/* Encode n points into one buffer, decode, and compare bit for bit;
 * returns the bits used. */
static size_t round_trip(const int64_t *t, const double *v, size_t n)
{
	size_t cap = n * (TSZ_MAX_POINT_BITS / 8 + 1) + 16;
	uint8_t *buf = malloc(cap);
	struct tsz_enc e;
	tsz_enc_init(&e, buf, cap);
	for (size_t i = 0; i < n; i++)
		if (!tsz_put(&e, t[i], v[i])) {
			test_fail(__FILE__, __LINE__, "point %zu refused", i);
			break;
		}
	struct tsz_dec d;
	tsz_dec_init(&d, buf, e.nbits, e.n);
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
	tsz_enc_init(&e, buf, sizeof buf);
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
	tsz_dec_init(&d, buf, e.nbits, e.n);
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
	tsz_enc_init(&e, buf, sizeof buf);
	for (size_t i = 0; i < N; i++) {
		t[i] = (int64_t)(next_rand() >> 1);
		v[i] = from_bits(next_rand());
		REQUIRE(tsz_put(&e, t[i], v[i]));
	}
	/* cut short: the points before the cut, then -1 for good */
	struct tsz_dec d;
	tsz_dec_init(&d, buf, e.nbits - 1, e.n);
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
	tsz_dec_init(&d, buf, e.nbits, e.n + 5);
	got = 0;
	while ((r = tsz_next(&d, &tt, &vv)) == 1)
		got++;
	CHECK_INT(r, -1);
	CHECK(got >= N && d.pos <= e.nbits);
	/* a '10' value (previous window) with no window yet is invalid */
	uint8_t bad[17] = {0};
	bad[16] = 0x40; /* after the raw point: timestamp '0', value '10' */
	tsz_dec_init(&d, bad, sizeof bad * 8, 2);
	CHECK_INT(tsz_next(&d, &tt, &vv), 1);
	CHECK_INT(tsz_next(&d, &tt, &vv), -1);
	/* random bytes decode to points or -1, never past their end */
	for (int k = 0; k < 2000; k++) {
		size_t len = next_rand() % 64;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)next_rand();
		tsz_dec_init(&d, buf, len * 8, (uint32_t)(next_rand() % 1000));
		while ((r = tsz_next(&d, &tt, &vv)) == 1)
			;
		CHECK(d.pos <= len * 8);
	}
}
