/*
 * json.c - the JSON pull tokenizer (see json.h).
 *
 * The hot paths are string scanning and whitespace skipping; both use the
 * 16-byte scans of scan.h (SSE2, the x86-64 baseline; scalar loops
 * elsewhere), shared with the trace loader's fast path.  Positions are absolute byte offsets; line and
 * column are only computed when an error is reported: the streaming refill
 * counts the newlines of the part it discards, and the error path counts
 * the rest.
 *
 * Window discipline (streaming): [base, end) holds input bytes not yet
 * discarded; p is the read position.  refill() may move the window, so
 * scanners keep offsets relative to the token start across a refill, never
 * raw pointers.
 */
#include "json.h"
#include "scan.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { ST_TOP, ST_DONE, ST_VALUE, ST_ARR_FIRST, ST_ARR_NEXT, ST_OBJ_FIRST, ST_OBJ_NEXT, ST_KEY, ST_COLON, ST_ERROR };

/* A single token may not exceed this (bounds memory on hostile streams). */
#define JSON_MAX_TOKEN ((size_t)256 << 20)

uint64_t json_count_newlines(const char *s, const char *e, const char **last)
{
	uint64_t n = 0;
	const char *lastnl = NULL;
#if DYNO_SSE2
	/* Byte lanes count matches (cmpeq gives -1, subtracted); psadbw sums
	 * the lanes before they can overflow.  No popcnt: SSE2 baseline only. */
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	while (e - s >= 16) {
		__m128i acc = zero;
		const char *blk = s;
		int k = 0;
		for (; k < 255 && e - s >= 16; k++, s += 16)
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)s), nl));
		__m128i sum = _mm_sad_epu8(acc, zero);
		n += (uint64_t)_mm_cvtsi128_si32(sum) + (uint64_t)_mm_extract_epi16(sum, 4);
		/* the last newline of the block, found backwards */
		if (last)
			for (const char *q = s; q > blk;) {
				q -= 16;
				unsigned m = (unsigned)_mm_movemask_epi8(
					_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)q), nl));
				if (m) {
					lastnl = q + 31 - __builtin_clz(m);
					break;
				}
			}
	}
#endif
	for (; s < e; s++)
		if (*s == '\n') {
			n++;
			lastnl = s;
		}
	if (last)
		*last = lastnl;
	return n;
}

static void position_of(struct json_reader *r, const char *at, struct json_error *e)
{
	if (at < r->base)
		at = r->base;
	if (at > r->end)
		at = r->end;
	e->offset = r->base_off + (uint64_t)(at - r->base);
	if ((r->flags & JSON_NO_LINES) && r->base_off > 0) {
		e->line = e->column = 0; /* the discarded input was not counted */
		return;
	}
	const char *lastnl;
	uint64_t nl = json_count_newlines(r->base, at, &lastnl);
	e->line = r->lines_before + nl + 1;
	if (lastnl)
		e->column = (uint64_t)(at - lastnl);
	else
		e->column = e->offset - r->last_nl_before + 1;
}

static enum json_tok vfail(struct json_reader *r, const char *at, const char *fmt, va_list ap)
{
	if (r->state == ST_ERROR)
		return JSON_ERROR; /* keep the first error */
	vsnprintf(r->err.msg, sizeof r->err.msg, fmt, ap);
	position_of(r, at, &r->err);
	r->state = ST_ERROR;
	r->tok = JSON_ERROR;
	return JSON_ERROR;
}

__attribute__((format(printf, 3, 4))) static enum json_tok fail(struct json_reader *r, const char *at,
								 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(r, at, fmt, ap);
	va_end(ap);
	return JSON_ERROR;
}

bool json_fail_at(struct json_reader *r, uint64_t offset, const char *fmt, ...)
{
	const char *at = r->base;
	if (offset >= r->base_off)
		at = r->base + (offset - r->base_off);
	va_list ap;
	va_start(ap, fmt);
	vfail(r, at, fmt, ap);
	va_end(ap);
	if (offset < r->base_off) { /* the line/column of discarded input are unknown */
		r->err.offset = offset;
		r->err.line = 0;
		r->err.column = 0;
	}
	return false;
}

uint64_t json_tok_offset(const struct json_reader *r)
{
	return r->base_off + (uint64_t)(r->tstart - r->base);
}

