/*
 * trigger_tick.c - what the triggers add to a telemetry tick: CPU time of
 * triggers_on_tick over a frame of a busy GPU host's size (400 keys), with
 * 0, 8, 64 and 128 metric triggers whose conditions do not hold (the usual
 * state) and whose keys sit at the end of the frame (the longest scan),
 * against the baseline of filling that frame (the least a tick does).
 * Usage: trigger_tick [TICKS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/log.h"
#include "daemon/frame.h"
#include "daemon/ipc/tracing.h"
#include "daemon/trigger/trigger.h"

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* real GPU keys (addTrigger refuses a key no collector emits): 25 per GPU,
 * 16 GPUs */
static const char *const gpu_keys[25] = {
	"gpu_device_utilization", "gpu_memory_utilization", "gpu_memory_used_bytes", "gpu_memory_total_bytes",
	"gpu_power_draw", "gpu_energy_mj", "gpu_frequency_mhz", "gpu_memory_frequency_mhz", "gpu_temperature_c",
	"pcie_tx_bytes", "pcie_rx_bytes", "gpu_ecc_corrected_errors", "gpu_ecc_uncorrected_errors", "xid_errors",
	"xid_last", "gpu_throttle_reasons", "graphics_engine_active_ratio", "sm_active_ratio", "sm_occupancy",
	"tensorcore_active", "fp16_active", "fp32_active", "fp64_active", "integer_active", "hbm_mem_bw_util",
};

static void fill(struct frame *f, int tick)
{
	char key[64];
	frame_reset(f, (int64_t)tick * 1000000000);
	for (int i = 0; i < 400; i++) {
		snprintf(key, sizeof key, "%s.%d", gpu_keys[i % 25], i / 25);
		frame_float(f, key, 0.5 + (double)(tick % 7) / 100);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	if (n < 100)
		n = 100;
	log_init("trigger_tick", LOG_LEVEL_ERROR);
	struct frame f;
	frame_init(&f);
	double t0 = cpu_ns();
	for (int i = 0; i < n; i++)
		fill(&f, i);
	double base = (cpu_ns() - t0) / n;
	printf("%-52s %9.0f ns/tick\n", "baseline: fill a 400-key frame", base);
	struct tracing_flags tfl = TRACING_FLAGS_DEFAULT;
	struct buf err = BUF_INIT;
	struct tracing *tr = tracing_start(NULL, &tfl, &err);
	int counts[] = {0, 8, 64, 128};
	for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
		struct trigger_flags gf = TRIGGER_FLAGS_DEFAULT;
		gf.max = 128;
		struct triggers *T = triggers_start(NULL, &gf, tr, NULL, &err);
		if (!tr || !T) {
			fprintf(stderr, "trigger_tick: %s\n", err.data);
			return 1;
		}
		for (int k = 0; k < counts[c]; k++) {
			char req[256];
			/* keys of the frame's last GPU, a condition that never holds */
			snprintf(req, sizeof req,
				 "{\"trigger\":{\"id\":\"t%d\",\"when\":\"%s.15 < 0.2 for 60s\",\"config\":\"X=1\"}}",
				 k, gpu_keys[24 - k % 25]);
			struct json_doc doc;
			struct json_error je;
			struct buf resp = BUF_INIT;
			if (!json_parse(req, strlen(req), &doc, &je) || !triggers_rpc_call(T, "addTrigger", doc.root, &resp) ||
			    !strstr(resp.data, "\"ok\"")) {
				fprintf(stderr, "trigger_tick: cannot add: %s\n", resp.data);
				return 1;
			}
			json_doc_free(&doc);
			buf_free(&resp);
		}
		fill(&f, 0);
		t0 = cpu_ns();
		for (int i = 0; i < n; i++)
			triggers_on_tick(&f, 0, 1, T);
		double per = (cpu_ns() - t0) / n;
		char what[80];
		snprintf(what, sizeof what, "triggers_on_tick, %d metric triggers", counts[c]);
		printf("%-52s %9.0f ns/tick  %6.2fx baseline\n", what, per, per / base);
		triggers_stop(T);
	}
	tracing_stop(tr);
	frame_free(&f);
	buf_free(&err);
	return 0;
}
