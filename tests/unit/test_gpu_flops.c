/*
 * test_gpu_flops.c - the GPU peak table (data/gpu-peaks.tsv: its parser,
 * its bounds checks, the model-name rule) and the FLOPs/s arithmetic
 * (gpu_flops.c), against values computed by hand.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/collect/gpu_flops.h"
#include "daemon/collect/gpu_peaks.h"
#include "test.h"

static struct gpu_peaks *shipped(void)
{
	struct buf err = BUF_INIT;
	char path[4096];
	snprintf(path, sizeof path, "%s/../../data/gpu-peaks.tsv", test_data_dir());
	struct gpu_peaks *t = gpu_peaks_load("data/gpu-peaks.tsv", &err);
	if (!t) {
		buf_reset(&err);
		t = gpu_peaks_load(path, &err);
	}
	if (!t)
		test_fail(__FILE__, __LINE__, "the shipped table: %s", err.data);
	buf_free(&err);
	return t;
}

TEST(gpu_peaks_shipped_table_matches_nvml_names)
{
	struct gpu_peaks *t = shipped();
	REQUIRE(t);
	static const struct {
		const char *name;
		unsigned sms; /* 0: unknown */
		double fp32_tflops;
	} cases[] = {
		{"Tesla V100-SXM2-16GB", 80, 15.7},
		{"Tesla V100-SXM2-32GB", 80, 15.7},
		{"Tesla V100-PCIE-32GB", 80, 14},
		{"NVIDIA A100-SXM4-40GB", 108, 19.5},
		{"NVIDIA A100-SXM4-80GB", 108, 19.5},
		{"NVIDIA A100-PCIE-40GB", 108, 19.5},
		{"NVIDIA A100 80GB PCIe", 108, 19.5},
		{"NVIDIA H100 80GB HBM3", 132, 66.9},
		{"nvidia h100 80gb hbm3", 132, 66.9}, /* case-insensitive */
		{"NVIDIA H100 PCIe", 114, 51.2},
		{"NVIDIA H200", 132, 66.9},
		{"NVIDIA B200", 148, 75},
		{"NVIDIA L40S", 142, 91.6},
		{"NVIDIA GB200", 0, 0},                      /* "B200" not at a word boundary */
		{"NVIDIA H200 NVL", 0, 0},                   /* "H200$" pins the end */
		{"NVIDIA H100 80GB HBM3 MIG 1g.10gb", 0, 0}, /* MIG: a share of the SMs */
		{"NVIDIA GeForce RTX 4090", 0, 0},
		{"", 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct gpu_model *m = gpu_peaks_match(t, cases[i].name);
		if (!cases[i].sms) {
			if (m)
				test_fail(__FILE__, __LINE__, "'%s' matched '%s'", cases[i].name, m->match);
			continue;
		}
		if (!m) {
			test_fail(__FILE__, __LINE__, "'%s' not matched", cases[i].name);
			continue;
		}
		CHECK_INT(m->sms, cases[i].sms);
		CHECK_NEAR(m->pipe[GPU_PIPE_FP32].flops, cases[i].fp32_tflops * 1e12, 1e-12);
	}
	/* the H100 SXM's tensor peaks are quoted at 1830 MHz, its FP32 at 1980 */
	const struct gpu_model *h = gpu_peaks_match(t, "NVIDIA H100 80GB HBM3");
	REQUIRE(h);
	CHECK_NEAR(h->pipe[GPU_PIPE_TENSOR_FP16].mhz, 1830, 1e-12);
	CHECK_NEAR(h->pipe[GPU_PIPE_FP32].mhz, 1980, 1e-12);
	CHECK(!gpu_peaks_match(t, "Tesla V100-SXM2-16GB")->pipe[GPU_PIPE_TENSOR_TF32].have);
	gpu_peaks_free(t);
}

