/*
 * dcgm.c - the DCGM GPU collector: per GPU the fields of --dcgm_fields
 * (upstream Dynolog's default set: SM clock, power, memory copy
 * utilization and the profiling fields 1001-1012), read from NVIDIA DCGM,
 * libdcgm.so.4 then libdcgm.so.3 (or --dcgm_library), dlopen()ed through
 * core/dl: an embedded hostengine, or the nv-hostengine at
 * --dcgm_standalone_address (upstream's flag).
 *
 * It is one of the two GPU backends (gpu_backend.h): it rides on the NVML
 * collector's tick and options, and under --gpu_backend=auto or dcgm it
 * tries DCGM when applied; when DCGM starts it publishes the GPU series
 * and the NVML collector idles; under auto, when it does not, it says why
 * and NVML publishes them.  Its keys are the NVML collector's (upstream's
 * names, the same catalog rows, so the same Prometheus names).
 *
 * Hangs: every DCGM call runs on a gpu_worker thread, waited for at most
 * --gpu_collect_timeout_ms, as nvml.c.  Absent, never 0: a value DCGM
 * marks blank (DCGM's *_BLANK .. sentinels: not found, not supported, no
 * permission) or with a failed status is left out.  dcgmProfPause /
 * dcgmProfResume (gpu_prof.h) call DCGM's own pause, and the profiling
 * fields are left out while paused; an expired pause is resumed by the
 * next tick.
 *
 * Cost: one thread, one dcgmGetLatestValues_v2 call per tick (the
 * hostengine samples the watched fields itself), libdcgm's own footprint
 * (an embedded hostengine is large: tens of MB).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/dl.h"
#include "core/log.h"
#include "daemon/collect/collector.h"
#include "daemon/collect/dcgm_api.h"
#include "daemon/collect/gpu_backend.h"
#include "daemon/collect/gpu_flops.h"
#include "daemon/collect/gpu_prof.h"
#include "daemon/collect/gpu_worker.h"

/* ---------------- the library ---------------- */

struct dcgm_lib_api {
	dcgm_void_fn init, shutdown;
	dcgm_start_embedded_fn start_embedded;
	dcgm_handle_fn stop_embedded;
	dcgm_connect_fn connect;
	dcgm_handle_fn disconnect;
	dcgm_devices_fn devices;
	dcgm_group_create_fn group_create;
	dcgm_group_add_fn group_add;
	dcgm_field_group_create_fn field_group_create;
	dcgm_watch_fn watch;
	dcgm_latest_fn latest;
	dcgm_handle_fn prof_pause, prof_resume;
};

#define S(field, sym) DL_SYM(struct dcgm_lib_api, field, sym)
static const struct dl_sym dcgm_syms[] = {
	S(init, "dcgmInit"),
	S(shutdown, "dcgmShutdown"),
	S(start_embedded, "dcgmStartEmbedded"),
	S(stop_embedded, "dcgmStopEmbedded"),
	S(connect, "dcgmConnect"),
	S(disconnect, "dcgmDisconnect"),
	S(devices, "dcgmGetAllSupportedDevices"),
	S(group_create, "dcgmGroupCreate"),
	S(group_add, "dcgmGroupAddEntity"),
	S(field_group_create, "dcgmFieldGroupCreate"),
	S(watch, "dcgmWatchFields"),
	S(latest, "dcgmGetLatestValues_v2"),
	S(prof_pause, "dcgmProfPause"),
	S(prof_resume, "dcgmProfResume"),
};
#undef S

static const char *dcgm_err(dcgmReturn_t r)
{
	switch (r) {
	case DCGM_ST_BADPARAM: return "bad parameter";
	case DCGM_ST_GENERIC_ERROR: return "generic error";
	case DCGM_ST_NOT_SUPPORTED: return "not supported";
	case DCGM_ST_INIT_ERROR: return "init error";
	case DCGM_ST_UNINITIALIZED: return "uninitialized";
	case DCGM_ST_TIMEOUT: return "timeout";
	case DCGM_ST_NO_DATA: return "no data";
	case DCGM_ST_NOT_WATCHED: return "not watched";
	case DCGM_ST_NO_PERMISSION: return "no permission";
	case DCGM_ST_GPU_IS_LOST: return "GPU is lost";
	case DCGM_ST_CONNECTION_NOT_VALID: return "no connection to the hostengine";
	case DCGM_ST_GPU_NOT_SUPPORTED: return "GPU not supported by DCGM";
	default: return "error";
	}
}

