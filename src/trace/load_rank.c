/*
 * load_rank.c - one Kineto trace file as a rank (model.h): the document
 * around traceEvents (distributedInfo, the other top-level members), the
 * parser's set-up, the walk of the file that hands each event to load.c's
 * parse (trace_parser_event, trace_parser_fast_batch), the entry points
 * (trace_rank_load*) and the load statistics' text.  See load.c for the
 * events themselves.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "core/par.h"
#include "trace/columns.h"
#include "trace/load_internal.h"
#include "trace/model.h"
#include "trace/source.h"

#define KEYIS(lit) (jr->slen == sizeof(lit) - 1 && memcmp(jr->sval, lit, sizeof(lit) - 1) == 0)

/* Re-emit any JSON value as compact text (for distributedInfo). */
static bool copy_value(struct json_reader *jr, enum json_tok t, struct jw *w)
{
	switch (t) {
	case JSON_OBJ_BEGIN:
		jw_obj_begin(w);
		for (;;) {
			t = json_next(jr);
			if (t == JSON_OBJ_END)
				break;
			if (t != JSON_KEY)
				return false;
			jw_keyn(w, jr->sval, jr->slen);
			if (!copy_value(jr, json_next(jr), w))
				return false;
		}
		jw_obj_end(w);
		return true;
	case JSON_ARR_BEGIN:
		jw_arr_begin(w);
		for (;;) {
			t = json_next(jr);
			if (t == JSON_ARR_END)
				break;
			if (!copy_value(jr, t, w))
				return false;
		}
		jw_arr_end(w);
		return true;
	case JSON_STRING: jw_strn(w, jr->sval, jr->slen); return true;
	case JSON_NUMBER: jw_raw(w, jr->tstart, jr->tlen); return true;
	case JSON_TRUE: jw_bool(w, true); return true;
	case JSON_FALSE: jw_bool(w, false); return true;
	case JSON_NULL: jw_null(w); return true;
	default: return false;
	}
}

static bool parse_distinfo(struct trace_parser *p)
{
	struct json_reader *jr = &p->jr;
	struct buf b = BUF_INIT;
	struct jw w;
	jw_init(&w, &b);
	jw_obj_begin(&w);
	bool ok = true;
	for (;;) {
		enum json_tok t = json_next(jr);
		if (t == JSON_OBJ_END)
			break;
		if (t != JSON_KEY) {
			ok = false;
			break;
		}
		bool is_rank = KEYIS("rank"), is_backend = KEYIS("backend");
		jw_keyn(&w, jr->sval, jr->slen);
		t = json_next(jr);
		int64_t v;
		if (is_rank && t == JSON_NUMBER && json_num_i64(&jr->num, &v) && v >= 0 && v <= INT32_MAX) {
			p->have_rank = true;
			p->dist_rank = v;
		}
		if (is_backend && t == JSON_STRING && memmem(jr->sval, jr->slen, "mtia:hccl", 9))
			p->r->gpu_device_mtia = true;
		if (!copy_value(jr, t, &w)) {
			ok = false;
			break;
		}
	}
	jw_obj_end(&w);
	free(p->r->distributed_info);
	p->r->distributed_info = buf_detach(&b, NULL);
	return ok;
}

/* "rank-N", "rank_N" or "rankN" in the file's base name (model.h). */
bool trace_rank_from_name(const char *path, int *out)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const char *s = base; (s = strstr(s, "rank")) != NULL; s += 4) {
		const char *d = s + 4;
		if (*d == '-' || *d == '_')
			d++;
		if (!isdigit((unsigned char)*d))
			continue;
		long v = 0;
		while (isdigit((unsigned char)*d) && v < 100000000)
			v = v * 10 + (*d++ - '0');
		*out = (int)v;
		return true;
	}
	return false;
}

void trace_parser_init(struct trace_parser *p, struct trace_rank *r, const struct trace_load_opts *opts)
{
	memset(p, 0, sizeof *p);
	p->opts = opts;
	p->r = r;
	p->str_trace = trace_strtab_intern(&r->strs, "Trace", 5);
	p->str_python = trace_strtab_intern(&r->strs, "python_function", 15);
	p->str_cpu_op = trace_strtab_intern(&r->strs, "cpu_op", 6);
	p->str_user_ann = trace_strtab_intern(&r->strs, "user_annotation", 15);
	/* str_user_ann is only what skip_cpu_ops compares cats with: an id no
	 * cat has keeps the annotations */
	if (opts->keep_user_annotations)
		p->str_user_ann = TRACE_NO_STR - 1;
	p->str_profiler = opts->keep_profiler_args ? trace_strtab_intern(&r->strs, "cuda_profiler_range", 19)
						   : TRACE_NO_STR - 1;
	p->skipped_min_ts = INFINITY;
	r->waits_kept = opts->keep_event_waits;
	/* before the columns are reserved: it decides whether the optional
	 * column is allocated */
	r->occupancy_kept = opts->keep_kernel_occupancy;
	buf_init(&p->name_tmp);
}

