#!/usr/bin/env bash
# The GPU collector end to end against our fake NVML (build/libfake-nvml.so,
# tests/fake/nvml.c), loaded through --nvml_library by the same dlopen path
# as libnvidia-ml.so.1: every metric's value on the JSON log and on
# Prometheus (with gpu/uuid/model labels), absent (never 0) for what a
# device does not support, a GPU that falls off the bus, MIG instances, a
# device without GPM, a driver lacking entry points, and no library at all.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
LIB=$PWD/$BUILD/libfake-nvml.so
OLD=$PWD/$BUILD/libfake-nvml-old.so
[ -f "$LIB" ] && [ -f "$OLD" ] || { echo "needs $LIB and $OLD (make)"; exit 1; }
fail() { echo "FAIL: $*"; tail -n 20 "$T"/*.log 2>/dev/null; exit 1; }

# GPU 0: an H100 with every metric, GPM included, XIDs 79 at its second
# tick and 79 and 48 at its fourth, a power reading failing at the second,
# 615 MiB of its memory reserved by the driver (the H200's figure: the v2
# query leaves it out of used, the v1 query of an old driver counts it in),
# the field values dcgm-exporter's default set needs (memory temperature,
# PCIe replays 10, 12, 15: +2, +3, row remapping); GPU 1: supports only its temperature and
# is lost at its second call, MIG on with one instance (memory only); GPU 2:
# no GPM, no events; GPU 3: an A100 (no GPM) whose NVLink comes from NVML's
# data counters (KiB, one call a tick, NVML's stamps 1 s apart), watched for
# XIDs that never come, whose driver has the v2 memory query but refuses
# its struct version (NVML_ERROR_ARGUMENT_VERSION_MISMATCH: the v1 query)
# and gives its memory temperature as a real double.  Lists give one value per call, the last one
# repeating: values settle from the third tick on.
cat >"$T/script" <<'S'
gpus 4
name 0 NVIDIA H100 80GB HBM3
uuid 0 GPU-00000000-1111-2222-3333-444444444444
util 0 50:20,60:25
mem 0 85899345920:1073741824:644874240
enc 0 5
dec 0 7
memtemp 0 52
pcie_replay 0 10,12,15
remap_cor 0 3
remap_unc 0 1
remap_fail 0 0
power 0 250500,E999,250500
energy 0 1000,3500,7000
clock_sm 0 1980
clock_mem 0 2619
temp 0 45
pcie_tx 0 1000
pcie_rx 0 2000
ecc_corr 0 0,2,2
ecc_uncorr 0 0
throttle 0 4
gpm 0 1 80
gpm 0 2 45.5,50
gpm 0 3 25.123456789
gpm 0 4 3
gpm 0 5 10
gpm 0 10 33
gpm 0 11 0.5
gpm 0 12 2.5
gpm 0 13 1.5
gpm 0 60 200.0000004
gpm 0 61 100
name 1 NVIDIA H100 80GB HBM3
uuid 1 GPU-11111111-1111-2222-3333-444444444444
temp 1 70,E15
mig 1 1
name 1/mig0 NVIDIA H100 MIG 1g.10gb
uuid 1/mig0 MIG-aaaaaaaa
mem 1/mig0 10000000000:123456
name 2 NVIDIA A100-SXM4-40GB
uuid 2 GPU-22222222-1111-2222-3333-444444444444
nogpm 2
util 2 7:3
noevents 2
xid 0 -,79,-,79+48,-
name 3 NVIDIA A100-SXM4-80GB
uuid 3 GPU-33333333-1111-2222-3333-444444444444
nogpm 3
nvlink_tx 3 1000,3048,5096,7144
mem 3 42949672960:2147483648:536870912
mem_v2 3 E25
memtemp_double 3 61.6
nvlink_rx 3 0,1024,1024
S

run_daemon() { # log-name flags...
	local name=$1
	shift
	FAKE_NVML_SCRIPT=$T/script "$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 \
		--kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor --dcgm_reporting_interval_s=1 \
		--json_format=jsonl --json_log_file="$T/$name.jsonl" "$@" 2>"$T/$name.log" &
	PIDS+=($!)
	wait_for grep -q 'serving Prometheus' "$T/$name.log" || fail "$name: no Prometheus"
	PORT=$(prom_port_from_log "$T/$name.log")
	RPC=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$T/$name.log" | head -n 1)
}

# ---- the full fake ----
run_daemon full --nvml_library="$LIB"
# four GPU ticks: values settled (the kernel's one line at start is not one)
wait_for bash -c "[ \$(grep -c gpu_name '$T/full.jsonl') -ge 4 ]" || fail "fewer than 4 GPU ticks"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
if command -v promtool >/dev/null; then promtool check metrics <"$T/page.txt" || fail "promtool"; fi
L0='gpu="0",uuid="GPU-00000000-1111-2222-3333-444444444444",model="NVIDIA H100 80GB HBM3"'
L2='gpu="2",uuid="GPU-22222222-1111-2222-3333-444444444444",model="NVIDIA A100-SXM4-40GB"'
L3='gpu="3",uuid="GPU-33333333-1111-2222-3333-444444444444",model="NVIDIA A100-SXM4-80GB"'
LM='gpu="1/mig0",uuid="MIG-aaaaaaaa",model="NVIDIA H100 MIG 1g.10gb"'
# scripted input -> base units: % -> ratio, mW -> W, mJ increments -> J
# total, MHz -> Hz, KB/s -> B/s, GPM % -> ratio (to 1e-4: 25.123456789 %
# is 0.2512), GPM MiB/s -> B/s (to the byte)
while IFS="|" read -r fam labels want; do
	line=$(grep -F "$fam{$labels" "$T/page.txt" || true)
	[ "$line" = "$fam{$labels} $want" ] || fail "Prometheus: want '$fam{$labels} $want', got '$line'"
done <<W
dynolog_gpu_utilization_ratio|$L0|0.6
dynolog_gpu_memory_utilization_ratio|$L0|0.25
dynolog_gpu_memory_used_bytes|$L0|1073741824
dynolog_gpu_memory_reserved_bytes|$L0|644874240
dynolog_gpu_memory_total_bytes|$L0|85899345920
dynolog_gpu_memory_temperature_celsius|$L0|52
dynolog_gpu_encoder_utilization_ratio|$L0|0.05
dynolog_gpu_decoder_utilization_ratio|$L0|0.07
dynolog_gpu_pcie_replays_total|$L0|5
dynolog_gpu_row_remap_failed|$L0|0.0
dynolog_gpu_power_watts|$L0|250.5
dynolog_gpu_energy_joules_total|$L0|6
dynolog_gpu_sm_clock_hertz|$L0|1980000000
dynolog_gpu_memory_clock_hertz|$L0|2619000000
dynolog_gpu_temperature_celsius|$L0|45
dynolog_gpu_pcie_transmit_bytes_per_second|$L0|1024000
dynolog_gpu_pcie_receive_bytes_per_second|$L0|2048000
dynolog_gpu_ecc_corrected_errors_total|$L0|2
dynolog_gpu_ecc_uncorrected_errors_total|$L0|0.0
dynolog_gpu_clocks_throttle_reasons|$L0|4
dynolog_gpu_graphics_engine_active_ratio|$L0|0.8
dynolog_gpu_sm_active_ratio|$L0|0.5
dynolog_gpu_sm_occupancy_ratio|$L0|0.2512
dynolog_gpu_pipe_tensor_active_ratio|$L0|0.1
dynolog_gpu_pipe_fp16_active_ratio|$L0|0.015
dynolog_gpu_pipe_fp32_active_ratio|$L0|0.025
dynolog_gpu_pipe_fp64_active_ratio|$L0|0.005
dynolog_gpu_pipe_integer_active_ratio|$L0|0.03
dynolog_gpu_dram_bandwidth_ratio|$L0|0.33
dynolog_gpu_nvlink_transmit_bytes_per_second|$L0|104857600
dynolog_gpu_nvlink_receive_bytes_per_second|$L0|209715200
dynolog_gpu_utilization_ratio|$L2|0.07
dynolog_gpu_memory_utilization_ratio|$L2|0.03
dynolog_gpu_memory_used_bytes|$LM|123456
dynolog_gpu_memory_reserved_bytes|$LM|0.0
dynolog_gpu_memory_total_bytes|$LM|10000000000
dynolog_gpu_xid_errors_total|$L0|3
dynolog_gpu_last_xid|$L0|48
dynolog_gpu_xid_errors_total|$L3|0.0
dynolog_gpu_last_xid|$L3|0.0
W
grep -q '^# TYPE dynolog_gpu_energy_joules_total counter$' "$T/page.txt" || fail "energy is not a counter"
grep -q '^# TYPE dynolog_gpu_pcie_replays_total counter$' "$T/page.txt" || fail "PCIe replays are not a counter"
for c in correctable:3 uncorrectable:1; do
	grep -qx "dynolog_gpu_remapped_rows{$L0,cause=\"${c%%:*}\"} ${c#*:}" "$T/page.txt" ||
		fail "remapped rows ${c%%:*}: $(grep remapped_rows "$T/page.txt")"
done
grep -q '^dynolog_collector_success{collector="nvml"} 1$' "$T/page.txt" || fail "collector not successful"
# absent, never 0: GPU 2 and the MIG instance have only what was scripted;
# GPU 1 is lost (its temperature was 70 before); GPU 2 has no GPM
n2=$(grep -c "{$L2}" "$T/page.txt")
[ "$n2" = 2 ] || fail "GPU 2: want 2 series (its utilizations), got $n2: $(grep -F 'gpu="2"' "$T/page.txt")"
nm=$(grep -c "{$LM}" "$T/page.txt")
[ "$nm" = 3 ] || fail "MIG instance: want 3 series (its memory: used, reserved, total), got $nm"
if grep -F 'gpu="1"' "$T/page.txt"; then fail "lost GPU 1 still published"; fi
grep -q 'GPU 1 (GPU-11111111-1111-2222-3333-444444444444) is lost' "$T/full.log" || fail "GPU lost not said"
[ "$(grep -c 'is lost' "$T/full.log")" = 1 ] || fail "GPU lost said more than once"
grep -q 'NVML sees 4 GPUs, 5 devices counting MIG instances (.*); GPM on 2; XID events on 3$' "$T/full.log" ||
	fail "device list not logged"
# one rate-limited line per XID, with the GPU and its UUID
[ "$(grep -c 'GPU 0 (GPU-00000000-1111-2222-3333-444444444444) reported XID ' "$T/full.log")" = 3 ] ||
	fail "XIDs not logged once each: $(grep XID "$T/full.log")"
grep -q 'reported XID 48$' "$T/full.log" || fail "XID 48 not logged"
# the JSON log: upstream's keys per device, upstream's units
last=$(grep gpu_name "$T/full.jsonl" | tail -n 1)
for kv in '"gpu_device_utilization.0":60' '"gpu_memory_utilization.0":25' '"gpu_power_draw.0":250.5' \
	'"gpu_frequency_mhz.0":1980' '"gpu_memory_frequency_mhz.0":2619' '"gpu_temperature_c.0":45' \
	'"gpu_memory_used_bytes.0":1073741824' '"gpu_memory_total_bytes.0":85899345920' '"gpu_energy_mj.0":0' \
	'"gpu_memory_reserved_bytes.0":644874240' '"gpu_memory_temperature_c.0":52' '"gpu_encoder_utilization.0":5' \
	'"gpu_decoder_utilization.0":7' '"gpu_pcie_replays.0":0' '"gpu_remapped_rows_correctable.0":3' \
	'"gpu_remapped_rows_uncorrectable.0":1' '"gpu_row_remap_failure.0":0' \
	'"pcie_tx_bytes.0":1024000' '"pcie_rx_bytes.0":2048000' '"gpu_ecc_corrected_errors.0":0' \
	'"gpu_throttle_reasons.0":4' '"graphics_engine_active_ratio.0":0.8' '"sm_active_ratio.0":0.5' \
	'"sm_occupancy.0":0.2512' '"tensorcore_active.0":0.1' '"fp16_active.0":0.015' '"fp32_active.0":0.025' \
	'"fp64_active.0":0.005' '"integer_active.0":0.03' '"hbm_mem_bw_util.0":0.33' \
	'"nvlink_tx_bytes.0":104857600' '"nvlink_rx_bytes.0":209715200' \
	'"gpu_uuid.0":"GPU-00000000-1111-2222-3333-444444444444"' '"gpu_name.0":"NVIDIA H100 80GB HBM3"' \
	'"gpu_device_utilization.2":7' '"gpu_memory_used_bytes.1/mig0":123456' '"gpu_name.1/mig0":"NVIDIA H100 MIG 1g.10gb"'; do
	grep -qF "$kv" <<<"$last" || fail "JSON log lacks $kv: $last"
done
# the energy increments of ticks 2 and 3, in upstream-style per-interval values
grep gpu_name "$T/full.jsonl" >"$T/gpu.jsonl"
grep -qF '"gpu_energy_mj.0":2500' <<<"$(sed -n 2p "$T/gpu.jsonl")" || fail "tick 2 energy"
grep -qF '"gpu_energy_mj.0":3500' <<<"$(sed -n 3p "$T/gpu.jsonl")" || fail "tick 3 energy"
# XIDs per tick: the count of that tick's events and the last XID so far;
# NVLink without GPM: the KiB counters' increase x 1024 over NVML's 1 s
tick_has() { # tick key:value...
	local t=$1 line
	shift
	line=$(sed -n "${t}p" "$T/gpu.jsonl")
	for kv in "$@"; do grep -qF "\"${kv%%:*}\":${kv#*:}" <<<"$line" || fail "tick $t lacks $kv: $line"; done
}
tick_has 1 xid_errors.0:0 xid_last.0:0 xid_errors.3:0 xid_last.3:0
tick_has 2 xid_errors.0:1 xid_last.0:79 nvlink_tx_bytes.3:2097152 nvlink_rx_bytes.3:1048576 gpu_pcie_replays.0:2
tick_has 3 xid_errors.0:0 xid_last.0:79 nvlink_rx_bytes.3:0 gpu_power_draw.0:250.5 gpu_pcie_replays.0:3
# a call that fails once (NVML_ERROR_UNKNOWN at the second tick): that series is absent that tick, never 0
if grep -q '"gpu_power_draw.0"' <<<"$(sed -n 2p "$T/gpu.jsonl")"; then fail "a failed power reading published"; fi
tick_has 1 gpu_power_draw.0:250.5
tick_has 4 xid_errors.0:2 xid_last.0:48 nvlink_tx_bytes.3:2097152
if grep -q 'nvlink_tx_bytes.3' <<<"$(head -n 1 "$T/gpu.jsonl")"; then fail "NVLink rate without a baseline"; fi
# the history (getMetrics) answers the values the JSON log had, tick by tick, exactly
"$DYNO" metrics --port="$RPC" --names='sm_occupancy.0,gpu_power_draw.0,xid_last.0,nvlink_tx_bytes.3,gpu_memory_used_bytes.0,gpu_memory_reserved_bytes.0' --json \
	>"$T/rpc.json" || fail "getMetrics"
for k in sm_occupancy.0 gpu_power_draw.0 xid_last.0 nvlink_tx_bytes.3 gpu_memory_used_bytes.0 gpu_memory_reserved_bytes.0; do
	hist=$(grep -o "\"$k\":\[\[[^]]*\]\(,\[[^]]*\]\)*\]" "$T/rpc.json" | grep -o ',[-0-9.e+]*\]' | tr -d ',]' | head -n 3 | awk '{ printf "%.17g ", $1 }')
	log=$(grep -o "\"$k\":[-0-9.e+]*" "$T/gpu.jsonl" | cut -d: -f2 | head -n 3 | awk '{ printf "%.17g ", $1 }')
	[ -n "$hist" ] && [ "$hist" = "$log" ] || fail "getMetrics $k: '$hist', the JSON log had '$log'"
done
# the first tick has no increments and no GPM (one sample only)
first=$(head -n 1 "$T/gpu.jsonl")
# GPU 3's driver gives its memory temperature as a real double (GPU 0's
# as R545 drivers: typed a double, an unsigned int inside)
grep -qF '"gpu_memory_temperature_c.3":62' <<<"$last" || fail "memory temperature as a double: $last"
# GPU 3 refuses the v2 memory query: the v1 query, said once; used
# includes its reserved 512 MiB and there is no reserved series
grep -qF '"gpu_memory_used_bytes.3":2684354560' <<<"$last" || fail "v2 refused: no v1 memory: $last"
if grep -qF '"gpu_memory_reserved_bytes.3"' <<<"$last"; then fail "v2 refused: a reserved series"; fi
[ "$(grep -c 'GPU 3 refuses nvmlDeviceGetMemoryInfo_v2 (struct version unknown to the driver)' "$T/full.log")" = 1 ] ||
	fail "v2 refused: not said once: $(grep -c refuses "$T/full.log")"
if grep 'refuses nvmlDeviceGetMemoryInfo_v2' "$T/full.log" | grep -v 'GPU 3 '; then fail "v2 refusal said of a GPU without memory figures"; fi
for k in gpu_energy_mj sm_active_ratio gpu_ecc_corrected_errors gpu_pcie_replays; do
	if grep -q "\"$k\." <<<"$first"; then fail "first tick has $k (no baseline yet)"; fi
done
for k in gpu_power_draw.2 gpu_temperature_c.2 sm_active_ratio.2 pcie_tx_bytes.2 gpu_utilization.1/mig0 \
	gpu_temperature_c.1 gpu_device_utilization.1 xid_errors.2 xid_last.2 nvlink_tx_bytes.2 xid_errors.1/mig0 \
	sm_active_ratio.3 gpu_memory_temperature_c.2 gpu_encoder_utilization.2 gpu_decoder_utilization.3 \
	gpu_pcie_replays.3 gpu_remapped_rows_correctable.2 gpu_row_remap_failure.3 gpu_memory_reserved_bytes.2 \
	gpu_memory_temperature_c.1/mig0; do
	if grep -qF "\"$k\"" <<<"$last"; then fail "unsupported $k published: $last"; fi
done

# ---- dcgm-exporter's names, labels and units (--prometheus_names=dcgm) ----
run_daemon dcgm --nvml_library="$LIB" --prometheus_names=dcgm
wait_for bash -c "[ \$(grep -c gpu_name '$T/dcgm.jsonl') -ge 4 ]" || fail "dcgm: fewer than 4 GPU ticks"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/dcgm.txt"
# promtool: a valid page; its only complaints are dcgm-exporter's own
# naming (camelCase labels such as modelName, a counter without _total,
# DCGM_FI_DEV_PCIE_REPLAY_COUNTER's name holding its type)
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/dcgm.txt" >"$T/lint.txt" 2>&1 || true
	if grep -Ev >"$T/lint-other.txt" "label names should be written in 'snake_case' not 'camelCase'|^DCGM_FI_DEV_[A-Z_]* counter metrics should have \"_total\" suffix|^DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'" "$T/lint.txt"; then
		fail "dcgm: promtool: $(cat "$T/lint-other.txt")"
	fi
fi
H=$(hostname)
D0="gpu=\"0\",UUID=\"GPU-00000000-1111-2222-3333-444444444444\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"$H\""
D2="gpu=\"2\",UUID=\"GPU-22222222-1111-2222-3333-444444444444\",device=\"nvidia2\",modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"$H\""
DM="gpu=\"1\",UUID=\"MIG-aaaaaaaa\",device=\"nvidia1\",modelName=\"NVIDIA H100 MIG 1g.10gb\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"0\",Hostname=\"$H\""
# DCGM's units: % stays %, bytes -> MiB, W, the driver's energy total in mJ, MHz, ratios
while IFS="|" read -r fam labels want; do
	line=$(grep -F "$fam{$labels}" "$T/dcgm.txt" || true)
	[ "$line" = "$fam{$labels} $want" ] || fail "dcgm: want '$fam{$labels} $want', got '$line'"
done <<W
DCGM_FI_DEV_GPU_UTIL|$D0|60
DCGM_FI_DEV_MEM_COPY_UTIL|$D0|25
DCGM_FI_DEV_FB_USED|$D0|1024
DCGM_FI_DEV_FB_RESERVED|$D0|615
DCGM_FI_DEV_FB_TOTAL|$D0|81920
DCGM_FI_DEV_FB_FREE|$D0|80281
DCGM_FI_DEV_MEMORY_TEMP|$D0|52
DCGM_FI_DEV_ENC_UTIL|$D0|5
DCGM_FI_DEV_DEC_UTIL|$D0|7
DCGM_FI_DEV_PCIE_REPLAY_COUNTER|$D0|15
DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS|$D0|3
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS|$D0|1
DCGM_FI_DEV_ROW_REMAP_FAILURE|$D0|0
DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL|$D0|314.5728
DCGM_FI_DEV_POWER_USAGE|$D0|250.5
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION|$D0|7000
DCGM_FI_DEV_SM_CLOCK|$D0|1980
DCGM_FI_DEV_MEM_CLOCK|$D0|2619
DCGM_FI_DEV_GPU_TEMP|$D0|45
DCGM_FI_PROF_PCIE_TX_BYTES|$D0|1024000
DCGM_FI_PROF_PCIE_RX_BYTES|$D0|2048000
DCGM_FI_DEV_ECC_SBE_VOL_TOTAL|$D0|2
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL|$D0|0
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS|$D0|4
DCGM_FI_PROF_GR_ENGINE_ACTIVE|$D0|0.8
DCGM_FI_PROF_SM_ACTIVE|$D0|0.5
DCGM_FI_PROF_SM_OCCUPANCY|$D0|0.2512
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE|$D0|0.1
DCGM_FI_PROF_PIPE_FP16_ACTIVE|$D0|0.015
DCGM_FI_PROF_PIPE_FP32_ACTIVE|$D0|0.025
DCGM_FI_PROF_PIPE_FP64_ACTIVE|$D0|0.005
DCGM_FI_PROF_DRAM_ACTIVE|$D0|0.33
DCGM_FI_PROF_NVLINK_TX_BYTES|$D0|104857600
DCGM_FI_PROF_NVLINK_RX_BYTES|$D0|209715200
DCGM_FI_DEV_GPU_UTIL|$D2|7
DCGM_FI_DEV_FB_USED|$DM|0.11773681640625
DCGM_FI_DEV_XID_ERRORS|$D0|48
W
grep -q '^# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter$' "$T/dcgm.txt" || fail "dcgm: energy is not a counter"
grep -q '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge$' "$T/dcgm.txt" || fail "dcgm: util type"
# dcgm-exporter's default counter set (tests/data/dcgm-exporter/): every
# field is on the page under its type, but those NVML cannot give:
# DCGM_FI_DEV_PCIE_{TX,RX}_THROUGHPUT (DCGM itself answers "not
# supported" for both, so dcgm-exporter has no such series either; the
# PCIe rates are DCGM_FI_PROF_PCIE_{TX,RX}_BYTES above) and
# DCGM_FI_DEV_VGPU_LICENSE_STATUS (a vGPU guest's license, not a GPU's)
not_nvml='DCGM_FI_DEV_PCIE_TX_THROUGHPUT DCGM_FI_DEV_PCIE_RX_THROUGHPUT DCGM_FI_DEV_VGPU_LICENSE_STATUS'
n=0
while IFS=, read -r field type _help; do
	case "$field" in '#'* | '') continue ;; esac
	n=$((n + 1))
	if [[ " $not_nvml " == *" $field "* ]]; then
		if grep -q "^$field" "$T/dcgm.txt"; then fail "dcgm: $field published (NVML has no such value)"; fi
		continue
	fi
	grep -qx "# TYPE $field $type" "$T/dcgm.txt" || fail "dcgm: default-set $field not published as a $type"
	grep -q "^$field{$D0} " "$T/dcgm.txt" || fail "dcgm: default-set $field has no value for GPU 0"
done <"$TESTDATA/dcgm-exporter/default-counters.csv"
[ "$n" = 21 ] || fail "dcgm: the default set has $n fields, want 21"
# absent where a GPU does not give them: GPU 2 (no field values, no codec)
for f in DCGM_FI_DEV_MEMORY_TEMP DCGM_FI_DEV_ENC_UTIL DCGM_FI_DEV_PCIE_REPLAY_COUNTER DCGM_FI_DEV_ROW_REMAP_FAILURE \
	DCGM_FI_DEV_FB_RESERVED DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL; do
	if grep -q "^$f{$D2}" "$T/dcgm.txt"; then fail "dcgm: $f of GPU 2, which does not give it"; fi
done
# no DCGM field: the dynolog name stays; the dynolog names of the DCGM-named keys are gone
grep -q '^dynolog_gpu_pipe_integer_active_ratio{gpu="0"' "$T/dcgm.txt" || fail "dcgm: integer pipe lost"
grep -q '^dynolog_gpu_xid_errors_total{gpu="0",uuid="GPU-00000000-1111-2222-3333-444444444444",model="NVIDIA H100 80GB HBM3"} 3$' \
	"$T/dcgm.txt" || fail "dcgm: the XID count lost"
grep -q '^# TYPE DCGM_FI_DEV_XID_ERRORS gauge$' "$T/dcgm.txt" || fail "dcgm: XID type"
for fam in dynolog_gpu_utilization_ratio dynolog_gpu_energy_joules_total dynolog_gpu_sm_clock_hertz; do
	if grep -q "^$fam" "$T/dcgm.txt"; then fail "dcgm: $fam still published"; fi
done
# absent stays absent: GPU 2 has no GPM, the lost GPU 1 nothing
if grep -q 'DCGM_FI_PROF_SM_ACTIVE{gpu="2"' "$T/dcgm.txt"; then fail "dcgm: GPM series without GPM"; fi
if grep -q 'gpu="1",UUID="GPU-1' "$T/dcgm.txt"; then fail "dcgm: lost GPU published"; fi
# the JSON log keeps upstream's keys whatever the Prometheus names
grep -qF '"gpu_device_utilization.0":60' <<<"$(grep gpu_name "$T/dcgm.jsonl" | tail -n 1)" || fail "dcgm: JSON keys changed"
if grep -q 'gpu_energy_total' "$T/dcgm.jsonl"; then fail "dcgm: export-only key on the JSON log"; fi

# ---- a driver without GPM and without the energy entry point ----
run_daemon old --nvml_library="$OLD"
wait_for bash -c "[ \$(grep -c gpu_name '$T/old.jsonl') -ge 3 ]" || fail "old: fewer than 3 GPU ticks"
grep -q 'libfake-nvml-old.so lacks nvmlDeviceGetMemoryInfo_v2, nvmlDeviceGetTotalEnergyConsumption, nvmlGpmQueryDeviceSupport' "$T/old.log" ||
	fail "old: missing entry points not named"
last=$(grep gpu_name "$T/old.jsonl" | tail -n 1)
grep -qF '"gpu_power_draw.0":250.5' <<<"$last" || fail "old: the rest is not collected: $last"
for k in gpu_energy_mj.0 sm_active_ratio.0 nvlink_tx_bytes.0 xid_errors.0 xid_last.0 xid_errors.3; do
	if grep -qF "\"$k\"" <<<"$last"; then fail "old: $k published without its entry point"; fi
done
grep -q 'lacks .*nvmlEventSetCreate, nvmlEventSetFree, nvmlDeviceRegisterEvents, nvmlEventSetWait_v2' "$T/old.log" ||
	fail "old: missing event entry points not named"
# without GPM on the whole driver, GPU 0's NVLink comes from the field values too (no lines: absent), GPU 3's is there
grep -qF '"nvlink_tx_bytes.3":2097152' <<<"$last" || fail "old: NVLink from the field values: $last"
# no v2 memory query: used counts the 615 MiB reserved (1024 + 615 MiB), no
# reserved series -- in the JSON log, on Prometheus and in the history
grep -qF '"gpu_memory_used_bytes.0":1718616064' <<<"$last" || fail "old: v1 memory used: $last"
if grep -q gpu_memory_reserved "$T/old.jsonl"; then fail "old: a reserved series without the v2 query"; fi
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/old.txt"
grep -qx "dynolog_gpu_memory_used_bytes{$L0} 1718616064" "$T/old.txt" || fail "old: Prometheus used: $(grep memory_used "$T/old.txt")"
if grep -q '^dynolog_gpu_memory_reserved_bytes' "$T/old.txt"; then fail "old: Prometheus reserved series"; fi
"$DYNO" metrics --port="$RPC" --names='gpu_memory_used_bytes.0,gpu_memory_reserved_bytes.0' --json >"$T/old-rpc.json" || fail "old: getMetrics"
grep -q '"gpu_memory_used_bytes.0":\[\[[0-9]*,1718616064\]' "$T/old-rpc.json" || fail "old: history used: $(cat "$T/old-rpc.json")"
if grep -q reserved "$T/old-rpc.json"; then fail "old: history has a reserved series"; fi

# ---- the same old driver under dcgm-exporter's names: FB_USED counts the reserved memory, no FB_RESERVED ----
run_daemon olddcgm --nvml_library="$OLD" --prometheus_names=dcgm
wait_for bash -c "[ \$(grep -c gpu_name '$T/olddcgm.jsonl') -ge 2 ]" || fail "olddcgm: fewer than 2 GPU ticks"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/olddcgm.txt"
for fv in DCGM_FI_DEV_FB_USED:1639 DCGM_FI_DEV_FB_FREE:80281 DCGM_FI_DEV_FB_TOTAL:81920; do
	grep -qx "${fv%%:*}{$D0} ${fv#*:}" "$T/olddcgm.txt" || fail "olddcgm: want ${fv%%:*} ${fv#*:}: $(grep DCGM_FI_DEV_FB "$T/olddcgm.txt")"
done
if grep -q '^DCGM_FI_DEV_FB_RESERVED' "$T/olddcgm.txt"; then fail "olddcgm: FB_RESERVED without the v2 query"; fi

# ---- no library: said once, the daemon runs on, no GPU series ----
run_daemon none --nvml_library="$T/no-such-libnvidia-ml.so.1" --kernel_monitor_reporting_interval_s=1
wait_for bash -c "[ \$(wc -l <'$T/none.jsonl') -ge 3 ]" || fail "none: host ticks stopped"
[ "$(grep -c 'GPU monitor needs NVML' "$T/none.log")" = 1 ] || fail "none: not said exactly once"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/none.txt"
if grep -q '^dynolog_gpu_' "$T/none.txt" || grep -q gpu_ "$T/none.jsonl"; then fail "none: GPU series without a library"; fi
grep -Eq '^dynolog_collector_success\{collector="nvml"\} 0(\.0)?$' "$T/none.txt" || fail "none: collector success not 0"

# ---- configuration errors ----
if "$DYNOLOG" --port=0 --gpu_backend=rocm --exit_after_ticks=1 >/dev/null 2>"$T/bad.log"; then fail "rocm accepted"; fi
grep -q 'expected auto, nvml or dcgm' "$T/bad.log" || fail "bad backend: $(cat "$T/bad.log")"
if "$DYNOLOG" --port=0 --prometheus_names=grafana --exit_after_ticks=1 >/dev/null 2>"$T/names.log"; then fail "names accepted"; fi
grep -q 'prometheus_names=grafana: expected dynolog or dcgm' "$T/names.log" || fail "bad names: $(cat "$T/names.log")"
echo ok