TEST(gpu_peaks_bad_lines_named_with_file_and_line)
{
	static const char ok[] = "X\t1\ttensor_fp16\t1\t1000\ts\nX\t1\tfp16\t1\t1000\ts\n"
				 "X\t1\tfp32\t1\t1000\ts\nX\t1\tfp64\t1\t1000\ts\n";
	struct buf err = BUF_INIT;
	struct gpu_peaks *t = gpu_peaks_parse(ok, sizeof ok - 1, "t.tsv", &err);
	REQUIRE(t);
	CHECK_INT(t->n, 1);
	gpu_peaks_free(t);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"# c\nX\t1\ttensor_fp16\t1\n", "t.tsv:2: expected 6 tab-separated fields"},
		{"X\t1\ttensor_fp16\t1\t1000\ts\textra\n", "t.tsv:1: more than 6"},
		{"X\tmany\tfp32\t1\t1000\ts\n", "t.tsv:1: SM count 'many'"},
		{"X\t1.5\tfp32\t1\t1000\ts\n", "t.tsv:1: SM count '1.5'"},
		{"X\t1\tfp128\t1\t1000\ts\n", "t.tsv:1: unknown pipe 'fp128'"},
		{"X\t1\tfp32\t-3\t1000\ts\n", "t.tsv:1: peak '-3'"},
		{"X\t1\tfp32\tnan\t1000\ts\n", "t.tsv:1: peak 'nan'"},
		{"X\t1\tfp32\t1e400\t1000\ts\n", "t.tsv:1: peak '1e400'"},
		{"X\t1\tfp32\t1\t99999\ts\n", "t.tsv:1: clock '99999'"},
		{"X\t1\tfp32\t1\t1000x\ts\n", "t.tsv:1: clock '1000x'"},
		{"A$B\t1\tfp32\t1\t1000\ts\n", "t.tsv:1: bad model pattern"},
		{"A||B\t1\tfp32\t1\t1000\ts\n", "t.tsv:1: bad model pattern"},
		{"X\t1\tfp32\t1\t1000\ts\nX\t1\tfp32\t2\t1000\ts\n", "t.tsv:2: pipe 'fp32' given twice"},
		{"X\t1\tfp32\t1\t1000\ts\nX\t2\tfp64\t2\t1000\ts\n", "t.tsv:2: SM count differs"},
		{"\n# only comments\n", "t.tsv:2: no model rows"},
		{"X\t1\tfp32\t1\t1000\ts\n", "t.tsv:1: model 'X' lacks a tensor_fp16 row"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_reset(&err);
		t = gpu_peaks_parse(bad[i].text, strlen(bad[i].text), "t.tsv", &err);
		if (t || !strstr(err.data, bad[i].want))
			test_fail(__FILE__, __LINE__, "case %zu: want '%s', got '%s'", i, bad[i].want,
				  t ? "(parsed)" : err.data);
		gpu_peaks_free(t);
	}
	/* a NUL byte, and a file that is not there */
	static const char nul[] = "X\t1\tfp32\t1\0\t1000\ts\n";
	buf_reset(&err);
	CHECK(!gpu_peaks_parse(nul, sizeof nul - 1, "t.tsv", &err));
	CHECK(strstr(err.data, "t.tsv:1: a NUL byte") != NULL);
	buf_reset(&err);
	CHECK(!gpu_peaks_load("/nonexistent/gpu-peaks.tsv", &err));
	CHECK(strstr(err.data, "/nonexistent/gpu-peaks.tsv: No such file") != NULL);
	buf_free(&err);
}

/* A model with round numbers: tensor FP16 1000 TF and TF32 500 TF quoted at
 * 2000 MHz, everything else at 1000 MHz. */
static struct gpu_model model(bool tf32)
{
	struct gpu_model m;
	memset(&m, 0, sizeof m);
	m.sms = 100;
	m.pipe[GPU_PIPE_TENSOR_FP16] = (struct gpu_peak){true, 1000e12, 2000};
	m.pipe[GPU_PIPE_TENSOR_TF32] = (struct gpu_peak){tf32, 500e12, 2000};
	m.pipe[GPU_PIPE_TENSOR_FP64] = (struct gpu_peak){true, 60e12, 1000};
	m.pipe[GPU_PIPE_FP16] = (struct gpu_peak){true, 100e12, 1000};
	m.pipe[GPU_PIPE_FP32] = (struct gpu_peak){true, 50e12, 1000};
	m.pipe[GPU_PIPE_FP64] = (struct gpu_peak){true, 25e12, 1000};
	return m;
}

