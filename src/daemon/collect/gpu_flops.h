/*
 * gpu_flops.h - the FLOPs/s estimate of a GPU from its pipe activities,
 * its SM clock and its model's peaks (gpu_peaks.h), shared by the GPU
 * backends (NVML/GPM, DCGM): both put upstream's keys (tensorcore_active,
 * fp16_active, fp32_active, fp64_active, gpu_frequency_mhz) in the frame,
 * GPM also the tensor split (tensor_hmma_active, tensor_dfma_active,
 * tensor_imma_active), and gpu_flops_put() reads them back and adds the
 * estimate (at the
 * resolution gpu_round_sig4 gives it).  The rules
 * (and what they cannot see) are in docs/metrics.md "FLOPs/s estimate".
 * Cost: a few comparisons and a scan of the device's frame values per tick.
 */
#ifndef DYNO_COLLECT_GPU_FLOPS_H
#define DYNO_COLLECT_GPU_FLOPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "daemon/collect/gpu_peaks.h"
#include "daemon/frame.h"
#include "daemon/metric.h"

struct gpu_flops_in {
	double tensor, fp16, fp32, fp64; /* pipe activity, ratios 0..1 */
	double sm_mhz;                   /* current SM clock */
	/* GPM's split of the tensor activity by instruction family (HMMA:
	 * FP16/BF16/TF32/FP8, DFMA: FP64, IMMA: integer), where the backend
	 * has it (split); then tensor is not used */
	bool split;
	double hmma, dfma, imma;
};

struct gpu_flops_out {
	double flops;          /* FLOP/s */
	double peak_ratio;     /* flops / the quoted peak of the pipe that contributes most */
	enum gpu_pipe tensor_as; /* the tensor term that contributes most FLOP/s (FP16 or FP64 rate) */
};

/* The estimate; false (absent) without a model, with a clock or an
 * activity out of range. */
bool gpu_flops_estimate(const struct gpu_model *m, const struct gpu_flops_in *in, struct gpu_flops_out *out);

/* Reads the device's keys (base.SUFFIX) from f's values at index from and
 * later, and when every input is there adds gpu_flops.SUFFIX (FLOP/s) and
 * gpu_flops_peak_pct.SUFFIX (%).  Returns whether it did. */
bool gpu_flops_put(struct frame *f, size_t from, const char *suffix, const struct gpu_model *m);

/* The resolution both GPU backends publish derived and profiling values
 * at (docs/metrics.md "Resolution"), as the double of a short decimal: the
 * history (tsz.h) then stores their significant digits, not 50-60 bits of
 * a mantissa of noise.  Activity ratios (GPM's percentages / 100, DCGM's
 * profiling ratios) to 1e-4, 0.01 % of the interval; FLOP/s (and so the
 * FLOPs per job) to 4 significant digits, % of peak to 0.01: an estimate
 * NVIDIA says cannot be exact (issue 164) has no fifth digit.  Round half
 * to even on the binary value (printf's rule). */
double gpu_round_ratio(double r);
double gpu_round_sig4(double v);
/* The collectors' self-timings (nvml_call_ns.*, *_tick_cpu_ns) in ns to the
 * microsecond: the nanoseconds are noise that would cost the history bits
 * every tick.  A negative span (a clock that stepped back) is 0. */
static inline uint64_t gpu_round_us(int64_t ns) { return ns <= 0 ? 0 : (uint64_t)((ns + 500) / 1000) * 1000; }

/* The catalog rows of the two keys, for a GPU backend's catalog table. */
#define GPU_FLOPS_CATALOG_ROWS                                                                                \
	{"gpu_flops", true, MK_GAUGE, 1, "dynolog_gpu_flops_per_second", "gpu", NULL, NULL,                  \
	 "Estimated floating-point operations per second: pipe activity x the model's peak at the current "   \
	 "SM clock (docs/metrics.md).",                                                                      \
	 "dynolog.gpu.flops", "{flop}/s", "hw.id", NULL},                                                    \
	{"gpu_flops_peak_pct", true, MK_GAUGE, 0.01, "dynolog_gpu_flops_peak_ratio", "gpu", NULL, NULL,       \
	 "Estimated FLOP/s over the quoted peak of the busiest pipe's precision.",                           \
	 "dynolog.gpu.flops.utilization", "1", "hw.id", NULL}

#endif
