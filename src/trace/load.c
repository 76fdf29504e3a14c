/*
 * load.c - streaming parse of one Kineto trace file into the columnar
 * model (model.h).
 *
 * The file is read through a trace_source (plain or gzip) by the core JSON
 * pull reader; each element of traceEvents is decoded field by field
 * straight into the column arrays, so memory is the model plus a 2 MiB
 * window, never the text.  Only the args HTA reads are decoded; everything
 * else is skipped by the tokenizer.
 *
 * Ordinary elements take the fast path (load_fast.c) and the rest the
 * tokenizer path here; both commit through event_commit().  A big plain
 * file may be parsed by two threads (load_split.c).  After the parse,
 * trace_rank_finish() (finish.c) applies HTA's per-file steps in order
 * (semantics doc 1.2): ns rounding, CPU<->GPU correlation links, the
 * iteration column, device type.  Cross-rank steps (alignment, last-step
 * filter) live in set.c; the columns' allocation in columns.c; error
 * positions in load_error.c.
 *
 * Bad input never aborts a load that produced events: a malformed element
 * is skipped and counted, and a stream that breaks off (truncated gzip or
 * JSON) keeps the events read so far and records where it stopped.
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

/* ---------------- one event ---------------- */

struct ev {
	char ph;
	bool has_ts, has_dur, has_cat, has_name, bad;
	bool ts_float, dur_float;
	bool name_deferred; /* the name is the text dname, not interned yet */
	double ts, dur;
	uint32_t name, cat;
	int64_t pid, tid;
	int64_t stream, corr, ext, bytes;
	int64_t wait_stream, wait_corr; /* keep_event_waits only */
	double bw;
	double occ; /* keep_kernel_occupancy only; NaN: none */
	uint64_t id;
	bool has_id;
	const char *dname; /* a deferred name's text (valid until the commit) */
	size_t dname_len;
};


/* pid/tid: an integer, or the interned text of anything else. */
static int64_t read_id(struct trace_parser *p, enum json_tok t)
{
	struct json_reader *jr = &p->jr;
	int64_t v;
	if (t == JSON_NUMBER && json_num_i64(&jr->num, &v) && v > TRACE_ID_STR_BASE + (int64_t)UINT32_MAX)
		return v;
	if (t == JSON_STRING)
		return TRACE_ID_STR_BASE + trace_strtab_intern(&p->r->strs, jr->sval, jr->slen);
	if (t == JSON_NUMBER)
		return TRACE_ID_STR_BASE + trace_strtab_intern(&p->r->strs, jr->tstart, jr->tlen);
	if (t == JSON_OBJ_BEGIN || t == JSON_ARR_BEGIN)
		json_skip(jr);
	return -1;
}

/* An integer arg: numbers (integral part), or a numeric string like pandas'
 * to_numeric; anything else gives dflt. */
static int64_t read_int_arg(struct trace_parser *p, enum json_tok t, int64_t dflt)
{
	struct json_reader *jr = &p->jr;
	if (t == JSON_NUMBER)
		return trace_int_of_num(&jr->num, jr->tstart, jr->tlen, dflt);
	if (t == JSON_STRING && jr->slen > 0 && jr->slen < 24) {
		char tmp[24];
		memcpy(tmp, jr->sval, jr->slen);
		tmp[jr->slen] = 0;
		char *end;
		long long x = strtoll(tmp, &end, 10);
		if (*end == 0 && end != tmp)
			return x;
		return dflt;
	}
	if (t == JSON_OBJ_BEGIN || t == JSON_ARR_BEGIN)
		json_skip(jr);
	return dflt;
}

static void cv_push(struct trace_parser *p, uint32_t key, double v, bool is_int)
{
	if (p->ncv == p->cvcap) {
		p->cvcap = p->cvcap ? p->cvcap * 2 : 16;
		p->cv = xrealloc(p->cv, p->cvcap * sizeof *p->cv);
	}
	p->cv[p->ncv++] = (struct trace_cval){key, v, is_int};
}

