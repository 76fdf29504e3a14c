/*
 * load_fast.c - the fast path of the trace loader: one element of
 * traceEvents decoded straight from the text.
 *
 * The tokenizer (core/json.c) handles any JSON, one token per call, with a
 * state machine and refills behind every token.  Kineto events are small
 * flat objects with a handful of keys, and almost all of a trace is made of
 * them, so the loader first hands each element to trace_fast_event(): with
 * the whole element in the reader's window (json_raw_begin), it walks the
 * bytes once, picks out the fields the model keeps, and validates the rest
 * without decoding it.
 *
 * The rule that keeps it honest: the fast path either produces exactly what
 * the tokenizer path (trace_parser_event in load.c) would, or it declines
 * (returns NULL) and the element is parsed again by the tokenizer path,
 * which also reports any error with its position.  It declines on everything unusual:
 * escapes in names and keys, invalid UTF-8, numbers with exponents or more
 * than 19 digits where the value is used, string pids, counters, duplicate
 * keys that the tokenizer path would intern twice, deep nesting, an element
 * not entirely in the window.  It must accept only valid JSON: a value it
 * skips is checked against the full grammar.  fuzz/fuzz_trace_fast.c
 * compares both paths on arbitrary input.
 */
#include <string.h>

#include "core/json.h"
#include "core/scan.h"
#include "core/utf8.h"
#include "trace/load_internal.h"

#define MAX_SKIP_DEPTH 32

