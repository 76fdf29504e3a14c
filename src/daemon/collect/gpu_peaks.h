/*
 * gpu_peaks.h - the table of GPU peak throughputs (data/gpu-peaks.tsv):
 * per GPU model and pipe, the dense peak in FLOP/s and the SM clock it is
 * quoted at, found by the NVML model name.  Read once at start by the GPU
 * backends (NVML, DCGM) for the FLOPs/s estimate (gpu_flops.h).
 * Cost: one small allocation per model (a few hundred bytes each).
 */
#ifndef DYNO_COLLECT_GPU_PEAKS_H
#define DYNO_COLLECT_GPU_PEAKS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

enum gpu_pipe {
	GPU_PIPE_TENSOR_FP16, /* FP16/BF16 HMMA */
	GPU_PIPE_TENSOR_TF32,
	GPU_PIPE_TENSOR_FP8,
	GPU_PIPE_TENSOR_FP64, /* DMMA */
	GPU_PIPE_FP16,        /* the non-tensor pipes */
	GPU_PIPE_FP32,
	GPU_PIPE_FP64,
	GPU_NPIPES,
};

struct gpu_peak {
	bool have;    /* the model has this pipe */
	double flops; /* dense peak, FLOP/s (an FMA is 2 FLOPs) */
	double mhz;   /* the SM clock it is quoted at */
};

struct gpu_model {
	char *match; /* the row's pattern text, as written */
	unsigned sms;
	unsigned line; /* first row of the model (messages) */
	struct gpu_peak pipe[GPU_NPIPES];
};

struct gpu_peaks {
	struct gpu_model *m;
	size_t n;
};

/* The pipe's name in the file ("tensor_fp16"). */
const char *gpu_pipe_name(enum gpu_pipe p);
/* Parse a table; NULL with "NAME:LINE: what" in err on the first bad line
 * (a table is used whole or not at all). */
struct gpu_peaks *gpu_peaks_parse(const char *text, size_t len, const char *name, struct buf *err);
/* Read and parse PATH (at most 1 MiB). */
struct gpu_peaks *gpu_peaks_load(const char *path, struct buf *err);
/* The model whose pattern matches the NVML name (docs/metrics.md: a
 * case-insensitive occurrence starting at a word boundary, '$' pins the end,
 * the longest pattern wins; MIG instances never match); NULL: unknown. */
const struct gpu_model *gpu_peaks_match(const struct gpu_peaks *t, const char *name);
void gpu_peaks_free(struct gpu_peaks *t);

/* Where the daemon looks when --gpu_peaks_file is not given: the install
 * path, then data/gpu-peaks.tsv up to three directories above the one that
 * holds the daemon (a source tree: build/, build/san/; tests, `make run`). */
#define GPU_PEAKS_INSTALL_PATH "/usr/local/share/dynolite/gpu-peaks.tsv"
/* The table for the daemon: PATH when given, else the places above; logs
 * what it read, or why there is none (then FLOPs/s estimates are absent). */
struct gpu_peaks *gpu_peaks_open(const char *path);

#endif
