/*
 * filter_mtia.c - HTA's last-ProfilerStep filter for MTIA ranks (semantics
 * doc 1.3, "For MTIA, the rule differs"): which rows of an MTIA rank stay.
 * trace_set_finish() (set.c) asks it instead of the CUDA rule and keeps the
 * rows; this file only chooses them (and repairs memory rows in place), so
 * it calls nothing back in set.c.  Cost: a few passes over the rows and two
 * radix sorts.
 *
 * HTA's rule, per rank:
 *   - CPU events are the rows whose category matches, at its start,
 *     "cpu_op", "user_annotation" or "<something>_runtime";
 *   - the window is [first start, last end] of the CPU events named
 *     ProfilerStep#N; CPU events lying entirely inside it are kept (none
 *     when the rank has no step: HTA's NaN bounds compare false);
 *   - kernel rows (category "kernel...", "gpu_mem<x>...", "mtia_ccp_events")
 *     whose correlation is the correlation of a kept CPU event are kept;
 *   - memory rows (names Memcpy..., Memset..., hipMemcpy..., hipMemset...,
 *     dma...) that start inside some ProfilerStep row's [ts, ts + dur] are
 *     kept and repaired: an iteration of -1 becomes the iteration of the
 *     last such step in trace order, a stream of -1 becomes the row's tid;
 *   - the rest is dropped.
 * HTA returns the kept rows in the order of a Python set of their indices;
 * we keep trace order (the analyses only see the order through ties).  A
 * memory row whose tid is not a number keeps stream -1 (HTA would fail).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/filter_mtia.h"
#include "trace/load_internal.h"
#include "trace/rowheap.h"
#include "trace/rsort.h"

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* re.match("(cpu_op)|(user_annotation)|(^(.+)_runtime)") */
static bool cat_cpu_event(const char *s)
{
	if (starts(s, "cpu_op") || starts(s, "user_annotation"))
		return true;
	for (const char *p = s + (*s ? 1 : 0); *p; p++) {
		if (p[-1] == '\n')
			return false; /* "." does not match a newline */
		if (starts(p, "_runtime"))
			return true;
	}
	return false;
}

/* re.match("(kernel)|(gpu_mem.+)|(mtia_ccp_events)") */
static bool cat_kernel(const char *s)
{
	return starts(s, "kernel") || starts(s, "mtia_ccp_events") ||
	       (starts(s, "gpu_mem") && s[7] != '\0' && s[7] != '\n');
}

/* re.match("(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)") */
static bool name_memory(const char *s)
{
	const char *t = starts(s, "hip") ? s + 3 : s;
	return starts(t, "Memcpy") || starts(t, "Memset") || starts(s, "dma");
}

/* keep[i] |= memory row i starts inside a step row; repair it.  Memory rows
 * and steps are swept in ts order; a max-heap by trace order holds the
 * steps started so far, and a top that ended before t is dropped (t only
 * grows), so the top is the last step in trace order containing t. */
static void keep_memory(struct trace_rank *r, const bool *is_step, const bool *is_mem, bool *keep)
{
	size_t ns = 0, nm = 0;
	for (size_t i = 0; i < r->n; i++) {
		ns += is_step[r->name[i]];
		nm += is_mem[r->name[i]];
	}
	if (ns == 0 || nm == 0)
		return;
	/* the step rows (so) and the memory rows (mo), each by ts */
	uint64_t *sk = xmalloc(ns * sizeof *sk);
	uint32_t *so = xmalloc(ns * sizeof *so);
	uint64_t *mk = xmalloc(nm * sizeof *mk);
	uint32_t *mo = xmalloc(nm * sizeof *mo);
	size_t a = 0, b = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (is_step[r->name[i]]) {
			sk[a] = rsort_key_f64(r->ts[i]);
			so[a++] = (uint32_t)i;
		}
		if (is_mem[r->name[i]]) {
			mk[b] = rsort_key_f64(r->ts[i]);
			mo[b++] = (uint32_t)i;
		}
	}
	rsort_kv(sk, so, ns);
	rsort_kv(mk, mo, nm);
	uint32_t *heap = xmalloc(ns * sizeof *heap);
	size_t nh = 0, j = 0;
	for (size_t q = 0; q < nm; q++) {
		size_t i = mo[q];
		double t = r->ts[i];
		for (; j < ns && r->ts[so[j]] <= t; j++)
			rowheap_push(heap, &nh, so[j]);
		/* HTA's between() includes the end */
		while (nh && r->ts[heap[0]] + r->dur[heap[0]] < t)
			rowheap_pop(heap, &nh);
		if (!nh)
			continue;
		keep[i] = true;
		if (r->iteration[i] == TRACE_ITER_NONE)
			r->iteration[i] = r->iteration[heap[0]];
		if (r->stream[i] == -1 && !trace_id_is_str(r->tid[i]))
			r->stream[i] = r->tid[i];
	}
	free(heap);
	free(sk);
	free(so);
	free(mk);
	free(mo);
}