#define KEYIS(lit) (jr->slen == sizeof(lit) - 1 && memcmp(jr->sval, lit, sizeof(lit) - 1) == 0)

static bool parse_args(struct trace_parser *p, struct ev *e)
{
	struct json_reader *jr = &p->jr;
	for (;;) {
		enum json_tok t = json_next(jr);
		if (t == JSON_OBJ_END)
			return true;
		if (t != JSON_KEY)
			return false;
		/* dispatch on the key before reading the value */
		enum { A_SKIP, A_STREAM, A_CORR, A_EXT, A_BYTES, A_BW, A_WSTREAM, A_WCORR, A_OCC } which = A_SKIP;
		switch (jr->slen) {
		case 5:
			if (KEYIS("bytes"))
				which = A_BYTES;
			break;
		case 6:
			if (KEYIS("stream"))
				which = A_STREAM;
			break;
		case 11:
			if (KEYIS("correlation"))
				which = A_CORR;
			else if (KEYIS("External id"))
				which = A_EXT;
			break;
		case 23:
			if (KEYIS("memory bandwidth (GB/s)"))
				which = A_BW;
			break;
		case 14:
			if (p->opts->keep_event_waits && KEYIS("wait_on_stream"))
				which = A_WSTREAM;
			break;
		case 33:
			if (p->opts->keep_event_waits && KEYIS("wait_on_cuda_event_record_corr_id"))
				which = A_WCORR;
			break;
		case 25:
			if (p->opts->keep_kernel_occupancy && KEYIS("est. achieved occupancy %"))
				which = A_OCC;
			break;
		}
		uint32_t ckey = TRACE_NO_STR;
		/* counters keep every numeric arg; so do CUPTI profiler ranges when
		 * asked (their cat is known by now in Kineto's key order) */
		if (e->ph == 'C' || e->ph == 0 || (e->cat == p->str_profiler || (!e->has_cat && p->opts->keep_profiler_args)))
			ckey = trace_strtab_intern(&p->r->strs, jr->sval, jr->slen);
		if (e->ph == 'C')
			which = A_SKIP; /* every numeric arg of a counter is a value */
		t = json_next(jr);
		if (t == JSON_ERROR)
			return false;
		switch (which) {
		case A_STREAM: e->stream = read_int_arg(p, t, -1); break;
		case A_CORR: e->corr = read_int_arg(p, t, -1); break;
		case A_EXT: e->ext = read_int_arg(p, t, -1); break;
		case A_BYTES: e->bytes = read_int_arg(p, t, -1); break;
		case A_WSTREAM: e->wait_stream = read_int_arg(p, t, -1); break;
		case A_WCORR: e->wait_corr = read_int_arg(p, t, -1); break;
		case A_BW:
			if (t == JSON_NUMBER)
				e->bw = json_f64(jr);
			else if (!json_skip(jr))
				return false;
			break;
		case A_OCC: /* a number, else none (the fast path reads it alike) */
			if (t == JSON_NUMBER)
				e->occ = json_f64(jr);
			else if (!json_skip(jr))
				return false;
			break;
		default:
			if (t == JSON_NUMBER && ckey != TRACE_NO_STR)
				cv_push(p, ckey, json_f64(jr), jr->num.is_int);
			else if (!json_skip(jr))
				return false;
		}
		if (jr->tok == JSON_ERROR)
			return false;
	}
}

static bool parse_time(struct trace_parser *p, enum json_tok t, double *out, bool *is_float)
{
	struct json_reader *jr = &p->jr;
	if (t != JSON_NUMBER) {
		if (t == JSON_OBJ_BEGIN || t == JSON_ARR_BEGIN)
			json_skip(jr);
		return false;
	}
	*out = json_f64(jr);
	if (is_float)
		*is_float = !jr->num.is_int;
	return isfinite(*out);
}