TEST(gpu_flops_arithmetic_by_hand)
{
	struct gpu_model m = model(true), v100 = model(false);
	struct gpu_flops_out o;
	/* FP16 tensor (FP16 share .2/.3 >= 0.1): .5*1000*(1000/2000) + .2*100 + .1*50 = 275 TF;
	 * the tensor pipe contributes most: 275 / 1000 */
	struct gpu_flops_in a = {.tensor = .5, .fp16 = .2, .fp32 = .1, .fp64 = 0, .sm_mhz = 1000};
	REQUIRE(gpu_flops_estimate(&m, &a, &o));
	CHECK_INT(o.tensor_as, GPU_PIPE_TENSOR_FP16);
	CHECK_NEAR(o.flops, 275e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 0.275, 1e-12);
	/* the clock scales every pipe: at 1500 MHz, 275 * 1.5 */
	a.sm_mhz = 1500;
	REQUIRE(gpu_flops_estimate(&m, &a, &o));
	CHECK_NEAR(o.flops, 412.5e12, 1e-12);
	/* no TF32 guess (an H200 BF16 training loop had an idle FP16 pipe and
	 * a busy FP32 one, which an earlier rule took for TF32): the FP16 rate,
	 * at 2000 MHz .4*1000*1 + .01*100*2 + .3*50*2 = 400 + 2 + 30 = 432 TF */
	struct gpu_flops_in b = {.tensor = .4, .fp16 = .01, .fp32 = .3, .fp64 = 0, .sm_mhz = 2000};
	REQUIRE(gpu_flops_estimate(&m, &b, &o));
	CHECK_INT(o.tensor_as, GPU_PIPE_TENSOR_FP16);
	CHECK_NEAR(o.flops, 432e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 0.432, 1e-12);
	REQUIRE(gpu_flops_estimate(&v100, &b, &o)); /* a model without TF32 alike */
	CHECK_NEAR(o.flops, 432e12, 1e-12);
	/* GPM's split: HMMA at the FP16 rate, DFMA at the FP64 tensor rate, IMMA
	 * none, the any-tensor figure unused; at 1000 MHz
	 * .5*1000*.5 + .2*60 + .1*50 = 250 + 12 + 5 = 267 TF; 267 / 1000 */
	struct gpu_flops_in sp = {.tensor = .9, .fp32 = .1, .sm_mhz = 1000, .split = true, .hmma = .5, .dfma = .2,
				  .imma = .3};
	REQUIRE(gpu_flops_estimate(&m, &sp, &o));
	CHECK_INT(o.tensor_as, GPU_PIPE_TENSOR_FP16);
	CHECK_NEAR(o.flops, 267e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 0.267, 1e-12);
	/* a DGEMM as the H200 showed it: DFMA busy, the FP64 pipe nearly idle
	 * (.0005 < FP32 .003, so without the split it counted at the FP16 rate,
	 * 8x high): .9*60 + .003*50 + .0005*25 = 54.1625 TF; / 60 */
	struct gpu_flops_in dg = {.tensor = .9, .fp32 = .003, .fp64 = .0005, .sm_mhz = 1000, .split = true, .dfma = .9};
	REQUIRE(gpu_flops_estimate(&m, &dg, &o));
	CHECK_INT(o.tensor_as, GPU_PIPE_TENSOR_FP64);
	CHECK_NEAR(o.flops, 54.1625e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 54.1625 / 60, 1e-12);
	dg.split = false;
	REQUIRE(gpu_flops_estimate(&m, &dg, &o));
	CHECK_NEAR(o.flops, 450.1625e12, 1e-12);
	/* integer tensor work only (an INT8 GEMM): no FLOPs */
	struct gpu_flops_in i8 = {.tensor = .8, .sm_mhz = 1000, .split = true, .imma = .8};
	REQUIRE(gpu_flops_estimate(&m, &i8, &o));
	CHECK(o.flops == 0);
	/* a split value out of range: absent */
	struct gpu_flops_in bs = sp;
	bs.imma = 1.5;
	CHECK(!gpu_flops_estimate(&m, &bs, &o));
	/* FP64 tensor (FP64 .2 > FP16 + FP32 .1), 1000 MHz: .5*60 + .1*50 + .2*25 = 40 TF; 40 / 60 */
	struct gpu_flops_in c = {.tensor = .5, .fp16 = 0, .fp32 = .1, .fp64 = .2, .sm_mhz = 1000};
	REQUIRE(gpu_flops_estimate(&m, &c, &o));
	CHECK_INT(o.tensor_as, GPU_PIPE_TENSOR_FP64);
	CHECK_NEAR(o.flops, 40e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 40.0 / 60, 1e-12);
	/* a pure FP32 workload: the FP32 pipe is the reference, .8*50 = 40 TF, 0.8 */
	struct gpu_flops_in d = {.tensor = 0, .fp16 = 0, .fp32 = .8, .fp64 = 0, .sm_mhz = 1000};
	REQUIRE(gpu_flops_estimate(&m, &d, &o));
	CHECK_NEAR(o.flops, 40e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 0.8, 1e-12);
	/* an idle GPU measured idle is 0, not absent */
	struct gpu_flops_in idle = {.sm_mhz = 1000};
	REQUIRE(gpu_flops_estimate(&m, &idle, &o));
	CHECK(o.flops == 0 && o.peak_ratio == 0);
	/* absent: unknown model, no clock, activity out of range */
	CHECK(!gpu_flops_estimate(NULL, &a, &o));
	struct gpu_flops_in bad = a;
	bad.sm_mhz = 0;
	CHECK(!gpu_flops_estimate(&m, &bad, &o));
	bad = a;
	bad.tensor = 1.5;
	CHECK(!gpu_flops_estimate(&m, &bad, &o));
	bad = a;
	bad.fp32 = -0.1;
	CHECK(!gpu_flops_estimate(&m, &bad, &o));
}