/* A reader before its first token, with nothing allocated. */
static void reset(struct json_reader *r, unsigned flags)
{
	memset(r, 0, sizeof *r);
	r->flags = flags;
	r->state = ST_TOP;
	buf_init(&r->scratch);
	r->sval = "";
}

static void init_common(struct json_reader *r, unsigned flags)
{
	reset(r, flags);
	r->max_depth = JSON_DEFAULT_MAX_DEPTH;
	r->stack = xmalloc(r->max_depth);
}

void json_reader_init_mem(struct json_reader *r, const char *data, size_t len, unsigned flags)
{
	init_common(r, flags);
	if (!data)
		data = "";
	r->base = r->p = r->tstart = data;
	r->end = data + len;
	r->eof = true;
}

/* A stream reader's window: two chunks, of which all but the last 64 bytes
 * are used.  With huge pages on (buf.h), 2 MiB is a mapping of two huge
 * pages (malloc's header comes first) and filling the block to its end
 * would fault in the second, zeroing 2 MiB (~0.3 ms) for the last 16
 * bytes; refill() needs a chunk of room past what is live, and what is
 * live is as a rule one token's tail. */
static void own_window(struct json_reader *r)
{
	r->own = xmalloc(r->chunk * 2);
	r->cap = r->chunk * 2 - (r->chunk >= 4096 ? 64 : 0);
}

void json_reader_init_stream(struct json_reader *r, json_read_fn fn, void *ctx, size_t chunk,
			     unsigned flags)
{
	init_common(r, flags);
	r->read = fn;
	r->rctx = ctx;
	r->chunk = chunk ? chunk : (size_t)1 << 20;
	own_window(r);
	r->base = r->p = r->end = r->tstart = r->own;
}

void json_reader_init_borrow(struct json_reader *r, const char *text, json_grow_fn grow, void *gctx,
			     json_read_fn fn, void *ctx, size_t chunk, unsigned flags)
{
	init_common(r, flags);
	r->read = fn;
	r->rctx = ctx;
	r->chunk = chunk ? chunk : (size_t)1 << 20;
	r->grow = grow;
	r->gctx = gctx;
	r->base = r->p = r->end = r->tstart = text;
}

void json_reader_restart_stream(struct json_reader *r, json_read_fn fn, void *ctx, unsigned flags)
{
	const struct json_reader kept = *r; /* its buffers and depth limit */
	reset(r, flags);
	r->max_depth = kept.max_depth;
	r->stack = kept.stack;
	r->scratch = kept.scratch;
	buf_reset(&r->scratch);
	r->read = fn;
	r->rctx = ctx;
	r->chunk = kept.chunk;
	r->cap = kept.cap;
	r->own = kept.own;
	if (!r->own) { /* a borrowed window's reader that never needed one */
		/* a small one: as a rule what comes is the "}" after a trace's
		 * traceEvents, and a 2 MiB window would be a huge page zeroed
		 * (~0.2 ms) for it */
		r->chunk = (size_t)64 << 10;
		own_window(r);
	}
	r->base = r->p = r->end = r->tstart = r->own;
}

void json_reader_free(struct json_reader *r)
{
	free(r->own);
	free(r->stack);
	buf_free(&r->scratch);
	r->own = NULL;
	r->stack = NULL;
}

void json_reader_set_max_depth(struct json_reader *r, uint32_t depth)
{
	if (depth < 1)
		depth = 1;
	r->stack = xrealloc(r->stack, depth);
	r->max_depth = depth;
}

/*
 * Discard input before *keep, read more.  Pointers p, tstart and *keep are
 * rebased.  Returns bytes added, 0 at end of input, -1 on a read error or
 * an oversize token (r->err set).
 */
static ssize_t refill_ex(struct json_reader *r, const char **keep, bool soft);
static ssize_t refill(struct json_reader *r, const char **keep) { return refill_ex(r, keep, false); }

/* soft: a read error is not reported (the reader stays as it was); the
 * sources repeat an error on every later read, so the tokenizer meets it
 * again, at the same place, when it really needs the bytes. */