/* Number of leading ASCII digits in the 8 bytes at s (little-endian load). */
static inline unsigned digits8(uint64_t v)
{
	/* a byte is a digit iff its high nibble is 3 and adding 6 keeps it 3 */
	uint64_t hi = v & 0xF0F0F0F0F0F0F0F0ull;
	uint64_t hi6 = (v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull;
	uint64_t ok = ~(hi ^ 0x3030303030303030ull) & ~(hi6 ^ 0x3030303030303030ull);
	/* ok has all of 0xF0 set in a digit byte; find the first byte where not */
	uint64_t bad = ~ok & 0xF0F0F0F0F0F0F0F0ull;
	return bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
}

/* The value of the 8 ASCII digits at v (the first digit in the low byte). */
static inline uint64_t value8(uint64_t v)
{
	v -= 0x3030303030303030ull;
	v = (v * 10) + (v >> 8);
	v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
	     (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
	return v;
}

static const uint64_t pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* Append the whole run of digits at s to m (mod 2^64: the caller declines
 * runs that do not fit); returns the end of the run.  Eight bytes at a time,
 * and a run's last partial chunk without a per-digit loop: the loop exit
 * would be a mispredicted branch on every number. */
static inline __attribute__((always_inline)) const char *digits_run(const char *s, const char *end, uint64_t *m)
{
	uint64_t acc = *m;
	while (end - s >= 8) {
		uint64_t v;
		memcpy(&v, s, 8);
		unsigned n = digits8(v);
		if (n == 8) {
			acc = acc * 100000000ull + value8(v);
			s += 8;
			continue;
		}
		if (n) {
			/* the n digits to the top, '0's below: value8 reads them as
			 * an 8-digit number with leading zeros */
			uint64_t x = (v << (8 * (8 - n))) | (0x3030303030303030ull >> (8 * n));
			acc = acc * pow10_u64[n] + value8(x);
			s += n;
		}
		*m = acc;
		return s;
	}
	while (s < end && (unsigned)(*s - '0') < 10)
		acc = acc * 10 + (uint64_t)(*s++ - '0');
	*m = acc;
	return s;
}

/*
 * The string whose opening quote is at p.  Returns the byte after the
 * closing quote, NULL to decline.  *plain: no escapes (the text is then
 * [p + 1, ret - 1) as is).  Escapes are validated; \u escapes of UTF-16
 * surrogates are declined (the tokenizer pairs or replaces them).  Bytes
 * >= 0x80 must form valid UTF-8 (the tokenizer replaces invalid ones).
 */
static const char *str_end_slow(const char *p, const char *end, bool *plain)
{
	const char *s = p + 1;
	*plain = true;
	for (;;) {
		s = scan_str(s, end);
		if (s >= end)
			return NULL;
		unsigned char c = (unsigned char)*s;
		if (c == '"')
			return s + 1;
		if (c == '\\') {
			*plain = false;
			if (end - s < 2)
				return NULL;
			switch (s[1]) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't': s += 2; continue;
			case 'u': {
				if (end - s < 6)
					return NULL;
				unsigned v = 0;
				for (int i = 2; i < 6; i++) {
					unsigned char h = (unsigned char)s[i];
					unsigned d;
					if (h >= '0' && h <= '9')
						d = h - '0';
					else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
						d = (h | 0x20) - 'a' + 10;
					else
						return NULL;
					v = v * 16 + d;
				}
				if (v >= 0xD800 && v <= 0xDFFF)
					return NULL;
				s += 6;
				continue;
			}
			default: return NULL;
			}
		}
		if (c < 0x20)
			return NULL;
		int n = utf8_seq((const unsigned char *)s, (const unsigned char *)end);
		if (n <= 0)
			return NULL;
		s += n;
	}
}

/* Most strings are keys and short values: settled by one 16-byte compare
 * when the closing quote comes before anything special. */
static inline __attribute__((always_inline)) const char *str_end(const char *p, const char *end, bool *plain)
{
	int k = scan_short_str(p, end);
	if (k >= 0) {
		*plain = true;
		return p + 2 + k;
	}
	return str_end_slow(p, end, plain);
}

/*
 * A number at p as the tokenizer decodes it, for values the model keeps:
 * at most 19 significant digits (mant/exp10 exact), no exponent.  Returns
 * the byte after it, NULL to decline.  The caller checks what follows.
 */
static inline __attribute__((always_inline)) const char *num_val(const char *p, const char *end, struct json_num *n)
{
	const char *s = p;
	n->neg = false;
	n->big = false;
	n->is_int = true;
	n->exp10 = 0;
	if (s < end && *s == '-') {
		n->neg = true;
		s++;
	}
	if (s >= end)
		return NULL;
	const char *d0 = s;
	uint64_t m = 0;
	if (*s == '0') {
		s++;
	} else if ((unsigned)(*s - '1') < 9) {
		s = digits_run(s, end, &m);
	} else {
		return NULL;
	}
	size_t digits = (size_t)(s - d0);
	if (s < end && *s == '.') {
		const char *f = ++s;
		s = digits_run(s, end, &m);
		if (s == f)
			return NULL;
		digits += (size_t)(s - f);
		n->exp10 = -(int32_t)(s - f);
		n->is_int = false;
	}
	/* a digit, an exponent or the end here: more than we decode, or cut */
	if (digits > 19 || s >= end || (unsigned)(*s - '0') < 10 || *s == 'e' || *s == 'E')
		return NULL;
	n->mant = m;
	return s;
}

/* Any number, checked against the grammar, not decoded. */
static inline __attribute__((always_inline)) const char *num_skip(const char *p, const char *end)
{
	const char *s = p;
	if (s < end && *s == '-')
		s++;
	if (s >= end)
		return NULL;
	uint64_t ignored = 0;
	if (*s == '0')
		s++;
	else if ((unsigned)(*s - '1') < 9)
		s = digits_run(s, end, &ignored);
	else
		return NULL;
	if (s < end && *s == '.') {
		const char *f = ++s;
		s = digits_run(s, end, &ignored);
		if (s == f)
			return NULL;
	}
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < end && (*s == '+' || *s == '-'))
			s++;
		const char *f = s;
		while (s < end && (unsigned)(*s - '0') < 10)
			s++;
		if (s == f)
			return NULL;
	}
	/* the number must be followed by something in the window (a cut
	 * number might go on); what follows is checked by the caller */
	if (s >= end || (unsigned)(*s - '0') < 10)
		return NULL;
	return s;
}

/* Any value at p (not whitespace), checked, not decoded. */
static const char *value_skip(const char *p, const char *end, int depth)
{
	if (p >= end)
		return NULL;
	bool plain;
	switch (*p) {
	case '"': return str_end(p, end, &plain);
	case 't': return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
	case 'f': return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
	case 'n': return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
	case '[':
	case '{': {
		if (depth >= MAX_SKIP_DEPTH)
			return NULL;
		bool obj = *p == '{';
		char close = obj ? '}' : ']';
		p = scan_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				if (p >= end || *p != '"')
					return NULL;
				p = str_end(p, end, &plain);
				if (!p)
					return NULL;
				p = scan_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p = scan_ws(p + 1, end);
			}
			p = value_skip(p, end, depth + 1);
			if (!p)
				return NULL;
			p = scan_ws(p, end);
			if (p >= end)
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p != ',')
				return NULL;
			p = scan_ws(p + 1, end);
		}
	}
	default:
		if (*p == '-' || (unsigned)(*p - '0') < 10)
			return num_skip(p, end);
		return NULL;
	}
}

