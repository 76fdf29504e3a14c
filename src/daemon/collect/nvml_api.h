/*
 * nvml_api.h - the few NVML types, constants and entry points the GPU
 * collector (nvml.c) calls, declared from NVIDIA's public NVML API
 * reference, so the build needs no NVIDIA SDK.  The fake NVML of the tests
 * (tests/fake/nvml.c) implements the same declarations.  Plain
 * declarations: no cost.
 */
#ifndef DYNO_COLLECT_NVML_API_H
#define DYNO_COLLECT_NVML_API_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25, /* a versioned struct the library does not know */
	NVML_ERROR_UNKNOWN = 999,
};

typedef struct {
	unsigned int gpu, memory; /* percent of the last sample period */
} nvmlUtilization_t;

typedef struct {
	unsigned long long total, free, used; /* bytes; used includes the reserved memory */
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2's answer (the API reference's nvmlMemory_v2_t):
 * used is what allocations hold, without the memory the driver and
 * firmware reserve (reserved), as nvidia-smi and DCGM count it; total =
 * reserved + used + free.  version must be nvml.h's nvmlMemory_v2,
 * NVML_STRUCT_VERSION(Memory, 2): the struct's size ORed with 2 << 24
 * (0x02000028); a driver that knows no such version answers
 * NVML_ERROR_ARGUMENT_VERSION_MISMATCH. */
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used; /* bytes */
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };

/* GPM (Hopper and newer) */
enum {
	NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
	NVML_GPM_METRIC_SM_UTIL = 2,
	NVML_GPM_METRIC_SM_OCCUPANCY = 3,
	NVML_GPM_METRIC_INTEGER_UTIL = 4,
	NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
	NVML_GPM_METRIC_DFMA_TENSOR_UTIL = 6, /* FP64 tensor (DMMA) */
	NVML_GPM_METRIC_HMMA_TENSOR_UTIL = 7, /* FP16/BF16/TF32/FP8 tensor */
	NVML_GPM_METRIC_IMMA_TENSOR_UTIL = 9, /* integer tensor */
	NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
	NVML_GPM_METRIC_FP64_UTIL = 11,
	NVML_GPM_METRIC_FP32_UTIL = 12,
	NVML_GPM_METRIC_FP16_UTIL = 13,
	NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20, /* MiB/s */
	NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
	NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60, /* MiB/s */
	NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
	NVML_GPM_METRIC_MAX = 98,
};
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1

typedef struct {
	unsigned int metricId;
	nvmlReturn_t nvmlReturn;
	double value;
	struct {
		char *shortName, *longName, *unit;
	} metricInfo;
} nvmlGpmMetric_t;

typedef struct {
	unsigned int version, numMetrics;
	nvmlGpmSample_t sample1, sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
	unsigned int version, isSupportedDevice;
} nvmlGpmSupport_t;

/* A running process, as nvmlDeviceGetComputeRunningProcesses_v3 and
 * nvmlDeviceGetGraphicsRunningProcesses_v3 (and their _v2, same layout,
 * R470 drivers) fill it: the API reference's nvmlProcessInfo_v2_t, which
 * NVML 12's headers also name nvmlProcessInfo_t.  Not the unversioned
 * calls' nvmlProcessInfo_v1_t (pid and memory only, 16 bytes): an array of
 * one layout read as the other is garbage, so only the _v3/_v2 entry points
 * are loaded.  gpuInstanceId/computeInstanceId are 0xFFFFFFFF outside MIG;
 * usedGpuMemory is NVML_VALUE_NOT_AVAILABLE where the driver does not know
 * it (no permission, WDDM). */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
#define NVML_VALUE_NOT_AVAILABLE (~0ull)

/* Events (nvmlEventSetCreate, nvmlDeviceRegisterEvents, nvmlEventSetWait_v2):
 * the API reference's nvmlEventData_t.  eventData holds the XID of an
 * nvmlEventTypeXidCriticalError event; gpu/computeInstanceId name the MIG
 * instance it is attributed to (0xFFFFFFFF: the whole GPU). */
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x8ull /* nvmlEventTypeXidCriticalError */

/* Field values (nvmlDeviceGetFieldValues): the API reference's
 * nvmlFieldValue_t (40 bytes).  The NVLink throughput fields count KiB since
 * the driver loaded; scopeId is a link, or UINT_MAX for all links summed. */
enum {
	NVML_VALUE_TYPE_DOUBLE = 0,
	NVML_VALUE_TYPE_UNSIGNED_INT = 1,
	NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
	NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
	NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
	NVML_VALUE_TYPE_SIGNED_INT = 5,
};
typedef union {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
} nvmlValue_t;
typedef struct {
	unsigned int fieldId, scopeId;
	long long timestamp;   /* CPU time of the value, microseconds since 1970 */
	long long latencyUsec;
	int valueType;         /* nvmlValueType_t */
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;
#define NVML_FI_DEV_MEMORY_TEMP 82               /* C, the HBM's (not the die's) */
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94        /* PCIe replays since the driver loaded */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138 /* KiB */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
#define NVML_FI_DEV_REMAPPED_COR 142     /* rows remapped for correctable errors (the GPU's life) */
#define NVML_FI_DEV_REMAPPED_UNC 143     /* rows remapped for uncorrectable errors */
#define NVML_FI_DEV_REMAPPED_FAILURE 145 /* 1: a row could not be remapped */
#define NVML_SCOPE_ALL_LINKS 0xFFFFFFFFu
/* an array of either read with another layout would be garbage */
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t is 32 bytes on LP64");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t is 40 bytes on LP64");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t is 40 bytes on LP64 (version 0x02000028)");

/* The entry points, as function pointer types (nvml.c loads them). */
typedef nvmlReturn_t (*nvml_void_fn)(void);
typedef nvmlReturn_t (*nvml_count_fn)(unsigned int *);
typedef nvmlReturn_t (*nvml_handle_fn)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_str_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*nvml_util_fn)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*nvml_mem_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvml_mem2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
/* nvmlDeviceGetEncoderUtilization / ...DecoderUtilization: percent, and the
 * sampling period it covers (us) */
typedef nvmlReturn_t (*nvml_codec_fn)(nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*nvml_uint_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvml_ull_fn)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*nvml_enum_uint_fn)(nvmlDevice_t, int, unsigned int *);
typedef nvmlReturn_t (*nvml_ecc_fn)(nvmlDevice_t, int, int, unsigned long long *);
typedef nvmlReturn_t (*nvml_mig_mode_fn)(nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*nvml_mig_handle_fn)(nvmlDevice_t, unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_gpm_support_fn)(nvmlDevice_t, nvmlGpmSupport_t *);
typedef nvmlReturn_t (*nvml_gpm_alloc_fn)(nvmlGpmSample_t *);
typedef nvmlReturn_t (*nvml_gpm_free_fn)(nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_gpm_sample_fn)(nvmlDevice_t, nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_gpm_get_fn)(nvmlGpmMetricsGet_t *);
typedef nvmlReturn_t (*nvml_procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*nvml_evset_create_fn)(nvmlEventSet_t *);
typedef nvmlReturn_t (*nvml_evset_free_fn)(nvmlEventSet_t);
typedef nvmlReturn_t (*nvml_ev_register_fn)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
typedef nvmlReturn_t (*nvml_ev_wait_fn)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
typedef nvmlReturn_t (*nvml_fields_fn)(nvmlDevice_t, int, nvmlFieldValue_t *);

#endif
