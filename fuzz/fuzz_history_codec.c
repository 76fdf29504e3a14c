/*
 * fuzz_history_codec.c - libFuzzer target for the history's stream codec
 * (src/core/tsz.c): the input is decoded as a stream (never a crash or a
 * read past its bits, whatever the point count claims), then read as
 * (timestamp, value) pairs that are encoded into a small block and decoded
 * again: the points the block took must come back bit for bit.  The value
 * coding (raw or a decimal scale, tsz.h) comes from the input too; a
 * decimal stream takes the input's values that its scale holds, and the
 * first value's own scale (tsz_scale) must hold it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/tsz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 2)
		return 0;
	/* 1: decode arbitrary bytes; the copy is exactly n - 2 bytes long so
	 * ASan sees any overread */
	uint32_t claim = (uint32_t)d[0] << 8 | d[1];
	int scale = d[1] & 1 ? TSZ_RAW : TSZ_SCALE_MIN + d[0] % (TSZ_SCALE_MAX - TSZ_SCALE_MIN + 2); /* one invalid */
	size_t len = n - 2;
	uint8_t *raw = malloc(len ? len : 1);
	memcpy(raw, d + 2, len);
	struct tsz_dec dec;
	tsz_dec_init(&dec, raw, len * 8, claim, scale);
	int64_t t;
	double v;
	while (tsz_next(&dec, &t, &v) == 1)
		;
	if (dec.pos > len * 8)
		abort();
	free(raw);

	/* 2: round trip; the block size comes from the input too */
	size_t npts = len / 16, cap = 16 + d[0] % 200;
	uint8_t *blk = malloc(cap);
	memset(blk, d[1], cap); /* stale bits must not leak into the stream */
	if (scale > TSZ_SCALE_MAX)
		scale = TSZ_SCALE_MAX;
	if (npts) { /* the first value's scale holds it */
		double first;
		memcpy(&first, d + 2 + 8, 8);
		int k = tsz_scale(first);
		if (!tsz_fits(k, first))
			abort();
		if (!(d[0] & 1))
			scale = k;
	}
	struct tsz_enc enc;
	tsz_enc_init(&enc, blk, cap, scale);
	size_t kept = 0;
	size_t *idx = malloc((npts ? npts : 1) * sizeof *idx);
	for (size_t i = 0; i < npts; i++) {
		int64_t pt;
		double pv;
		memcpy(&pt, d + 2 + i * 16, 8);
		memcpy(&pv, d + 2 + i * 16 + 8, 8);
		if (!tsz_fits(scale, pv))
			continue; /* a decimal stream refuses it: tsz_put must too */
		if (!tsz_put(&enc, pt, pv))
			break;
		idx[kept++] = i;
	}
	tsz_dec_init(&dec, blk, enc.nbits, enc.n, scale);
	for (size_t k = 0; k < kept; k++) {
		size_t i = idx[k];
		if (tsz_next(&dec, &t, &v) != 1 || memcmp(&t, d + 2 + i * 16, 8) != 0 ||
		    memcmp(&v, d + 2 + i * 16 + 8, 8) != 0)
			abort();
	}
	free(idx);
	if (tsz_next(&dec, &t, &v) != 0 || dec.pos != enc.nbits)
		abort();
	free(blk);
	return 0;
}