/* value_skip with the common scalars (numbers and plain strings) handled
 * inline: most skipped args are one of those. */
static inline __attribute__((always_inline)) const char *value_skip_fast(const char *p, const char *end, int depth)
{
	if (p < end && (*p == '-' || (unsigned)(*p - '0') < 10))
		return num_skip(p, end);
	if (p < end && *p == '"') {
		bool plain;
		return str_end(p, end, &plain);
	}
	return value_skip(p, end, depth);
}

int64_t trace_int_of_num(const struct json_num *n, const char *raw, size_t rawlen, int64_t dflt)
{
	if (n->is_int && !n->big && n->mant <= (uint64_t)INT64_MAX) /* the common case, inline */
		return n->neg ? -(int64_t)n->mant : (int64_t)n->mant;
	int64_t v;
	if (json_num_i64(n, &v))
		return v;
	double d = json_num_f64(n, raw, rawlen);
	if (d == d && d > -9.2e18 && d < 9.2e18)
		return (int64_t)d;
	return dflt;
}

/* An integer arg (stream, correlation, ...): a number, decoded as the
 * tokenizer path's read_int_arg does; other types decline. */
static const char *int_val(const char *p, const char *end, int64_t *out)
{
	struct json_num n;
	const char *q = num_val(p, end, &n);
	if (q)
		*out = trace_int_of_num(&n, p, (size_t)(q - p), -1);
	return q;
}

/* "key": at p (the opening quote); returns the byte after ':' and
 * whitespace, the key in *k / *kl. */
static inline __attribute__((always_inline)) const char *key_at(const char *p, const char *end, const char **k,
								 size_t *kl)
{
	if (p >= end || *p != '"')
		return NULL;
	bool plain;
	const char *q = str_end(p, end, &plain);
	if (!q || !plain) /* an escaped key could spell a known one */
		return NULL;
	*k = p + 1;
	*kl = (size_t)(q - 1 - (p + 1));
	q = scan_ws(q, end);
	if (q >= end || *q != ':')
		return NULL;
	return scan_ws(q + 1, end);
}

/* After a member's value: ',' (more members) or the closing '}'.  Returns
 * the start of the next key, or the byte after '}' with *closed set. */
static inline __attribute__((always_inline)) const char *next_member(const char *p, const char *end, bool *closed)
{
	p = scan_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == '}') {
		*closed = true;
		return p + 1;
	}
	if (*p != ',')
		return NULL;
	return scan_ws(p + 1, end);
}

#define KEY(lit) (kl == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)

static const char *args_obj(const char *p, const char *end, struct fast_event *ev)
{
	/* p is just past '{' */
	p = scan_ws(p, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		const char *k;
		size_t kl;
		p = key_at(p, end, &k, &kl);
		if (!p)
			return NULL;
		const char *q = NULL;
		/* most args are not kept (grid, block, Sequence number, ...): one
		 * test on the key length sends them straight to the skip */
		if (kl < 32 && ((1u << 5 | 1u << 6 | 1u << 11 | 1u << 14 | 1u << 23 | 1u << 25) >> kl & 1)) {
			if (KEY("External id"))
				q = int_val(p, end, &ev->ext);
			else if (KEY("correlation"))
				q = int_val(p, end, &ev->corr);
			else if (KEY("stream"))
				q = int_val(p, end, &ev->stream);
			else if (KEY("bytes"))
				q = int_val(p, end, &ev->bytes);
			else if (KEY("memory bandwidth (GB/s)")) {
				struct json_num n;
				q = num_val(p, end, &n);
				if (q)
					ev->bw = json_num_f64(&n, p, (size_t)(q - p));
			} else if (KEY("wait_on_stream")) {
				return NULL; /* an event wait (rare): the tokenizer path keeps it when asked */
			} else if (KEY("est. achieved occupancy %")) {
				/* decoded whether or not the load keeps it (the commit
				 * decides): one compare on kernels' args only; a value
				 * that is not a number is none, as in the tokenizer path */
				if (p < end && (*p == '-' || (unsigned)(*p - '0') < 10)) {
					struct json_num n;
					q = num_val(p, end, &n);
					if (q) {
						ev->occ = json_num_f64(&n, p, (size_t)(q - p));
						ev->has_occ = true;
					}
				} else {
					q = value_skip(p, end, 2);
				}
			} else
				q = value_skip_fast(p, end, 2);
		} else if (kl == 33 && KEY("wait_on_cuda_event_record_corr_id"))
			return NULL;
		else
			q = value_skip_fast(p, end, 2);
		if (!q)
			return NULL;
		bool closed = false;
		p = next_member(q, end, &closed);
		if (!p || closed)
			return p;
	}
}