static ssize_t refill_ex(struct json_reader *r, const char **keep, bool soft)
{
	if (r->eof)
		return 0;
	const char *k = *keep;
	if (r->grow) {
		/* a borrowed window grows in place: nothing moves, nothing is
		 * dropped (a token too long fails as in a window of our own) */
		if ((size_t)(r->end - k) >= JSON_MAX_TOKEN) {
			if (!soft)
				fail(r, k, "token longer than %zu bytes", JSON_MAX_TOKEN);
			return -1;
		}
		size_t have = (size_t)(r->end - r->base);
		size_t now = r->grow(r->gctx, have);
		if (now > have) {
			r->end = r->base + now;
			return (ssize_t)(now - have);
		}
		/* it will not grow: a window of our own from here on, with
		 * room for the live tail, which the code below moves in, and a
		 * chunk */
		r->grow = NULL;
		own_window(r);
		if (r->cap < (size_t)(r->end - k) + r->chunk) {
			r->cap = (size_t)(r->end - k) + r->chunk;
			r->own = xrealloc(r->own, r->cap);
		}
	}
	size_t drop = (size_t)(k - r->base);
	if (drop && !(r->flags & JSON_NO_LINES)) {
		const char *lastnl;
		uint64_t nl = json_count_newlines(r->base, k, &lastnl);
		if (nl) {
			r->lines_before += nl;
			r->last_nl_before = r->base_off + (uint64_t)(lastnl - r->base) + 1;
		}
	}
	size_t live = (size_t)(r->end - k);
	if (live >= JSON_MAX_TOKEN) {
		if (soft)
			return -1;
		fail(r, k, "token longer than %zu bytes", JSON_MAX_TOKEN);
		return -1;
	}
	size_t p_off = (size_t)(r->p - k), t_off = r->tstart >= k ? (size_t)(r->tstart - k) : 0;
	if (k != r->own) /* dropped bytes, or the borrowed window left */
		memmove(r->own, k, live);
	r->base_off += drop;
	if (r->cap - live < r->chunk) {
		r->cap = live + r->chunk > r->cap * 2 ? live + r->chunk : r->cap * 2;
		r->own = xrealloc(r->own, r->cap);
	}
	r->base = r->own;
	r->end = r->own + live;
	r->p = r->own + p_off;
	r->tstart = r->own + t_off;
	*keep = r->own;
	for (;;) {
		const char *emsg = NULL;
		ssize_t n = r->read(r->rctx, r->own + live, r->cap - live, &emsg);
		if (n > 0) {
			r->end += n;
			return n;
		}
		if (n == 0) {
			r->eof = true;
			return 0;
		}
		if (errno == EINTR && !emsg)
			continue;
		if (soft)
			return -1;
		fail(r, r->end, "read error: %s", emsg ? emsg : strerror(errno));
		return -1;
	}
}


/* Skip whitespace; false at end of input or on error. */
static inline __attribute__((always_inline)) bool skip_ws(struct json_reader *r)
{
	for (;;) {
		const char *p = scan_ws(r->p, r->end);
		r->p = p;
		if (__builtin_expect(p < r->end, 1))
			return true;
		const char *keep = p;
		if (refill(r, &keep) <= 0)
			return false;
	}
}