static bool name_is_step(struct trace_parser *p, uint32_t id)
{
	if (id >= p->is_step_cap) {
		size_t cap = p->is_step_cap ? p->is_step_cap : 256;
		while (cap <= id)
			cap *= 2;
		p->is_step = xrealloc(p->is_step, cap);
		memset(p->is_step + p->is_step_cap, -1, cap - p->is_step_cap);
		p->is_step_cap = cap;
	}
	if (p->is_step[id] < 0) {
		const char *s = p->r->strs.s[id];
		p->is_step[id] = strncmp(s, "ProfilerStep#", 13) == 0;
	}
	return p->is_step[id] == 1;
}

static bool event_commit(struct trace_parser *p, struct ev *ep, uint32_t index);

/* Parse one element of traceEvents whose first token (t) was just read. */
bool trace_parser_event(struct trace_parser *p, enum json_tok t, uint32_t index)
{
	struct json_reader *jr = &p->jr;
	struct trace_rank *r = p->r;
	r->stats.events++;
	if (t != JSON_OBJ_BEGIN) {
		r->stats.bad_not_object++;
		return json_skip(jr);
	}
	struct ev e = {.pid = -1, .tid = -1, .stream = -1, .corr = -1, .ext = -1, .bytes = -1,
		       .wait_stream = -1, .wait_corr = -1, .name = TRACE_NO_STR, .cat = TRACE_NO_STR, .occ = NAN};
	p->ncv = 0;
	for (;;) {
		t = json_next(jr);
		if (t == JSON_OBJ_END)
			break;
		if (t != JSON_KEY)
			return false;
		const char *k = jr->sval;
		size_t kl = jr->slen;
		char k0 = kl ? k[0] : 0;
		int which = 0;
		if (kl == 2 && k0 == 'p' && k[1] == 'h')
			which = 1;
		else if (kl == 2 && k0 == 't' && k[1] == 's')
			which = 2;
		else if (kl == 3 && memcmp(k, "dur", 3) == 0)
			which = 3;
		else if (kl == 3 && memcmp(k, "cat", 3) == 0)
			which = 4;
		else if (kl == 4 && memcmp(k, "name", 4) == 0)
			which = 5;
		else if (kl == 3 && memcmp(k, "pid", 3) == 0)
			which = 6;
		else if (kl == 3 && memcmp(k, "tid", 3) == 0)
			which = 7;
		else if (kl == 4 && memcmp(k, "args", 4) == 0)
			which = 8;
		else if (kl == 2 && k0 == 'i' && k[1] == 'd')
			which = 9;
		t = json_next(jr);
		if (t == JSON_ERROR)
			return false;
		switch (which) {
		case 1:
			if (t == JSON_STRING && jr->slen == 1)
				e.ph = jr->sval[0];
			else if (!json_skip(jr))
				return false;
			break;
		case 2:
			if (t == JSON_NULL)
				break; /* like absent */
			e.has_ts = true;
			if (!parse_time(p, t, &e.ts, &e.ts_float))
				e.bad = true;
			break;
		case 3:
			if (t == JSON_NULL)
				break;
			e.has_dur = true;
			if (!parse_time(p, t, &e.dur, &e.dur_float))
				e.bad = true;
			break;
		case 4:
			if (t == JSON_NULL)
				break;
			e.has_cat = true;
			if (t == JSON_STRING)
				e.cat = trace_strtab_intern(&r->strs, jr->sval, jr->slen);
			else if (t == JSON_NUMBER)
				e.cat = trace_strtab_intern(&r->strs, jr->tstart, jr->tlen);
			else if (!json_skip(jr))
				return false;
			break;
		case 5:
			if (t == JSON_STRING && p->opts->skip_cpu_ops &&
			    (e.cat == p->str_cpu_op || e.cat == p->str_user_ann) &&
			    !(jr->slen > 13 && memcmp(jr->sval, "ProfilerStep#", 13) == 0)) {
				/* most likely a row skip_cpu_ops drops: keep a copy of
				 * the name, intern it only if the row stays */
				buf_reset(&p->name_tmp);
				buf_append(&p->name_tmp, jr->sval, jr->slen);
				e.name_deferred = true;
				e.dname = p->name_tmp.data;
				e.dname_len = p->name_tmp.len;
				e.has_name = true;
			} else if (t == JSON_STRING) {
				e.name = trace_strtab_intern(&r->strs, jr->sval, jr->slen);
				e.name_deferred = false;
				e.has_name = true;
			} else if (t == JSON_NUMBER) {
				e.name = trace_strtab_intern(&r->strs, jr->tstart, jr->tlen);
				e.has_name = true;
			} else if (!json_skip(jr)) {
				return false;
			}
			break;
		case 6: e.pid = read_id(p, t); break;
		case 7: e.tid = read_id(p, t); break;
		case 8:
			if (t == JSON_OBJ_BEGIN) {
				if (!parse_args(p, &e))
					return false;
			} else if (!json_skip(jr)) {
				return false;
			}
			break;
		case 9: {
			int64_t v = read_int_arg(p, t, -1);
			e.id = (uint64_t)v;
			e.has_id = true;
			break;
		}
		default:
			if (!json_skip(jr))
				return false;
		}
		if (jr->tok == JSON_ERROR)
			return false;
	}

	return event_commit(p, &e, index);
}