size_t trace_filter_mtia_rows(struct trace_rank *r, uint32_t **src_out)
{
	uint32_t ns = r->strs.n ? r->strs.n : 1;
	bool *cpu_cat = xcalloc(ns, 1), *kern_cat = xcalloc(ns, 1), *is_step = xcalloc(ns, 1),
	     *is_mem = xcalloc(ns, 1);
	for (uint32_t id = 0; id < r->strs.n; id++) {
		const char *s = r->strs.s[id];
		cpu_cat[id] = cat_cpu_event(s);
		kern_cat[id] = cat_kernel(s);
		is_step[id] = trace_is_step_name(s);
		is_mem[id] = name_memory(s);
	}
	/* the window of the CPU step rows */
	double t_start = INFINITY, t_end = -INFINITY;
	for (size_t i = 0; i < r->n; i++)
		if (cpu_cat[r->cat[i]] && is_step[r->name[i]]) {
			t_start = fmin(t_start, r->ts[i]);
			t_end = fmax(t_end, r->ts[i] + r->dur[i]);
		}
	bool *keep = xcalloc(r->n ? r->n : 1, 1);
	size_t m = 0;
	for (size_t i = 0; i < r->n; i++) {
		keep[i] = cpu_cat[r->cat[i]] && r->ts[i] >= t_start && r->ts[i] + r->dur[i] <= t_end;
		m += (keep[i] && r->correlation[i] != -1) || kern_cat[r->cat[i]];
	}
	/* kernels sharing a correlation with a kept CPU event: kept CPU rows and
	 * kernel rows sorted together by correlation, one pass over the runs */
	uint64_t *key = xmalloc((m ? m : 1) * sizeof *key);
	uint32_t *row = xmalloc((m ? m : 1) * sizeof *row);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if ((keep[i] && r->correlation[i] != -1) || kern_cat[r->cat[i]]) {
			key[k] = rsort_key_i64(r->correlation[i]);
			row[k++] = (uint32_t)i;
		}
	rsort_kv(key, row, m);
	for (size_t x = 0; x < m;) {
		size_t y = x + 1;
		bool cpu = keep[row[x]] && !kern_cat[r->cat[row[x]]];
		while (y < m && key[y] == key[x]) {
			cpu |= keep[row[y]] && !kern_cat[r->cat[row[y]]];
			y++;
		}
		for (size_t z = x; cpu && z < y; z++)
			keep[row[z]] = true; /* kernel rows of the run (CPU rows already are) */
		x = y;
	}
	free(key);
	free(row);
	keep_memory(r, is_step, is_mem, keep);
	size_t out = 0;
	for (size_t i = 0; i < r->n; i++)
		out += keep[i];
	uint32_t *src = xmalloc((out ? out : 1) * sizeof *src);
	out = 0;
	for (size_t i = 0; i < r->n; i++)
		if (keep[i])
			src[out++] = (uint32_t)i;
	*src_out = src;
	free(keep);
	free(cpu_cat);
	free(kern_cat);
	free(is_step);
	free(is_mem);
	return out;
}