void trace_parser_free(struct trace_parser *p)
{
	json_reader_free(&p->jr);
	free(p->cv);
	free(p->is_step);
	buf_free(&p->name_tmp);
	p->cv = NULL;
	p->is_step = NULL;
}

/* A reader past the end of a share (the helper's inflated text before its
 * part; rare: see load_split.c): the source from where the share ends,
 * reached by inflating it again from the start. */
struct share_rest {
	struct trace_share *share;
	struct trace_source *src;
	bool started;
	size_t skip; /* bytes of src still to drop: the share's (final by the first call) */
};

static ssize_t share_read(void *ctx, char *dst, size_t cap, const char **err)
{
	struct share_rest *s = ctx;
	if (!s->started) {
		s->skip = trace_share_len(s->share);
		s->started = true;
	}
	while (s->skip > 0) {
		ssize_t n = trace_source_read(s->src, dst, s->skip < cap ? s->skip : cap, err);
		if (n <= 0) /* the share held all there was, or the error is here */
			return n;
		s->skip -= (size_t)n;
	}
	return trace_source_read(s->src, dst, cap, err);
}

static struct trace_rank *load_from(const char *name, struct trace_source *src,
				    const struct trace_load_opts *opts, unsigned split_threads, struct buf *err)
{
	static const struct trace_load_opts dflt;
	if (!opts)
		opts = &dflt;
	struct trace_parser p;
	struct trace_rank *r = trace_rank_new(name);
	trace_parser_init(&p, r, opts);
	struct json_reader *jr = &p.jr;
	/* a file opened by path (plain or gzip) can be read again to locate
	 * an error (load_error.c): no line counting; stdin's copy in memory
	 * counts them */
	bool rereadable = trace_source_file_size(src) > 0;
	unsigned jflags = JSON_LENIENT_UTF8 | (rereadable ? JSON_NO_LINES : 0);
	struct trace_split *sp = NULL;
	struct trace_source *rest_src = NULL; /* after a split: the file after traceEvents */
	uint64_t rest_adjust = 0;
	const uint64_t text_size = trace_source_text_size_hint(src);
	if (split_threads >= 2 && rereadable)
		sp = trace_split_start(name, opts, text_size, split_threads, trace_source_is_gzip(src));
	/* the window after the helpers are off: its first huge page is zeroed
	 * here (~0.2 ms), which a helper need not wait for.  With a share,
	 * the window is the text the helper inflates (read in place), then,
	 * past it, src again from the start (share_read) */
	struct trace_share *share = trace_split_take_share(sp);
	struct share_rest sr = {share, src, false, 0};
	if (share)
		json_reader_init_borrow(jr, trace_share_text(share), trace_share_grow, share, share_read, &sr,
					1u << 20, jflags);
	else
		json_reader_init_stream(jr, trace_source_read, src, 1u << 20, jflags);
	/* one parser: it gets an inflate thread (in parts, each parser
	 * inflates its own part: one thread per core, not two) */
	if (!sp && rereadable)
		trace_source_start_thread(src);
	/* a gzip file's size comes from its trailer: reserving for it took a
	 * 1 GB trace's .json.gz from 11,300 page faults to 2,200 and 1.45 s
	 * to 1.25 s.  Split in parts, this parser's rows still get room for
	 * the whole file: the helpers' rows are appended to them at the join,
	 * and rows are not spread evenly over the bytes (the dropped CPU
	 * operators come first, the kernels later), so room for its own part
	 * only made the join grow every column on small pages (trace_diff/
	 * control: the join 3.5-4.7 ms -> 1.0-2.1 ms, 240 fewer page faults) */
	if (text_size > 0)
		trace_columns_reserve(r, text_size);

	bool ok = false;
	enum json_tok t = json_next(jr);
	if (t != JSON_OBJ_BEGIN) {
		if (t != JSON_ERROR)
			json_fail_at(jr, json_tok_offset(jr), "a Kineto trace must be a JSON object");
		goto fail;
	}
	for (;;) {
		t = json_next(jr);
		if (t == JSON_OBJ_END)
			break;
		if (t != JSON_KEY)
			goto broken;
		if (KEYIS("traceEvents")) {
			t = json_next(jr);
			if (t != JSON_ARR_BEGIN) {
				if (t != JSON_ERROR)
					json_fail_at(jr, json_tok_offset(jr), "traceEvents is not an array");
				goto broken;
			}
			p.saw_events = true;
			uint32_t index = 0;
			for (;;) {
				uint32_t took = trace_parser_fast_batch(&p, index, sp ? trace_split_next_offset(sp) : UINT64_MAX);
				if (took) {
					index += took;
					continue;
				}
				t = json_next(jr);
				if (t == JSON_ARR_END)
					break;
				if (sp && t != JSON_ERROR && json_tok_offset(jr) >= trace_split_next_offset(sp)) {
					/* false: the guesses up to here were not elements
					 * of traceEvents (dropped); the parse goes on */
					if (trace_split_at(sp, json_tok_offset(jr), t)) {
						uint32_t nevents;
						uint64_t end_off;
						bool at_end = trace_split_join(&p, sp, index, &nevents, &end_off);
						r->stats.parse_threads = trace_split_parts(sp);
						char msg[300];
						if (at_end)
							rest_src = trace_split_rest(sp, end_off, &rest_adjust, msg, sizeof msg);
						trace_split_free(sp);
						sp = NULL;
						index += nevents;
						if (!at_end) {
							r->stats.truncated = r->n > 0;
							if (r->n == 0) {
								buf_puts(err, r->stats.truncated_msg);
								goto fail_quiet;
							}
							ok = true;
							goto done;
						}
						/* go on after the "]" with a fresh reader */
						if (!rest_src) {
							buf_puts(err, msg);
							goto fail_quiet;
						}
						p.r->stats.replaced_utf8 += jr->replaced;
						/* the same window buffer: a new one would be a
						 * fresh huge page zeroed for, as a rule, the "}" */
						json_reader_restart_stream(jr, trace_source_read, rest_src,
									   JSON_LENIENT_UTF8 | JSON_NO_LINES);
						if (!trace_split_resume(jr))
							goto broken;
						break;
					}
				}
				if (t == JSON_ERROR || !trace_parser_event(&p, t, index))
					goto broken;
				index++;
			}
			if (sp) { /* traceEvents ended before the split point */
				trace_split_free(sp);
				sp = NULL;
			}
		} else if (KEYIS("distributedInfo")) {
			t = json_next(jr);
			if (t == JSON_OBJ_BEGIN) {
				if (!parse_distinfo(&p))
					goto broken;
			} else if (!json_skip(jr)) {
				goto broken;
			}
		} else if (KEYIS("baseTimeNanoseconds")) {
			/* Kineto's ts are µs since this base (model.h): the warehouse's
			 * trace time, stitch's clock alignment */
			t = json_next(jr);
			int64_t base;
			if (t == JSON_NUMBER && json_num_i64(&jr->num, &base) && base > 0) {
				r->base_time_ns = base;
				r->has_base_time = true;
			} else if (t == JSON_ERROR || !json_skip(jr)) {
				goto broken;
			}
		} else {
			json_next(jr);
			if (!json_skip(jr))
				goto broken;
		}
	}
	t = json_next(jr);
	if (t != JSON_EOF)
		goto broken;
	ok = true;
	goto done;
broken:
	/* the stream broke off or became invalid: keep what was read */
	if (jr->tok != JSON_ERROR && jr->err.msg[0] == 0)
		json_fail_at(jr, json_tok_offset(jr), "unexpected token in a trace event");
	if (rest_src) {
		/* once: a load with no rows goes on to fail, which adjusts too
		 * (an error after the end of a split parse's document was put
		 * twice as far, found by fuzz_trace_split) */
		jr->err.offset += rest_adjust, jr->err.line = 0;
		rest_adjust = 0;
	}
	if (jr->err.line == 0 && rereadable)
		trace_error_locate(name, &jr->err);
	if (r->n > 0) {
		struct buf m = BUF_INIT;
		trace_error_format(&m, name, &jr->err);
		snprintf(r->stats.truncated_msg, sizeof r->stats.truncated_msg, "%s", m.data);
		buf_free(&m);
		r->stats.truncated = true;
		ok = true;
	}
done:
	if (ok && !p.saw_events) {
		json_fail_at(jr, json_tok_offset(jr), TRACE_ERR_NOT_KINETO);
		ok = false;
	}
	if (!ok)
		goto fail;
	trace_split_free(sp);
	if (r->stats.parse_threads == 0)
		r->stats.parse_threads = 1;
	r->stats.replaced_utf8 += jr->replaced;
	trace_parser_free(&p);
	if (share)
		r->stats.shared_text = trace_share_len(share);
	trace_share_free(share);
	trace_source_close(rest_src);
	r->skipped_min_ts = p.skipped_min_ts;

	if (p.have_rank) {
		r->rank = (int)p.dist_rank;
		r->rank_rule = TRACE_RANK_DISTINFO;
	} else if (trace_rank_from_name(name, &r->rank)) {
		r->rank_rule = TRACE_RANK_FILENAME;
	} else if (opts->rank_given) {
		r->rank = opts->rank;
		r->rank_rule = TRACE_RANK_OPTION;
	} else {
		r->rank = 0;
		r->rank_rule = TRACE_RANK_DEFAULT;
	}
	if (!r->distributed_info)
		r->distributed_info = xstrdup("");
	r->float_ts = p.any_float_ts;
	r->int_times = !p.any_nonint_time;
	trace_rank_finish(r, opts);
	return r;
fail:
	if (rest_src)
		jr->err.offset += rest_adjust, jr->err.line = 0;
	if (jr->err.line == 0 && rereadable)
		trace_error_locate(name, &jr->err);
	trace_error_format(err, name, &jr->err);
fail_quiet:
	trace_split_free(sp);
	trace_parser_free(&p);
	trace_share_free(share);
	trace_source_close(rest_src);
	trace_rank_free(r);
	return NULL;
}