/* ---------------- fields ---------------- */

/* field id -> key (the NVML collector's, upstream's), and the factor to
 * upstream's unit (DCGM gives MiB for framebuffer sizes) */
static const struct {
	unsigned short id;
	const char *key;
	double mul;
} fields[] = {
	{DCGM_FI_DEV_SM_CLOCK, "gpu_frequency_mhz", 1},
	{DCGM_FI_DEV_MEM_CLOCK, "gpu_memory_frequency_mhz", 1},
	{DCGM_FI_DEV_GPU_TEMP, "gpu_temperature_c", 1},
	{DCGM_FI_DEV_POWER_USAGE, "gpu_power_draw", 1},
	{DCGM_FI_DEV_GPU_UTIL, "gpu_device_utilization", 1},
	{DCGM_FI_DEV_MEM_COPY_UTIL, "gpu_memory_utilization", 1},
	{DCGM_FI_DEV_FB_TOTAL, "gpu_memory_total_bytes", 1048576.0},
	{DCGM_FI_DEV_FB_USED, "gpu_memory_used_bytes", 1048576.0},
	{DCGM_FI_DEV_FB_RESERVED, "gpu_memory_reserved_bytes", 1048576.0},
	{DCGM_FI_DEV_XID_ERRORS, "xid_last", 1},
	{DCGM_FI_PROF_GR_ENGINE_ACTIVE, "graphics_engine_active_ratio", 1},
	{DCGM_FI_PROF_SM_ACTIVE, "sm_active_ratio", 1},
	{DCGM_FI_PROF_SM_OCCUPANCY, "sm_occupancy", 1},
	{DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, "tensorcore_active", 1},
	{DCGM_FI_PROF_DRAM_ACTIVE, "hbm_mem_bw_util", 1},
	{DCGM_FI_PROF_PIPE_FP64_ACTIVE, "fp64_active", 1},
	{DCGM_FI_PROF_PIPE_FP32_ACTIVE, "fp32_active", 1},
	{DCGM_FI_PROF_PIPE_FP16_ACTIVE, "fp16_active", 1},
	{DCGM_FI_PROF_PCIE_TX_BYTES, "pcie_tx_bytes", 1},
	{DCGM_FI_PROF_PCIE_RX_BYTES, "pcie_rx_bytes", 1},
	{DCGM_FI_PROF_NVLINK_TX_BYTES, "nvlink_tx_bytes", 1},
	{DCGM_FI_PROF_NVLINK_RX_BYTES, "nvlink_rx_bytes", 1},
	/* identity strings, always watched: the uuid/model labels */
	{DCGM_FI_DEV_NAME, "gpu_name", 1},
	{DCGM_FI_DEV_UUID, "gpu_uuid", 1},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

/* upstream Dynolog's default --dcgm_fields */
#define DCGM_DEFAULT_FIELDS "100,155,204,1001,1002,1003,1004,1005,1006,1007,1008,1009,1010,1011,1012"

static int field_index(long id)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (fields[i].id == id)
			return (int)i;
	return -1;
}

static bool is_prof(unsigned short id) { return id >= DCGM_FI_PROF_GR_ENGINE_ACTIVE; }

/* Parse "ID,ID,..." into ids (at most NFIELDS, no repeats), adding the
 * identity fields; false with the reason in err. */
