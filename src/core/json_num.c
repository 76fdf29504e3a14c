/*
 * json_num.c - a number token's value (json.h): json_num_f64, exact for
 * every double a Kineto trace writes without a libm call, and the exact
 * integer conversions json_num_u64 / json_num_i64.  The tokenizer
 * (json.c) only scans a number into its mantissa and exponent.
 */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
static const long double pow10_ld[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
					 1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
					 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
#endif

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static double strtod_raw(const char *raw, size_t n)
{
	char small[128];
	char *t = n < sizeof small ? small : xmalloc(n + 1);
	memcpy(t, raw, n);
	t[n] = 0;
	double d = strtod(t, NULL);
	if (t != small)
		free(t);
	return d;
}

double json_num_f64(const struct json_num *n, const char *raw, size_t rawlen)
{
	if (!n->big) {
		double sign = n->neg ? -1.0 : 1.0;
		uint64_t m = n->mant;
		int32_t e = n->exp10;
		if (m == 0)
			return sign * 0.0;
		if (m <= (1ull << 53) && e >= -22 && e <= 22) {
			/* both operands exact, so one IEEE operation rounds correctly */
			double d = (double)m;
			return sign * (e >= 0 ? d * pow10_exact[e] : d / pow10_exact[-e]);
		}
#if defined(__x86_64__) || defined(__i386__)
		if (e >= -27 && e <= 27) {
			/* A 64-bit mantissa and 10^27 are exact in x87 extended
			 * precision, so q is x correctly rounded to 64 bits.  Rounding
			 * q to double again gives x's correct rounding unless q landed
			 * exactly on a midpoint between two doubles: its low 11
			 * significand bits are then 100 0000 0000.  (Recent Kineto
			 * writes 19-digit ts like 1712195495519689.047: every event
			 * takes this path, so it avoids libm calls.) */
			long double q = e >= 0 ? (long double)m * pow10_ld[e] : (long double)m / pow10_ld[-e];
			union {
				long double ld;
				struct {
					uint64_t sig;
					uint16_t se;
				} x;
			} u = {.ld = q};
			double d = (double)q;
			if ((u.x.sig & 0x7FF) != 0x400 && isfinite(d))
				return sign * d;
		}
#endif
	}
	return strtod_raw(raw, rawlen);
}

bool json_num_u64(const struct json_num *n, uint64_t *out)
{
	if (n->big)
		return false;
	uint64_t m = n->mant;
	int32_t e = n->exp10;
	if (n->neg && m != 0)
		return false;
	if (m == 0) { /* 0e999999999 is 0: no loop over the exponent */
		*out = 0;
		return true;
	}
	if (e > 19 || e < -19)
		return false; /* a non-zero 64-bit mantissa cannot absorb that */
	while (e > 0) {
		if (m > UINT64_MAX / 10)
			return false;
		m *= 10;
		e--;
	}
	while (e < 0) {
		if (m % 10)
			return false;
		m /= 10;
		e++;
	}
	*out = m;
	return true;
}

bool json_num_i64(const struct json_num *n, int64_t *out)
{
	struct json_num a = *n;
	a.neg = false;
	uint64_t m;
	if (!json_num_u64(&a, &m))
		return false;
	if (n->neg) {
		if (m > (uint64_t)INT64_MAX + 1)
			return false;
		*out = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
	} else {
		if (m > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)m;
	}
	return true;
}
