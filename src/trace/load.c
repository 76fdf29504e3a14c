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
 * positions in load_error.c; the document around traceEvents, the walk
 * of the file and the trace_rank_load* entry points in load_rank.c.
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