TEST(gpu_flops_shipped_h100_at_its_quoted_clock)
{
	struct gpu_peaks *t = shipped();
	REQUIRE(t);
	const struct gpu_model *h = gpu_peaks_match(t, "NVIDIA H100 80GB HBM3");
	REQUIRE(h);
	struct gpu_flops_out o;
	/* a BF16 GEMM at full tensor activity at 1830 MHz is the datasheet's 989.4 TF */
	struct gpu_flops_in in = {.tensor = 1, .sm_mhz = 1830};
	REQUIRE(gpu_flops_estimate(h, &in, &o));
	CHECK_NEAR(o.flops, 989.4e12, 1e-12);
	CHECK_NEAR(o.peak_ratio, 1, 1e-12);
	gpu_peaks_free(t);
}

TEST(gpu_flops_from_frame_keys)
{
	struct gpu_model m = model(true);
	struct frame f;
	frame_init(&f);
	frame_float(&f, "fp16_active.0", 0.5); /* another device's: before from */
	size_t from = f.n;
	frame_float(&f, "tensorcore_active.1", .5);
	frame_float(&f, "fp16_active.1", .2);
	frame_float(&f, "fp32_active.1", .1);
	frame_float(&f, "fp64_active.10", .9); /* not device 1's */
	frame_uint(&f, "gpu_frequency_mhz.1", 1000);
	CHECK(!gpu_flops_put(&f, from, "1", &m)); /* no fp64_active.1: absent */
	CHECK_INT(f.n, 6);
	frame_float(&f, "fp64_active.1", 0);
	CHECK(!gpu_flops_put(&f, from, "1", NULL)); /* unknown model: absent */
	REQUIRE(gpu_flops_put(&f, from, "1", &m));
	REQUIRE(f.n == 9);
	CHECK_STR(frame_key(&f, &f.vals[7]), "gpu_flops.1");
	CHECK_NEAR(f.vals[7].v.f, 275e12, 1e-12);
	CHECK_STR(frame_key(&f, &f.vals[8]), "gpu_flops_peak_pct.1");
	CHECK_NEAR(f.vals[8].v.f, 27.5, 1e-12);
	frame_free(&f);
	/* GPM's split keys, when both HMMA and DFMA are there, replace the
	 * any-tensor figure: .3*1000*.5 + .2*100 + .1*50 = 175 TF */
	frame_init(&f);
	frame_float(&f, "tensorcore_active.1", .5);
	frame_float(&f, "tensor_hmma_active.1", .3);
	frame_float(&f, "fp16_active.1", .2);
	frame_float(&f, "fp32_active.1", .1);
	frame_float(&f, "fp64_active.1", 0);
	frame_uint(&f, "gpu_frequency_mhz.1", 1000);
	size_t n0 = f.n;
	REQUIRE(gpu_flops_put(&f, 0, "1", &m)); /* HMMA alone: no split */
	CHECK_NEAR(f.vals[n0].v.f, 275e12, 1e-12);
	f.n = n0;
	frame_float(&f, "tensor_dfma_active.1", 0);
	n0 = f.n;
	REQUIRE(gpu_flops_put(&f, 0, "1", &m));
	CHECK_STR(frame_key(&f, &f.vals[n0]), "gpu_flops.1");
	CHECK_NEAR(f.vals[n0].v.f, 175e12, 1e-12);
	frame_free(&f);
}

