/*
 * json.h - the one JSON reader and the one JSON writer of dynolite.
 *
 * Reader: a pull tokenizer.  json_next() returns one token at a time
 * (object/array begin and end, key, string, number, literal) and validates
 * the full grammar as it goes, so a caller that reads a document to the end
 * has validated it.  Input is either a memory block (zero-copy: string
 * tokens without escapes point into it) or a stream fed by a read callback
 * in chunks, so documents larger than memory can be read (the trace loader
 * feeds it from gzip).  Errors carry an exact position: byte offset, line
 * and column (1-based, column counted in bytes).
 *
 * It is built for speed on multi-GB Kineto traces: SSE2 scans for string
 * ends and whitespace, numbers are decoded while they are scanned, line
 * numbers are only computed when an error needs them.
 *
 * On top of the tokenizer there is a small DOM (json_parse) for the small
 * documents of the project: RPC requests, config files.
 *
 * Writer: struct jw appends compact JSON to a struct buf, placing commas
 * itself and escaping strings correctly (invalid UTF-8 becomes U+FFFD so the
 * output is always valid JSON).
 */
#ifndef DYNO_JSON_H
#define DYNO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"

enum json_tok {
	JSON_ERROR = 0,
	JSON_OBJ_BEGIN,
	JSON_OBJ_END,
	JSON_ARR_BEGIN,
	JSON_ARR_END,
	JSON_KEY,
	JSON_STRING,
	JSON_NUMBER,
	JSON_TRUE,
	JSON_FALSE,
	JSON_NULL,
	JSON_EOF, /* end of the document (after trailing whitespace) */
};

struct json_error {
	char msg[160];
	uint64_t offset; /* byte offset of the offending byte, 0-based */
	uint64_t line;   /* 1-based */
	uint64_t column; /* 1-based, in bytes */
};

/* Read callback for streaming input: fill up to cap bytes, return the count,
 * 0 at end of input, -1 on error (then set *err to a message). */
typedef ssize_t (*json_read_fn)(void *ctx, char *dst, size_t cap, const char **err);
/* A text being written by another thread: waits until it is longer than
 * `have` bytes and returns its length, or returns `have` once it will not
 * grow any more. */
typedef size_t (*json_grow_fn)(void *ctx, size_t have);

enum {
	/* Replace invalid UTF-8 and lone surrogate escapes by U+FFFD and count
	 * them in json_reader.replaced, instead of failing. */
	JSON_LENIENT_UTF8 = 1u << 0,
	/* Do not count the newlines of input the stream window discards (a few
	 * percent of a big parse): an error past the first window then has
	 * line and column 0 (unknown), the offset stays exact.  For callers
	 * that can find the line again themselves (the trace loader re-reads
	 * a plain file on error). */
	JSON_NO_LINES = 1u << 1,
};

#define JSON_DEFAULT_MAX_DEPTH 512

/* A decoded number.  mant/exp10 are exact while !big: value = ±mant × 10^exp10. */
struct json_num {
	uint64_t mant;
	int32_t exp10;
	bool neg;
	bool is_int; /* no fraction, no exponent */
	bool big;    /* more significant digits than fit in 64 bits */
};

struct json_reader {
	/* window over the input */
	const char *p, *end, *base;
	uint64_t base_off; /* absolute offset of base */
	/* streaming */
	json_read_fn read;
	void *rctx;
	/* borrowed window (json_reader_init_borrow): grows in place while
	 * grow is set */
	json_grow_fn grow;
	void *gctx;
	char *own; /* owned window buffer (streaming only) */
	size_t cap, chunk;
	bool eof;
	/* parser state */
	uint8_t state;
	uint8_t *stack;
	uint32_t depth, max_depth;
	unsigned flags;
	/* current token */
	enum json_tok tok;
	const char *tstart; /* raw token start in window */
	size_t tlen;        /* raw token length */
	const char *sval;   /* decoded string/key (zero-copy or scratch) */
	size_t slen;
	struct json_num num;
	struct buf scratch;
	/* line accounting for the part of the input already discarded */
	uint64_t lines_before;   /* newlines before base */
	uint64_t last_nl_before; /* absolute offset just past the last newline before base */
	uint64_t replaced;       /* count of U+FFFD substitutions (lenient mode) */
	struct json_error err;
};

void json_reader_init_mem(struct json_reader *r, const char *data, size_t len, unsigned flags);
/* chunk: bytes requested per read (0 = 1 MiB). */
void json_reader_init_stream(struct json_reader *r, json_read_fn fn, void *ctx, size_t chunk,
			     unsigned flags);
/* A streaming reader whose window is, at first, a text another thread is
 * still writing: read in place (neither copied nor moved) as far as
 * grow(gctx, ...) lets it grow, then, past its end, through fn like
 * json_reader_init_stream's reader (fn must then give the bytes after it).
 * Offsets count from text[0].  text must stay until the reader is freed or
 * has gone past it. */
void json_reader_init_borrow(struct json_reader *r, const char *text, json_grow_fn grow, void *gctx,
			     json_read_fn fn, void *ctx, size_t chunk, unsigned flags);
/* A streaming reader over a new source, as json_reader_init_stream makes
 * it, keeping the window buffer (its pages already faulted in), the depth
 * limit and the scratch buffer. */
void json_reader_restart_stream(struct json_reader *r, json_read_fn fn, void *ctx, unsigned flags);
void json_reader_free(struct json_reader *r);
void json_reader_set_max_depth(struct json_reader *r, uint32_t depth);

