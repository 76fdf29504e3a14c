/*
 * fuzz_gpu_peaks.c - libFuzzer target for the GPU peak table reader
 * (src/daemon/collect/gpu_peaks.c, an operator-edited file): any bytes
 * either parse into a table whose every model has its required pipes with
 * finite, in-range numbers, or fail with a "name:line: " message; a parsed
 * table then answers model-name lookups (the input's last line as a name)
 * and feeds the FLOPs arithmetic without crashing.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/collect/gpu_flops.h"
#include "daemon/collect/gpu_peaks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf err = BUF_INIT;
	struct gpu_peaks *t = gpu_peaks_parse((const char *)data, size, "f.tsv", &err);
	if (!t) {
		if (strncmp(err.data, "f.tsv:", 6) != 0)
			abort();
		buf_free(&err);
		return 0;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct gpu_model *m = &t->m[i];
		if (!m->pipe[GPU_PIPE_TENSOR_FP16].have || !m->pipe[GPU_PIPE_FP32].have || m->sms == 0)
			abort();
		for (int p = 0; p < GPU_NPIPES; p++)
			if (m->pipe[p].have && (!isfinite(m->pipe[p].flops) || m->pipe[p].flops <= 0 || m->pipe[p].mhz < 100))
				abort();
	}
	/* a name from the input: its bytes after the last newline, NUL-terminated */
	size_t s = size;
	while (s && data[s - 1] != '\n')
		s--;
	char *name = malloc(size - s + 1);
	memcpy(name, data + s, size - s);
	name[size - s] = 0;
	const struct gpu_model *m = gpu_peaks_match(t, name);
	struct gpu_flops_in in = {.tensor = 1, .fp16 = 0.5, .fp32 = 0.01, .fp64 = 0.2, .sm_mhz = 1500};
	struct gpu_flops_out o;
	if (m && (!gpu_flops_estimate(m, &in, &o) || !isfinite(o.flops) || o.flops < 0))
		abort();
	free(name);
	gpu_peaks_free(t);
	buf_free(&err);
	return 0;
}