static bool parse_fields(const char *s, unsigned short *ids, int *n, struct buf *err)
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		long id = strtol(p, &end, 10);
		if (end == p || (*end && *end != ',')) {
			buf_printf(err, "--dcgm_fields=%s: '%.*s' is not a field id", s, (int)strcspn(p, ","), p);
			return false;
		}
		int fi = field_index(id);
		if (fi < 0) {
			buf_printf(err, "--dcgm_fields: field %ld has no metric name here; known:", id);
			for (size_t i = 0; i < NFIELDS; i++)
				buf_printf(err, " %u", fields[i].id);
			return false;
		}
		bool dup = false;
		for (int i = 0; i < *n; i++)
			dup = dup || ids[i] == id;
		if (!dup)
			ids[(*n)++] = (unsigned short)id;
		p = *end ? end + 1 : end;
	}
	if (*n == 0) {
		buf_printf(err, "--dcgm_fields: no field id");
		return false;
	}
	static const unsigned short ident[] = {DCGM_FI_DEV_NAME, DCGM_FI_DEV_UUID};
	for (size_t k = 0; k < 2; k++) {
		bool have = false;
		for (int i = 0; i < *n; i++)
			have = have || ids[i] == ident[k];
		if (!have)
			ids[(*n)++] = ident[k];
	}
	return true;
}

/* ---------------- the collector's state ---------------- */

struct dcgm_config {
	const char *library, *address, *fields;
};

enum { JOB_START, JOB_COLLECT, JOB_PAUSE, JOB_RESUME, JOB_STOP };
#define JOB_PROF_PAUSED 0x100 /* with JOB_COLLECT: profiling is paused */

struct dcgm_state {
	bool off; /* not the GPU backend: every tick is idle */
	struct dcgm_lib_api api;
	struct gpu_worker w;
	bool worker_on;
	char *address; /* NULL: embedded */
	unsigned short ids[NFIELDS];
	int nids;
	bool has_prof;
	int64_t interval_s;
	struct gpu_peaks *peaks; /* for the FLOPs/s estimate (gpu_flops.h) */
	/* worker-owned (the loop thread reads them only between jobs) */
	bool started;
	dcgmHandle_t h;
	dcgmGpuGrp_t grp;
	dcgmFieldGrp_t fgrp;
	int ngpus;
	struct frame out;
	struct buf notes_warn, notes_info;
	bool job_ok, call_ok;
	bool prof_paused;  /* the loop thread's view, passed with JOB_COLLECT */
	bool prof_applied; /* DCGM's pause is on */
	dcgmReturn_t last_latest;
	int64_t cpu0; /* the worker's CPU ns when the collect job began (-1: unknown) */
	char last_fail[320]; /* the last failed step, said once while it repeats */
};

/* ---------------- the worker's jobs ---------------- */

static void stop_dcgm(struct dcgm_state *s)
{
	if (s->address)
		s->api.disconnect(s->h);
	else
		s->api.stop_embedded(s->h);
	s->api.shutdown();
	s->started = false;
}

static bool step(struct dcgm_state *s, dcgmReturn_t r, const char *what)
{
	if (r == DCGM_ST_OK)
		return true;
	/* a start retried each tick (--gpu_backend=dcgm) fails the same way:
	 * said once, until something else happens */
	char line[320];
	snprintf(line, sizeof line, "%s failed: %s (%d)", what, dcgm_err(r), r);
	if (strcmp(line, s->last_fail) != 0)
		gpu_note(&s->notes_warn, "GPU monitor: DCGM: %s", line);
	memcpy(s->last_fail, line, sizeof line);
	return false;
}