struct trace_rank *trace_rank_load_ex(const char *path, const struct trace_load_opts *opts, unsigned split_threads,
				      struct buf *err)
{
	char msg[512];
	/* a gzip file's inflate thread is started by load_from, unless the
	 * file is parsed in parts */
	struct trace_source *src = trace_source_open(path, false, msg, sizeof msg);
	if (!src) {
		buf_puts(err, msg);
		return NULL;
	}
	struct trace_rank *r = load_from(path, src, opts, split_threads, err);
	trace_source_close(src);
	return r;
}

struct trace_rank *trace_rank_load(const char *path, const struct trace_load_opts *opts, struct buf *err)
{
	return trace_rank_load_ex(path, opts, (unsigned)par_threads(opts ? opts->threads : 0), err); /* >= 1 */
}

struct trace_rank *trace_rank_load_mem(const char *name, const void *data, size_t len,
				       const struct trace_load_opts *opts, struct buf *err)
{
	struct trace_source *src = trace_source_mem(data, len);
	struct trace_rank *r = load_from(name, src, opts, 1, err);
	trace_source_close(src);
	return r;
}

const char *trace_rank_rule_name(enum trace_rank_rule r)
{
	switch (r) {
	case TRACE_RANK_DISTINFO: return "distributedInfo.rank";
	case TRACE_RANK_FILENAME: return "file name";
	case TRACE_RANK_OPTION: return "--rank";
	case TRACE_RANK_ASSIGNED: return "no rank in the file: assigned";
	default: return "default (no rank found)";
	}
}

