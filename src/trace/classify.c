/*
 * classify.c - the category of a cat string and HTA's kernel type rules.
 *
 * trace_classify() reproduces HTA's classification exactly (semantics doc
 * 1.6): the patterns are Python re.match, i.e. anchored at the start, and
 * the ".*X" forms mean "contains X".  Since `.` does not match a newline in
 * Python, "contains" stops at the first newline.  trace_classify_fixed() is
 * the same with HTA's known mistakes corrected (docs/trace-model.md):
 *   - every name starting with "hip" is COMMUNICATION in HTA, so AMD
 *     hipMemcpy/hipMemset activity counts as communication; fixed: MEMORY,
 *     and other hip* names (runtime calls seen on a stream) are OTHER;
 *   - any name containing "Sync" is excluded from COMPUTATION in HTA, which
 *     also drops real kernels such as SyncBatchNorm ones; fixed: only the
 *     CUDA sync pseudo-kernels (Context/Stream/Event Sync, Stream Wait Event)
 *     are OTHER;
 *   - NCCL kernel names are matched case-insensitively (ncclDevKernel_*,
 *     ncclKernel_*, nccl_* lower-case variants).
 */
#include <string.h>
#include <strings.h>

#include "trace/model.h"

/* the Kineto spelling of each category (trace_cat_of matches these) */
static const char *const cat_names[TRACE_CAT__COUNT] = {
	[TRACE_CAT_OTHER] = "other",
	[TRACE_CAT_CPU_OP] = "cpu_op",
	[TRACE_CAT_USER_ANNOTATION] = "user_annotation",
	[TRACE_CAT_PYTHON_FUNCTION] = "python_function",
	[TRACE_CAT_CUDA_RUNTIME] = "cuda_runtime",
	[TRACE_CAT_CUDA_DRIVER] = "cuda_driver",
	[TRACE_CAT_KERNEL] = "kernel",
	[TRACE_CAT_GPU_MEMCPY] = "gpu_memcpy",
	[TRACE_CAT_GPU_MEMSET] = "gpu_memset",
	[TRACE_CAT_CUDA_SYNC] = "cuda_sync",
	[TRACE_CAT_GPU_USER_ANNOTATION] = "gpu_user_annotation",
	[TRACE_CAT_CUDA_PROFILER_RANGE] = "cuda_profiler_range",
	[TRACE_CAT_MTIA_CCP_EVENTS] = "mtia_ccp_events",
	[TRACE_CAT_MTIA_RUNTIME] = "mtia_runtime",
};

const char *trace_cat_name(enum trace_cat c)
{
	return (unsigned)c < TRACE_CAT__COUNT ? cat_names[c] : "other";
}

enum trace_cat trace_cat_of(const char *s, size_t len)
{
	static const struct {
		const char *s;
		enum trace_cat c;
	} alias[] = {
		{"Kernel", TRACE_CAT_KERNEL},        {"Runtime", TRACE_CAT_CUDA_RUNTIME},
		{"Memcpy", TRACE_CAT_GPU_MEMCPY},    {"Memset", TRACE_CAT_GPU_MEMSET},
	};
	for (int c = 1; c < TRACE_CAT__COUNT; c++)
		if (strlen(cat_names[c]) == len && memcmp(cat_names[c], s, len) == 0)
			return (enum trace_cat)c;
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (strlen(alias[i].s) == len && memcmp(alias[i].s, s, len) == 0)
			return alias[i].c;
	return TRACE_CAT_OTHER;
}

const char *trace_ktype_name(enum trace_ktype t)
{
	switch (t) {
	case TRACE_KT_COMPUTATION: return "COMPUTATION";
	case TRACE_KT_COMMUNICATION: return "COMMUNICATION";
	case TRACE_KT_MEMORY: return "MEMORY";
	default: return "OTHER";
	}
}

static bool starts(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);
	return len >= n && memcmp(s, p, n) == 0;
}

