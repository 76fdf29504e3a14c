/*
 * nvml.c - the GPU collector: per GPU (and per MIG instance) utilization,
 * memory, power, energy, clocks, temperature, PCIe throughput, ECC errors,
 * XID errors (NVML events, drained without waiting each tick), throttle
 * reasons, and on Hopper and newer the GPM metrics (SM active, SM
 * occupancy, tensor / FP16 / FP32 / FP64 / integer pipe activity, DRAM
 * bandwidth, NVLink bytes; without GPM, NVLink bytes from NVML's field
 * values), and the processes on each device (for the
 * GPU accounting, gpu_jobs.c), read from NVML (libnvidia-ml.so.1, dlopen()ed
 * through core/dl when --enable_gpu_monitor is on; the build needs no SDK).
 *
 * Why a worker thread: a GPU that falls off the bus makes NVML calls hang.
 * Every NVML call (nvmlInit included) runs on one worker thread
 * (collect/gpu_worker.c, shared with the DCGM collector); a tick
 * hands it a request and waits for the answer at most
 * --gpu_collect_timeout_ms.  A collection that does not finish by then is
 * reported once, GPU series are absent (the frame is published empty, so
 * Prometheus drops them too), and ticks return at once while the call is
 * stuck; when it returns, the next tick collects again and says so.  The
 * daemon's loop is thus held at most once for the bound per hang, never
 * indefinitely.
 *
 * Absent, never 0: an entry point the library lacks disables only the
 * metrics that need it (said once); a call that fails (NOT_SUPPORTED, ...)
 * leaves that series out of the tick; a GPU that answers GPU_IS_LOST is said
 * once and left out until the next start or reload; no library: said once,
 * the daemon runs on with no GPU series.
 *
 * Cost: one thread (idle between ticks, a small stack), about 20 NVML
 * calls per GPU per tick (2 of them the process lists, one the field
 * values), two GPM sample buffers per GPU, one event set (one 0 ms wait a
 * tick when no XID came).  What does not change is asked once (devices,
 * names, UUIDs, GPM support, MIG instances, the peak table row) and a
 * query a device refuses (NOT_SUPPORTED) is not asked again.  Every call
 * is timed (two clock reads, ~50 ns) and the tick's time per entry point
 * and the worker's CPU per tick are published (nvml_call_ns.*,
 * nvml_tick_cpu_ns), so the cost on a real driver can be read off the
 * daemon.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/dl.h"
#include "core/log.h"
#include "daemon/collect/collector.h"
#include "daemon/collect/gpu_backend.h"
#include "daemon/collect/gpu_flops.h"
#include "daemon/collect/gpu_jobs.h"
#include "daemon/collect/gpu_peaks.h"
#include "daemon/collect/gpu_prof.h"
#include "daemon/collect/gpu_worker.h"
#include "daemon/collect/nvml_api.h"

/* ---------------- the library ---------------- */

/* Entry points without which there is nothing to collect (dl_load). */
struct nvml_core {
	nvml_void_fn init, shutdown;
	nvml_count_fn count;
	nvml_handle_fn handle;
};

/* The rest: each may be missing (NULL) and disables only its metrics. */
struct nvml_opt {
	nvml_str_fn uuid, name;
	nvml_util_fn util;
	nvml_mem_fn mem;
	nvml_mem2_fn mem2; /* used without reserved (R510 and newer); mem where it is missing */
	nvml_uint_fn power;
	nvml_ull_fn energy;
	nvml_enum_uint_fn clock, temp, pcie;
	nvml_ecc_fn ecc;
	nvml_ull_fn throttle;
	nvml_mig_mode_fn mig_mode;
	nvml_uint_fn mig_max;
	nvml_mig_handle_fn mig_handle;
	nvml_gpm_support_fn gpm_support;
	nvml_gpm_alloc_fn gpm_alloc;
	nvml_gpm_free_fn gpm_free;
	nvml_gpm_sample_fn gpm_sample;
	nvml_gpm_get_fn gpm_get;
	nvml_procs_fn procs, gprocs; /* running processes: per-job accounting (gpu_jobs.c) */
	nvml_evset_create_fn ev_create; /* XID events: all four or none */
	nvml_evset_free_fn ev_free;
	nvml_ev_register_fn ev_register;
	nvml_ev_wait_fn ev_wait;
	nvml_fields_fn fields; /* NVLink counters of GPUs without GPM, memory temperature, PCIe replays, row remapping */
	nvml_codec_fn enc, dec;
};

static const struct dl_sym core_syms[] = {
	DL_SYM(struct nvml_core, init, "nvmlInit_v2"),
	DL_SYM(struct nvml_core, shutdown, "nvmlShutdown"),
	DL_SYM(struct nvml_core, count, "nvmlDeviceGetCount_v2"),
	DL_SYM(struct nvml_core, handle, "nvmlDeviceGetHandleByIndex_v2"),
};