static void job_start(struct dcgm_state *s)
{
	if (!step(s, s->api.init(), "dcgmInit"))
		return;
	char what[300];
	if (s->address) {
		snprintf(what, sizeof what, "dcgmConnect to the hostengine at %s (--dcgm_standalone_address)",
			 s->address);
		if (!step(s, s->api.connect(s->address, &s->h), what)) {
			s->api.shutdown();
			return;
		}
	} else if (!step(s, s->api.start_embedded(DCGM_OPERATION_MODE_AUTO, &s->h), "dcgmStartEmbedded")) {
		s->api.shutdown();
		return;
	}
	s->started = true;
	unsigned int ids[DCGM_MAX_NUM_DEVICES];
	int n = 0;
	char name[64];
	snprintf(name, sizeof name, "dynolite_%d", (int)getpid()); /* unique on a shared hostengine */
	if (!step(s, s->api.devices(s->h, ids, &n), "dcgmGetAllSupportedDevices") ||
	    !step(s, s->api.group_create(s->h, DCGM_GROUP_EMPTY, name, &s->grp), "dcgmGroupCreate")) {
		stop_dcgm(s);
		return;
	}
	if (n < 0 || n > DCGM_MAX_NUM_DEVICES)
		n = 0;
	s->ngpus = 0;
	for (int i = 0; i < n; i++) {
		snprintf(what, sizeof what, "dcgmGroupAddEntity (GPU %u)", ids[i]);
		if (step(s, s->api.group_add(s->h, s->grp, DCGM_FE_GPU, ids[i]), what))
			s->ngpus++;
	}
	if (s->ngpus == 0) {
		step(s, DCGM_ST_GPU_NOT_SUPPORTED, "finding a GPU (none supported)");
		stop_dcgm(s);
		return;
	}
	/* the hostengine samples every interval itself (operation mode auto)
	 * and keeps two samples: one tick's read is the latest */
	if (!step(s, s->api.field_group_create(s->h, s->nids, s->ids, name, &s->fgrp), "dcgmFieldGroupCreate") ||
	    !step(s, s->api.watch(s->h, s->grp, s->fgrp, s->interval_s * 1000000LL, (double)s->interval_s * 2 + 1, 2),
		  "dcgmWatchFields")) {
		stop_dcgm(s);
		return;
	}
	s->last_fail[0] = 0;
}

static void put(struct dcgm_state *s, const char *key, dcgm_field_eid_t gpu, const dcgmFieldValue_v1 *v, double mul)
{
	char k[128];
	snprintf(k, sizeof k, "%s.%u", key, gpu);
	switch (v->fieldType) {
	case DCGM_FT_DOUBLE:
		if (v->value.dbl >= DCGM_FP64_BLANK || v->value.dbl != v->value.dbl)
			return; /* blank / not supported / no permission: absent */
		/* the profiling ratios at the NVML collector's resolution (gpu_flops.h) */
		frame_float(&s->out, k, is_prof(v->fieldId) ? gpu_round_ratio(v->value.dbl * mul) : v->value.dbl * mul);
		break;
	case DCGM_FT_INT64:
		if (v->value.i64 >= DCGM_INT64_BLANK)
			return;
		if (mul != 1)
			frame_uint(&s->out, k, (uint64_t)((double)v->value.i64 * mul));
		else
			frame_int(&s->out, k, v->value.i64);
		break;
	case DCGM_FT_STRING: {
		char str[DCGM_MAX_STR_LENGTH];
		memcpy(str, v->value.str, sizeof str);
		str[sizeof str - 1] = 0;
		if (!str[0] || strncmp(str, "<<<", 3) == 0)
			return; /* DCGM_STR_BLANK and its kin */
		frame_str(&s->out, k, str);
		break;
	}
	default: return; /* a type we do not name */
	}
	s->job_ok = true;
}

static int on_values(dcgm_field_entity_group_t group, dcgm_field_eid_t gpu, dcgmFieldValue_v1 *vals, int n, void *ud)
{
	struct dcgm_state *s = ud;
	if (group != DCGM_FE_GPU || !vals)
		return 0;
	for (int i = 0; i < n; i++) {
		if (vals[i].status != DCGM_ST_OK)
			continue;
		int fi = field_index(vals[i].fieldId);
		if (fi < 0 || (s->prof_paused && is_prof(vals[i].fieldId)))
			continue;
		put(s, fields[fi].key, gpu, &vals[i], fields[fi].mul);
	}
	return 0;
}