/* Python's ".*X" at the start: X occurs before the first newline.  With
 * memmem (vectorized in glibc): every name of a trace goes through five of
 * these at load, kernel names of hundreds of bytes among them. */
static bool contains_line(const char *s, size_t len, const char *x)
{
	const char *nl = memchr(s, '\n', len);
	size_t lim = nl ? (size_t)(nl - s) : len;
	return memmem(s, lim, x, strlen(x)) != NULL;
}

static bool contains_nocase(const char *s, size_t len, const char *x)
{
	size_t n = strlen(x);
	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(s + i, x, n) == 0)
			return true;
	return false;
}

enum trace_ktype trace_classify(const char *s, size_t len)
{
	if (starts(s, len, "nccl") || starts(s, len, "hip") || starts(s, len, "hccl") ||
	    contains_line(s, len, "ncclKernel"))
		return TRACE_KT_COMMUNICATION;
	if (starts(s, len, "Memcpy") || starts(s, len, "hipMemcpy") || starts(s, len, "Memset") ||
	    starts(s, len, "hipMemset") || starts(s, len, "dma"))
		return TRACE_KT_MEMORY;
	static const char *const not_prefix[] = {"nccl", "Stream Wait Event", "runFunction", "hip",
						 "job_exe", "packet", "pe_exe", "cpum_exe_subgraph",
						 "hccl", "collective_subgraph_execution"};
	for (size_t i = 0; i < sizeof not_prefix / sizeof not_prefix[0]; i++)
		if (starts(s, len, not_prefix[i]))
			return TRACE_KT_OTHER;
	static const char *const not_contains[] = {"Memcpy", "Memset", "dma", "Sync"};
	for (size_t i = 0; i < sizeof not_contains / sizeof not_contains[0]; i++)
		if (contains_line(s, len, not_contains[i]))
			return TRACE_KT_OTHER;
	/* cuda.*LaunchKernel */
	if (starts(s, len, "cuda") && contains_line(s + 4, len - 4, "LaunchKernel"))
		return TRACE_KT_OTHER;
	return TRACE_KT_COMPUTATION;
}

enum trace_ktype trace_classify_fixed(const char *s, size_t len)
{
	if (strncasecmp(s, "nccl", len < 4 ? len : 4) == 0 && len >= 4)
		return TRACE_KT_COMMUNICATION;
	if (contains_nocase(s, len, "ncclKernel") || contains_nocase(s, len, "ncclDevKernel") ||
	    starts(s, len, "hccl") || starts(s, len, "rccl"))
		return TRACE_KT_COMMUNICATION;
	if (starts(s, len, "Memcpy") || starts(s, len, "hipMemcpy") || starts(s, len, "Memset") ||
	    starts(s, len, "hipMemset") || starts(s, len, "dma"))
		return TRACE_KT_MEMORY;
	static const char *const sync_names[] = {"Context Sync", "Stream Sync", "Event Sync",
						 "Stream Wait Event"};
	for (size_t i = 0; i < sizeof sync_names / sizeof sync_names[0]; i++)
		if (strlen(sync_names[i]) == len && memcmp(s, sync_names[i], len) == 0)
			return TRACE_KT_OTHER;
	static const char *const not_prefix[] = {"hip", "runFunction", "job_exe", "packet",
						 "pe_exe", "cpum_exe_subgraph",
						 "collective_subgraph_execution"};
	for (size_t i = 0; i < sizeof not_prefix / sizeof not_prefix[0]; i++)
		if (starts(s, len, not_prefix[i]))
			return TRACE_KT_OTHER;
	if (contains_line(s, len, "Memcpy") || contains_line(s, len, "Memset"))
		return TRACE_KT_OTHER;
	if (starts(s, len, "cuda") && contains_line(s + 4, len - 4, "LaunchKernel"))
		return TRACE_KT_OTHER;
	return TRACE_KT_COMPUTATION;
}
