/*
 * dcgm_api.h - the few DCGM types, constants and entry points the DCGM
 * collector (dcgm.c) calls, declared from NVIDIA's public DCGM API
 * reference (dcgm_structs.h, dcgm_agent.h, dcgm_fields.h), so the build
 * needs no DCGM SDK.  The fake DCGM of the tests (tests/fake/dcgm.c)
 * implements the same declarations.  Plain declarations: no cost.
 */
#ifndef DYNO_COLLECT_DCGM_API_H
#define DYNO_COLLECT_DCGM_API_H

#include <stdint.h>

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;
typedef unsigned int dcgm_field_eid_t;
typedef int dcgm_field_entity_group_t;

enum {
	DCGM_ST_OK = 0,
	DCGM_ST_BADPARAM = -1,
	DCGM_ST_GENERIC_ERROR = -3,
	DCGM_ST_NOT_SUPPORTED = -6,
	DCGM_ST_INIT_ERROR = -7,
	DCGM_ST_UNINITIALIZED = -10,
	DCGM_ST_TIMEOUT = -11,
	DCGM_ST_NO_DATA = -14,
	DCGM_ST_NOT_WATCHED = -16,
	DCGM_ST_NO_PERMISSION = -17,
	DCGM_ST_GPU_IS_LOST = -18,
	DCGM_ST_CONNECTION_NOT_VALID = -21,
	DCGM_ST_GPU_NOT_SUPPORTED = -22,
};

#define DCGM_MAX_NUM_DEVICES 32
#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096
enum { DCGM_OPERATION_MODE_AUTO = 1, DCGM_OPERATION_MODE_MANUAL = 2 };
enum { DCGM_GROUP_DEFAULT = 0, DCGM_GROUP_EMPTY = 1 };
enum { DCGM_FE_NONE = 0, DCGM_FE_GPU = 1 };

/* field value types (dcgmFieldValue_v1.fieldType) */
#define DCGM_FT_DOUBLE 'd'
#define DCGM_FT_INT64 'i'
#define DCGM_FT_STRING 's'

/* Blank values: a field DCGM could not read holds one of these, never a
 * measurement (not found +1, not supported +2, no permission +3, ...). */
#define DCGM_INT64_BLANK 0x7ffffffffffffff0LL
#define DCGM_FP64_BLANK 140737488355328.0
#define DCGM_STR_BLANK "<<<NULL>>>"
#define DCGM_INT64_NOT_SUPPORTED (DCGM_INT64_BLANK + 2)
#define DCGM_FP64_NOT_SUPPORTED (DCGM_FP64_BLANK + 2.0)

/* the field ids the collector names (dcgm_fields.h) */
enum {
	DCGM_FI_DEV_NAME = 50,
	DCGM_FI_DEV_UUID = 54,
	DCGM_FI_DEV_SM_CLOCK = 100,
	DCGM_FI_DEV_MEM_CLOCK = 101,
	DCGM_FI_DEV_GPU_TEMP = 150,
	DCGM_FI_DEV_POWER_USAGE = 155,
	DCGM_FI_DEV_GPU_UTIL = 203,
	DCGM_FI_DEV_MEM_COPY_UTIL = 204,
	DCGM_FI_DEV_XID_ERRORS = 230, /* the last XID (0: none) */
	DCGM_FI_DEV_FB_TOTAL = 250,
	DCGM_FI_DEV_FB_USED = 252,
	DCGM_FI_DEV_FB_RESERVED = 253, /* MiB the driver and firmware hold: not in FB_USED */
	DCGM_FI_PROF_GR_ENGINE_ACTIVE = 1001, /* the first profiling field */
	DCGM_FI_PROF_SM_ACTIVE = 1002,
	DCGM_FI_PROF_SM_OCCUPANCY = 1003,
	DCGM_FI_PROF_PIPE_TENSOR_ACTIVE = 1004,
	DCGM_FI_PROF_DRAM_ACTIVE = 1005,
	DCGM_FI_PROF_PIPE_FP64_ACTIVE = 1006,
	DCGM_FI_PROF_PIPE_FP32_ACTIVE = 1007,
	DCGM_FI_PROF_PIPE_FP16_ACTIVE = 1008,
	DCGM_FI_PROF_PCIE_TX_BYTES = 1009,
	DCGM_FI_PROF_PCIE_RX_BYTES = 1010,
	DCGM_FI_PROF_NVLINK_TX_BYTES = 1011,
	DCGM_FI_PROF_NVLINK_RX_BYTES = 1012,
};

typedef struct {
	unsigned int version;
	unsigned short fieldId;
	unsigned short fieldType; /* DCGM_FT_* */
	int status;               /* DCGM_ST_* */
	int64_t ts;               /* microseconds since 1970 */
	union {
		int64_t i64;
		double dbl;
		char str[DCGM_MAX_STR_LENGTH];
		char blob[DCGM_MAX_BLOB_LENGTH];
	} value;
} dcgmFieldValue_v1;

/* called once per entity by dcgmGetLatestValues_v2; <0 stops */
typedef int (*dcgmFieldValueEntityEnumeration_f)(dcgm_field_entity_group_t entityGroupId, dcgm_field_eid_t entityId,
						 dcgmFieldValue_v1 *values, int numValues, void *userData);

/* The entry points, as function pointer types (dcgm.c loads them). */
typedef dcgmReturn_t (*dcgm_void_fn)(void);
typedef dcgmReturn_t (*dcgm_handle_fn)(dcgmHandle_t);
typedef dcgmReturn_t (*dcgm_start_embedded_fn)(int opMode, dcgmHandle_t *h);
typedef dcgmReturn_t (*dcgm_connect_fn)(const char *ipAddress, dcgmHandle_t *h);
typedef dcgmReturn_t (*dcgm_devices_fn)(dcgmHandle_t, unsigned int gpuIds[DCGM_MAX_NUM_DEVICES], int *count);
typedef dcgmReturn_t (*dcgm_group_create_fn)(dcgmHandle_t, int type, char *name, dcgmGpuGrp_t *grp);
typedef dcgmReturn_t (*dcgm_group_add_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgm_field_entity_group_t, dcgm_field_eid_t);
typedef dcgmReturn_t (*dcgm_field_group_create_fn)(dcgmHandle_t, int n, unsigned short *ids, char *name,
						   dcgmFieldGrp_t *fgrp);
typedef dcgmReturn_t (*dcgm_watch_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t, long long updateFreqUs,
				      double maxKeepAgeS, int maxKeepSamples);
typedef dcgmReturn_t (*dcgm_latest_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t, dcgmFieldValueEntityEnumeration_f,
				       void *userData);

#endif
