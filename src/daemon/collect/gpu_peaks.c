/*
 * gpu_peaks.c - reading the GPU peak table (see gpu_peaks.h) and finding a
 * model by its NVML name.  The file is data an operator may edit, so every
 * field is checked (type, range, duplicates, required pipes) and the first
 * bad line is named with file:line; the caller then runs without a table
 * (no FLOPs/s estimate) rather than with a half-read one.  Cost: one read
 * at start, a linear pattern scan per device when it is first seen.
 */
#include "daemon/collect/gpu_peaks.h"

#include <ctype.h>
#include <libgen.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/log.h"

#define MAX_FILE (1u << 20)
#define MAX_MODELS 1024
#define MAX_FIELD 512

static const char *const pipe_names[GPU_NPIPES] = {
	"tensor_fp16", "tensor_tf32", "tensor_fp8", "tensor_fp64", "fp16", "fp32", "fp64",
};

const char *gpu_pipe_name(enum gpu_pipe p) { return p < GPU_NPIPES ? pipe_names[p] : "?"; }

void gpu_peaks_free(struct gpu_peaks *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->m[i].match);
	free(t->m);
	free(t);
}

/* a number that is the whole field, finite, within [lo, hi] */
static bool num(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static struct gpu_peaks *fail(struct gpu_peaks *t, struct buf *err, const char *name, unsigned line,
			      const char *fmt, const char *arg)
{
	buf_printf(err, "%s:%u: ", name, line);
	buf_printf(err, fmt, arg);
	gpu_peaks_free(t);
	return NULL;
}

struct gpu_peaks *gpu_peaks_parse(const char *text, size_t len, const char *name, struct buf *err)
{
	struct gpu_peaks *t = xcalloc(1, sizeof *t);
	unsigned lineno = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		lineno++;
		if (memchr(p, 0, (size_t)(le - p)))
			return fail(t, err, name, lineno, "%sa NUL byte (not a text file?)", "");
		/* fields: runs of tabs separate them; '#' at the start is a comment */
		char f[6][MAX_FIELD];
		int nf = 0;
		const char *q = p;
		while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == le || *q == '#') {
			p = le + 1;
			continue;
		}
		while (q < le) {
			const char *s = q;
			while (q < le && *q != '\t')
				q++;
			const char *e = q;
			while (e > s && (e[-1] == '\r' || e[-1] == ' '))
				e--;
			if (nf == 6) /* the source column may hold anything but a tab */
				return fail(t, err, name, lineno, "%smore than 6 tab-separated fields", "");
			if ((size_t)(e - s) >= MAX_FIELD)
				return fail(t, err, name, lineno, "%sa field longer than 511 bytes", "");
			memcpy(f[nf], s, (size_t)(e - s));
			f[nf][e - s] = 0;
			nf++;
			while (q < le && *q == '\t')
				q++;
		}
		if (nf < 6)
			return fail(t, err, name, lineno,
				    "%sexpected 6 tab-separated fields: match, sms, pipe, tflops, mhz, source", "");
		double sms, tflops, mhz;
		if (!num(f[1], 1, 100000, &sms) || sms != (double)(unsigned)sms)
			return fail(t, err, name, lineno, "SM count '%s' is not an integer in 1..100000", f[1]);
		int pipe = -1;
		for (int i = 0; i < GPU_NPIPES; i++)
			if (strcmp(f[2], pipe_names[i]) == 0)
				pipe = i;
		if (pipe < 0)
			return fail(t, err, name, lineno,
				    "unknown pipe '%s' (tensor_fp16, tensor_tf32, tensor_fp8, tensor_fp64, fp16, fp32, fp64)",
				    f[2]);
		if (!num(f[3], 1e-6, 1e6, &tflops))
			return fail(t, err, name, lineno, "peak '%s' is not a number of TFLOP/s in (0, 1e6]", f[3]);
		if (!num(f[4], 100, 10000, &mhz))
			return fail(t, err, name, lineno, "clock '%s' is not a number of MHz in 100..10000", f[4]);
		/* every pattern non-empty, '$' only at its end */
		for (const char *a = f[0];;) {
			const char *bar = strchr(a, '|');
			size_t n = bar ? (size_t)(bar - a) : strlen(a);
			const char *dollar = memchr(a, '$', n);
			if (n == 0 || (n == 1 && *a == '$') || (dollar && dollar != a + n - 1))
				return fail(t, err, name, lineno, "bad model pattern '%s' (empty, or '$' not at its end)",
					    f[0]);
			if (!bar)
				break;
			a = bar + 1;
		}
		struct gpu_model *m = NULL;
		for (size_t i = 0; i < t->n; i++)
			if (strcmp(t->m[i].match, f[0]) == 0)
				m = &t->m[i];
		if (!m) {
			if (t->n == MAX_MODELS)
				return fail(t, err, name, lineno, "%smore than 1024 models", "");
			t->m = xrealloc(t->m, (t->n + 1) * sizeof *t->m);
			m = &t->m[t->n++];
			memset(m, 0, sizeof *m);
			m->match = xstrdup(f[0]);
			m->sms = (unsigned)sms;
			m->line = lineno;
		} else if (m->sms != (unsigned)sms) {
			return fail(t, err, name, lineno, "SM count differs from the model's first row ('%s')", f[0]);
		}
		if (m->pipe[pipe].have)
			return fail(t, err, name, lineno, "pipe '%s' given twice for this model", f[2]);
		m->pipe[pipe] = (struct gpu_peak){true, tflops * 1e12, mhz};
		p = le + 1;
	}
	if (t->n == 0)
		return fail(t, err, name, lineno, "%sno model rows", "");
	static const enum gpu_pipe required[] = {GPU_PIPE_TENSOR_FP16, GPU_PIPE_FP16, GPU_PIPE_FP32, GPU_PIPE_FP64};
	for (size_t i = 0; i < t->n; i++)
		for (size_t r = 0; r < sizeof required / sizeof required[0]; r++)
			if (!t->m[i].pipe[required[r]].have) {
				buf_printf(err, "%s:%u: model '%s' lacks a %s row (every model needs tensor_fp16, fp16, fp32, fp64)",
					   name, t->m[i].line, t->m[i].match, pipe_names[required[r]]);
				gpu_peaks_free(t);
				return NULL;
			}
	return t;
}