static void job_collect(struct dcgm_state *s)
{
	if (!s->started) {
		job_start(s);
		if (!s->started)
			return;
	}
	if (s->prof_applied && !s->prof_paused) {
		/* the pause expired (gpu_prof.c): DCGM's own pause ends here */
		if (step(s, s->api.prof_resume(s->h), "dcgmProfResume (the pause expired)"))
			s->prof_applied = false;
	}
	int64_t t0 = clock_mono_ns();
	dcgmReturn_t r = s->api.latest(s->h, s->grp, s->fgrp, on_values, s);
	int64_t t1 = clock_mono_ns();
	/* the collector's own cost (as nvml.c's): its one call a tick, and the
	 * worker's CPU for the tick (docs/metrics.md) */
	struct timespec cpu;
	if (r == DCGM_ST_OK && s->out.n) {
		frame_uint(&s->out, "dcgm_call_ns.dcgmGetLatestValues_v2", gpu_round_us(t1 - t0));
		if (s->cpu0 >= 0 && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
			frame_uint(&s->out, "dcgm_tick_cpu_ns",
				   gpu_round_us((int64_t)cpu.tv_sec * 1000000000 + cpu.tv_nsec - s->cpu0));
	}
	if (r != DCGM_ST_OK && r != s->last_latest)
		gpu_note(&s->notes_warn, "GPU monitor: DCGM: dcgmGetLatestValues_v2 failed: %s (%d); GPU metrics absent",
		     dcgm_err(r), r);
	else if (r == DCGM_ST_OK && s->last_latest != DCGM_ST_OK)
		gpu_note(&s->notes_info, "GPU monitor: DCGM answers again");
	s->last_latest = r;
}

static void job(void *arg, int what)
{
	struct dcgm_state *s = arg;
	s->job_ok = s->call_ok = false;
	if ((what & 0xff) == JOB_COLLECT) {
		struct timespec cpu;
		s->cpu0 = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0
				  ? (int64_t)cpu.tv_sec * 1000000000 + cpu.tv_nsec
				  : -1;
		/* the worker's own frame: reset here, never while a job runs */
		frame_reset(&s->out, 0);
		s->prof_paused = what & JOB_PROF_PAUSED;
	}
	switch (what & 0xff) {
	case JOB_START: job_start(s); break;
	case JOB_COLLECT: job_collect(s); break;
	case JOB_PAUSE:
		s->call_ok = s->started && step(s, s->api.prof_pause(s->h), "dcgmProfPause");
		if (s->call_ok)
			s->prof_applied = true;
		break;
	case JOB_RESUME:
		s->call_ok = s->started && step(s, s->api.prof_resume(s->h), "dcgmProfResume");
		if (s->call_ok)
			s->prof_applied = false;
		break;
	case JOB_STOP:
		if (s->started)
			stop_dcgm(s);
		break;
	}
}

/* ---------------- the loop thread's side ---------------- */

/* Run one job within the bound; false when it did not run or return. */
static bool run_job(struct dcgm_state *s, int what)
{
	int64_t stuck_ns;
	enum gpu_worker_result r = gpu_worker_run(&s->w, what, &stuck_ns);
	if (stuck_ns)
		log_info("GPU monitor: DCGM answered again after %.1f s; collecting again", (double)stuck_ns / 1e9);
	if (r == GW_TIMEOUT)
		log_warn("GPU monitor: a DCGM call has not returned within %lld ms (a GPU fallen off the bus, a hung "
			 "hostengine?); GPU metrics are absent until it returns",
			 (long long)s->w.timeout_ms);
	if (r != GW_DONE)
		return false;
	gpu_log_notes(&s->notes_warn, LOG_LEVEL_WARN);
	gpu_log_notes(&s->notes_info, LOG_LEVEL_INFO);
	return true;
}

static bool prof_hook(void *ud, bool pause)
{
	struct dcgm_state *s = ud;
	s->w.timeout_ms = gpu_backend_timeout_ms();
	return run_job(s, pause ? JOB_PAUSE : JOB_RESUME) && s->call_ok;
}

static enum collect_status dcgm_run(void *state, struct frame *f)
{
	struct dcgm_state *s = state;
	if (s->off)
		return COLLECT_IDLE;
	if (!s->worker_on)
		return COLLECT_FAILED;
	s->w.timeout_ms = gpu_backend_timeout_ms();
	bool was = s->started;
	if (!run_job(s, JOB_COLLECT | (gpu_prof_paused(clock_mono_ns()) ? JOB_PROF_PAUSED : 0)))
		return COLLECT_FAILED;
	if (!was && s->started) {
		log_info("GPU monitor: DCGM started (%d GPUs); collecting", s->ngpus);
		gpu_backend_set_dcgm(true);
		if (s->has_prof)
			gpu_prof_attach(prof_hook, s);
	}
	size_t from = f->n;
	frame_append(f, &s->out);
	/* the FLOPs/s estimate of each GPU from the profiling fields, as the
	 * NVML backend does from GPM (the same keys) */
	size_t end = f->n;
	for (size_t i = from; i < end; i++) {
		const struct frame_value *v = &f->vals[i];
		const char *k = frame_key(f, v);
		if (v->type != FV_STRING || strncmp(k, "gpu_name.", 9) != 0)
			continue;
		char suffix[32];
		snprintf(suffix, sizeof suffix, "%s", k + 9);
		/* the name is read before the estimate adds values (the frame may move) */
		const struct gpu_model *m = gpu_peaks_match(s->peaks, f->names.data + v->sval);
		gpu_flops_put(f, from, suffix, m);
	}
	return s->job_ok ? COLLECT_OK : COLLECT_FAILED;
}

static struct dl_lib dcgm_lib = {
	.purpose = "the DCGM backend needs libdcgm.so.4 or libdcgm.so.3 (NVIDIA's datacenter-gpu-manager package)",
	.syms = dcgm_syms,
	.nsyms = sizeof dcgm_syms / sizeof dcgm_syms[0],
};
static struct dcgm_lib_api dcgm_lib_api;
static const char *dcgm_sonames[3];

static void free_state(struct dcgm_state *s)
{
	free(s->address);
	gpu_peaks_free(s->peaks);
	frame_free(&s->out);
	buf_free(&s->notes_warn);
	buf_free(&s->notes_info);
	free(s);
}

static void dcgm_close(void *state)
{
	struct dcgm_state *s = state;
	if (!s)
		return;
	gpu_prof_detach(s);
	if (!s->off)
		gpu_backend_set_dcgm(false);
	if (s->worker_on) {
		s->w.timeout_ms = gpu_backend_timeout_ms();
		if (gpu_worker_run(&s->w, JOB_STOP, NULL) != GW_DONE || !gpu_worker_stop(&s->w))
			return; /* the worker is inside a hung DCGM call and still uses s */
	}
	free_state(s);
}

/* DCGM is not the backend: said once, why */
static void fall_back(struct dcgm_state *s, const char *why)
{
	if (strcmp(gpu_backend_wanted(), "auto") == 0)
		log_info("GPU monitor: backend NVML (--gpu_backend=auto: %s)", why);
	s->off = true;
}

static bool dcgm_apply(void **state, const void *old, const void *cfg, const struct collect_env *env,
		       struct buf *err)
{
	(void)old;
	(void)env;
	const struct dcgm_config *c = cfg;
	if (*state)
		return true; /* the library, address and fields are read at start */
	struct dcgm_state *s = xcalloc(1, sizeof *s);
	frame_init(&s->out);
	buf_init(&s->notes_warn);
	buf_init(&s->notes_info);
	s->last_latest = DCGM_ST_OK;
	if (!parse_fields(c->fields, s->ids, &s->nids, err)) {
		free_state(s);
		return false;
	}
	for (int i = 0; i < s->nids; i++)
		s->has_prof = s->has_prof || is_prof(s->ids[i]);
	s->address = c->address && *c->address ? xstrdup(c->address) : NULL;
	s->interval_s = gpu_backend_interval_s();
	*state = s;
	bool must = strcmp(gpu_backend_wanted(), "dcgm") == 0;
	struct buf e = BUF_INIT;
	if (!dcgm_lib.loaded) {
		size_t k = 0;
		if (c->library && *c->library) {
			dcgm_sonames[k++] = c->library;
		} else {
			dcgm_sonames[k++] = "libdcgm.so.4";
			dcgm_sonames[k++] = "libdcgm.so.3";
		}
		dcgm_sonames[k] = NULL;
		dcgm_lib.sonames = dcgm_sonames;
		dcgm_lib.api = &dcgm_lib_api;
	}
	if (!dl_load(&dcgm_lib, &e)) {
		if (must)
			log_warn("%s; --gpu_backend=dcgm: the daemon runs on without GPU metrics", e.data);
		else if (strncmp(e.data, dcgm_lib.purpose, strlen(dcgm_lib.purpose)) == 0)
			fall_back(s, "no DCGM library (libdcgm.so.4, libdcgm.so.3)");
		else
			fall_back(s, e.data); /* one was found, lacking entry points: name them */
		buf_free(&e);
		s->off = !must;
		return true;
	}
	buf_free(&e);
	s->api = dcgm_lib_api;
	s->w.job = job;
	s->w.arg = s;
	s->w.timeout_ms = gpu_backend_timeout_ms();
	const char *why;
	if (!gpu_worker_start(&s->w, &why)) {
		log_warn("GPU monitor: cannot start the DCGM thread: %s", why);
		fall_back(s, "no DCGM thread");
		s->off = !must;
		return true;
	}
	s->worker_on = true;
	s->peaks = gpu_peaks_open(gpu_backend_peaks_file());
	/* start now, so the first tick already knows which backend publishes */
	if (run_job(s, JOB_START) && s->started) {
		log_info("GPU monitor: backend DCGM (%s, %d GPUs, %d fields%s; --gpu_backend=%s)",
			 s->address ? "the hostengine at --dcgm_standalone_address" : "embedded hostengine", s->ngpus,
			 s->nids, s->has_prof ? " with profiling fields" : "", gpu_backend_wanted());
		gpu_backend_set_dcgm(true);
		if (s->has_prof)
			gpu_prof_attach(prof_hook, s);
		return true;
	}
	if (must) {
		log_warn("GPU monitor: DCGM did not start; --gpu_backend=dcgm: no GPU metrics until it does (tried "
			 "again each tick)");
		return true;
	}
	fall_back(s, s->address ? "DCGM did not start or connect (see above)" : "DCGM did not start (see above)");
	/* its thread is not needed any more, unless it is inside a hung call */
	if (gpu_worker_stop(&s->w))
		s->worker_on = false;
	return true;
}

static bool dcgm_enabled(const void *cfg)
{
	(void)cfg;
	return gpu_backend_on() && strcmp(gpu_backend_wanted(), "nvml") != 0;
}

static bool dcgm_validate(const void *cfg, struct buf *err)
{
	unsigned short ids[NFIELDS];
	int n;
	return parse_fields(((const struct dcgm_config *)cfg)->fields, ids, &n, err);
}

/* ---------------- the collector table's row (collect/list.h) ---------------- */

static const struct arg_opt dcgm_opts[] = {
	MOD_OPT(struct dcgm_config, library, "dcgm_library", ARG_STRING, "PATH",
		"the DCGM library to dlopen (default libdcgm.so.4, then libdcgm.so.3; read at start; tests load a "
		"fake)",
		0, 0),
	MOD_OPT(struct dcgm_config, address, "dcgm_standalone_address", ARG_STRING, "HOST[:PORT]",
		"connect to the nv-hostengine there instead of starting an embedded one (upstream's flag)", 0, 0),
	MOD_OPT(struct dcgm_config, fields, "dcgm_fields", ARG_STRING, "ID,ID,...",
		"the DCGM field ids to watch (upstream's default set; see docs/metrics.md)", 0, 0),
	{0},
};

static const struct dcgm_config dcgm_defaults = {"", "", DCGM_DEFAULT_FIELDS};

const struct collector collector_dcgm = {
	.name = "dcgm",
	/* its keys are the NVML collector's: catalogued there */
	.catalog = NULL,
	.ncatalog = 0,
	.config = {dcgm_opts, sizeof(struct dcgm_config), &dcgm_defaults},
	.validate = dcgm_validate,
	.enabled = dcgm_enabled,
	.rides_on = "nvml",
	.apply = dcgm_apply,
	.collect = dcgm_run,
	.close = dcgm_close,
};