#define O(field, sym) {sym, offsetof(struct nvml_opt, field)}
static const struct dl_sym opt_syms[] = {
	O(uuid, "nvmlDeviceGetUUID"),
	O(name, "nvmlDeviceGetName"),
	O(util, "nvmlDeviceGetUtilizationRates"),
	O(mem, "nvmlDeviceGetMemoryInfo"),
	O(mem2, "nvmlDeviceGetMemoryInfo_v2"),
	O(power, "nvmlDeviceGetPowerUsage"),
	O(energy, "nvmlDeviceGetTotalEnergyConsumption"),
	O(clock, "nvmlDeviceGetClockInfo"),
	O(temp, "nvmlDeviceGetTemperature"),
	O(pcie, "nvmlDeviceGetPcieThroughput"),
	O(ecc, "nvmlDeviceGetTotalEccErrors"),
	O(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons"),
	O(mig_mode, "nvmlDeviceGetMigMode"),
	O(mig_max, "nvmlDeviceGetMaxMigDeviceCount"),
	O(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex"),
	O(gpm_support, "nvmlGpmQueryDeviceSupport"),
	O(gpm_alloc, "nvmlGpmSampleAlloc"),
	O(gpm_free, "nvmlGpmSampleFree"),
	O(gpm_sample, "nvmlGpmSampleGet"),
	O(gpm_get, "nvmlGpmMetricsGet"),
	O(procs, "nvmlDeviceGetComputeRunningProcesses_v3"),
	O(gprocs, "nvmlDeviceGetGraphicsRunningProcesses_v3"),
	O(ev_create, "nvmlEventSetCreate"),
	O(ev_free, "nvmlEventSetFree"),
	O(ev_register, "nvmlDeviceRegisterEvents"),
	O(ev_wait, "nvmlEventSetWait_v2"),
	O(fields, "nvmlDeviceGetFieldValues"),
	O(enc, "nvmlDeviceGetEncoderUtilization"),
	O(dec, "nvmlDeviceGetDecoderUtilization"),
};
#undef O
#define NOPT (sizeof opt_syms / sizeof opt_syms[0])

static const char *nvml_err(nvmlReturn_t r)
{
	switch (r) {
	case NVML_ERROR_UNINITIALIZED: return "uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "invalid argument";
	case NVML_ERROR_NOT_SUPPORTED: return "not supported";
	case NVML_ERROR_NO_PERMISSION: return "no permission";
	case NVML_ERROR_NOT_FOUND: return "not found";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "NVIDIA driver not loaded";
	case NVML_ERROR_TIMEOUT: return "timeout";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "function not found";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "struct version unknown to the driver";
	default: return "error";
	}
}

/* ---------------- what the worker reads ---------------- */

/* GPM metric id -> frame key; percent values become ratios 0..1 (DCGM's
 * profiling fields, upstream's keys, are ratios), MiB/s become bytes/s. */
static const struct {
	unsigned id;
	const char *key;
	double mul;
} gpm_keys[] = {
	{NVML_GPM_METRIC_GRAPHICS_UTIL, "graphics_engine_active_ratio", 0.01},
	{NVML_GPM_METRIC_SM_UTIL, "sm_active_ratio", 0.01},
	{NVML_GPM_METRIC_SM_OCCUPANCY, "sm_occupancy", 0.01},
	{NVML_GPM_METRIC_ANY_TENSOR_UTIL, "tensorcore_active", 0.01},
	{NVML_GPM_METRIC_HMMA_TENSOR_UTIL, "tensor_hmma_active", 0.01},
	{NVML_GPM_METRIC_DFMA_TENSOR_UTIL, "tensor_dfma_active", 0.01},
	{NVML_GPM_METRIC_IMMA_TENSOR_UTIL, "tensor_imma_active", 0.01},
	{NVML_GPM_METRIC_FP16_UTIL, "fp16_active", 0.01},
	{NVML_GPM_METRIC_FP32_UTIL, "fp32_active", 0.01},
	{NVML_GPM_METRIC_FP64_UTIL, "fp64_active", 0.01},
	{NVML_GPM_METRIC_INTEGER_UTIL, "integer_active", 0.01},
	{NVML_GPM_METRIC_DRAM_BW_UTIL, "hbm_mem_bw_util", 0.01},
	{NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvlink_tx_bytes", 1048576.0},
	{NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlink_rx_bytes", 1048576.0},
};
#define NGPM (sizeof gpm_keys / sizeof gpm_keys[0])

/* The per-tick queries a device may not support.  One that answers
 * NVML_ERROR_NOT_SUPPORTED is not asked again (gdev.off): support is a
 * property of the GPU and its driver, which do not change while the daemon
 * runs, and a MIG instance would otherwise be asked a dozen unsupported
 * queries every tick. */
enum query {
	Q_UTIL, Q_MEM, Q_POWER, Q_ENERGY, Q_CLOCK_SM, Q_CLOCK_MEM, Q_TEMP, Q_PCIE_TX, Q_PCIE_RX, Q_ECC_C, Q_ECC_U,
	Q_THROTTLE, Q_ENC, Q_DEC, Q_PROCS,
};

/* The field values one nvmlDeviceGetFieldValues call a tick asks a GPU (not
 * a MIG instance), less those it refused (gdev.foff): the NVLink data
 * counters (only without GPM, which gives NVLink itself), the memory
 * temperature, PCIe replays and the row remapper's counts. */
enum fld { F_NVL_TX, F_NVL_RX, F_MEM_TEMP, F_PCIE_REPLAY, F_REMAP_COR, F_REMAP_UNC, F_REMAP_FAIL, NFLD };
static const unsigned fld_ids[NFLD] = {
	NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, NVML_FI_DEV_MEMORY_TEMP,
	NVML_FI_DEV_PCIE_REPLAY_COUNTER, NVML_FI_DEV_REMAPPED_COR, NVML_FI_DEV_REMAPPED_UNC,
	NVML_FI_DEV_REMAPPED_FAILURE,
};
#define FLD_NVL ((1u << F_NVL_TX) | (1u << F_NVL_RX))
#define FLD_ALL ((1u << NFLD) - 1)

/* The NVML entry points a tick calls, each timed: its wall time summed over
 * the devices is published as nvml_call_ns.<entry point>, so a tick's cost
 * on a real driver can be read off the daemon itself (docs/metrics.md).
 * NC_PROCS is gpu_jobs.c's pair of process lists (compute and graphics). */
enum ncall {
	NC_UTIL, NC_MEM, NC_MEM2, NC_POWER, NC_ENERGY, NC_CLOCK, NC_TEMP, NC_PCIE, NC_ECC, NC_THROTTLE, NC_ENC,
	NC_DEC, NC_PROCS, NC_FIELDS, NC_GPM_SAMPLE, NC_GPM_GET, NC_EV_WAIT, NCALLS
};
static const char *const ncall_names[NCALLS] = {
	"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2",
	"nvmlDeviceGetPowerUsage", "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetClockInfo",
	"nvmlDeviceGetTemperature", "nvmlDeviceGetPcieThroughput", "nvmlDeviceGetTotalEccErrors",
	"nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetEncoderUtilization",
	"nvmlDeviceGetDecoderUtilization", "nvmlDeviceGetRunningProcesses_v3", "nvmlDeviceGetFieldValues",
	"nvmlGpmSampleGet", "nvmlGpmMetricsGet", "nvmlEventSetWait_v2",
};

struct gdev {
	nvmlDevice_t h;
	char suffix[32]; /* "0", or "0/mig1" for a MIG instance */
	char uuid[96], name[96];
	const struct gpu_model *peak; /* its row of the peak table (NULL: none), found once */
	unsigned off;  /* 1 << enum query: answered NOT_SUPPORTED, not asked again */
	unsigned foff; /* 1 << enum fld: a field value not asked (refused, or given by GPM) */
	nvmlReturn_t mem_v1; /* nvmlDeviceGetMemoryInfo_v2 refused (why): the v1 query; 0: v2 */
	bool mem_v1_said;
	bool lost;
	bool mig_parent; /* its processes are listed on its MIG instances */
	bool gpm; /* GPM supported and both samples allocated */
	nvmlGpmSample_t gs[2];
	int gcur;
	bool ghave;
	unsigned long long prev_energy, prev_ecc[2];
	bool have_energy, have_ecc[2];
	bool xid;                         /* registered for XID events */
	unsigned long long xid_new, xid_last; /* XIDs since the last tick; the last XID (0: none yet) */
	bool nvl_have;                    /* nvl_prev holds a reading */
	bool nvl_nvml_clock[2];           /* nvl_us is NVML's timestamp (else the worker's clock) */
	unsigned long long nvl_prev[2];   /* NVLink data KiB (TX, RX) at nvl_us */
	unsigned long long prev_replay;   /* PCIe replays at the last tick */
	bool have_replay;
	long long nvl_us[2];
};

/* XID events of one tick, for the loop thread's log lines */
#define XID_LOG_MAX 16
struct xid_event {
	size_t dev;
	unsigned long long xid;
	unsigned gi; /* MIG GPU instance, 0xFFFFFFFF: none */
};

/* ---------------- the collector's state ---------------- */

struct nvml_config {
	bool enable;
	const char *backend;
	int64_t interval_s;
	int64_t timeout_ms;
	const char *library;
	const char *peaks_file;
};

struct nvml_state {
	bool disabled; /* no library: every tick is a failed one, nothing else */
	int64_t interval_s;
	struct nvml_core core;
	struct nvml_opt opt;
	struct gpu_peaks *peaks; /* NULL: no FLOPs/s estimate; read-only once the worker runs */
	/* worker-owned (touched by the loop thread only while !busy) */
	bool inited;
	struct gdev *dev;
	size_t ndev;
	struct frame out;
	struct gpu_proc_buf pbuf;
	struct buf notes_warn, notes_info; /* lines for the loop thread to log */
	nvmlEventSet_t evset; /* NULL: no XID events */
	struct xid_event xids[XID_LOG_MAX];
	size_t nxids;
	unsigned long long xids_unlogged; /* beyond xids[] this tick: counted, not logged */
	bool job_ok;
	bool prof_paused; /* dcgmProfPause: no GPM this tick (the job's argument) */
	int64_t call_ns[NCALLS]; /* this tick's time in each entry point (enum ncall) */
	unsigned call_n[NCALLS];
	struct gpu_worker w; /* runs worker_job (gpu_worker.h) */
};

static void key(char *out, size_t cap, const char *base, const struct gdev *d)
{
	snprintf(out, cap, "%s.%s", base, d->suffix);
}

/* One failed call: GPU_IS_LOST takes the device out; anything else only
 * leaves that series out.  Returns whether the call succeeded. */
static bool ok(struct nvml_state *s, struct gdev *d, nvmlReturn_t r)
{
	if (r == NVML_SUCCESS)
		return true;
	if (r == NVML_ERROR_GPU_IS_LOST && !d->lost) {
		d->lost = true;
		gpu_note(&s->notes_warn,
		     "GPU monitor: GPU %s (%s) is lost (fallen off the bus?); its metrics are absent until the daemon "
		     "restarts",
		     d->suffix, d->uuid[0] ? d->uuid : "no uuid");
	}
	return false;
}

static void put_u(struct nvml_state *s, const struct gdev *d, const char *base, unsigned long long v)
{
	char k[128];
	key(k, sizeof k, base, d);
	frame_uint(&s->out, k, v);
}

static void put_f(struct nvml_state *s, const struct gdev *d, const char *base, double v)
{
	char k[128];
	key(k, sizeof k, base, d);
	frame_float(&s->out, k, v);
}

/* a cumulative driver counter published as its increase over the interval:
 * the first reading (and one that went backwards: driver reload) sets the
 * baseline only */
static void put_delta(struct nvml_state *s, const struct gdev *d, const char *base, unsigned long long now,
		      unsigned long long *prev, bool *have)
{
	if (*have && now >= *prev)
		put_u(s, d, base, now - *prev);
	*prev = now;
	*have = true;
}

static void add_dev(struct nvml_state *s, nvmlDevice_t h, const char *suffix)
{
	s->dev = xrealloc(s->dev, (s->ndev + 1) * sizeof *s->dev);
	struct gdev *d = &s->dev[s->ndev++];
	memset(d, 0, sizeof *d);
	d->h = h;
	snprintf(d->suffix, sizeof d->suffix, "%s", suffix);
	if (strchr(suffix, '/'))
		d->foff = FLD_ALL; /* no field values for MIG instances: NVML gives them on their GPU */
	if (s->opt.uuid && s->opt.uuid(h, d->uuid, sizeof d->uuid) != NVML_SUCCESS)
		d->uuid[0] = 0;
	if (s->opt.name && s->opt.name(h, d->name, sizeof d->name) != NVML_SUCCESS)
		d->name[0] = 0;
	d->uuid[sizeof d->uuid - 1] = d->name[sizeof d->name - 1] = 0;
}

/* Register every GPU (not MIG instances: NVML reports their XIDs on their
 * GPU, with the instance's id) for XID events in one set; returns how many
 * took it.  A GPU that refuses (NOT_SUPPORTED) has no XID series. */
static size_t watch_xids(struct nvml_state *s)
{
	if (!s->opt.ev_create || s->opt.ev_create(&s->evset) != NVML_SUCCESS) {
		s->evset = NULL;
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->ndev; i++) {
		struct gdev *d = &s->dev[i];
		if (!strchr(d->suffix, '/') &&
		    s->opt.ev_register(d->h, NVML_EVENT_TYPE_XID_CRITICAL_ERROR, s->evset) == NVML_SUCCESS)
			n += d->xid = true;
	}
	if (!n) {
		s->opt.ev_free(s->evset);
		s->evset = NULL;
	}
	return n;
}

/* Take the XID events that arrived since the last tick: waits of 0 ms (the
 * worker never blocks on the set), at most 256 a tick (a storm is counted
 * over the next ticks).  A failed wait (a GPU lost, a hung driver comes
 * back) ends this tick's drain. */
static void drain_xids(struct nvml_state *s)
{
	s->nxids = 0;
	s->xids_unlogged = 0;
	for (int k = 0; s->evset && k < 256; k++) {
		nvmlEventData_t ev;
		memset(&ev, 0, sizeof ev);
		int64_t t0 = clock_mono_ns();
		nvmlReturn_t r = s->opt.ev_wait(s->evset, &ev, 0);
		s->call_ns[NC_EV_WAIT] += clock_mono_ns() - t0;
		s->call_n[NC_EV_WAIT]++;
		if (r != NVML_SUCCESS)
			return; /* NVML_ERROR_TIMEOUT: none pending */
		if (!(ev.eventType & NVML_EVENT_TYPE_XID_CRITICAL_ERROR))
			continue;
		for (size_t i = 0; i < s->ndev; i++) {
			struct gdev *d = &s->dev[i];
			if (!d->xid || d->h != ev.device)
				continue;
			d->xid_new++;
			d->xid_last = ev.eventData;
			if (s->nxids < XID_LOG_MAX)
				s->xids[s->nxids++] = (struct xid_event){i, ev.eventData, ev.gpuInstanceId};
			else
				s->xids_unlogged++;
			break;
		}
	}
}

static bool worker_init(struct nvml_state *s)
{
	nvmlReturn_t r = s->core.init();
	if (r != NVML_SUCCESS) {
		gpu_note(&s->notes_warn, "GPU monitor: nvmlInit failed: %s (%d); no GPU metrics, retried next tick",
		     nvml_err(r), r);
		return false;
	}
	unsigned n = 0;
	if ((r = s->core.count(&n)) != NVML_SUCCESS) {
		gpu_note(&s->notes_warn, "GPU monitor: nvmlDeviceGetCount failed: %s (%d)", nvml_err(r), r);
		s->core.shutdown();
		return false;
	}
	for (unsigned i = 0; i < n && i < 1024; i++) {
		nvmlDevice_t h;
		char sfx[32];
		if ((r = s->core.handle(i, &h)) != NVML_SUCCESS) {
			gpu_note(&s->notes_warn, "GPU monitor: GPU %u: no handle: %s (%d); left out", i, nvml_err(r), r);
			continue;
		}
		snprintf(sfx, sizeof sfx, "%u", i);
		add_dev(s, h, sfx);
		struct gdev *d = &s->dev[s->ndev - 1];
		/* GPM needs the device to support it and two sample buffers */
		nvmlGpmSupport_t sup = {NVML_GPM_SUPPORT_VERSION, 0};
		if (s->opt.gpm_support && s->opt.gpm_support(h, &sup) == NVML_SUCCESS && sup.isSupportedDevice &&
		    s->opt.gpm_alloc(&d->gs[0]) == NVML_SUCCESS) {
			if (s->opt.gpm_alloc(&d->gs[1]) == NVML_SUCCESS)
				d->gpm = true, d->foff |= FLD_NVL; /* GPM gives NVLink */
			else
				s->opt.gpm_free(d->gs[0]);
		}
		/* MIG instances: their own devices, after their GPU */
		size_t parent = s->ndev - 1;
		unsigned cur = 0, pend = 0, max = 0;
		if (s->opt.mig_mode && s->opt.mig_mode(h, &cur, &pend) == NVML_SUCCESS &&
		    cur == NVML_DEVICE_MIG_ENABLE && s->opt.mig_max(h, &max) == NVML_SUCCESS)
			for (unsigned m = 0; m < max && m < 64; m++) {
				nvmlDevice_t mh;
				if (s->opt.mig_handle(h, m, &mh) != NVML_SUCCESS)
					continue; /* an empty slot */
				snprintf(sfx, sizeof sfx, "%u/mig%u", i, m);
				add_dev(s, mh, sfx);
				s->dev[parent].mig_parent = true;
			}
	}
	size_t xid = watch_xids(s);
	struct buf list = BUF_INIT;
	size_t gpm = 0;
	for (size_t i = 0; i < s->ndev; i++) {
		buf_printf(&list, "%s%s %s", i ? ", " : "", s->dev[i].suffix,
			   s->dev[i].name[0] ? s->dev[i].name : "(no name)");
		gpm += s->dev[i].gpm;
	}
	gpu_note(&s->notes_info,
		 "GPU monitor: NVML sees %u GPUs, %zu devices counting MIG instances (%s); GPM on %zu; XID events on %zu",
		 n, s->ndev, list.len ? list.data : "none", gpm, xid);
	buf_free(&list);
	for (size_t i = 0; i < s->ndev; i++) /* the peak table's row, once (gpu_flops.h) */
		s->dev[i].peak = gpu_peaks_match(s->peaks, s->dev[i].name);
	for (size_t i = 0; i < s->ndev && s->peaks; i++)
		if (!strchr(s->dev[i].suffix, '/') && !s->dev[i].peak)
			gpu_note(&s->notes_info, "GPU monitor: GPU %s (%s) is not in the GPU peak table: no FLOPs/s estimate for it",
			     s->dev[i].suffix, s->dev[i].name[0] ? s->dev[i].name : "no name");
	return true;
}

/* A GPM value in upstream's unit at its published resolution: a ratio to
 * 1e-4 (gpu_flops.h), bytes/s to the byte (GPM gives MiB/s doubles) */
static void put_gpm(struct nvml_state *s, const struct gdev *d, size_t i, double v)
{
	if (gpm_keys[i].mul == 0.01)
		put_f(s, d, gpm_keys[i].key, gpu_round_ratio(v * 0.01));
	else if (v * gpm_keys[i].mul < 1.8e19)
		put_u(s, d, gpm_keys[i].key, (unsigned long long)(v * gpm_keys[i].mul + 0.5));
}

/* A field value as a count; false for a double or a negative number (not
 * a counter we know) */
static bool fv_count(const nvmlFieldValue_t *v, unsigned long long *out)
{
	switch (v->valueType) {
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: *out = v->value.ullVal; return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG: *out = v->value.ulVal; return true;
	case NVML_VALUE_TYPE_UNSIGNED_INT: *out = v->value.uiVal; return true;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		*out = (unsigned long long)v->value.sllVal;
		return v->value.sllVal >= 0;
	case NVML_VALUE_TYPE_SIGNED_INT:
		*out = (unsigned long long)v->value.siVal;
		return v->value.siVal >= 0;
	default: return false;
	}
}

/* NVLink bytes/s of a GPU without GPM (pre-Hopper): NVML's data counters
 * (KiB since the driver loaded, all links summed) over the time between two
 * readings -- NVML's own timestamps of the values when it gives them, else
 * the worker's clock.  The first reading, and one where a counter went
 * back (driver reload), only set the baseline.  v: this tick's TX and RX
 * values (NULL: not read). */
static void nvlink_rate(struct nvml_state *s, struct gdev *d, const nvmlFieldValue_t *const v[2])
{
	unsigned long long kib[2];
	for (int k = 0; k < 2; k++)
		if (!v[k] || !fv_count(v[k], &kib[k])) {
			d->nvl_have = false;
			return;
		}
	/* NVML's time of each value; without one (0) the worker's clock, and a
	 * baseline of the other kind is not compared with */
	static const char *const keys[2] = {"nvlink_tx_bytes", "nvlink_rx_bytes"};
	long long now_us = clock_mono_ns() / 1000;
	for (int k = 0; k < 2; k++) {
		bool nvml_clock = v[k]->timestamp > 0;
		long long us = nvml_clock ? v[k]->timestamp : now_us;
		if (d->nvl_have && nvml_clock == d->nvl_nvml_clock[k] && us > d->nvl_us[k] && kib[k] >= d->nvl_prev[k])
			put_u(s, d, keys[k],
			      (unsigned long long)((double)(kib[k] - d->nvl_prev[k]) * 1024 * 1e6 / (double)(us - d->nvl_us[k]) +
						   0.5));
		d->nvl_prev[k] = kib[k];
		d->nvl_us[k] = us;
		d->nvl_nvml_clock[k] = nvml_clock;
	}
	d->nvl_have = true;
}

/* The memory temperature field, C, in DCGM's range (at most 200).  R545
 * drivers tag it a double but write an unsigned int (DCGM reads uiVal
 * whatever the type says); a real double is read as one: 1..200 C is far
 * from the denormal an unsigned int read as a double makes. */
static bool mem_temp(const nvmlFieldValue_t *v, unsigned long long *c)
{
	if (v->valueType == NVML_VALUE_TYPE_DOUBLE && v->value.dVal >= 1 && v->value.dVal <= 200) {
		*c = (unsigned long long)(v->value.dVal + 0.5);
		return true;
	}
	if (v->valueType == NVML_VALUE_TYPE_DOUBLE)
		*c = v->value.uiVal;
	else if (!fv_count(v, c))
		return false;
	return *c <= 200;
}

/* This tick's field values of a GPU in one call (enum fld): the fields it
 * has not refused.  A field answered NOT_SUPPORTED (no NVLink on a PCIe
 * card, no HBM temperature sensor, no row remapper before Ampere) is not
 * asked again; the whole call refused, none is. */
static void field_values(struct nvml_state *s, struct gdev *d)
{
	nvmlFieldValue_t fv[NFLD];
	int which[NFLD], n = 0;
	memset(fv, 0, sizeof fv);
	for (int f = 0; f < NFLD; f++)
		if (!(d->foff & (1u << f))) {
			fv[n].fieldId = fld_ids[f];
			/* NVLink: all links summed; the others have no scope */
			fv[n].scopeId = f == F_NVL_TX || f == F_NVL_RX ? NVML_SCOPE_ALL_LINKS : 0;
			which[n++] = f;
		}
	if (!n)
		return;
	int64_t t0 = clock_mono_ns();
	nvmlReturn_t r = s->opt.fields(d->h, n, fv);
	s->call_ns[NC_FIELDS] += clock_mono_ns() - t0;
	s->call_n[NC_FIELDS]++;
	if (r == NVML_ERROR_NOT_SUPPORTED)
		d->foff = FLD_ALL;
	if (r != NVML_SUCCESS) {
		ok(s, d, r);
		d->nvl_have = false;
		return;
	}
	const nvmlFieldValue_t *got[NFLD] = {0};
	for (int k = 0; k < n; k++) {
		if (fv[k].nvmlReturn == NVML_ERROR_NOT_SUPPORTED)
			d->foff |= 1u << which[k];
		else if (fv[k].nvmlReturn == NVML_SUCCESS)
			got[which[k]] = &fv[k];
	}
	if (!(d->foff & FLD_NVL)) {
		const nvmlFieldValue_t *const nvl[2] = {got[F_NVL_TX], got[F_NVL_RX]};
		nvlink_rate(s, d, nvl);
	} else {
		d->nvl_have = false;
	}
	unsigned long long c;
	if (got[F_MEM_TEMP] && mem_temp(got[F_MEM_TEMP], &c))
		put_u(s, d, "gpu_memory_temperature_c", c);
	if (got[F_PCIE_REPLAY] && fv_count(got[F_PCIE_REPLAY], &c)) {
		put_delta(s, d, "gpu_pcie_replays", c, &d->prev_replay, &d->have_replay);
		put_u(s, d, "@gpu_pcie_replays_total", c); /* the driver's total: dcgm-exporter's value */
	}
	if (got[F_REMAP_COR] && fv_count(got[F_REMAP_COR], &c))
		put_u(s, d, "gpu_remapped_rows_correctable", c);
	if (got[F_REMAP_UNC] && fv_count(got[F_REMAP_UNC], &c))
		put_u(s, d, "gpu_remapped_rows_uncorrectable", c);
	if (got[F_REMAP_FAIL] && fv_count(got[F_REMAP_FAIL], &c))
		put_u(s, d, "gpu_row_remap_failure", c != 0);
}

/* Before query q of device d: whether to ask it (not lost, not refused) */
static bool want(const struct gdev *d, enum query q) { return !d->lost && !(d->off & (1u << q)); }

/* After a query made since t0 through entry point c: its time counted,
 * NOT_SUPPORTED remembered (not asked again), the rest as ok() */
static bool asked(struct nvml_state *s, struct gdev *d, enum query q, enum ncall c, int64_t t0, nvmlReturn_t r)
{
	s->call_ns[c] += clock_mono_ns() - t0;
	s->call_n[c]++;
	if (r == NVML_ERROR_NOT_SUPPORTED)
		d->off |= 1u << q;
	return ok(s, d, r);
}

/* Query q of device d through entry point c: the clock read before the
 * call (a comma operator: argument order is unspecified), then asked() */
#define ASK(q, c, call) (t0 = clock_mono_ns(), asked(s, d, (q), (c), t0, (call)))

/* Device memory: nvmlDeviceGetMemoryInfo_v2 where the driver has it (used
 * without the reserved memory, which gets its own series, as nvidia-smi
 * and DCGM count them), else the v1 query (used includes reserved; no
 * reserved series).  A driver that exports the v2 entry point but refuses
 * it (an unknown struct version, not supported) is asked v1 from then on. */
static void memory(struct nvml_state *s, struct gdev *d)
{
	const struct nvml_opt *o = &s->opt;
	int64_t t0;
	if (o->mem2 && !d->mem_v1 && want(d, Q_MEM)) {
		nvmlMemory_v2_t m2;
		memset(&m2, 0, sizeof m2);
		m2.version = NVML_MEMORY_V2_VERSION;
		t0 = clock_mono_ns();
		nvmlReturn_t r = o->mem2(d->h, &m2);
		s->call_ns[NC_MEM2] += clock_mono_ns() - t0;
		s->call_n[NC_MEM2]++;
		if (r == NVML_SUCCESS) {
			put_u(s, d, "gpu_memory_used_bytes", m2.used);
			put_u(s, d, "gpu_memory_total_bytes", m2.total);
			put_u(s, d, "gpu_memory_reserved_bytes", m2.reserved);
			return;
		}
		if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH &&
		    r != NVML_ERROR_FUNCTION_NOT_FOUND) {
			ok(s, d, r); /* a failed reading: absent this tick */
			return;
		}
		d->mem_v1 = r;
	}
	nvmlMemory_t m;
	if (o->mem && want(d, Q_MEM) && ASK(Q_MEM, NC_MEM, o->mem(d->h, &m))) {
		put_u(s, d, "gpu_memory_used_bytes", m.used);
		put_u(s, d, "gpu_memory_total_bytes", m.total);
		/* said once, and only where v1 answers (a device without memory
		 * figures refuses both) */
		if (d->mem_v1 && !d->mem_v1_said) {
			d->mem_v1_said = true;
			gpu_note(&s->notes_info,
				 "GPU monitor: GPU %s refuses nvmlDeviceGetMemoryInfo_v2 (%s); its memory used includes "
				 "the reserved memory (v1 query) and it has no reserved series",
				 d->suffix, nvml_err(d->mem_v1));
		}
	}
}

static void collect_dev(struct nvml_state *s, struct gdev *d)
{
	const struct nvml_opt *o = &s->opt;
	nvmlDevice_t h = d->h;
	int64_t t0; /* each query's start (asked() counts its time) */
	nvmlUtilization_t u;
	if (o->util && want(d, Q_UTIL) && ASK(Q_UTIL, NC_UTIL, o->util(h, &u))) {
		put_u(s, d, "gpu_device_utilization", u.gpu);
		put_u(s, d, "gpu_memory_utilization", u.memory);
	}
	memory(s, d);
	unsigned v, period;
	if (o->power && want(d, Q_POWER) && ASK(Q_POWER, NC_POWER, o->power(h, &v)))
		put_f(s, d, "gpu_power_draw", v / 1000.0); /* mW -> W, upstream's unit */
	unsigned long long e;
	if (o->energy && want(d, Q_ENERGY) &&
	    ASK(Q_ENERGY, NC_ENERGY, o->energy(h, &e))) {
		put_delta(s, d, "gpu_energy_mj", e, &d->prev_energy, &d->have_energy);
		put_u(s, d, "@gpu_energy_total_mj", e); /* the driver's total: dcgm-exporter's value */
	}
	if (o->clock && want(d, Q_CLOCK_SM) &&
	    ASK(Q_CLOCK_SM, NC_CLOCK, o->clock(h, NVML_CLOCK_SM, &v)))
		put_u(s, d, "gpu_frequency_mhz", v);
	if (o->clock && want(d, Q_CLOCK_MEM) &&
	    ASK(Q_CLOCK_MEM, NC_CLOCK, o->clock(h, NVML_CLOCK_MEM, &v)))
		put_u(s, d, "gpu_memory_frequency_mhz", v);
	if (o->temp && want(d, Q_TEMP) &&
	    ASK(Q_TEMP, NC_TEMP, o->temp(h, NVML_TEMPERATURE_GPU, &v)))
		put_u(s, d, "gpu_temperature_c", v);
	/* KB/s -> bytes/s: upstream's pcie_*_bytes are DCGM's rates in bytes/s */
	if (o->pcie && want(d, Q_PCIE_TX) &&
	    ASK(Q_PCIE_TX, NC_PCIE, o->pcie(h, NVML_PCIE_UTIL_TX_BYTES, &v)))
		put_u(s, d, "pcie_tx_bytes", (unsigned long long)v * 1024);
	if (o->pcie && want(d, Q_PCIE_RX) &&
	    ASK(Q_PCIE_RX, NC_PCIE, o->pcie(h, NVML_PCIE_UTIL_RX_BYTES, &v)))
		put_u(s, d, "pcie_rx_bytes", (unsigned long long)v * 1024);
	static const char *const ecc_keys[2] = {"gpu_ecc_corrected_errors", "gpu_ecc_uncorrected_errors"};
	for (int t = 0; t < 2; t++) {
		enum query q = t ? Q_ECC_U : Q_ECC_C;
		if (o->ecc && want(d, q) && ASK(q, NC_ECC, o->ecc(h, t, NVML_VOLATILE_ECC, &e)))
			put_delta(s, d, ecc_keys[t], e, &d->prev_ecc[t], &d->have_ecc[t]);
	}
	if (o->throttle && want(d, Q_THROTTLE) &&
	    ASK(Q_THROTTLE, NC_THROTTLE, o->throttle(h, &e)))
		put_u(s, d, "gpu_throttle_reasons", e);
	if (o->enc && want(d, Q_ENC) && ASK(Q_ENC, NC_ENC, o->enc(h, &v, &period)) &&
	    v <= 100)
		put_u(s, d, "gpu_encoder_utilization", v);
	if (o->dec && want(d, Q_DEC) && ASK(Q_DEC, NC_DEC, o->dec(h, &v, &period)) &&
	    v <= 100)
		put_u(s, d, "gpu_decoder_utilization", v);
	if (o->procs && !d->mig_parent && want(d, Q_PROCS))
		ASK(Q_PROCS, NC_PROCS, gpu_procs_list(o->procs, o->gprocs, h, d->suffix, &s->out, &s->pbuf));
	if (d->xid && !d->lost) {
		put_u(s, d, "xid_errors", d->xid_new);
		put_u(s, d, "xid_last", d->xid_last);
		d->xid_new = 0;
	}
	if (o->fields && !d->lost)
		field_values(s, d);
	if (d->gpm && s->prof_paused)
		d->ghave = false; /* no sample (CUPTI owns the counters); after the pause, a new baseline */
	if (d->gpm && !d->lost && !s->prof_paused) {
		nvmlGpmSample_t now = d->gs[d->gcur];
		t0 = clock_mono_ns();
		nvmlReturn_t r = o->gpm_sample(h, now);
		s->call_ns[NC_GPM_SAMPLE] += clock_mono_ns() - t0;
		s->call_n[NC_GPM_SAMPLE]++;
		if (!ok(s, d, r)) {
			d->ghave = false;
			return;
		}
		if (d->ghave) {
			nvmlGpmMetricsGet_t g;
			memset(&g, 0, sizeof g);
			g.version = NVML_GPM_METRICS_GET_VERSION;
			g.numMetrics = NGPM;
			g.sample1 = d->gs[d->gcur ^ 1];
			g.sample2 = now;
			for (size_t i = 0; i < NGPM; i++)
				g.metrics[i].metricId = gpm_keys[i].id;
			t0 = clock_mono_ns();
			r = o->gpm_get(&g);
			s->call_ns[NC_GPM_GET] += clock_mono_ns() - t0;
			s->call_n[NC_GPM_GET]++;
			if (ok(s, d, r))
				for (size_t i = 0; i < NGPM; i++)
					if (g.metrics[i].nvmlReturn == NVML_SUCCESS && g.metrics[i].value >= 0)
						put_gpm(s, d, i, g.metrics[i].value);
		}
		d->ghave = true;
		d->gcur ^= 1;
	}
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void worker_job(void *arg, int what)
{
	struct nvml_state *s = arg;
	int64_t cpu0 = thread_cpu_ns();
	frame_reset(&s->out, 0);
	memset(s->call_ns, 0, sizeof s->call_ns);
	memset(s->call_n, 0, sizeof s->call_n);
	s->prof_paused = what; /* one job, collect; what: whether profiling is paused */
	s->job_ok = false;
	if (!s->inited)
		s->inited = worker_init(s);
	if (!s->inited)
		return;
	drain_xids(s);
	size_t alive = 0;
	for (size_t i = 0; i < s->ndev; i++) {
		if (s->dev[i].lost)
			continue;
		struct gdev *d = &s->dev[i];
		size_t first = s->out.n;
		collect_dev(s, d);
		if (d->lost)
			continue;
		alive++;
		/* from the keys collect_dev just added (gpu_flops.h) */
		gpu_flops_put(&s->out, first, d->suffix, d->peak);
		/* identity strings: Prometheus' uuid/model labels, upstream's JSON keys */
		char k[128];
		if (d->uuid[0]) {
			key(k, sizeof k, "gpu_uuid", d);
			frame_str(&s->out, k, d->uuid);
		}
		if (d->name[0]) {
			key(k, sizeof k, "gpu_name", d);
			frame_str(&s->out, k, d->name);
		}
	}
	s->job_ok = alive > 0;
	if (!s->job_ok)
		return;
	/* the collector's own cost this tick (the first tick's includes
	 * NVML's start and the device discovery), in ns to the us: finer
	 * digits are noise that would cost the history bits every tick */
	for (int c = 0; c < NCALLS; c++)
		if (s->call_n[c]) {
			char k[96];
			snprintf(k, sizeof k, "nvml_call_ns.%s", ncall_names[c]);
			frame_uint(&s->out, k, gpu_round_us(s->call_ns[c]));
		}
	int64_t cpu1 = thread_cpu_ns();
	if (cpu0 >= 0 && cpu1 >= cpu0)
		frame_uint(&s->out, "nvml_tick_cpu_ns", gpu_round_us(cpu1 - cpu0));
}

/* ---------------- the loop thread's side ---------------- */

static struct dl_lib nvml_lib = {
	.purpose = "GPU monitor needs NVML, libnvidia-ml.so.1 (the NVIDIA driver package)",
	.syms = core_syms,
	.nsyms = sizeof core_syms / sizeof core_syms[0],
};
static struct nvml_core nvml_core_api;
static const char *nvml_sonames[2];

static bool load(struct nvml_state *s, const struct nvml_config *c)
{
	struct buf err = BUF_INIT;
	if (!nvml_lib.loaded) {
		nvml_sonames[0] = c->library && *c->library ? c->library : "libnvidia-ml.so.1";
		nvml_lib.sonames = nvml_sonames;
		nvml_lib.api = &nvml_core_api;
	}
	if (!dl_load(&nvml_lib, &err)) {
		LOG_ONCE(LOG_LEVEL_WARN, "%s; the daemon runs on without GPU metrics", err.data);
		buf_free(&err);
		return false;
	}
	buf_free(&err);
	s->core = nvml_core_api;
	/* the loaded library again (RTLD_NOLOAD: no second copy) for the
	 * optional entry points */
	void *h = dlopen(nvml_lib.loaded, RTLD_NOW | RTLD_NOLOAD);
	struct buf miss = BUF_INIT;
	for (size_t i = 0; i < NOPT; i++) {
		void *p = h ? dlsym(h, opt_syms[i].name) : NULL;
		memcpy((char *)&s->opt + opt_syms[i].offset, &p, sizeof p);
		if (!p)
			buf_printf(&miss, "%s%s", miss.len ? ", " : "", opt_syms[i].name);
	}
	/* a GPM or MIG family is all or nothing */
	if (!s->opt.gpm_support || !s->opt.gpm_alloc || !s->opt.gpm_free || !s->opt.gpm_sample || !s->opt.gpm_get)
		s->opt.gpm_support = NULL;
	if (!s->opt.mig_mode || !s->opt.mig_max || !s->opt.mig_handle)
		s->opt.mig_mode = NULL;
	if (!s->opt.ev_create || !s->opt.ev_free || !s->opt.ev_register || !s->opt.ev_wait)
		s->opt.ev_create = NULL;
	if (miss.len)
		LOG_ONCE(LOG_LEVEL_WARN, "GPU monitor: %s lacks %s (an older driver?); the metrics they give are absent",
			 nvml_lib.loaded, miss.data);
	buf_free(&miss);
	return true;
}

static void close_state(struct nvml_state *s)
{
	if (!s)
		return;
	gpu_prof_detach(s);
	gpu_backend_configure(false, NULL, 0, 0, NULL);
	if (!s->disabled) {
		/* a worker inside a hung NVML call still uses the state: leave it */
		if (!gpu_worker_stop(&s->w))
			return;
		for (size_t i = 0; i < s->ndev; i++)
			if (s->dev[i].gpm) {
				s->opt.gpm_free(s->dev[i].gs[0]);
				s->opt.gpm_free(s->dev[i].gs[1]);
			}
		if (s->evset)
			s->opt.ev_free(s->evset);
		if (s->inited)
			s->core.shutdown();
		gpu_peaks_free(s->peaks);
	}
	free(s->dev);
	gpu_proc_buf_free(&s->pbuf);
	frame_free(&s->out);
	buf_free(&s->notes_warn);
	buf_free(&s->notes_info);
	free(s);
}

/* One line per XID (the driver's own log says more: dmesg's NVRM lines),
 * rate-limited (log.h: a burst, then 60 a minute) so a storm of them cannot
 * flood the log; the counters count every one. */
static void log_xids(const struct nvml_state *s)
{
	for (size_t i = 0; i < s->nxids; i++) {
		const struct xid_event *x = &s->xids[i];
		const struct gdev *d = &s->dev[x->dev];
		char mig[32] = "";
		if (x->gi != 0xFFFFFFFFu)
			snprintf(mig, sizeof mig, ", GPU instance %u", x->gi);
		LOG_RATELIMITED(LOG_LEVEL_WARN, "GPU monitor: GPU %s (%s%s) reported XID %llu%s", d->suffix,
				d->uuid[0] ? d->uuid : "no uuid", mig, x->xid,
				i + 1 == s->nxids && s->xids_unlogged ? " (and more this tick, counted in xid_errors)" : "");
	}
}

static enum collect_status nvml_run(void *state, struct frame *f)
{
	struct nvml_state *s = state;
	/* DCGM publishes the GPU series (gpu_backend.h): not run */
	if (gpu_backend_dcgm_active() || strcmp(gpu_backend_wanted(), "dcgm") == 0)
		return COLLECT_IDLE;
	if (s->disabled)
		return COLLECT_FAILED;
	int64_t stuck_ns;
	enum gpu_worker_result r = gpu_worker_run(&s->w, gpu_prof_paused(clock_mono_ns()), &stuck_ns);
	if (stuck_ns)
		log_info("GPU monitor: NVML answered again after %.1f s; collecting again", (double)stuck_ns / 1e9);
	if (r == GW_TIMEOUT)
		log_warn("GPU monitor: an NVML call has not returned within %lld ms (a GPU fallen off the bus?); "
			 "GPU metrics are absent until it returns",
			 (long long)s->w.timeout_ms);
	if (r != GW_DONE)
		return COLLECT_FAILED; /* still inside the call that hung: nothing for GPUs this tick */
	gpu_log_notes(&s->notes_warn, LOG_LEVEL_WARN);
	gpu_log_notes(&s->notes_info, LOG_LEVEL_INFO);
	log_xids(s);
	frame_append(f, &s->out);
	if (s->job_ok)
		frame_uint(f, GPU_INTERVAL_KEY, (uint64_t)s->interval_s); /* for gpu_jobs.c */
	return s->job_ok ? COLLECT_OK : COLLECT_FAILED;
}

/* ---------------- the collector table's row (collect/list.h) ---------------- */

static const struct arg_opt nvml_opts[] = {
	MOD_OPT(struct nvml_config, enable, "enable_gpu_monitor", ARG_BOOL, NULL,
		"collect GPU metrics (NVML; upstream's flag, which used DCGM)", 0, 0),
	MOD_OPT(struct nvml_config, backend, "gpu_backend", ARG_STRING, "auto|nvml|dcgm",
		"GPU metrics source (auto: DCGM if it starts, else NVML; read at start)", 0, 0),
	MOD_OPT(struct nvml_config, interval_s, "dcgm_reporting_interval_s", ARG_INT, "SECONDS",
		"GPU collection period (upstream's name, whatever the backend)", 1, 86400),
	MOD_OPT(struct nvml_config, timeout_ms, "gpu_collect_timeout_ms", ARG_INT, "MS",
		"a GPU collection not done by then is reported as hung and its metrics are absent until it returns",
		10, 600000),
	MOD_OPT(struct nvml_config, library, "nvml_library", ARG_STRING, "PATH",
		"the NVML library to dlopen (read at start; tests load a fake)", 0, 0),
	MOD_OPT(struct nvml_config, peaks_file, "gpu_peaks_file", ARG_STRING, "PATH",
		"GPU peak table for the FLOPs/s estimate (read at start; default " GPU_PEAKS_INSTALL_PATH
		", else data/ of the source tree)", 0, 0),
	{0},
};

static const struct nvml_config nvml_defaults = {false, "auto", 10, 500, "libnvidia-ml.so.1", ""};

static bool nvml_enabled(const void *cfg) { return ((const struct nvml_config *)cfg)->enable; }
static int64_t nvml_interval(const void *cfg) { return ((const struct nvml_config *)cfg)->interval_s; }

static bool nvml_validate(const void *cfg, struct buf *err)
{
	const char *b = ((const struct nvml_config *)cfg)->backend;
	if (strcmp(b, "auto") == 0 || strcmp(b, "nvml") == 0 || strcmp(b, "dcgm") == 0)
		return true;
	buf_printf(err, "--gpu_backend=%s: expected auto, nvml or dcgm", b);
	return false;
}

static bool nvml_apply(void **state, const void *old, const void *cfg, const struct collect_env *env,
		       struct buf *err)
{
	(void)env;
	(void)err;
	const struct nvml_config *c = cfg, *o = old;
	struct nvml_state *cur = *state;
	/* the GPU monitor's options, for the DCGM collector (next row) */
	gpu_backend_configure(true, cur && o ? o->backend : c->backend, c->timeout_ms, c->interval_s, c->peaks_file);
	if (cur && !cur->disabled)
		cur->w.timeout_ms = c->timeout_ms; /* read by the loop thread only */
	if (cur)
		cur->interval_s = c->interval_s; /* read by the loop thread only */
	if (cur)
		return true; /* devices are found once; the library is read at start */
	struct nvml_state *s = xcalloc(1, sizeof *s);
	s->interval_s = c->interval_s;
	frame_init(&s->out);
	buf_init(&s->notes_warn);
	buf_init(&s->notes_info);
	if (strcmp(c->backend, "dcgm") == 0 || !load(s, c)) {
		s->disabled = true;
		*state = s;
		return true;
	}
	s->peaks = gpu_peaks_open(c->peaks_file);
	s->w.job = worker_job;
	s->w.arg = s;
	s->w.timeout_ms = c->timeout_ms;
	const char *why;
	if (!gpu_worker_start(&s->w, &why)) {
		log_warn("GPU monitor: cannot start its thread: %s; no GPU metrics", why);
		gpu_peaks_free(s->peaks);
		s->peaks = NULL;
		s->disabled = true;
	} else if (s->opt.gpm_support) {
		gpu_prof_attach(NULL, s); /* GPM: profiling metrics dcgmProfPause stops */
	}
	*state = s;
	return true;
}

static void nvml_close(void *state) { close_state(state); }

static void nvml_describe(const void *cfg, struct buf *out)
{
	buf_printf(out, ", GPU monitor (%s, --gpu_backend=%s) every %llds", gpu_backend_dcgm_active() ? "DCGM" : "NVML",
		   gpu_backend_wanted(), (long long)nvml_interval(cfg));
}

/* The keys it emits, for Prometheus and OTLP (metric.h; docs/metrics.md).
 * key, suffixed, kind, scale, prom, label, strip, fixed_label, help, otel, unit, attr, otel_fixed */
#define G MK_GAUGE
#define C MK_COUNTER
#define R(k, kind, sc, p, h, o, u, of) {k, true, kind, sc, p, "gpu", NULL, NULL, h, o, u, "hw.id", of}
static const struct metric_desc nvml_catalog[] = {
	R("gpu_device_utilization", G, 0.01, "dynolog_gpu_utilization_ratio",
	  "Share of the last sample period a kernel ran on the GPU (NVML).", "hw.gpu.utilization", "1",
	  "hw.gpu.task=general"),
	R("gpu_memory_utilization", G, 0.01, "dynolog_gpu_memory_utilization_ratio",
	  "Share of the last sample period device memory was read or written (NVML).",
	  /* not hw.gpu.memory.utilization: the convention's is the share of memory in use */
	  "dynolog.gpu.memory.controller.utilization", "1", NULL),
	R("gpu_memory_used_bytes", G, 1, "dynolog_gpu_memory_used_bytes", "Device memory in use.",
	  "hw.gpu.memory.usage", "By", NULL),
	R("gpu_memory_total_bytes", G, 1, "dynolog_gpu_memory_total_bytes", "Device memory size.",
	  "hw.gpu.memory.limit", "By", NULL),
	R("gpu_memory_reserved_bytes", G, 1, "dynolog_gpu_memory_reserved_bytes",
	  "Device memory the driver and firmware reserve, not counted in used (NVML's v2 memory query).",
	  "dynolog.gpu.memory.reserved", "By", NULL),
	R("gpu_memory_temperature_c", G, 1, "dynolog_gpu_memory_temperature_celsius", "GPU memory (HBM) temperature.",
	  "dynolog.gpu.memory.temperature", "Cel", NULL),
	R("gpu_encoder_utilization", G, 0.01, "dynolog_gpu_encoder_utilization_ratio",
	  "Share of the last sample period the video encoder was busy (NVML).", "hw.gpu.utilization", "1",
	  "hw.gpu.task=encoder"),
	R("gpu_decoder_utilization", G, 0.01, "dynolog_gpu_decoder_utilization_ratio",
	  "Share of the last sample period the video decoder was busy (NVML).", "hw.gpu.utilization", "1",
	  "hw.gpu.task=decoder"),
	R("gpu_pcie_replays", C, 1, "dynolog_gpu_pcie_replays_total",
	  "PCIe replays: packets the link sent again after an error.", "dynolog.gpu.pcie.replays", "{replay}", NULL),
	/* the row remapper's counts over the GPU's life (kept in its InfoROM): gauges of the driver's values */
	{"gpu_remapped_rows_correctable", true, G, 1, "dynolog_gpu_remapped_rows", "gpu", NULL, "cause=correctable",
	 "Memory rows remapped to spares over the GPU's life, by the kind of error that caused it.",
	 "dynolog.gpu.memory.remapped_rows", "{row}", "hw.id", "error.type=correctable"},
	{"gpu_remapped_rows_uncorrectable", true, G, 1, "dynolog_gpu_remapped_rows", "gpu", NULL,
	 "cause=uncorrectable", "Memory rows remapped to spares over the GPU's life, by the kind of error that caused it.",
	 "dynolog.gpu.memory.remapped_rows", "{row}", "hw.id", "error.type=uncorrectable"},
	R("gpu_row_remap_failure", G, 1, "dynolog_gpu_row_remap_failed",
	  "1 when a memory row could not be remapped (the GPU needs service), else 0.",
	  "dynolog.gpu.memory.row_remap_failure", "1", NULL),
	R("gpu_power_draw", G, 1, "dynolog_gpu_power_watts", "Power draw of the GPU board.", "hw.power", "W",
	  "hw.type=gpu"),
	R("gpu_energy_mj", C, 0.001, "dynolog_gpu_energy_joules_total", "Energy used by the GPU.", "hw.energy", "J",
	  "hw.type=gpu"),
	R("gpu_frequency_mhz", G, 1e6, "dynolog_gpu_sm_clock_hertz", "SM clock.", "dynolog.gpu.sm_clock", "Hz",
	  NULL),
	R("gpu_memory_frequency_mhz", G, 1e6, "dynolog_gpu_memory_clock_hertz", "Memory clock.",
	  "dynolog.gpu.memory_clock", "Hz", NULL),
	R("gpu_temperature_c", G, 1, "dynolog_gpu_temperature_celsius", "GPU die temperature.", "hw.temperature",
	  "Cel", "hw.type=gpu"),
	R("pcie_tx_bytes", G, 1, "dynolog_gpu_pcie_transmit_bytes_per_second",
	  "PCIe bytes per second sent by the GPU (NVML's last 20 ms sample).", "dynolog.gpu.pcie.throughput",
	  "By/s", "network.io.direction=transmit"),
	R("pcie_rx_bytes", G, 1, "dynolog_gpu_pcie_receive_bytes_per_second",
	  "PCIe bytes per second received by the GPU (NVML's last 20 ms sample).", "dynolog.gpu.pcie.throughput",
	  "By/s", "network.io.direction=receive"),
	R("gpu_ecc_corrected_errors", C, 1, "dynolog_gpu_ecc_corrected_errors_total",
	  "Corrected ECC errors since the driver loaded (volatile).", "hw.errors", "{error}",
	  "error.type=ecc_corrected"),
	R("gpu_ecc_uncorrected_errors", C, 1, "dynolog_gpu_ecc_uncorrected_errors_total",
	  "Uncorrected ECC errors since the driver loaded (volatile).", "hw.errors", "{error}",
	  "error.type=ecc_uncorrected"),
	R("xid_errors", C, 1, "dynolog_gpu_xid_errors_total",
	  "XID errors the driver reported (NVML XID critical error events; dmesg NVRM: Xid).", "hw.errors",
	  "{error}", "error.type=xid"),
	R("xid_last", G, 1, "dynolog_gpu_last_xid",
	  "The last XID the driver reported since the daemon started (0: none).", "dynolog.gpu.xid.last", "1", NULL),
	R("gpu_throttle_reasons", G, 1, "dynolog_gpu_clocks_throttle_reasons",
	  "Bit mask of why clocks are held down (nvmlClocksThrottleReasons; 0: none).",
	  "dynolog.gpu.clocks_throttle_reasons", "1", NULL),
	/* GPM (Hopper and newer), upstream's DCGM profiling keys */
	R("graphics_engine_active_ratio", G, 1, "dynolog_gpu_graphics_engine_active_ratio",
	  "Share of time the graphics/compute engine was active (GPM).", "hw.gpu.utilization", "1",
	  "hw.gpu.task=graphics_engine"),
	R("sm_active_ratio", G, 1, "dynolog_gpu_sm_active_ratio", "Share of SMs busy (GPM).",
	  "dynolog.gpu.sm.utilization", "1", NULL),
	R("sm_occupancy", G, 1, "dynolog_gpu_sm_occupancy_ratio", "Active warps over the maximum (GPM).",
	  "dynolog.gpu.sm.occupancy", "1", NULL),
	R("tensorcore_active", G, 1, "dynolog_gpu_pipe_tensor_active_ratio",
	  "Share of time SMs ran any tensor operation (GPM).", "dynolog.gpu.pipe.utilization", "1", "pipe=tensor"),
	R("tensor_hmma_active", G, 1, "dynolog_gpu_pipe_tensor_hmma_active_ratio",
	  "Share of time SMs ran FP16/BF16/TF32/FP8 tensor (HMMA) operations (GPM).", "dynolog.gpu.pipe.utilization",
	  "1", "pipe=tensor_hmma"),
	R("tensor_dfma_active", G, 1, "dynolog_gpu_pipe_tensor_dfma_active_ratio",
	  "Share of time SMs ran FP64 tensor (DMMA) operations (GPM).", "dynolog.gpu.pipe.utilization", "1",
	  "pipe=tensor_dfma"),
	R("tensor_imma_active", G, 1, "dynolog_gpu_pipe_tensor_imma_active_ratio",
	  "Share of time SMs ran integer tensor (IMMA) operations (GPM).", "dynolog.gpu.pipe.utilization", "1",
	  "pipe=tensor_imma"),
	R("fp16_active", G, 1, "dynolog_gpu_pipe_fp16_active_ratio", "Share of time SMs ran non-tensor FP16 (GPM).",
	  "dynolog.gpu.pipe.utilization", "1", "pipe=fp16"),
	R("fp32_active", G, 1, "dynolog_gpu_pipe_fp32_active_ratio", "Share of time SMs ran non-tensor FP32 (GPM).",
	  "dynolog.gpu.pipe.utilization", "1", "pipe=fp32"),
	R("fp64_active", G, 1, "dynolog_gpu_pipe_fp64_active_ratio", "Share of time SMs ran non-tensor FP64 (GPM).",
	  "dynolog.gpu.pipe.utilization", "1", "pipe=fp64"),
	R("integer_active", G, 1, "dynolog_gpu_pipe_integer_active_ratio",
	  "Share of time SMs ran integer operations (GPM).", "dynolog.gpu.pipe.utilization", "1", "pipe=integer"),
	R("hbm_mem_bw_util", G, 1, "dynolog_gpu_dram_bandwidth_ratio", "DRAM bandwidth used over the peak (GPM).",
	  "dynolog.gpu.memory.bandwidth.utilization", "1", NULL),
	R("nvlink_tx_bytes", G, 1, "dynolog_gpu_nvlink_transmit_bytes_per_second",
	  "NVLink bytes per second sent, all links (GPM; without it NVML's NVLink data counters).",
	  "dynolog.gpu.nvlink.throughput", "By/s",
	  "network.io.direction=transmit"),
	R("nvlink_rx_bytes", G, 1, "dynolog_gpu_nvlink_receive_bytes_per_second",
	  "NVLink bytes per second received, all links (GPM; without it NVML's NVLink data counters).",
	  "dynolog.gpu.nvlink.throughput", "By/s",
	  "network.io.direction=receive"),
	GPU_FLOPS_CATALOG_ROWS,
	/* export-only: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION and DCGM_FI_DEV_PCIE_REPLAY_COUNTER under
	 * --prometheus_names=dcgm (prom_dcgm.c) */
	{"@gpu_energy_total_mj", true, MK_TOTAL, 1, NULL, "gpu", NULL, NULL, NULL, NULL, NULL, "hw.id", NULL},
	{"@gpu_pcie_replays_total", true, MK_TOTAL, 1, NULL, "gpu", NULL, NULL, NULL, NULL, NULL, "hw.id", NULL},
	/* the collector's own cost (its worker thread), every tick */
	{"nvml_call_ns", true, G, 1e-9, "dynolog_collector_call_seconds", "call", NULL, "collector=nvml",
	 "Time the collector spent in each library entry point during its last tick, all devices summed.",
	 "dynolog.collector.call.duration", "s", "dynolog.call", "dynolog.collector=nvml"},
	{"nvml_tick_cpu_ns", false, G, 1e-9, "dynolog_collector_cpu_seconds", NULL, NULL, "collector=nvml",
	 "CPU time the collector's worker thread used for its last tick.", "dynolog.collector.cpu.time", "s", NULL,
	 "dynolog.collector=nvml"},
	/* the DCGM collector's (dcgm.c: it has no catalog of its own) */
	{"dcgm_call_ns", true, G, 1e-9, "dynolog_collector_call_seconds", "call", NULL, "collector=dcgm",
	 "Time the collector spent in each library entry point during its last tick, all devices summed.",
	 "dynolog.collector.call.duration", "s", "dynolog.call", "dynolog.collector=dcgm"},
	{"dcgm_tick_cpu_ns", false, G, 1e-9, "dynolog_collector_cpu_seconds", NULL, NULL, "collector=dcgm",
	 "CPU time the collector's worker thread used for its last tick.", "dynolog.collector.cpu.time", "s", NULL,
	 "dynolog.collector=dcgm"},
};
#undef R
#undef G
#undef C

const struct collector collector_nvml = {
	.name = "nvml",
	.catalog = nvml_catalog,
	.ncatalog = sizeof nvml_catalog / sizeof nvml_catalog[0],
	.config = {nvml_opts, sizeof(struct nvml_config), &nvml_defaults},
	.validate = nvml_validate,
	.enabled = nvml_enabled,
	.interval_s = nvml_interval,
	/* an empty tick (a hang) replaces the last one: Prometheus drops the series */
	.publish_empty = true,
	.apply = nvml_apply,
	.collect = nvml_run,
	.close = nvml_close,
	.describe = nvml_describe,
};
