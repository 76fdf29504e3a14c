/*
 * prom_dcgm.c - dcgm-exporter's names on the Prometheus page (see
 * prom_dcgm.h).  The table maps upstream's frame keys (which every GPU
 * backend emits) to DCGM field names, each in DCGM's unit; keys with no
 * DCGM field (integer pipe, the FLOPs/s estimate, the XID count) keep
 * their dynolog names, and the per-interval energy key gives way to the
 * driver's total (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is the total, in
 * mJ).
 * DCGM_FI_DEV_FB_FREE is total - used - reserved (reserved: 0 where the
 * v1 memory query counted it in used), as DCGM's free; and
 * DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL is the NVLink rate both ways, in MB/s
 * (docs/metrics.md says why, and the doubt).  Counters the frame carries as
 * increases (ECC) are the sink's running totals since the daemon started,
 * where DCGM counts since the driver loaded: rate() reads both alike.
 */
#include "daemon/publish/prom_dcgm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

static const struct dcgm_field {
	const char *key;  /* frame key base */
	const char *name; /* NULL: left out in this naming (another row gives it) */
	bool counter;
	double mul; /* frame value x mul = DCGM's unit */
	const char *help;
} fields[] = {
	{"gpu_frequency_mhz", "DCGM_FI_DEV_SM_CLOCK", false, 1, "SM clock frequency (in MHz)."},
	{"gpu_memory_frequency_mhz", "DCGM_FI_DEV_MEM_CLOCK", false, 1, "Memory clock frequency (in MHz)."},
	{"gpu_temperature_c", "DCGM_FI_DEV_GPU_TEMP", false, 1, "GPU temperature (in C)."},
	{"gpu_power_draw", "DCGM_FI_DEV_POWER_USAGE", false, 1, "Power draw (in W)."},
	{"@gpu_energy_total_mj", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", true, 1,
	 "Total energy consumption since the driver loaded (in mJ)."},
	{"gpu_energy_mj", NULL, true, 1, NULL},
	{"gpu_device_utilization", "DCGM_FI_DEV_GPU_UTIL", false, 1, "GPU utilization (in %)."},
	{"gpu_memory_utilization", "DCGM_FI_DEV_MEM_COPY_UTIL", false, 1, "Memory utilization (in %)."},
	{"gpu_memory_used_bytes", "DCGM_FI_DEV_FB_USED", false, 1.0 / 1048576, "Framebuffer memory used (in MiB)."},
	{"gpu_memory_total_bytes", "DCGM_FI_DEV_FB_TOTAL", false, 1.0 / 1048576, "Framebuffer memory total (in MiB)."},
	{"gpu_memory_reserved_bytes", "DCGM_FI_DEV_FB_RESERVED", false, 1.0 / 1048576,
	 "Framebuffer memory reserved (in MiB)."},
	{"gpu_memory_temperature_c", "DCGM_FI_DEV_MEMORY_TEMP", false, 1, "Memory temperature (in C)."},
	{"gpu_encoder_utilization", "DCGM_FI_DEV_ENC_UTIL", false, 1, "Encoder utilization (in %)."},
	{"gpu_decoder_utilization", "DCGM_FI_DEV_DEC_UTIL", false, 1, "Decoder utilization (in %)."},
	{"@gpu_pcie_replays_total", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", true, 1, "Total number of PCIe retries."},
	{"gpu_pcie_replays", NULL, true, 1, NULL},
	{"gpu_remapped_rows_uncorrectable", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", true, 1,
	 "Number of remapped rows for uncorrectable errors"},
	{"gpu_remapped_rows_correctable", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", true, 1,
	 "Number of remapped rows for correctable errors"},
	{"gpu_row_remap_failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", false, 1, "Whether remapping of rows has failed"},
	{"pcie_tx_bytes", "DCGM_FI_PROF_PCIE_TX_BYTES", false, 1, "The rate of data transmitted over the PCIe bus (in B/s)."},
	{"pcie_rx_bytes", "DCGM_FI_PROF_PCIE_RX_BYTES", false, 1, "The rate of data received over the PCIe bus (in B/s)."},
	{"gpu_ecc_corrected_errors", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", true, 1, "Total single-bit volatile ECC errors."},
	{"gpu_ecc_uncorrected_errors", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", true, 1, "Total double-bit volatile ECC errors."},
	{"gpu_throttle_reasons", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", false, 1, "Current clock throttle reasons (bit mask)."},
	{"xid_last", "DCGM_FI_DEV_XID_ERRORS", false, 1, "Value of the last XID error encountered (0: none)."},
	{"graphics_engine_active_ratio", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", false, 1,
	 "Ratio of time the graphics engine is active."},
	{"sm_active_ratio", "DCGM_FI_PROF_SM_ACTIVE", false, 1, "The ratio of cycles an SM has at least 1 warp assigned."},
	{"sm_occupancy", "DCGM_FI_PROF_SM_OCCUPANCY", false, 1, "The ratio of warps resident on an SM to its maximum."},
	{"tensorcore_active", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", false, 1,
	 "Ratio of cycles the tensor (HMMA) pipe is active."},
	{"fp64_active", "DCGM_FI_PROF_PIPE_FP64_ACTIVE", false, 1, "Ratio of cycles the fp64 pipes are active."},
	{"fp32_active", "DCGM_FI_PROF_PIPE_FP32_ACTIVE", false, 1, "Ratio of cycles the fp32 pipes are active."},
	{"fp16_active", "DCGM_FI_PROF_PIPE_FP16_ACTIVE", false, 1, "Ratio of cycles the fp16 pipes are active."},
	{"hbm_mem_bw_util", "DCGM_FI_PROF_DRAM_ACTIVE", false, 1,
	 "Ratio of cycles the device memory interface is active sending or receiving data."},
	{"nvlink_tx_bytes", "DCGM_FI_PROF_NVLINK_TX_BYTES", false, 1, "The rate of data transmitted over NVLink (in B/s)."},
	{"nvlink_rx_bytes", "DCGM_FI_PROF_NVLINK_RX_BYTES", false, 1, "The rate of data received over NVLink (in B/s)."},
};
#define NFIELDS (sizeof fields / sizeof fields[0])
/* derived families, rendered after the table's */
#define FB_FREE NFIELDS        /* DCGM_FI_DEV_FB_FREE: total - used - reserved */
#define NVL_TOTAL (NFIELDS + 1) /* DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL: TX + RX */

static int field_of(const char *key)
{
	const char *dot = strchr(key, '.');
	if (!dot || !dot[1])
		return -1;
	size_t n = (size_t)(dot - key);
	for (size_t i = 0; i < NFIELDS; i++)
		if (strlen(fields[i].key) == n && memcmp(fields[i].key, key, n) == 0)
			return (int)i;
	return -1;
}

bool prom_dcgm_covers(const char *key) { return field_of(key) >= 0; }

static const char *str_of(const struct frame *f, const char *base, const char *suffix)
{
	size_t bl = strlen(base);
	for (size_t i = 0; i < f->n; i++) {
		const char *k = frame_key(f, &f->vals[i]);
		if (f->vals[i].type == FV_STRING && strncmp(k, base, bl) == 0 && k[bl] == '.' &&
		    strcmp(k + bl + 1, suffix) == 0)
			return f->names.data + f->vals[i].sval;
	}
	return NULL;
}

static double num_of(const struct frame_value *v)
{
	return v->type == FV_INT ? (double)v->v.i : v->type == FV_UINT ? (double)v->v.u : v->v.f;
}

/* The number at base.suffix, or NULL */
static const struct frame_value *num_at(const struct frame *f, const char *base, const char *suffix)
{
	size_t bl = strlen(base);
	for (size_t i = 0; i < f->n; i++) {
		const char *k = frame_key(f, &f->vals[i]);
		if (f->vals[i].type != FV_STRING && strncmp(k, base, bl) == 0 && k[bl] == '.' &&
		    strcmp(k + bl + 1, suffix) == 0)
			return &f->vals[i];
	}
	return NULL;
}

static void put_label(struct buf *o, const char *name, const char *v, size_t n)
{
	buf_printf(o, ",%s=\"", name);
	for (size_t i = 0; i < n && v[i]; i++) {
		if (v[i] == '\\' || v[i] == '"')
			buf_putc(o, '\\');
		if (v[i] == '\n')
			buf_puts(o, "\\n");
		else
			buf_putc(o, v[i]);
	}
	buf_putc(o, '"');
}

/* dcgm-exporter's labels for device SUFFIX ("0", or "0/mig1") */
static void labels(const struct frame *f, const char *suffix, const char *host, struct buf *o)
{
	const char *slash = strchr(suffix, '/');
	size_t gl = slash ? (size_t)(slash - suffix) : strlen(suffix);
	buf_puts(o, "{gpu=\"");
	buf_append(o, suffix, gl);
	buf_putc(o, '"');
	const char *uuid = str_of(f, "gpu_uuid", suffix), *model = str_of(f, "gpu_name", suffix);
	if (uuid)
		put_label(o, "UUID", uuid, strlen(uuid));
	char dev[48];
	snprintf(dev, sizeof dev, "nvidia%.*s", (int)gl, suffix);
	put_label(o, "device", dev, strlen(dev));
	if (model)
		put_label(o, "modelName", model, strlen(model));
	if (slash && strncmp(slash, "/mig", 4) == 0) {
		/* a MIG instance: its profile is the name's tail ("... MIG 1g.10gb") */
		const char *p = model ? strstr(model, "MIG ") : NULL;
		if (p)
			put_label(o, "GPU_I_PROFILE", p + 4, strlen(p + 4));
		put_label(o, "GPU_I_ID", slash + 4, strlen(slash + 4));
	}
	put_label(o, "Hostname", host, strlen(host));
	buf_putc(o, '}');
}

struct row {
	size_t field, idx; /* family (fields[] order, FB_FREE last), frame order */
	double value;
	const char *suffix;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->field != y->field)
		return x->field < y->field ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void prom_dcgm_render(const struct frame *f, const char *hostname, struct buf *o)
{
	struct row *rows = xmalloc((2 * f->n + 1) * sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		const char *k = frame_key(f, v);
		int fi = v->type == FV_STRING ? -1 : field_of(k);
		if (fi < 0 || !fields[fi].name || !isfinite(num_of(v)))
			continue;
		const char *suffix = strchr(k, '.') + 1;
		rows[n++] = (struct row){(size_t)fi, i, num_of(v) * fields[fi].mul, suffix};
		if (strcmp(fields[fi].key, "gpu_memory_total_bytes") == 0) {
			/* DCGM's free leaves out the reserved memory too (the v2
			 * query's free); with the v1 query used includes it */
			const struct frame_value *u = num_at(f, "gpu_memory_used_bytes", suffix),
						 *r = num_at(f, "gpu_memory_reserved_bytes", suffix);
			double taken = (u ? num_of(u) : NAN) + (r ? num_of(r) : 0);
			if (taken <= num_of(v))
				rows[n++] = (struct row){FB_FREE, i, (num_of(v) - taken) / 1048576, suffix};
		} else if (strcmp(fields[fi].key, "nvlink_tx_bytes") == 0) {
			const struct frame_value *rx = num_at(f, "nvlink_rx_bytes", suffix);
			if (rx && isfinite(num_of(rx)))
				rows[n++] = (struct row){NVL_TOTAL, i, (num_of(v) + num_of(rx)) / 1e6, suffix};
		}
	}
	qsort(rows, n, sizeof *rows, row_cmp);
	for (size_t r = 0; r < n; r++) {
		const struct row *w = &rows[r];
		/* dcgm-exporter types its NVLink total a counter (though DCGM gives a rate) */
		const char *name = w->field == FB_FREE	   ? "DCGM_FI_DEV_FB_FREE"
				   : w->field == NVL_TOTAL ? "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"
							   : fields[w->field].name;
		const char *help = w->field == FB_FREE	   ? "Framebuffer memory free (in MiB)."
				   : w->field == NVL_TOTAL ? "Total number of NVLink bandwidth counters for all lanes"
							   : fields[w->field].help;
		bool counter = w->field == NVL_TOTAL || (w->field < NFIELDS && fields[w->field].counter);
		if (r == 0 || rows[r - 1].field != w->field)
			buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, counter ? "counter" : "gauge");
		buf_puts(o, name);
		labels(f, w->suffix, hostname, o);
		char t[40];
		/* integral values as integers, as DCGM's integer fields print ("0", not "0.0") */
		if (fabs(w->value) < 1e15 && w->value == (double)(long long)w->value)
			snprintf(t, sizeof t, "%lld", (long long)w->value);
		else
			json_fmt_f64(t, w->value);
		buf_printf(o, " %s\n", t);
	}
	free(rows);
}