/*
 * Everything after the fields of one event are known, for both the
 * tokenizer path (trace_parser_event) and the fast path (load_fast.c): the parser
 * flags, flows and counters, the filters, and the row.
 */
static bool event_commit(struct trace_parser *p, struct ev *ep, uint32_t index)
{
	struct trace_rank *r = p->r;
	struct ev e = *ep;
	/* HTA: a missing ts makes the whole ts column float */
	if (!e.has_ts || e.ts_float)
		p->any_float_ts = true;
	if (!e.has_ts || e.ts_float || !e.has_dur || e.dur_float || e.bad)
		p->any_nonint_time = true;

	if (!(e.has_dur && e.has_cat)) {
		if (e.name_deferred) /* not a row after all: counters need the name */
			e.name = trace_strtab_intern(&r->strs, e.dname, e.dname_len);
		switch (e.ph) {
		case 's':
		case 'f':
			r->stats.flows++;
			if (!p->opts->no_flows && e.has_ts && !e.bad && e.has_id) {
				if (r->nflows == r->flows_cap) {
					r->flows_cap = r->flows_cap ? r->flows_cap * 2 : 1024;
					r->flows = xrealloc(r->flows, r->flows_cap * sizeof *r->flows);
				}
				r->flows[r->nflows++] = (struct trace_flow){
					.id = e.id, .ts = e.ts, .pid = e.pid, .tid = e.tid,
					.cat = e.cat, .idx = index, .phase = e.ph};
			}
			break;
		case 'C':
			r->stats.counters++;
			if (!p->opts->no_counters && e.has_ts && !e.bad) {
				for (size_t i = 0; i < p->ncv; i++) {
					if (r->ncounters == r->counters_cap) {
						r->counters_cap = r->counters_cap ? r->counters_cap * 2 : 1024;
						r->counters = xrealloc(r->counters,
								       r->counters_cap * sizeof *r->counters);
					}
					r->counters[r->ncounters++] = (struct trace_counter){
						.ts = e.ts, .value = p->cv[i].v, .pid = e.pid,
						.name = e.name == TRACE_NO_STR ? 0 : e.name, .key = p->cv[i].key};
				}
			}
			break;
		case 'i':
		case 'I': r->stats.instants++; break;
		case 'M': r->stats.metadata++; break;
		default: break;
		}
		return true;
	}
	r->stats.complete++;
	if (e.cat == p->str_trace) {
		r->stats.dropped_trace_cat++;
		return true;
	}
	if (e.cat == p->str_python && !p->opts->keep_python) {
		r->stats.dropped_python++;
		if (e.has_ts && !e.bad && e.ts < p->skipped_min_ts)
			p->skipped_min_ts = e.ts; /* HTA keeps them: they count for the alignment */
		return true;
	}
	if (e.bad || !e.has_ts || !e.has_name) {
		r->stats.bad_missing++;
		return true;
	}
	if (e.dur < 0) {
		r->stats.bad_negative_dur++;
		return true;
	}
	if (e.dur > TRACE_MAX_DUR_US) {
		r->stats.bad_huge_dur++;
		return true;
	}
	/* a cpu_op can carry a stream (inductor/triton launches have stream 0)
	 * or a correlation: then the analyses see it, so it stays */
	bool cpu_cat = e.cat == p->str_cpu_op || e.cat == p->str_user_ann;
	if (p->opts->skip_cpu_ops && (index != 0 || p->mid_file) && cpu_cat && e.stream == -1 && e.corr == -1 &&
	    (e.name_deferred || !name_is_step(p, e.name))) {
		r->stats.skipped_cpu_ops++;
		if (e.ts < p->skipped_min_ts)
			p->skipped_min_ts = e.ts;
		return true;
	}
	if (e.name_deferred)
		e.name = trace_strtab_intern(&r->strs, e.dname, e.dname_len);
	trace_columns_need(r, r->n + 1);
	size_t i = r->n++;
	r->ts[i] = e.ts;
	r->dur[i] = e.dur;
	r->name[i] = e.name;
	r->cat[i] = e.cat;
	r->kind[i] = 0; /* set in rank_finish from the cat id */
	r->pid[i] = e.pid;
	r->tid[i] = e.tid;
	r->stream[i] = e.stream;
	r->correlation[i] = e.corr;
	r->external_id[i] = e.ext;
	r->bytes[i] = e.bytes;
	r->mem_bw_gbps[i] = e.bw;
	r->idx[i] = index;
	r->link[i] = -1;
	r->iteration[i] = TRACE_ITER_NONE;
	if (r->occupancy_kept)
		r->occupancy[i] = (float)e.occ;
	if (__builtin_expect(e.wait_stream != -1 || e.wait_corr != -1, 0)) {
		if (r->nwaits == r->waits_cap) {
			r->waits_cap = r->waits_cap ? r->waits_cap * 2 : 64;
			r->waits = xrealloc(r->waits, r->waits_cap * sizeof *r->waits);
		}
		r->waits[r->nwaits++] = (struct trace_event_wait){index, e.wait_stream, e.wait_corr};
	}
	if (e.cat == p->str_profiler) {
		for (size_t k = 0; k < p->ncv; k++) {
			if (r->nrange_args == r->range_args_cap) {
				r->range_args_cap = r->range_args_cap ? r->range_args_cap * 2 : 256;
				r->range_args = xrealloc(r->range_args, r->range_args_cap * sizeof *r->range_args);
			}
			r->range_args[r->nrange_args++] = (struct trace_range_arg){
				.idx = index, .key = p->cv[k].key, .value = p->cv[k].v, .is_int = p->cv[k].is_int};
		}
	}
	return true;
}

