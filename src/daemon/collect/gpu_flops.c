/*
 * gpu_flops.c - the FLOPs/s estimate (see gpu_flops.h).
 *
 * FLOP/s = sum over pipes of activity x peak x (current SM clock / the
 * clock the peak is quoted at).  A pipe activity of 1 is the pipe issuing
 * at its full rate the whole interval (DCGM's definition of its
 * PIPE_*_ACTIVE fields, which GPM's pipe utilizations mirror), and the
 * table's peaks already count an FMA as 2 FLOPs, so no factor is applied
 * here.  NVIDIA says pipe activity cannot be converted to FLOPs exactly
 * (NVIDIA/DCGM issue 164): this is an estimate.  GPM splits the tensor
 * activity by instruction family: HMMA counts at the FP16/BF16 rate, DFMA
 * at the FP64 tensor rate, IMMA (integer) as no FLOPs.  HMMA does not say
 * which precision ran: TF32 runs at half the FP16 rate and FP8 at twice
 * it, so those are counted 2x high and 2x low; measured on an H200
 * (docs/metrics.md), FP16/BF16 GEMMs and a BF16 training loop came within
 * -16 %..+11 %, FP64 and FP32 GEMMs within 3 %.  Without the split (DCGM's
 * default fields) all tensor activity counts at the FP16 rate, at the FP64
 * tensor rate where the FP64 pipe is busier than FP16 and FP32 together.
 * An earlier rule took TF32 when the FP16 pipe was idle and FP32 busy: on
 * the H200 a BF16 training loop looked exactly so (PyTorch computes BF16
 * element-wise work in FP32), which halved its FLOPs.  Cost: arithmetic only.
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
	if (in->split && (!ratio_ok(in->hmma) || !ratio_ok(in->dfma) || !ratio_ok(in->imma)))
		return false;
	/* the tensor terms: GPM's split, or all of it at one rate */
	enum gpu_pipe t = GPU_PIPE_TENSOR_FP16;
	double t_act = in->tensor, dmma = 0;
	if (in->split) {
		t_act = in->hmma;
		dmma = in->dfma;
	} else if (in->fp64 > 0 && in->fp64 > in->fp16 + in->fp32 && m->pipe[GPU_PIPE_TENSOR_FP64].have) {
		t = GPU_PIPE_TENSOR_FP64;
	}
	/* the tensor terms first (a DMMA term only where DFMA ran: V100 has no
	 * FP64 tensor row, and needs none), then the plain pipes */
	struct term {
		enum gpu_pipe p;
		double act;
	} use[5];
	int n = 0;
	use[n++] = (struct term){t, t_act};
	if (dmma > 0)
		use[n++] = (struct term){GPU_PIPE_TENSOR_FP64, dmma};
	const int ntensor = n;
	use[n++] = (struct term){GPU_PIPE_FP16, in->fp16};
	use[n++] = (struct term){GPU_PIPE_FP32, in->fp32};
	use[n++] = (struct term){GPU_PIPE_FP64, in->fp64};
	double sum = 0, best = -1, ref = 0, tbest = -1;
	out->tensor_as = t;
	for (int i = 0; i < n; i++) {
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
		if (i < ntensor && f > tbest) {
			tbest = f;
			out->tensor_as = use[i].p;
		}
	}
	out->flops = sum;
	out->peak_ratio = ref > 0 ? sum / ref : 0;
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
	memset(&in, 0, sizeof in);
	in.split = find(f, from, "tensor_hmma_active", suffix, &in.hmma) &&
		   find(f, from, "tensor_dfma_active", suffix, &in.dfma);
	if (in.split) /* IMMA is only range-checked (integer work is not FLOPs); absent, it stays 0 */
		(void)find(f, from, "tensor_imma_active", suffix, &in.imma);
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
