/*
 * report.c - see report.h.  Cost: one symbolization per distinct frame of
 * a reported stack (libdw caches per module), nothing per allocation.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "core/json.h"
#include "gpusnoop/probes.h"
#include "gpusnoop/report.h"

#define REPORT_MAX_FRAMES 64

static void fns_text(struct buf *b, uint32_t mask)
{
	const char *sep = "";
	for (uint32_t f = 0; f < FN_COUNT; f++)
		if (mask & (1u << f)) {
			buf_printf(b, "%s%s", sep, snoop_fn_name(f));
			sep = ",";
		}
}

void report_frame_text(struct buf *b, const struct sym_frame *fr, uint64_t ip)
{
	if (fr->function && fr->file)
		buf_printf(b, "%s (%s:%d)", fr->function, fr->file, fr->line);
	else if (fr->function)
		buf_printf(b, "%s+0x%" PRIx64, fr->function, fr->offset);
	else if (fr->module)
		buf_printf(b, "%s+0x%" PRIx64, fr->module, fr->module_offset);
	else
		buf_printf(b, "0x%" PRIx64, ip);
}

static int stack_of(const struct report_in *in, int32_t id, uint64_t *ips)
{
	return id >= 0 ? in->stack(in->stack_ctx, id, ips, REPORT_MAX_FRAMES) : 0;
}

static void stack_table(struct buf *b, const struct report_in *in, int32_t id)
{
	uint64_t ips[REPORT_MAX_FRAMES];
	int k = stack_of(in, id, ips);
	if (k <= 0)
		buf_puts(b, "    (stack unavailable)\n");
	for (int j = 0; j < k; j++) {
		struct sym_frame fr;
		sym_lookup(in->sym, ips[j], true, &fr);
		buf_puts(b, "    ");
		report_frame_text(b, &fr, ips[j]);
		buf_putc(b, '\n');
	}
}

static void stack_json(struct jw *w, const struct report_in *in, int32_t id)
{
	uint64_t ips[REPORT_MAX_FRAMES];
	int k = stack_of(in, id, ips);
	if (k <= 0) {
		jw_null(w); /* unavailable, not empty */
		return;
	}
	jw_arr_begin(w);
	for (int j = 0; j < k; j++) {
		struct sym_frame fr;
		sym_lookup(in->sym, ips[j], true, &fr);
		char hex[32];
		snprintf(hex, sizeof(hex), "0x%" PRIx64, ips[j]);
		jw_obj_begin(w);
		jw_key(w, "addr"), jw_str(w, hex);
		if (fr.function)
			jw_key(w, "function"), jw_str(w, fr.function), jw_key(w, "offset"), jw_u64(w, fr.offset);
		if (fr.symbol)
			jw_key(w, "symbol"), jw_str(w, fr.symbol);
		if (fr.file)
			jw_key(w, "file"), jw_str(w, fr.file), jw_key(w, "line"), jw_i64(w, fr.line);
		if (fr.module)
			jw_key(w, "module"), jw_str(w, fr.module), jw_key(w, "module_offset"), jw_u64(w, fr.module_offset);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void via_json(struct jw *w, uint32_t mask)
{
	jw_key(w, "via");
	jw_arr_begin(w);
	for (uint32_t f = 0; f < FN_COUNT; f++)
		if (mask & (1u << f))
			jw_str(w, snoop_fn_name(f));
	jw_arr_end(w);
}

static uint64_t space_count(const struct ledger_leak *g, size_t n, uint32_t s)
{
	uint64_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += g[i].space == s ? g[i].count : 0;
	return c;
}

static double rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

/* a launch count as the report gives it: scaled by the time the launch
 * probes were off when --launch-sample left some out (sampler.h) */
static uint64_t launch_est(const struct report_in *in, uint64_t n)
{
	if (!in->launch_sampled || in->launch_on_s <= 0)
		return n;
	return (uint64_t)((double)n * in->seconds / in->launch_on_s + 0.5);
}

static void write_json(struct buf *b, const struct report_in *in, const struct ledger_leak *g, size_t n,
		       const struct sync_group *sg, size_t nsg)
{
	const struct ledger *l = in->ledger;
	const struct calls *c = in->calls;
	unsigned spaces = probe_spaces(in->groups);
	struct jw w;
	jw_init(&w, b);
	jw_obj_begin(&w);
	jw_key(&w, "pid"), jw_i64(&w, in->pid);
	jw_key(&w, "seconds"), jw_f64(&w, in->seconds);
	jw_key(&w, "end"), jw_str(&w, in->end_reason);
	jw_key(&w, "events");
	jw_arr_begin(&w);
	static const char *const gn[] = {"mem", "launch", "sync", "torch"};
	for (unsigned i = 0; i < 4; i++)
		if (in->groups & (1u << i))
			jw_str(&w, gn[i]);
	jw_arr_end(&w);
	jw_key(&w, "probes"), jw_i64(&w, in->probes);
	jw_key(&w, "files"), jw_i64(&w, in->files);
	jw_key(&w, "probes_single_stepped"), jw_i64(&w, in->probes_stepped);
	if (spaces) {
		jw_key(&w, "allocations"), jw_u64(&w, l->allocs);
		jw_key(&w, "frees"), jw_u64(&w, l->frees);
		jw_key(&w, "unmatched_frees"), jw_u64(&w, l->unmatched_frees);
	}
	jw_key(&w, "lost");
	jw_obj_begin(&w);
	jw_key(&w, "ringbuf_drops"), jw_u64(&w, in->counters[CNT_RINGBUF_DROPS]);
	jw_key(&w, "calls_in_flight_full"), jw_u64(&w, in->counters[CNT_ARGS_FULL]);
	jw_key(&w, "stacks_unavailable"), jw_u64(&w, in->counters[CNT_STACK_FAIL]);
	jw_key(&w, "invalid_records"), jw_u64(&w, l->invalid + c->invalid + in->timeline_invalid);
	jw_key(&w, "reallocated_without_free"), jw_u64(&w, l->replaced);
	jw_key(&w, "live_full"), jw_u64(&w, in->counters[CNT_LIVE_FULL]);
	jw_key(&w, "sync_stacks_full"), jw_u64(&w, in->counters[CNT_SYNC_FULL]);
	jw_key(&w, "live_table_stacks_full"), jw_u64(&w, in->counters[CNT_TOTALS_FULL]);
	jw_obj_end(&w);
	jw_key(&w, "nested_calls"), jw_u64(&w, in->counters[CNT_NESTED]);
	jw_key(&w, "failed_calls"), jw_u64(&w, in->counters[CNT_FAILED_CALLS]);
	if (in->groups & GROUP_LAUNCH) {
		uint64_t t = calls_sum(c, FN_CUDA_LAUNCH_KERNEL, FN_CUDA_GRAPH_LAUNCH);
		jw_key(&w, "launches");
		jw_obj_begin(&w);
		jw_key(&w, "total"), jw_u64(&w, launch_est(in, t));
		jw_key(&w, "per_second"), jw_f64(&w, rate(launch_est(in, t), in->seconds));
		jw_key(&w, "by_function");
		jw_obj_begin(&w);
		for (uint32_t f = FN_CUDA_LAUNCH_KERNEL; f <= FN_CUDA_GRAPH_LAUNCH; f++)
			jw_key(&w, snoop_fn_name(f)), jw_u64(&w, launch_est(in, c->count[f]));
		jw_obj_end(&w);
		jw_key(&w, "nested_driver_launches"), jw_u64(&w, in->counters[CNT_NESTED_LAUNCHES]);
		if (in->launch_sampled) {
			/* the figures above are estimates from these */
			jw_key(&w, "sampled");
			jw_obj_begin(&w);
			jw_key(&w, "percent"), jw_i64(&w, in->launch_pct);
			jw_key(&w, "counted"), jw_u64(&w, t);
			jw_key(&w, "counting_seconds"), jw_f64(&w, in->launch_on_s);
			jw_obj_end(&w);
		}
		jw_obj_end(&w);
	}
	if (in->groups & GROUP_SYNC) {
		uint64_t t = calls_sum(c, FN_CUDA_DEVICE_SYNCHRONIZE, FN_CUDA_EVENT_SYNCHRONIZE);
		jw_key(&w, "syncs");
		jw_obj_begin(&w);
		jw_key(&w, "total"), jw_u64(&w, t);
		jw_key(&w, "per_second"), jw_f64(&w, rate(t, in->seconds));
		jw_key(&w, "seconds_waiting"), jw_f64(&w, (double)c->sync_ns / 1e9);
		jw_key(&w, "by_function");
		jw_obj_begin(&w);
		for (uint32_t f = FN_CUDA_DEVICE_SYNCHRONIZE; f <= FN_CUDA_EVENT_SYNCHRONIZE; f++)
			jw_key(&w, snoop_fn_name(f)), jw_u64(&w, c->count[f]);
		jw_obj_end(&w);
		jw_key(&w, "stacks");
		jw_arr_begin(&w);
		for (size_t i = 0; i < nsg && i < in->top; i++) {
			jw_obj_begin(&w);
			jw_key(&w, "count"), jw_u64(&w, sg[i].count);
			jw_key(&w, "total_ns"), jw_u64(&w, sg[i].total_ns);
			jw_key(&w, "max_ns"), jw_u64(&w, sg[i].max_ns);
			via_json(&w, sg[i].fn_mask);
			jw_key(&w, "stack");
			stack_json(&w, in, sg[i].stack_id);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
	}
	if (spaces) {
		jw_key(&w, "leaked");
		jw_obj_begin(&w);
		for (uint32_t s = 0; s < SPACE_COUNT; s++) {
			if (!(spaces & (1u << s)))
				continue;
			jw_key(&w, snoop_space_name(s));
			jw_obj_begin(&w);
			jw_key(&w, "bytes"), jw_u64(&w, l->outstanding[s]);
			jw_key(&w, "count"), jw_u64(&w, space_count(g, n, s));
			jw_key(&w, "peak_bytes"), jw_u64(&w, l->peak[s]);
			jw_obj_end(&w);
		}
		jw_obj_end(&w);
		jw_key(&w, "leaks");
		jw_arr_begin(&w);
		for (size_t i = 0; i < n; i++) {
			jw_obj_begin(&w);
			jw_key(&w, "bytes"), jw_u64(&w, g[i].bytes);
			jw_key(&w, "count"), jw_u64(&w, g[i].count);
			jw_key(&w, "space"), jw_str(&w, snoop_space_name(g[i].space));
			via_json(&w, g[i].fn_mask);
			jw_key(&w, "stack");
			stack_json(&w, in, g[i].stack_id);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
	}
	jw_obj_end(&w);
	buf_putc(b, '\n');
}

static void counts_text(struct buf *b, const struct calls *c, uint32_t first, uint32_t last)
{
	for (uint32_t f = first; f <= last; f++)
		buf_printf(b, "%s%s %" PRIu64, f == first ? "" : ", ", snoop_fn_name(f), c->count[f]);
}

static void write_table(struct buf *b, const struct report_in *in, const struct ledger_leak *g, size_t n,
			const struct sync_group *sg, size_t nsg)
{
	const struct ledger *l = in->ledger;
	const struct calls *c = in->calls;
	unsigned spaces = probe_spaces(in->groups);
	buf_printf(b, "gpusnoop: pid %d, %.1f s (%s), %d probes in %d files\n", in->pid, in->seconds, in->end_reason,
		   in->probes, in->files);
	if (in->probes_stepped)
		buf_printf(b, "note: %d of the probes sit on an instruction the kernel single-steps: each of those calls"
			      " costs a second trap (-v names them; docs/gpusnoop.md, \"Cost\")\n",
			   in->probes_stepped);
	if (spaces)
		buf_printf(b, "seen: %" PRIu64 " allocations, %" PRIu64 " frees (%" PRIu64 " of pointers not live: freed again by a nested call, or allocated before the probes)\n",
			   l->allocs, l->frees, l->unmatched_frees);
	/* The report comes from the kernel's maps: what the ring buffer (the
	 * timeline's records) loses leaves it whole.  What makes it
	 * incomplete: calls not followed, allocations the live map had no
	 * room for (leaks it cannot see, never false ones), a missed free,
	 * map entries that failed validation. */
	const uint64_t *k = in->counters;
	uint64_t incomplete = k[CNT_ARGS_FULL] + k[CNT_LIVE_FULL] + k[CNT_SYNC_FULL] + l->invalid + c->invalid + l->replaced;
	uint64_t timeline = k[CNT_RINGBUF_DROPS] + in->timeline_invalid;
	buf_printf(b, "lost: %" PRIu64 " records dropped (ring buffer full), %" PRIu64 " calls untracked (too many in flight), %" PRIu64
		      " invalid records, %" PRIu64 " allocations whose free was missed; %" PRIu64 " stacks unavailable",
		   k[CNT_RINGBUF_DROPS], k[CNT_ARGS_FULL], l->invalid + c->invalid + in->timeline_invalid, l->replaced,
		   k[CNT_STACK_FAIL]);
	if (k[CNT_LIVE_FULL])
		buf_printf(b, "; %" PRIu64 " allocations not followed (--max-live reached)", k[CNT_LIVE_FULL]);
	if (k[CNT_SYNC_FULL])
		buf_printf(b, "; %" PRIu64 " syncs left out of the stacks (too many stacks)", k[CNT_SYNC_FULL]);
	if (k[CNT_TOTALS_FULL])
		buf_printf(b, "; %" PRIu64 " allocations missing from the live table's stacks", k[CNT_TOTALS_FULL]);
	buf_puts(b, incomplete ? "  (WARNING: the report below is incomplete)\n"
		 : timeline  ? "  (the timeline misses them; the report below is whole)\n"
			     : "\n");
	if (in->groups & GROUP_LAUNCH) {
		uint64_t t = calls_sum(c, FN_CUDA_LAUNCH_KERNEL, FN_CUDA_GRAPH_LAUNCH);
		buf_printf(b, "launches: %" PRIu64 " (%.1f/s): ", t, rate(t, in->seconds));
		counts_text(b, c, FN_CUDA_LAUNCH_KERNEL, FN_CUDA_GRAPH_LAUNCH);
		buf_printf(b, "; %" PRIu64 " driver launches inside cudaLaunchKernel not counted again\n",
			   in->counters[CNT_NESTED_LAUNCHES]);
		if (in->launch_sampled) {
			uint64_t e = launch_est(in, t);
			buf_printf(b, "  estimated over the run: ~%" PRIu64 " (%.1f/s): the launch probes counted the above in %.2f s"
				      " of %.1f s (--launch-sample %d; 100: every launch)\n",
				   e, rate(e, in->seconds), in->launch_on_s, in->seconds, in->launch_pct);
		}
	}
	if (in->groups & GROUP_SYNC) {
		uint64_t t = calls_sum(c, FN_CUDA_DEVICE_SYNCHRONIZE, FN_CUDA_EVENT_SYNCHRONIZE);
		buf_printf(b, "synchronisations: %" PRIu64 " (%.1f/s), %.3f s waiting: ", t, rate(t, in->seconds),
			   (double)c->sync_ns / 1e9);
		counts_text(b, c, FN_CUDA_DEVICE_SYNCHRONIZE, FN_CUDA_EVENT_SYNCHRONIZE);
		buf_putc(b, '\n');
	}
	for (uint32_t s = 0; s < SPACE_COUNT; s++)
		if (spaces & (1u << s))
			buf_printf(b, "never freed (%s): %" PRIu64 " bytes in %" PRIu64 " allocations (peak outstanding %" PRIu64 " bytes)\n",
				   snoop_space_name(s), l->outstanding[s], space_count(g, n, s), l->peak[s]);
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "\n%" PRIu64 " bytes in %" PRIu64 " allocations (%s) via ", g[i].bytes, g[i].count,
			   snoop_space_name(g[i].space));
		fns_text(b, g[i].fn_mask);
		buf_putc(b, '\n');
		stack_table(b, in, g[i].stack_id);
	}
	if (in->groups & GROUP_SYNC && nsg) {
		buf_printf(b, "\nstacks that synchronised most (%zu of %zu):\n", nsg < in->top ? nsg : in->top, nsg);
		for (size_t i = 0; i < nsg && i < in->top; i++) {
			buf_printf(b, "\n%" PRIu64 " synchronisations (%.3f ms, longest %.3f ms) via ", sg[i].count,
				   (double)sg[i].total_ns / 1e6, (double)sg[i].max_ns / 1e6);
			fns_text(b, sg[i].fn_mask);
			buf_putc(b, '\n');
			stack_table(b, in, sg[i].stack_id);
		}
	}
}

void report_write(FILE *f, const struct report_in *in, bool json)
{
	size_t n, nsg;
	struct ledger_leak *g = ledger_leaks(in->ledger, &n);
	struct sync_group *sg = calls_sync_top(in->calls, &nsg);
	struct buf b = BUF_INIT;
	if (json)
		write_json(&b, in, g, n, sg, nsg);
	else
		write_table(&b, in, g, n, sg, nsg);
	fwrite(b.data, 1, b.len, f);
	fflush(f);
	buf_free(&b);
	free(g);
	free(sg);
}