/* The fast path's element (load_fast.c) as the tokenizer path would have
 * decoded it: names and categories interned in the order of their keys,
 * with the same deferral of likely dropped cpu_op names. */
static bool fast_commit(struct trace_parser *p, const struct fast_event *f, uint32_t index)
{
	struct trace_rank *r = p->r;
	r->stats.events++;
	/* the times as doubles only where event_commit reads them: rows, and
	 * flows when they are kept (a third of the events are flows) */
	bool row = f->has_dur && f->has_cat;
	bool need_ts = f->has_ts && (row || ((f->ph == 's' || f->ph == 'f') && !p->opts->no_flows));
	double ts = need_ts ? json_num_f64(&f->ts_num, f->ts_raw, f->ts_len) : 0;
	double dur = row ? json_num_f64(&f->dur_num, f->dur_raw, f->dur_len) : 0;
	struct ev e = {.ph = f->ph, .has_ts = f->has_ts, .has_dur = f->has_dur, .has_cat = f->has_cat,
		       .has_name = f->has_name, .ts_float = f->ts_float, .dur_float = f->dur_float,
		       .ts = ts, .dur = dur, .name = TRACE_NO_STR, .cat = TRACE_NO_STR,
		       .pid = f->pid, .tid = f->tid, .stream = f->stream, .corr = f->corr, .ext = f->ext,
		       .bytes = f->bytes, .bw = f->bw, .id = (uint64_t)f->id, .has_id = f->has_id,
		       .wait_stream = -1, .wait_corr = -1, .occ = f->has_occ ? f->occ : NAN};
	bool cat_first = f->has_cat && !(f->has_name && f->name_first);
	if (cat_first)
		e.cat = trace_strtab_intern(&r->strs, f->cat, f->cat_len);
	if (f->has_name) {
		if (p->opts->skip_cpu_ops && cat_first && (e.cat == p->str_cpu_op || e.cat == p->str_user_ann) &&
		    !(f->name_len > 13 && memcmp(f->name, "ProfilerStep#", 13) == 0)) {
			e.name_deferred = true;
			e.dname = f->name;
			e.dname_len = f->name_len;
		} else {
			e.name = trace_strtab_intern(&r->strs, f->name, f->name_len);
		}
	}
	if (f->has_cat && !cat_first)
		e.cat = trace_strtab_intern(&r->strs, f->cat, f->cat_len);
	return event_commit(p, &e, index);
}

