/*
 * gpu_flops.c - the FLOPs/s estimate (see gpu_flops.h).
 *
 * FLOP/s = sum over pipes of activity x peak x (current SM clock / the
 * clock the peak is quoted at).  A pipe activity of 1 is the pipe issuing
 * at its full rate the whole interval (DCGM's definition of its
 * PIPE_*_ACTIVE fields, which GPM's pipe utilizations mirror), and the
 * table's peaks already count an FMA as 2 FLOPs, so no factor is applied
 * here.  NVIDIA says pipe activity cannot be converted to FLOPs exactly
 * (NVIDIA/DCGM issue 164): this is an estimate.  The tensor pipe's
 * activity does not say which precision ran; the FP16/FP32 activity ratio
 * picks one (GPU_FLOPS_TF32_FP16_SHARE; FP64 tensor when the FP64 pipe is
 * busier than FP16 and FP32 together).  FP8 is never chosen: nothing in
 * the activities tells it from FP16, so an FP8 workload is counted at the
 * FP16 rate (half its FLOPs).  Cost: arithmetic only.
 */
#include "daemon/collect/gpu_flops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* printf's decimal, read back: exactly the double a reader of the text
 * gets (and the history's decimal coding recognizes) */
static double round_fmt(const char *fmt, double v)
{
	if (!isfinite(v))
		return v;
	char t[64];
	snprintf(t, sizeof t, fmt, v);
	return strtod(t, NULL);
}

double gpu_round_ratio(double r) { return round_fmt("%.4f", r); }
double gpu_round_sig4(double v) { return round_fmt("%.3e", v); }

static bool ratio_ok(double v) { return isfinite(v) && v >= 0 && v <= 1.0001; }

bool gpu_flops_estimate(const struct gpu_model *m, const struct gpu_flops_in *in, struct gpu_flops_out *out)
{
	if (!m || !isfinite(in->sm_mhz) || in->sm_mhz <= 0 || in->sm_mhz > 100000 || !ratio_ok(in->tensor) ||
	    !ratio_ok(in->fp16) || !ratio_ok(in->fp32) || !ratio_ok(in->fp64))
		return false;
	enum gpu_pipe t = GPU_PIPE_TENSOR_FP16;
	double mixed = in->fp16 + in->fp32;
	if (in->fp64 > 0 && in->fp64 > mixed && m->pipe[GPU_PIPE_TENSOR_FP64].have)
		t = GPU_PIPE_TENSOR_FP64;
	else if (in->fp32 > 0 && in->fp16 < GPU_FLOPS_TF32_FP16_SHARE * mixed && m->pipe[GPU_PIPE_TENSOR_TF32].have)
		t = GPU_PIPE_TENSOR_TF32;
	const struct {
		enum gpu_pipe p;
		double act;
	} use[4] = {{t, in->tensor}, {GPU_PIPE_FP16, in->fp16}, {GPU_PIPE_FP32, in->fp32}, {GPU_PIPE_FP64, in->fp64}};
	double sum = 0, best = -1, ref = 0;
	for (int i = 0; i < 4; i++) {
		const struct gpu_peak *pk = &m->pipe[use[i].p];
		if (!pk->have)
			return false; /* the table guarantees these; a caller's hand-made model may not */
		double f = use[i].act * pk->flops * (in->sm_mhz / pk->mhz);
		sum += f;
		/* the reference peak: the pipe that contributes most (the tensor
		 * pipe when nothing runs) */
		if (f > best) {
			best = f;
			ref = pk->flops;
		}
	}
	out->flops = sum;
	out->peak_ratio = ref > 0 ? sum / ref : 0;
	out->tensor_as = t;
	return true;
}

/* the value of BASE.SUFFIX among f's values from index from on */
static bool find(const struct frame *f, size_t from, const char *base, const char *suffix, double *out)
{
	size_t bl = strlen(base);
	for (size_t i = from; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		const char *k = frame_key(f, v);
		if (v->type == FV_STRING || strncmp(k, base, bl) != 0 || k[bl] != '.' || strcmp(k + bl + 1, suffix) != 0)
			continue;
		*out = v->type == FV_INT ? (double)v->v.i : v->type == FV_UINT ? (double)v->v.u : v->v.f;
		return true;
	}
	return false;
}

bool gpu_flops_put(struct frame *f, size_t from, const char *suffix, const struct gpu_model *m)
{
	struct gpu_flops_in in;
	struct gpu_flops_out o;
	if (!m || !find(f, from, "tensorcore_active", suffix, &in.tensor) || !find(f, from, "fp16_active", suffix, &in.fp16) ||
	    !find(f, from, "fp32_active", suffix, &in.fp32) || !find(f, from, "fp64_active", suffix, &in.fp64) ||
	    !find(f, from, "gpu_frequency_mhz", suffix, &in.sm_mhz) || !gpu_flops_estimate(m, &in, &o))
		return false;
	char k[128];
	snprintf(k, sizeof k, "gpu_flops.%s", suffix);
	frame_float(f, k, gpu_round_sig4(o.flops));
	snprintf(k, sizeof k, "gpu_flops_peak_pct.%s", suffix);
	frame_float(f, k, round_fmt("%.2f", 100 * o.peak_ratio));
	return true;
}