/* The shipped table with random damage (bytes changed, cut, or the
 * separators the format cares about inserted): every result is a whole
 * table or a "name:line: " message, never a crash (the sanitizer build
 * runs this too; fuzz/fuzz_gpu_peaks.c goes further). */
TEST(gpu_peaks_survives_damage)
{
	struct buf src = BUF_INIT;
	char path[4096];
	snprintf(path, sizeof path, "%s/../../data/gpu-peaks.tsv", test_data_dir());
	FILE *fp = fopen("data/gpu-peaks.tsv", "r");
	if (!fp)
		fp = fopen(path, "r");
	REQUIRE(fp);
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
		buf_append(&src, tmp, n);
	fclose(fp);
	static const char alphabet[] = "\t\n|$#.-e0123456789 xX\r";
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int parsed = 0, refused = 0;
	for (int iter = 0; iter < 3000; iter++) {
		struct buf b = BUF_INIT;
		buf_append(&b, src.data, src.len);
		int edits = 1 + (int)(rng % 6);
		for (int e = 0; e < edits && b.len; e++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			size_t at = (size_t)(rng >> 33) % b.len;
			switch ((rng >> 20) % 3) {
			case 0: b.data[at] = alphabet[(rng >> 8) % (sizeof alphabet - 1)]; break;
			case 1: b.data[at] = (char)(rng >> 40); break;
			default: buf_truncate(&b, at); break;
			}
		}
		struct buf err = BUF_INIT;
		struct gpu_peaks *t = gpu_peaks_parse(b.data, b.len, "m.tsv", &err);
		if (t) {
			parsed++;
			gpu_peaks_match(t, "NVIDIA H100 80GB HBM3");
			gpu_peaks_match(t, "NVIDIA B200");
		} else {
			refused++;
			if (strncmp(err.data, "m.tsv:", 6) != 0)
				test_fail(__FILE__, __LINE__, "iteration %d: message without file:line: %s", iter, err.data);
		}
		gpu_peaks_free(t);
		buf_free(&err);
		buf_free(&b);
	}
	CHECK(parsed > 0 && refused > 0); /* both outcomes were exercised */
	buf_free(&src);
}

/* The published resolutions (gpu_flops.h): the doubles of short decimals,
 * rounded as printf rounds */
TEST(gpu_flops_published_resolution)
{
	CHECK(gpu_round_ratio(0.25123456789) == 0.2512);
	CHECK(gpu_round_ratio(0.5) == 0.5);
	CHECK(gpu_round_ratio(0.99996) == 1.0);
	CHECK(gpu_round_ratio(0.0) == 0.0);
	CHECK(gpu_round_sig4(549186680327868.88) == 549200000000000.0);
	CHECK(gpu_round_sig4(68637500000000.0) == 68640000000000.0);
	CHECK(gpu_round_sig4(0.0) == 0.0);
	CHECK(gpu_round_sig4(1e-3) == 1e-3);
	CHECK(isnan(gpu_round_sig4(NAN)));
}