enum { SEEN_PH = 1, SEEN_CAT = 2, SEEN_NAME = 4 };

/* The top-level keys the model keeps. */
enum fkey { F_OTHER, F_PH, F_TS, F_ID, F_DUR, F_CAT, F_PID, F_TID, F_NAME, F_ARGS };

static inline enum fkey classify_key(const char *k, size_t kl)
{
	switch (kl) {
	case 2:
		if (KEY("ph"))
			return F_PH;
		if (KEY("ts"))
			return F_TS;
		if (KEY("id"))
			return F_ID;
		break;
	case 3:
		if (KEY("dur"))
			return F_DUR;
		if (KEY("cat"))
			return F_CAT;
		if (KEY("pid"))
			return F_PID;
		if (KEY("tid"))
			return F_TID;
		break;
	case 4:
		if (KEY("name"))
			return F_NAME;
		if (KEY("args"))
			return F_ARGS;
		break;
	}
	return F_OTHER;
}

/*
 * The value of top-level key f at p (not whitespace).  Returns the byte
 * after the value, NULL to decline.  Always inlined with a constant f in
 * the in-order matcher below, so that path has no dispatch at all.
 */
static inline __attribute__((always_inline)) const char *field(enum fkey f, const char *p, const char *end,
							       struct fast_event *ev, unsigned *seen)
{
	const char *q;
	bool plain;
	struct json_num n;
	int64_t v;
	switch (f) {
	case F_PH:
		if (*seen & SEEN_PH || *p != '"')
			return NULL;
		q = str_end(p, end, &plain);
		if (!q || !plain || q - p != 3)
			return NULL;
		ev->ph = p[1];
		*seen |= SEEN_PH;
		return q;
	case F_TS:
	case F_DUR:
		if (*p == 'n') /* a null ts or dur is like none */
			return value_skip(p, end, 1);
		q = num_val(p, end, &n);
		if (!q)
			return NULL;
		if (f == F_TS) {
			ev->has_ts = true;
			ev->ts_num = n;
			ev->ts_raw = p;
			ev->ts_len = (uint32_t)(q - p);
			ev->ts_float = !n.is_int;
		} else {
			ev->has_dur = true;
			ev->dur_num = n;
			ev->dur_raw = p;
			ev->dur_len = (uint32_t)(q - p);
			ev->dur_float = !n.is_int;
		}
		return q;
	case F_ID:
		q = num_val(p, end, &n); /* a null id is not like none: decline */
		if (!q)
			return NULL;
		ev->has_id = true;
		ev->id = trace_int_of_num(&n, p, (size_t)(q - p), -1);
		return q;
	case F_CAT:
		if (*p == 'n')
			return value_skip(p, end, 1);
		if (*seen & SEEN_CAT || *p != '"')
			return NULL;
		q = str_end(p, end, &plain);
		if (!q || !plain)
			return NULL;
		ev->cat = p + 1;
		ev->cat_len = (uint32_t)(q - 1 - (p + 1));
		ev->has_cat = true;
		*seen |= SEEN_CAT;
		return q;
	case F_PID:
	case F_TID:
		q = num_val(p, end, &n);
		/* the tokenizer path interns anything else as text */
		if (!q)
			return NULL;
		if (n.is_int && n.mant <= (uint64_t)INT64_MAX) /* exact: no call */
			v = n.neg ? -(int64_t)n.mant : (int64_t)n.mant;
		else if (!json_num_i64(&n, &v))
			return NULL;
		if (v <= TRACE_ID_STR_BASE + (int64_t)UINT32_MAX)
			return NULL;
		if (f == F_PID)
			ev->pid = v;
		else
			ev->tid = v;
		return q;
	case F_NAME:
		if (*seen & SEEN_NAME || *p != '"')
			return NULL;
		q = str_end(p, end, &plain);
		if (!q || !plain)
			return NULL;
		ev->name = p + 1;
		ev->name_len = (uint32_t)(q - 1 - (p + 1));
		ev->has_name = true;
		ev->name_first = !(*seen & SEEN_CAT);
		*seen |= SEEN_NAME;
		return q;
	case F_ARGS:
		if (*p != '{')
			return value_skip(p, end, 1);
		/* counters (and events whose ph is not known yet) keep every
		 * numeric arg: the tokenizer path does that */
		if (ev->ph == 'C' || ev->ph == 0)
			return NULL;
		/* with keep_profiler_args the tokenizer path interns the arg keys
		 * of an event whose cat it does not know yet: the caller declines
		 * such an event then */
		ev->args_before_cat = !(*seen & SEEN_CAT);
		return args_obj(p + 1, end, ev);
	case F_OTHER:
		break;
	}
	return value_skip_fast(p, end, 1);
}