struct gpu_peaks *gpu_peaks_load(const char *path, struct buf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct buf b = BUF_INIT;
	int r = buf_read_fd(&b, fd, MAX_FILE);
	int e = errno;
	close(fd);
	struct gpu_peaks *t = NULL;
	if (r < 0)
		buf_printf(err, "%s: %s", path, strerror(e));
	else if (r > 0)
		buf_printf(err, "%s: larger than 1 MiB", path);
	else
		t = gpu_peaks_parse(b.data ? b.data : "", b.len, path, err);
	buf_free(&b);
	return t;
}

static bool word_char(char c) { return isalnum((unsigned char)c); }

/* The length of pattern [a, a+n) when it matches name, else 0. */
static size_t pattern_match(const char *name, const char *a, size_t n)
{
	bool pin = a[n - 1] == '$';
	size_t pl = pin ? n - 1 : n, nl = strlen(name);
	for (size_t i = 0; i + pl <= nl; i++) {
		if (i && word_char(name[i - 1]) && word_char(a[0]))
			continue; /* not at a word boundary: "B200" is not in "GB200" */
		if (strncasecmp(name + i, a, pl) != 0)
			continue;
		if (pin && i + pl != nl)
			continue;
		return pl;
	}
	return 0;
}

const struct gpu_model *gpu_peaks_match(const struct gpu_peaks *t, const char *name)
{
	if (!t || !name || !*name)
		return NULL;
	/* a MIG instance has a share of the SMs: no row describes it */
	for (const char *s = name; (s = strstr(s, "MIG")); s += 3)
		if ((s == name || !word_char(s[-1])) && !word_char(s[3]))
			return NULL;
	const struct gpu_model *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < t->n; i++)
		for (const char *a = t->m[i].match;;) {
			const char *bar = strchr(a, '|');
			size_t n = bar ? (size_t)(bar - a) : strlen(a);
			size_t l = pattern_match(name, a, n);
			if (l > best_len) {
				best_len = l;
				best = &t->m[i];
			}
			if (!bar)
				break;
			a = bar + 1;
		}
	return best;
}

static struct gpu_peaks *open_one(const char *path, struct buf *err)
{
	struct gpu_peaks *t = gpu_peaks_load(path, err);
	if (t)
		log_info("GPU peak table: %zu models from %s", t->n, path);
	else
		log_warn("GPU peak table: %s; FLOPs/s estimates are absent", err->data);
	return t;
}

struct gpu_peaks *gpu_peaks_open(const char *path)
{
	struct buf err = BUF_INIT;
	struct gpu_peaks *t = NULL;
	if (path && *path) {
		t = open_one(path, &err);
		buf_free(&err);
		return t;
	}
	/* installed under another PREFIX (make install: PREFIX/bin/dynolog,
	 * PREFIX/share/dynolite/); or a source tree: data/ beside the build
	 * directory that holds the daemon, which may be nested (build/dynolog,
	 * build/san/dynolog) */
	char exe[4096], src[4][4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	const char *dir = n > 0 ? dirname(exe) : ".";
	snprintf(src[0], sizeof src[0], "%s/../share/dynolite/gpu-peaks.tsv", dir);
	snprintf(src[1], sizeof src[1], "%s/../data/gpu-peaks.tsv", dir);
	snprintf(src[2], sizeof src[2], "%s/../../data/gpu-peaks.tsv", dir);
	snprintf(src[3], sizeof src[3], "%s/../../../data/gpu-peaks.tsv", dir);
	const char *where[5] = {GPU_PEAKS_INSTALL_PATH, src[0], src[1], src[2], src[3]};
	for (int i = 0; i < 5; i++)
		if (access(where[i], F_OK) == 0) {
			t = open_one(where[i], &err);
			buf_free(&err);
			return t;
		}
	log_warn("GPU peak table: none at %s or at data/gpu-peaks.tsv up to three directories above %s "
		 "(--gpu_peaks_file=PATH names one); FLOPs/s estimates are absent",
		 where[0], dir);
	return NULL;
}