/* Next token.  After JSON_ERROR, r->err holds the message and position and
 * every further call returns JSON_ERROR. */
enum json_tok json_next(struct json_reader *r);

/* The current key/string token, decoded.  Valid until the next call. */
static inline const char *json_str(const struct json_reader *r, size_t *len)
{
	if (len)
		*len = r->slen;
	return r->sval;
}

/* Skip the value whose first token was just returned (a scalar: nothing to
 * do; an object/array begin: consume through its end).  Returns false on error. */
bool json_skip(struct json_reader *r);

/* Depth of nesting after the current token (0 at top level). */
static inline uint32_t json_depth(const struct json_reader *r) { return r->depth; }
/* Absolute byte offset of the current token's start. */
uint64_t json_tok_offset(const struct json_reader *r);
/* Fill err with msg at the given absolute offset (for callers that reject a
 * well-formed document: "expected an object").  Returns false. */
bool json_fail_at(struct json_reader *r, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Raw element access, for a specialised parser of array elements (the
 * trace loader's event fast path).  Between two elements of an array,
 * json_raw_begin() consumes the separator, tries to have at least `want`
 * bytes (or the rest of the input) in the window, and gives the element's
 * first byte (*p) and the window's end (*end).  A read error met while
 * reading ahead is not reported there: the tokenizer reports it when it
 * needs those bytes.  It returns false when there is no element to hand out
 * (the array ends, an error, the end of input); json_next() then reports
 * what is there.  The caller either
 * parses one complete, valid JSON value at *p (all of it in [*p, *end)) and
 * calls json_raw_commit() with the byte after it, or declines and calls
 * json_next(), which reads the element normally.  The caller must accept
 * only what the tokenizer accepts: the reader does not re-check. */
bool json_raw_begin(struct json_reader *r, size_t want, const char **p, const char **end);
void json_raw_commit(struct json_reader *r, const char *q);
/* True when the window holds the rest of the input. */
bool json_raw_at_eof(const struct json_reader *r);
/* Absolute offset of a pointer into the current window. */
uint64_t json_raw_offset(const struct json_reader *r, const char *q);

/* Newlines in [s, e), and the last one (NULL if none) in *last (may be
 * NULL): the reader's own counter (SSE2), for callers that locate errors. */
uint64_t json_count_newlines(const char *s, const char *e, const char **last);

/* Number conversion.  f64 is correctly rounded (as strtod); i64/u64 fail
 * (return false) for non-integers and out-of-range values. */
double json_num_f64(const struct json_num *n, const char *raw, size_t rawlen);
bool json_num_i64(const struct json_num *n, int64_t *out);
bool json_num_u64(const struct json_num *n, uint64_t *out);
static inline double json_f64(const struct json_reader *r)
{
	return json_num_f64(&r->num, r->tstart, r->tlen);
}
/* Parse a complete number from text (for DOM values and tests). */
bool json_parse_number(const char *s, size_t n, struct json_num *out);

/* ---------------- DOM ---------------- */

enum json_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct json_member;
struct json_value {
	enum json_type type;
	uint32_t len; /* string bytes, array items, object members */
	union {
		bool b;
		struct {
			const char *raw; /* number text, NUL-terminated */
			struct json_num n;
		} num;
		const char *str; /* NUL-terminated (may contain NULs: use len) */
		struct json_value *items;
		struct json_member *members;
	} u;
};
struct json_member {
	const char *key;
	uint32_t key_len;
	struct json_value value;
};

struct json_doc {
	struct json_value *root;
	void *arena; /* internal */
};

/* Parse a whole document from memory.  On failure returns false, fills err. */
bool json_parse(const char *s, size_t n, struct json_doc *doc, struct json_error *err);
void json_doc_free(struct json_doc *doc);
/* Member lookup (first match), NULL when absent or v is not an object. */
const struct json_value *json_get(const struct json_value *v, const char *key);
/* Typed accessors: false when absent or of another type. */
bool json_get_str(const struct json_value *obj, const char *key, const char **s, size_t *len);
bool json_get_i64(const struct json_value *obj, const char *key, int64_t *out);
bool json_get_bool(const struct json_value *obj, const char *key, bool *out);
bool json_value_i64(const struct json_value *v, int64_t *out);
double json_value_f64(const struct json_value *v);

/* ---------------- writer ---------------- */

struct jw {
	struct buf *b;
	uint32_t depth;
	bool need_comma;
	bool after_key;
};

void jw_init(struct jw *w, struct buf *b);
void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);
void jw_key(struct jw *w, const char *k);
void jw_keyn(struct jw *w, const char *k, size_t n);
void jw_str(struct jw *w, const char *s);
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_i64(struct jw *w, int64_t v);
void jw_u64(struct jw *w, uint64_t v);
/* Shortest text that reads back as the same double; NaN/Inf become null. */
void jw_f64(struct jw *w, double v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/* A value already in JSON form (e.g. a number's raw text). */
void jw_raw(struct jw *w, const char *s, size_t n);
/* A parsed value written again, numbers in the text they came in. */
void jw_value(struct jw *w, const struct json_value *v);

/* Append s as a quoted, escaped JSON string. */
void json_escape(struct buf *b, const char *s, size_t n);
/* Shortest round-trip text of a finite double into out (>= 32 bytes). */
int json_fmt_f64(char *out, double v);

#endif