/* p at `lit` (a key with its quotes, then whitespace and ':')?  Returns the
 * value's first byte, else NULL.  lit is at most 8 bytes. */
static inline __attribute__((always_inline)) const char *key_is(const char *p, const char *end, const char *lit,
								size_t n)
{
	if (end - p < 16)
		return NULL;
	uint64_t a, b;
	memcpy(&a, p, 8);
	b = 0;
	memcpy(&b, lit, n);
	uint64_t mask = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
	if ((a & mask) != b)
		return NULL;
	p = scan_ws(p + n, end);
	if (p >= end || *p != ':')
		return NULL;
	/* field() reads the value's first byte unchecked: a key whose value
	 * would start at the end is declined here (the tokenizer reports it) */
	p = scan_ws(p + 1, end);
	return p < end ? p : NULL;
}

const char *trace_fast_event(const char *p, const char *end, struct fast_event *ev)
{
	if (p >= end || *p != '{')
		return NULL;
	memset(ev, 0, sizeof *ev);
	ev->pid = ev->tid = ev->stream = ev->corr = ev->ext = ev->bytes = -1;
	unsigned seen = 0;
	bool closed = false;
	const char *q, *v;
	p = scan_ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	/*
	 * Kineto writes the keys in a fixed order: "ph", "cat", "name", "pid",
	 * "tid", "ts", "dur", "args" for complete events, "ph", "id", "pid",
	 * "tid", "ts", "cat", "name" for flows.  Matching that order key by
	 * key replaces a data-dependent dispatch per key (a mispredicted
	 * branch each time) by tests that nearly always go the same way.  An
	 * expected key that is not there is just not consumed; whatever is
	 * left goes through the general loop below.
	 */
#define IN_ORDER(lit, f)                                                                            \
	if ((v = key_is(p, end, lit, sizeof(lit) - 1)) != NULL) {                                  \
		q = field(f, v, end, ev, &seen);                                                    \
		if (!q)                                                                             \
			return NULL;                                                                \
		p = next_member(q, end, &closed);                                                   \
		if (!p || closed)                                                                   \
			return p;                                                                   \
	}
	IN_ORDER("\"ph\"", F_PH)
	IN_ORDER("\"id\"", F_ID)
	IN_ORDER("\"cat\"", F_CAT)
	IN_ORDER("\"name\"", F_NAME)
	IN_ORDER("\"pid\"", F_PID)
	IN_ORDER("\"tid\"", F_TID)
	IN_ORDER("\"ts\"", F_TS)
	IN_ORDER("\"dur\"", F_DUR)
	IN_ORDER("\"cat\"", F_CAT)
	IN_ORDER("\"name\"", F_NAME)
	IN_ORDER("\"args\"", F_ARGS)
#undef IN_ORDER
	for (;;) {
		const char *k;
		size_t kl;
		p = key_at(p, end, &k, &kl);
		if (!p || p >= end)
			return NULL;
		q = field(classify_key(k, kl), p, end, ev, &seen);
		if (!q)
			return NULL;
		p = next_member(q, end, &closed);
		if (!p || closed)
			return p;
	}
}

const char *trace_fast_next(const char *q, const char *end)
{
	q = scan_ws(q, end);
	if (q >= end || *q != ',')
		return NULL;
	q = scan_ws(q + 1, end);
	return q < end && *q == '{' ? q : NULL;
}