void trace_load_stats_describe(const struct trace_rank *r, struct buf *out)
{
	const struct trace_load_stats *s = &r->stats;
	size_t start = out->len;
#define SAY(cnt, what)                                                                               \
	if (cnt)                                                                                     \
		buf_printf(out, "%s%llu %s", out->len > start ? ", " : "", (unsigned long long)(cnt), what)
	SAY(s->bad_not_object, "non-object events skipped");
	SAY(s->bad_missing, "events without ts/name or with a non-numeric ts/dur skipped");
	SAY(s->bad_negative_dur, "events with a negative dur skipped");
	SAY(s->bad_huge_dur, "events with a dur over 1e11 us skipped");
	SAY(s->neg_dur_after_rounding, "events with dur -1 after ns rounding (kept, as HTA)");
	SAY(s->stream_overlaps, "GPU events overlapping the previous one on their stream (kept)");
	SAY(s->replaced_utf8, "invalid UTF-8 sequences replaced");
	SAY(s->dup_correlation_capped, "duplicate GPU rows not made (correlation shared by over 16 CPU rows)");
#undef SAY
	if (s->truncated) {
		/* the message names the file for callers that print it alone;
		 * the describer's caller puts the path first already */
		const char *m = s->truncated_msg;
		size_t pl = r->path ? strlen(r->path) : 0;
		if (pl && strncmp(m, r->path, pl) == 0 && m[pl] == ':' && m[pl + 1] == ' ')
			m += pl + 2;
		buf_printf(out, "%sinput stopped early, events before it kept: %s", out->len > start ? "; " : "", m);
	}
}
