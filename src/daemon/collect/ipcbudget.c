/*
 * ipcbudget.c - the "ipcbudget" collector: the datagrams the IPC socket's
 * eBPF filter dropped over their sender's budget (daemon/ipc/ipc_filter.h),
 * as a per-tick increase `ipc_dropped_over_budget` (Prometheus
 * dynolog_ipc_datagrams_dropped_total).  It rides on the kernel tick and
 * reads the filter's per-uid map (two bpf() calls per uid in it, at most
 * once a second).  Absent, not 0, when no filter is attached (no IPC
 * monitor, --ipc_bpf_filter=off, the kernel refused it) and on the first
 * tick (the baseline).  Which uid dropped what is in the daemon's log.
 */
#include <stdlib.h>

#include "core/clock.h"
#include "daemon/collect/collector.h"
#include "daemon/ipc/ipc_filter.h"

struct ipcbudget_config {
	bool unused; /* no options: it runs whenever a filter is attached */
};

struct ipcbudget_state {
	uint64_t last;
	bool have_last;
};

static const struct arg_opt ipcbudget_opts[] = {{0}};
static const struct ipcbudget_config ipcbudget_defaults = {false};

static bool ipcbudget_apply(void **state, const void *old, const void *cfg, const struct collect_env *env,
			    struct buf *err)
{
	(void)old;
	(void)cfg;
	(void)env;
	(void)err;
	if (!*state)
		*state = xcalloc(1, sizeof(struct ipcbudget_state));
	return true;
}

static enum collect_status ipcbudget_run(void *state, struct frame *f)
{
	struct ipcbudget_state *s = state;
	uint64_t total;
	if (!ipc_filter_dropped_total(clock_mono_ns(), &total)) {
		s->have_last = false;
		return COLLECT_IDLE;
	}
	if (s->have_last && total >= s->last)
		frame_uint(f, "ipc_dropped_over_budget", total - s->last);
	s->last = total;
	s->have_last = true;
	return COLLECT_OK;
}

static void ipcbudget_close(void *state) { free(state); }

static const struct metric_desc ipcbudget_catalog[] = {
	{"ipc_dropped_over_budget", false, MK_COUNTER, 1, "dynolog_ipc_datagrams_dropped_total", NULL, NULL, NULL,
	 "IPC datagrams the kernel dropped over their sender's per-user or per-process budget.",
	 "dynolog.ipc.datagrams.dropped", "{datagram}", NULL, NULL},
};

const struct collector collector_ipcbudget = {
	.name = "ipcbudget",
	.catalog = ipcbudget_catalog,
	.ncatalog = sizeof ipcbudget_catalog / sizeof ipcbudget_catalog[0],
	.config = {ipcbudget_opts, sizeof(struct ipcbudget_config), &ipcbudget_defaults},
	.rides_on = "kernel",
	.apply = ipcbudget_apply,
	.collect = ipcbudget_run,
	.close = ipcbudget_close,
};