/* Bytes the window must still hold for the fast path to start on an
 * element: more than an ordinary event, small against the 1 MiB reads, so
 * that under 1% of the elements (those near the end of each window) go
 * through the tokenizer path, which refills the window. */
#define FAST_WINDOW (8u << 10)

/* Run the fast path over the next elements of traceEvents (the reader is
 * inside the array), as many as the window holds; returns how many it
 * took (0: the reader is untouched but for the separator, and json_next()
 * reads the element).  Elements at or past stop_at are left to the caller
 * (the two-thread split point).  One json_raw_begin/commit per batch, not
 * per element. */
uint32_t trace_parser_fast_batch(struct trace_parser *p, uint32_t index, uint64_t stop_at)
{
	if (p->opts->tokenizer_only)
		return 0;
	const char *fp, *fe;
	if (!json_raw_begin(&p->jr, FAST_WINDOW, &fp, &fe))
		return 0;
	uint64_t off = json_raw_offset(&p->jr, fp);
	if (off >= stop_at)
		return 0;
	const char *stop = stop_at - off < (uint64_t)(fe - fp) ? fp + (stop_at - off) : fe;
	bool eof = json_raw_at_eof(&p->jr);
	uint32_t n = 0;
	const char *cur = fp, *last = NULL;
	while (cur < stop) {
		struct fast_event f;
		const char *q = trace_fast_event(cur, fe, &f);
		if (!q)
			break;
		/* a CUPTI profiler range whose args are wanted (or an event whose
		 * args come before its cat): the tokenizer path keeps them */
		if (p->opts->keep_profiler_args &&
		    (f.args_before_cat || (f.cat_len == 19 && memcmp(f.cat, "cuda_profiler_range", 19) == 0)))
			break;
		fast_commit(p, &f, index + n);
		n++;
		last = q;
		cur = trace_fast_next(q, fe);
		if (!cur || ((size_t)(fe - cur) < FAST_WINDOW && !eof))
			break;
	}
	if (n) {
		json_raw_commit(&p->jr, last);
		p->r->stats.fast_path_events += n;
	}
	return n;
}

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
