/* live.c - see live.h. */
#include <inttypes.h>
#include <stdlib.h>

#include "gpusnoop/live.h"
#include "gpusnoop/probes.h"

#define LIVE_FRAMES 3 /* frames of each stack shown: the leaking caller and two above it */

static void stack_line(struct buf *b, const struct report_in *in, int32_t id)
{
	uint64_t ips[LIVE_FRAMES];
	int k = id >= 0 ? in->stack(in->stack_ctx, id, ips, LIVE_FRAMES) : 0;
	if (k <= 0)
		buf_puts(b, "(stack unavailable)");
	for (int j = 0; j < k; j++) {
		struct sym_frame fr;
		sym_lookup(in->sym, ips[j], true, &fr);
		if (j)
			buf_puts(b, " < ");
		if (j && fr.function)
			buf_puts(b, fr.function); /* callers: the name is enough */
		else
			report_frame_text(b, &fr, ips[j]);
	}
}

void live_frame(struct live *lv, const struct report_in *in)
{
	struct buf b = BUF_INIT;
	const struct ledger *l = in->ledger;
	if (lv->tty)
		buf_puts(&b, "\033[H\033[2J");
	buf_printf(&b, "gpusnoop live: pid %d, %.0f s", in->pid, in->seconds);
	double dt = in->seconds - lv->prev_seconds;
	if (in->groups & GROUP_LAUNCH) {
		/* the rate over the time the launch probes counted since the
		 * last frame (--launch-sample: none between its windows) */
		uint64_t t = calls_sum(in->calls, FN_CUDA_LAUNCH_KERNEL, FN_CUDA_GRAPH_LAUNCH);
		double on = in->launch_on_s - lv->prev_launch_on_s;
		if (on >= 0.05) {
			lv->launch_rate = (double)(t - lv->prev_launches) / on;
			lv->prev_launches = t;
			lv->prev_launch_on_s = in->launch_on_s;
		}
		buf_printf(&b, " | launches %" PRIu64 " counted (%.0f/s%s)", t, lv->launch_rate,
			   on >= 0.05 ? "" : ", sampled: the last window's");
	}
	if (in->groups & GROUP_SYNC) {
		uint64_t t = calls_sum(in->calls, FN_CUDA_DEVICE_SYNCHRONIZE, FN_CUDA_EVENT_SYNCHRONIZE);
		uint64_t ns = in->calls->sync_ns;
		buf_printf(&b, " | syncs %" PRIu64 " (%.0f/s, %.1f ms waiting/s)", t,
			   dt > 0 ? (double)(t - lv->prev_syncs) / dt : 0,
			   dt > 0 ? (double)(ns - lv->prev_sync_ns) / 1e6 / dt : 0);
		lv->prev_syncs = t;
		lv->prev_sync_ns = ns;
	}
	lv->prev_seconds = in->seconds;
	buf_putc(&b, '\n');
	unsigned spaces = probe_spaces(in->groups);
	if (spaces) {
		buf_puts(&b, "outstanding:");
		for (uint32_t s = 0; s < SPACE_COUNT; s++)
			if (spaces & (1u << s))
				buf_printf(&b, " %s %" PRIu64 " bytes%s", snoop_space_name(s), l->outstanding[s],
					   s + 1 < SPACE_COUNT && (spaces >> (s + 1)) ? "," : "");
		size_t n = in->nlive_groups;
		struct ledger_leak *g = in->live_groups ? NULL : ledger_leaks(l, &n);
		const struct ledger_leak *gs = in->live_groups ? in->live_groups : g;
		buf_printf(&b, "\n%14s %8s %-8s %s (top %zu of %zu)\n", "bytes", "count", "space", "stack",
			   n < in->top ? n : in->top, n);
		for (size_t i = 0; i < n && i < in->top; i++) {
			buf_printf(&b, "%14" PRIu64 " %8" PRIu64 " %-8s ", gs[i].bytes, gs[i].count, snoop_space_name(gs[i].space));
			stack_line(&b, in, gs[i].stack_id);
			buf_putc(&b, '\n');
		}
		free(g);
	}
	if (!lv->tty)
		buf_putc(&b, '\n');
	fwrite(b.data, 1, b.len, lv->out);
	fflush(lv->out);
	buf_free(&b);
}
