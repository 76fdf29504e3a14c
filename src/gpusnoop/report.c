/*
 * report.c - see report.h.  Cost: one symbolization per distinct frame of
 * a leaking stack (libdw caches per module), nothing per allocation.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "core/json.h"
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

static void frame_text(struct buf *b, const struct sym_frame *fr, uint64_t ip)
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

static void write_json(struct buf *b, const struct report_in *in, const struct ledger_leak *g, size_t n)
{
	const struct ledger *l = in->ledger;
	struct jw w;
	jw_init(&w, b);
	jw_obj_begin(&w);
	jw_key(&w, "pid"), jw_i64(&w, in->pid);
	jw_key(&w, "seconds"), jw_f64(&w, in->seconds);
	jw_key(&w, "end"), jw_str(&w, in->end_reason);
	jw_key(&w, "probes"), jw_i64(&w, in->probes);
	jw_key(&w, "files"), jw_i64(&w, in->files);
	jw_key(&w, "allocations"), jw_u64(&w, l->allocs);
	jw_key(&w, "frees"), jw_u64(&w, l->frees);
	jw_key(&w, "unmatched_frees"), jw_u64(&w, l->unmatched_frees);
	jw_key(&w, "lost");
	jw_obj_begin(&w);
	jw_key(&w, "ringbuf_drops"), jw_u64(&w, in->counters[CNT_RINGBUF_DROPS]);
	jw_key(&w, "calls_in_flight_full"), jw_u64(&w, in->counters[CNT_ARGS_FULL]);
	jw_key(&w, "stacks_unavailable"), jw_u64(&w, in->counters[CNT_STACK_FAIL]);
	jw_key(&w, "invalid_records"), jw_u64(&w, l->invalid);
	jw_key(&w, "reallocated_without_free"), jw_u64(&w, l->replaced);
	jw_obj_end(&w);
	jw_key(&w, "nested_calls"), jw_u64(&w, in->counters[CNT_NESTED]);
	jw_key(&w, "failed_calls"), jw_u64(&w, in->counters[CNT_FAILED_CALLS]);
	jw_key(&w, "leaked");
	jw_obj_begin(&w);
	for (uint32_t s = 0; s < SPACE_COUNT; s++) {
		jw_key(&w, snoop_space_name(s));
		jw_obj_begin(&w);
		uint64_t c = 0;
		for (size_t i = 0; i < n; i++)
			c += g[i].space == s ? g[i].count : 0;
		jw_key(&w, "bytes"), jw_u64(&w, l->outstanding[s]);
		jw_key(&w, "count"), jw_u64(&w, c);
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
		jw_key(&w, "via");
		jw_arr_begin(&w);
		for (uint32_t f = 0; f < FN_COUNT; f++)
			if (g[i].fn_mask & (1u << f))
				jw_str(&w, snoop_fn_name(f));
		jw_arr_end(&w);
		jw_key(&w, "stack");
		uint64_t ips[REPORT_MAX_FRAMES];
		int k = g[i].stack_id >= 0 ? in->stack(in->stack_ctx, g[i].stack_id, ips, REPORT_MAX_FRAMES) : 0;
		if (k <= 0) {
			jw_null(&w); /* unavailable, not empty */
		} else {
			jw_arr_begin(&w);
			for (int j = 0; j < k; j++) {
				struct sym_frame fr;
				sym_lookup(in->sym, ips[j], true, &fr);
				char hex[32];
				snprintf(hex, sizeof(hex), "0x%" PRIx64, ips[j]);
				jw_obj_begin(&w);
				jw_key(&w, "addr"), jw_str(&w, hex);
				if (fr.function)
					jw_key(&w, "function"), jw_str(&w, fr.function), jw_key(&w, "offset"),
						jw_u64(&w, fr.offset);
				if (fr.file)
					jw_key(&w, "file"), jw_str(&w, fr.file), jw_key(&w, "line"), jw_i64(&w, fr.line);
				if (fr.module)
					jw_key(&w, "module"), jw_str(&w, fr.module), jw_key(&w, "module_offset"),
						jw_u64(&w, fr.module_offset);
				jw_obj_end(&w);
			}
			jw_arr_end(&w);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	buf_putc(b, '\n');
}

static void write_table(struct buf *b, const struct report_in *in, const struct ledger_leak *g, size_t n)
{
	const struct ledger *l = in->ledger;
	buf_printf(b, "gpusnoop: pid %d, %.1f s (%s), %d probes in %d files\n", in->pid, in->seconds, in->end_reason,
		   in->probes, in->files);
	buf_printf(b, "seen: %" PRIu64 " allocations, %" PRIu64 " frees (%" PRIu64 " of pointers not live: freed again by a nested call, or allocated before the probes)\n",
		   l->allocs, l->frees, l->unmatched_frees);
	uint64_t lost = in->counters[CNT_RINGBUF_DROPS] + in->counters[CNT_ARGS_FULL] + l->invalid + l->replaced;
	buf_printf(b, "lost: %" PRIu64 " records dropped (ring buffer full), %" PRIu64 " calls untracked (too many in flight), %" PRIu64
		      " invalid records, %" PRIu64 " allocations whose free was missed; %" PRIu64 " stacks unavailable%s\n",
		   in->counters[CNT_RINGBUF_DROPS], in->counters[CNT_ARGS_FULL], l->invalid, l->replaced,
		   in->counters[CNT_STACK_FAIL], lost ? "  (WARNING: the leak report below is incomplete)" : "");
	for (uint32_t s = 0; s < SPACE_COUNT; s++) {
		uint64_t c = 0;
		for (size_t i = 0; i < n; i++)
			c += g[i].space == s ? g[i].count : 0;
		buf_printf(b, "never freed (%s): %" PRIu64 " bytes in %" PRIu64 " allocations (peak outstanding %" PRIu64 " bytes)\n",
			   snoop_space_name(s), l->outstanding[s], c, l->peak[s]);
	}
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "\n%" PRIu64 " bytes in %" PRIu64 " allocations (%s) via ", g[i].bytes, g[i].count,
			   snoop_space_name(g[i].space));
		fns_text(b, g[i].fn_mask);
		buf_putc(b, '\n');
		uint64_t ips[REPORT_MAX_FRAMES];
		int k = g[i].stack_id >= 0 ? in->stack(in->stack_ctx, g[i].stack_id, ips, REPORT_MAX_FRAMES) : 0;
		if (k <= 0)
			buf_puts(b, "    (stack unavailable)\n");
		for (int j = 0; j < k; j++) {
			struct sym_frame fr;
			sym_lookup(in->sym, ips[j], true, &fr);
			buf_puts(b, "    ");
			frame_text(b, &fr, ips[j]);
			buf_putc(b, '\n');
		}
	}
}

void report_write(FILE *f, const struct report_in *in, bool json)
{
	size_t n;
	struct ledger_leak *g = ledger_leaks(in->ledger, &n);
	struct buf b = BUF_INIT;
	if (json)
		write_json(&b, in, g, n);
	else
		write_table(&b, in, g, n);
	fwrite(b.data, 1, b.len, f);
	fflush(f);
	buf_free(&b);
	free(g);
}