static void put_utf8(struct buf *b, uint32_t cp)
{
	char t[4];
	size_t n;
	if (cp < 0x80) {
		t[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		t[0] = (char)(0xC0 | (cp >> 6));
		t[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		t[0] = (char)(0xE0 | (cp >> 12));
		t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		t[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		t[0] = (char)(0xF0 | (cp >> 18));
		t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		t[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	buf_append(b, t, n);
}

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/*
 * Scan the string whose opening quote is at r->p.  On success sets sval/slen
 * and moves p past the closing quote.
 */
static bool scan_string(struct json_reader *r)
{
	r->tstart = r->p;
	size_t i = 1;   /* offset of the scan position from tstart */
	size_t seg = 1; /* start of the not yet copied run (when escaped) */
	bool copied = false;
	for (;;) {
		const char *t = r->tstart, *e = r->end;
		const char *s = scan_str(t + i, e);
		if (s >= e) {
			i = (size_t)(s - t);
			goto more;
		}
		unsigned char c = (unsigned char)*s;
		if (c == '"') {
			if (copied) {
				buf_append(&r->scratch, t + seg, (size_t)(s - (t + seg)));
				r->sval = r->scratch.data;
				r->slen = r->scratch.len;
			} else {
				r->sval = t + 1;
				r->slen = (size_t)(s - (t + 1));
			}
			r->p = s + 1;
			r->tlen = (size_t)(r->p - t);
			return true;
		}
		if (c == '\\') {
			if (e - s < 2) {
				if (r->eof)
					return fail(r, r->tstart, "unterminated string"), false;
				i = (size_t)(s - t);
				goto more;
			}
			if (!copied) {
				buf_reset(&r->scratch);
				copied = true;
			}
			buf_append(&r->scratch, t + seg, (size_t)(s - (t + seg)));
			char o = s[1];
			size_t adv = 2;
			switch (o) {
			case '"': buf_putc(&r->scratch, '"'); break;
			case '\\': buf_putc(&r->scratch, '\\'); break;
			case '/': buf_putc(&r->scratch, '/'); break;
			case 'b': buf_putc(&r->scratch, '\b'); break;
			case 'f': buf_putc(&r->scratch, '\f'); break;
			case 'n': buf_putc(&r->scratch, '\n'); break;
			case 'r': buf_putc(&r->scratch, '\r'); break;
			case 't': buf_putc(&r->scratch, '\t'); break;
			case 'u': {
				if (e - s < 6 && !r->eof) {
					i = (size_t)(s - t);
					seg = i;
					goto more;
				}
				int h = e - s >= 6 ? hex4(s + 2) : -1;
				if (h < 0)
					return fail(r, s, "invalid \\u escape in string"), false;
				uint32_t cp = (uint32_t)h;
				adv = 6;
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					/* a high surrogate must be followed by \uDC00-\uDFFF */
					if (e - s < 12 && !r->eof) {
						i = (size_t)(s - t);
						seg = i;
						goto more;
					}
					int lo = (e - s >= 12 && s[6] == '\\' && s[7] == 'u') ? hex4(s + 8) : -1;
					if (lo >= 0xDC00 && lo <= 0xDFFF) {
						cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
						adv = 12;
					} else if (r->flags & JSON_LENIENT_UTF8) {
						cp = 0xFFFD;
						r->replaced++;
					} else
						return fail(r, s, "lone UTF-16 high surrogate \\u%04X in string", h), false;
				} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
					if (r->flags & JSON_LENIENT_UTF8) {
						cp = 0xFFFD;
						r->replaced++;
					} else
						return fail(r, s, "lone UTF-16 low surrogate \\u%04X in string", h), false;
				}
				put_utf8(&r->scratch, cp);
				break;
			}
			default:
				if ((unsigned char)o < 0x20 || (unsigned char)o >= 0x7f)
					return fail(r, s, "invalid escape '\\\\x%02X' in string", (unsigned char)o), false;
				return fail(r, s, "invalid escape '\\%c' in string", o), false;
			}
			s += adv;
			i = seg = (size_t)(s - t);
			continue;
		}
		if (c < 0x20) {
			if (c == 0)
				return fail(r, s, "NUL byte inside string"), false;
			return fail(r, s, "unescaped control character 0x%02X in string", c), false;
		}
		/* c >= 0x80 */
		int n = utf8_seq((const unsigned char *)s, (const unsigned char *)e);
		if (n > 0) {
			i = (size_t)(s - t) + (size_t)n;
			continue;
		}
		if (n < 0 && !r->eof) {
			i = (size_t)(s - t);
			goto more;
		}
		if (!(r->flags & JSON_LENIENT_UTF8))
			return fail(r, s, "invalid UTF-8 byte 0x%02X in string", c), false;
		if (!copied) {
			buf_reset(&r->scratch);
			copied = true;
		}
		buf_append(&r->scratch, t + seg, (size_t)(s - (t + seg)));
		buf_append(&r->scratch, "\xEF\xBF\xBD", 3);
		r->replaced++;
		i = seg = (size_t)(s - t) + 1;
		continue;
	more:
		/* Window exhausted inside the string: keep the token, read more.
		 * At end of input, scan once more with eof set so that a cut
		 * escape or UTF-8 sequence is reported as what it is. */
		if (r->eof && (size_t)(r->end - r->tstart) <= i)
			return fail(r, r->tstart, "unterminated string"), false;
		{
			const char *keep = r->tstart;
			if (refill(r, &keep) < 0)
				return false;
		}
	}
}

/* Short strings without escapes are the common case in traces ("ph", "X",
 * "kernel"): settle them with one 16-byte compare, no bookkeeping. */
static inline __attribute__((always_inline)) bool fast_string(struct json_reader *r)
{
	const char *p = r->p;
	int k = scan_short_str(p, r->end);
	if (k >= 0) {
		r->tstart = p;
		r->sval = p + 1;
		r->slen = (size_t)k;
		r->p = p + 2 + k;
		r->tlen = (size_t)k + 2;
		return true;
	}
	return scan_string(r);
}

/*
 * Scan a number at s (limit e).  Returns the length, 0 on a syntax error
 * (*why set), -1 if the number may continue past e.
 */
static long scan_number_at(const char *s, const char *e, bool eof, struct json_num *n, const char **why,
			   const char **where)
{
	const char *p = s;
	memset(n, 0, sizeof *n);
	n->is_int = true;
	if (p < e && *p == '-') {
		n->neg = true;
		p++;
	}
	if (p >= e)
		goto cut;
	uint64_t m = 0;
	int32_t ex = 0;
	bool big = false;
	if (*p == '0') {
		p++;
		if (p < e && *p >= '0' && *p <= '9') {
			*why = "leading zeros are not allowed in numbers";
			*where = p;
			return 0;
		}
	} else if (*p >= '1' && *p <= '9') {
		while (p < e && *p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');
			if (!big && m <= (UINT64_MAX - d) / 10)
				m = m * 10 + d;
			else {
				big = true;
				if (ex < 1000000)
					ex++;
			}
			p++;
		}
	} else {
		*why = "invalid number";
		*where = p;
		return 0;
	}
	if (p < e && *p == '.') {
		n->is_int = false;
		p++;
		if (p >= e)
			goto cut;
		if (*p < '0' || *p > '9') {
			*why = "expected a digit after the decimal point";
			*where = p;
			return 0;
		}
		while (p < e && *p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');
			if (!big && m <= (UINT64_MAX - d) / 10) {
				m = m * 10 + d;
				if (ex > -1000000)
					ex--;
			} else
				big = true;
			p++;
		}
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		n->is_int = false;
		p++;
		bool eneg = false;
		if (p < e && (*p == '+' || *p == '-')) {
			eneg = *p == '-';
			p++;
		}
		if (p >= e)
			goto cut;
		if (*p < '0' || *p > '9') {
			*why = "expected a digit in the exponent";
			*where = p;
			return 0;
		}
		int32_t x = 0;
		while (p < e && *p >= '0' && *p <= '9') {
			if (x < 100000000)
				x = x * 10 + (*p - '0');
			p++;
		}
		ex += eneg ? -x : x;
	}
	if (p >= e && !eof)
		return -1;
	n->mant = m;
	n->exp10 = ex;
	n->big = big;
	return p - s;
cut:
	if (!eof)
		return -1;
	*why = "number cut short by the end of input";
	*where = p;
	return 0;
}

bool json_parse_number(const char *s, size_t len, struct json_num *out)
{
	const char *why = NULL, *where = NULL;
	long n = scan_number_at(s, s + len, true, out, &why, &where);
	return n > 0 && (size_t)n == len;
}

static inline bool is_delim(unsigned char c)
{
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Plain numbers of at most 19 significant digits and no exponent, with 32
 * readable bytes ahead: no bounds checks needed.  Anything else (and every
 * error) goes through the general scanner. */
static inline __attribute__((always_inline)) bool fast_number(struct json_reader *r)
{
	const char *p = r->p;
	if (r->end - p < 32)
		return false;
	const char *s = p;
	bool neg = *s == '-';
	s += neg;
	uint64_t m;
	const char *d0 = s;
	if (*s == '0') {
		m = 0;
		s++;
	} else if ((unsigned)(*s - '1') < 9) {
		m = (uint64_t)(*s++ - '0');
		while ((unsigned)(*s - '0') < 10 && s - d0 < 20)
			m = m * 10 + (uint64_t)(*s++ - '0');
	} else
		return false;
	int32_t ex = 0;
	bool is_int = true;
	size_t digits = (size_t)(s - d0);
	if (*s == '.') {
		const char *f = ++s;
		while ((unsigned)(*s - '0') < 10 && digits + (size_t)(s - f) < 20)
			m = m * 10 + (uint64_t)(*s++ - '0');
		if (s == f)
			return false;
		digits += (size_t)(s - f);
		ex = -(int32_t)(s - f);
		is_int = false;
	}
	if (digits > 19 || !is_delim((unsigned char)*s))
		return false;
	r->tstart = p;
	r->tlen = (size_t)(s - p);
	r->p = s;
	r->num.mant = m;
	r->num.exp10 = ex;
	r->num.neg = neg;
	r->num.is_int = is_int;
	r->num.big = false;
	return true;
}

static enum json_tok scan_number(struct json_reader *r)
{
	r->tstart = r->p;
	for (;;) {
		const char *why = NULL, *where = NULL;
		long n = scan_number_at(r->tstart, r->end, r->eof, &r->num, &why, &where);
		if (n > 0) {
			r->tlen = (size_t)n;
			r->p = r->tstart + n;
			if (r->p < r->end) {
				unsigned char c = (unsigned char)*r->p;
				if (!scan_is_ws(c) && c != ',' && c != ']' && c != '}')
					return fail(r, r->p, "invalid character after number");
			}
			return JSON_NUMBER;
		}
		if (n == 0)
			return fail(r, where, "%s", why);
		/* The number runs past the window.  Rescanning it from its start
		 * after every small read would be quadratic in its length, so read
		 * until the bytes available past its start have doubled. */
		size_t have = (size_t)(r->end - r->tstart);
		do {
			const char *keep = r->tstart;
			if (refill(r, &keep) < 0)
				return JSON_ERROR;
		} while (!r->eof && (size_t)(r->end - r->tstart) < 2 * have);
	}
}

static enum json_tok scan_literal(struct json_reader *r, const char *lit, size_t n, enum json_tok t)
{
	r->tstart = r->p;
	while ((size_t)(r->end - r->tstart) < n && !r->eof) {
		const char *keep = r->tstart;
		if (refill(r, &keep) < 0)
			return JSON_ERROR;
	}
	size_t have = (size_t)(r->end - r->tstart);
	for (size_t i = 0; i < n; i++) {
		if (i >= have)
			return fail(r, r->tstart + i, "unexpected end of input in literal");
		if (r->tstart[i] != lit[i])
			return fail(r, r->tstart, "invalid literal (expected '%s')", lit);
	}
	r->p = r->tstart + n;
	r->tlen = n;
	return t;
}

static inline void after_value(struct json_reader *r)
{
	if (r->depth == 0)
		r->state = ST_DONE;
	else
		r->state = r->stack[r->depth - 1] == '{' ? ST_OBJ_NEXT : ST_ARR_NEXT;
}

static enum json_tok unexpected(struct json_reader *r, const char *what)
{
	unsigned char c = (unsigned char)*r->p;
	if (c == 0)
		return fail(r, r->p, "NUL byte where %s was expected", what);
	if (c >= 0x21 && c < 0x7f)
		return fail(r, r->p, "unexpected '%c' where %s was expected", c, what);
	return fail(r, r->p, "unexpected byte 0x%02X where %s was expected", c, what);
}

static enum json_tok end_of_input(struct json_reader *r)
{
	if (r->state == ST_ERROR)
		return JSON_ERROR;
	if (r->state == ST_DONE) {
		r->tok = JSON_EOF;
		r->tstart = r->p;
		return JSON_EOF;
	}
	if (r->depth == 0 && r->state == ST_TOP)
		return fail(r, r->p, "empty document");
	return fail(r, r->p, "unexpected end of input inside %s (depth %u)",
		    r->depth && r->stack[r->depth - 1] == '{' ? "an object" : "an array", r->depth);
}

static inline __attribute__((always_inline)) enum json_tok value(struct json_reader *r)
{
	unsigned char c = (unsigned char)*r->p;
	enum json_tok t;
	switch (c) {
	case '{':
	case '[':
		if (r->depth >= r->max_depth)
			return fail(r, r->p, "nesting deeper than %u levels", r->max_depth);
		r->stack[r->depth++] = c;
		r->tstart = r->p++;
		r->tlen = 1;
		r->state = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
		return r->tok = c == '{' ? JSON_OBJ_BEGIN : JSON_ARR_BEGIN;
	case '"':
		if (!fast_string(r))
			return JSON_ERROR;
		t = JSON_STRING;
		break;
	case 't': t = scan_literal(r, "true", 4, JSON_TRUE); break;
	case 'f': t = scan_literal(r, "false", 5, JSON_FALSE); break;
	case 'n': t = scan_literal(r, "null", 4, JSON_NULL); break;
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			t = fast_number(r) ? JSON_NUMBER : scan_number(r);
			break;
		}
		return unexpected(r, "a value");
	}
	if (t == JSON_ERROR)
		return JSON_ERROR;
	after_value(r);
	return r->tok = t;
}

static inline __attribute__((always_inline)) enum json_tok key(struct json_reader *r)
{
	if (*r->p != '"')
		return unexpected(r, "a string key");
	if (!fast_string(r))
		return JSON_ERROR;
	/* Consume the usual ':' or ': ' right away when it is in the window,
	 * so the next call starts at the value. */
	const char *p = r->p;
	if (r->end - p >= 2 && p[0] == ':') {
		r->p = p + 1 + (p[1] == ' ');
		r->state = ST_VALUE;
	} else
		r->state = ST_COLON;
	return r->tok = JSON_KEY;
}

static enum json_tok close_container(struct json_reader *r, char open)
{
	(void)open;
	r->tstart = r->p++;
	r->tlen = 1;
	r->depth--;
	after_value(r);
	return r->tok = open == '{' ? JSON_OBJ_END : JSON_ARR_END;
}

enum json_tok json_next(struct json_reader *r)
{
	if (__builtin_expect(r->state == ST_ERROR, 0))
		return JSON_ERROR;
	if (__builtin_expect(!skip_ws(r), 0))
		return end_of_input(r);
	unsigned char c = (unsigned char)*r->p;
	switch (r->state) {
	case ST_TOP:
	case ST_VALUE: return value(r);
	case ST_DONE: return fail(r, r->p, "unexpected data after the end of the document");
	case ST_COLON:
		if (c != ':')
			return unexpected(r, "':' after an object key");
		r->p++;
		if (!skip_ws(r))
			return end_of_input(r);
		return value(r);
	case ST_OBJ_FIRST:
		if (c == '}')
			return close_container(r, '{');
		return key(r);
	case ST_KEY: return key(r);
	case ST_OBJ_NEXT:
		if (c == '}')
			return close_container(r, '{');
		if (c != ',')
			return unexpected(r, "',' or '}'");
		r->p++;
		if (!skip_ws(r))
			return end_of_input(r);
		return key(r);
	case ST_ARR_FIRST:
		if (c == ']')
			return close_container(r, '[');
		return value(r);
	case ST_ARR_NEXT:
		if (c == ']')
			return close_container(r, '[');
		if (c != ',')
			return unexpected(r, "',' or ']'");
		r->p++;
		if (!skip_ws(r))
			return end_of_input(r);
		return value(r);
	}
	return fail(r, r->p, "internal parser state error");
}

/*
 * Raw element access (see json.h).  Only between elements of an array: the
 * separator is consumed here, so a caller that declines the element leaves
 * the reader in ST_VALUE and json_next() reads the element as usual.
 */
bool json_raw_begin(struct json_reader *r, size_t want, const char **p, const char **end)
{
	if (r->state != ST_ARR_FIRST && r->state != ST_ARR_NEXT)
		return false;
	if (!skip_ws(r))
		return false;
	if (r->state == ST_ARR_NEXT) {
		if (*r->p != ',')
			return false;
		r->p++;
		r->state = ST_VALUE;
		if (!skip_ws(r))
			return false;
	} else if (*r->p == ']') {
		return false;
	}
	r->state = ST_VALUE;
	/* Read ahead softly: a read error (a corrupt gzip stream) must not
	 * surface here, before elements that the tokenizer still delivers;
	 * with what was read, the caller parses or declines. */
	while ((size_t)(r->end - r->p) < want && !r->eof) {
		const char *keep = r->p;
		if (refill_ex(r, &keep, true) < 0)
			break;
	}
	*p = r->p;
	*end = r->end;
	return true;
}

void json_raw_commit(struct json_reader *r, const char *q)
{
	r->tstart = r->p;
	r->tlen = (size_t)(q - r->p);
	r->p = q;
	r->tok = JSON_OBJ_END;
	after_value(r);
}

bool json_raw_at_eof(const struct json_reader *r) { return r->eof; }

uint64_t json_raw_offset(const struct json_reader *r, const char *q)
{
	return r->base_off + (uint64_t)(q - r->base);
}

bool json_skip(struct json_reader *r)
{
	if (r->tok == JSON_ERROR)
		return false;
	if (r->tok != JSON_OBJ_BEGIN && r->tok != JSON_ARR_BEGIN)
		return true;
	uint32_t target = r->depth - 1;
	for (;;) {
		enum json_tok t = json_next(r);
		if (t == JSON_ERROR)
			return false;
		if ((t == JSON_OBJ_END || t == JSON_ARR_END) && r->depth == target)
			return true;
	}
}
