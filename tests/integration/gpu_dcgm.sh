#!/usr/bin/env bash
# The DCGM collector end to end against our fake DCGM (build/libfake-dcgm.so,
# tests/fake/dcgm.c), loaded through --dcgm_library by the same dlopen path
# as libdcgm.so.4: every field of upstream's default set on the JSON log and
# on Prometheus (the NVML collector's names and gpu/uuid/model labels),
# absent (never 0) for DCGM's blank values and failed statuses; a
# --dcgm_standalone_address that cannot be reached is said clearly;
# --gpu_backend: auto falls back to NVML when DCGM does not start (or its
# library lacks entry points: named), nvml never touches DCGM, exactly one
# backend publishes; the fields outside the default set (clocks,
# temperature, utilization, framebuffer, the last XID); bad --dcgm_fields.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
DCGM=$PWD/$BUILD/libfake-dcgm.so
NVML=$PWD/$BUILD/libfake-nvml.so
[ -f "$DCGM" ] && [ -f "$NVML" ] || { echo "needs $DCGM and $NVML (make)"; exit 1; }
fail() { echo "FAIL: $*"; tail -n 20 "$T"/*.log 2>/dev/null; exit 1; }

# GPU 0: every default field (a profiling ratio with noise digits: published
# to 1e-4, as NVML's); GPU 1: blank, "not supported" and a failed status
# for its three device fields, nothing for the profiling ones
cat >"$T/dcgm" <<'S'
gpus 2
name 0 NVIDIA H100 80GB HBM3
uuid 0 GPU-00000000-1111-2222-3333-444444444444
field 0 100 1980
field 0 155 250.5
field 0 204 20
field 0 1001 0.8
field 0 1002 0.5
field 0 1003 0.2512345678
field 0 1004 0.1
field 0 1005 0.33
field 0 1006 0.005
field 0 1007 0.025
field 0 1008 0.015
field 0 1009 1024000
field 0 1010 2048000
field 0 1011 104857600
field 0 1012 209715200
name 1 NVIDIA A100-SXM4-40GB
uuid 1 GPU-11111111-1111-2222-3333-444444444444
field 1 100 B
field 1 155 NS
field 1 204 E-14
S
# the NVML fake: one GPU with a power reading NVML alone gives
printf '%s\n' 'gpus 1' 'name 0 NVIDIA H100 80GB HBM3' 'power 0 100000' >"$T/nvml"

run_daemon() { # name flags...
	local name=$1
	shift
	FAKE_DCGM_SCRIPT=$T/dcgm FAKE_DCGM_LOG=$T/$name.calls FAKE_NVML_SCRIPT=$T/nvml "$DYNOLOG" --port=0 \
		--use_prometheus --prometheus_port=0 --kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor \
		--dcgm_reporting_interval_s=1 --json_format=jsonl --json_log_file="$T/$name.jsonl" \
		--dcgm_library="$DCGM" --nvml_library="$NVML" "$@" 2>"$T/$name.log" &
	PIDS+=($!)
	wait_for grep -q 'serving Prometheus' "$T/$name.log" || fail "$name: no Prometheus"
	PORT=$(prom_port_from_log "$T/$name.log")
}
gpu_ticks() { grep -c gpu_name "$T/$1.jsonl" || true; }

# ---- DCGM, embedded, upstream's default fields ----
run_daemon full
wait_for bash -c "[ \$(grep -c gpu_name '$T/full.jsonl') -ge 2 ]" || fail "fewer than 2 GPU ticks"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
if command -v promtool >/dev/null; then promtool check metrics <"$T/page.txt" || fail "promtool"; fi
grep -q 'GPU monitor: backend DCGM (embedded hostengine, 2 GPUs, 17 fields with profiling fields; --gpu_backend=auto)' \
	"$T/full.log" || fail "the backend choice is not said"
grep -q '^dcgmStartEmbedded 1$' "$T/full.calls" || fail "not embedded in auto mode: $(cat "$T/full.calls")"
grep -q '^dcgmWatchFields 100,155,204,1001,1002,1003,1004,1005,1006,1007,1008,1009,1010,1011,1012,50,54 every 1000000 us$' \
	"$T/full.calls" || fail "not upstream's default fields: $(cat "$T/full.calls")"
L0='gpu="0",uuid="GPU-00000000-1111-2222-3333-444444444444",model="NVIDIA H100 80GB HBM3"'
L1='gpu="1",uuid="GPU-11111111-1111-2222-3333-444444444444",model="NVIDIA A100-SXM4-40GB"'
while IFS="|" read -r fam want; do
	line=$(grep -F "$fam{$L0}" "$T/page.txt" || true)
	[ "$line" = "$fam{$L0} $want" ] || fail "Prometheus: want '$fam{$L0} $want', got '$line'"
done <<W
dynolog_gpu_sm_clock_hertz|1980000000
dynolog_gpu_power_watts|250.5
dynolog_gpu_memory_utilization_ratio|0.2
dynolog_gpu_graphics_engine_active_ratio|0.8
dynolog_gpu_sm_active_ratio|0.5
dynolog_gpu_sm_occupancy_ratio|0.2512
dynolog_gpu_pipe_tensor_active_ratio|0.1
dynolog_gpu_dram_bandwidth_ratio|0.33
dynolog_gpu_pipe_fp64_active_ratio|0.005
dynolog_gpu_pipe_fp32_active_ratio|0.025
dynolog_gpu_pipe_fp16_active_ratio|0.015
dynolog_gpu_pcie_transmit_bytes_per_second|1024000
dynolog_gpu_pcie_receive_bytes_per_second|2048000
dynolog_gpu_nvlink_transmit_bytes_per_second|104857600
dynolog_gpu_nvlink_receive_bytes_per_second|209715200
W
grep -q '^dynolog_collector_success{collector="dcgm"} 1$' "$T/page.txt" || fail "dcgm collector not successful"
# exactly one backend: NVML's own series (power from the NVML fake: 100 W) never appear
if grep -q 'dynolog_gpu_power_watts{.*} 100$' "$T/page.txt"; then fail "NVML published next to DCGM"; fi
if grep -q 'NVML sees' "$T/full.log"; then fail "NVML collected while DCGM is the backend"; fi
# absent, never 0: GPU 1's blank / not supported / failed values
if grep -F "{$L1}" "$T/page.txt"; then fail "GPU 1's blank values published"; fi
last=$(grep gpu_name "$T/full.jsonl" | tail -n 1)
# the collector's own cost, as the NVML collector's: its one call a tick, its CPU
grep -Eq '^dynolog_collector_call_seconds\{call="dcgmGetLatestValues_v2",collector="dcgm"\} [0-9.e+-]+$' "$T/page.txt" ||
	fail "no DCGM call time: $(grep collector_call "$T/page.txt")"
grep -Eq '^dynolog_collector_cpu_seconds\{collector="dcgm"\} [0-9.e+-]+$' "$T/page.txt" || fail "no DCGM CPU per tick"
grep -q '"dcgm_call_ns.dcgmGetLatestValues_v2":[0-9]' <<<"$last" || fail "JSON log: no DCGM call time: $last"
for kv in '"gpu_frequency_mhz.0":1980' '"gpu_power_draw.0":250.5' '"gpu_memory_utilization.0":20' \
	'"graphics_engine_active_ratio.0":0.8' '"sm_active_ratio.0":0.5' '"sm_occupancy.0":0.2512' \
	'"tensorcore_active.0":0.1' '"hbm_mem_bw_util.0":0.33' '"fp64_active.0":0.005' '"fp32_active.0":0.025' \
	'"fp16_active.0":0.015' '"pcie_tx_bytes.0":1024000' '"pcie_rx_bytes.0":2048000' \
	'"nvlink_tx_bytes.0":104857600' '"nvlink_rx_bytes.0":209715200' \
	'"gpu_uuid.0":"GPU-00000000-1111-2222-3333-444444444444"' '"gpu_name.1":"NVIDIA A100-SXM4-40GB"'; do
	grep -qF "$kv" <<<"$last" || fail "JSON log lacks $kv: $last"
done
# the FLOPs/s estimate from the profiling fields, as from NVML's GPM
# (gpu_flops.sh has the rules): GPU 0, an H100 SXM at 1980 MHz, FP16 share
# 1.5/4 >= 0.1: the tensor pipe at the FP16/BF16 rate; GPU 1 has no fields
TABLE=$PWD/data/gpu-peaks.tsv
peak() { awk -F'\t+' -v p="$1" '!/^#/ && $1 == "H100 80GB HBM3|H100 SXM" && $3 == p { print $4, $5 }' "$TABLE"; }
term() { read -r tf mhz < <(peak "$2"); awk -v a="$1" -v t="$tf" -v m="$mhz" 'BEGIN { printf "%.17g\n", a * t * 1e12 * 1980 / m }'; }
# (to 4 significant digits, as published: gpu_flops.h)
want=$({ term 0.1 tensor_fp16; term 0.015 fp16; term 0.025 fp32; term 0.005 fp64; } | awk '{ s += $1 } END { printf "%.3e", s }')
got=$(grep -o '"gpu_flops.0":[^,}]*' <<<"$last" | cut -d: -f2)
awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && w > 0 && d <= 1e-9 * w) }' ||
	fail "DCGM FLOPs/s estimate: got '$got', want $want"
if grep -qF '"gpu_flops.1"' <<<"$last"; then fail "GPU 1 has an estimate without its fields: $last"; fi
grep -q "^dynolog_gpu_flops_per_second{$L0} " "$T/page.txt" || fail "no FLOPs/s series on Prometheus"
for k in gpu_frequency_mhz.1 gpu_power_draw.1 gpu_memory_utilization.1 sm_active_ratio.1; do
	if grep -qF "\"$k\"" <<<"$last"; then fail "blank $k published: $last"; fi
done

# ---- the fields outside upstream's default set, and field 230 (the last
# XID), under the NVML collector's keys and units (253: the reserved
# memory, which DCGM leaves out of 252 as the v2 NVML query does) ----
printf 'field 0 %s\n' '230 0,0,79' '101 2619' '150 45' '203 60' '250 81920' '252 1024' '253 615' >>"$T/dcgm"
run_daemon xid --dcgm_fields=100,101,150,203,250,252,253,230
wait_for bash -c "[ \$(grep -c gpu_name '$T/xid.jsonl') -ge 3 ]" || fail "xid: fewer than 3 GPU ticks"
grep -q '^dcgmWatchFields 100,101,150,203,250,252,253,230,50,54 every' "$T/xid.calls" ||
	fail "xid: fields not watched: $(cat "$T/xid.calls")"
grep -qF '"xid_last.0":0' <<<"$(grep gpu_name "$T/xid.jsonl" | head -n 1)" || fail "xid: first tick"
third=$(grep gpu_name "$T/xid.jsonl" | sed -n 3p)
for kv in '"xid_last.0":79' '"gpu_memory_frequency_mhz.0":2619' '"gpu_temperature_c.0":45' \
	'"gpu_device_utilization.0":60' '"gpu_memory_total_bytes.0":85899345920' '"gpu_memory_used_bytes.0":1073741824' \
	'"gpu_memory_reserved_bytes.0":644874240'; do
	grep -qF "$kv" <<<"$third" || fail "xid: third tick lacks $kv: $third"
done
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/xid.txt" # (not piped into grep -q: pipefail and SIGPIPE)
grep -q "^dynolog_gpu_last_xid{$L0} 79$" "$T/xid.txt" || fail "xid: Prometheus: $(grep xid "$T/xid.txt")"

# ---- a hostengine that cannot be reached: said clearly, no GPU series ----
cat >>"$T/dcgm" <<'S'
call connect E-21
S
run_daemon standalone --gpu_backend=dcgm --dcgm_standalone_address=127.0.0.1:1 --kernel_monitor_reporting_interval_s=1
wait_for grep -q 'dcgmConnect to the hostengine at 127.0.0.1:1 (--dcgm_standalone_address) failed: no connection to the hostengine (-21)' \
	"$T/standalone.log" || fail "standalone: connect failure not said"
grep -q 'DCGM did not start; --gpu_backend=dcgm: no GPU metrics' "$T/standalone.log" || fail "standalone: consequence not said"
grep -q '^dcgmConnect 127.0.0.1:1$' "$T/standalone.calls" || fail "standalone: not connected to the address"
wait_for bash -c "[ \$(grep -c cpus_online '$T/standalone.jsonl') -ge 3 ]" || fail "standalone: host ticks stopped"
[ "$(grep -c 'dcgmConnect to the hostengine' "$T/standalone.log")" = 1 ] || fail "standalone: failure said more than once"
[ "$(grep -c '^dcgmConnect' "$T/standalone.calls")" -ge 2 ] || fail "standalone: connect not retried"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/sa.txt"
if grep -q '^dynolog_gpu_' "$T/sa.txt" || grep -q gpu_ "$T/standalone.jsonl"; then fail "standalone: GPU series"; fi

# ---- auto: DCGM does not start -> NVML publishes ----
sed -i 's/^call connect E-21$/call start E-7/' "$T/dcgm"
run_daemon auto
wait_for bash -c "[ \$(grep -c gpu_name '$T/auto.jsonl') -ge 2 ]" || fail "auto: no NVML ticks"
grep -q 'DCGM: dcgmStartEmbedded failed: init error (-7)' "$T/auto.log" || fail "auto: DCGM's failure not said"
grep -q 'GPU monitor: backend NVML (--gpu_backend=auto: DCGM did not start' "$T/auto.log" || fail "auto: fallback not said"
grep -q 'GPU monitor (NVML, --gpu_backend=auto)' "$T/auto.log" || fail "auto: start-up line"
grep -qF '"gpu_power_draw.0":100' <<<"$(grep gpu_name "$T/auto.jsonl" | tail -n 1)" || fail "auto: NVML values missing"

# ---- auto: a library that lacks DCGM's entry points -> NVML publishes, the gaps named ----
run_daemon lacks --dcgm_library="$NVML"
wait_for bash -c "[ \$(grep -c gpu_name '$T/lacks.jsonl') -ge 2 ]" || fail "lacks: no NVML ticks"
grep -q "GPU monitor: backend NVML (--gpu_backend=auto: .*libfake-nvml.so lacks dcgmInit, .*dcgmGetLatestValues_v2" \
	"$T/lacks.log" || fail "lacks: the missing entry points not named: $(cat "$T/lacks.log")"
grep -qF '"gpu_power_draw.0":100' <<<"$(grep gpu_name "$T/lacks.jsonl" | tail -n 1)" || fail "lacks: NVML values missing"

# ---- nvml: DCGM is never loaded or called ----
run_daemon nvml --gpu_backend=nvml
wait_for bash -c "[ \$(grep -c gpu_name '$T/nvml.jsonl') -ge 1 ]" || fail "nvml: no NVML ticks"
[ ! -s "$T/nvml.calls" ] || fail "nvml: DCGM called: $(cat "$T/nvml.calls")"

# ---- configuration errors ----
if "$DYNOLOG" --port=0 --dcgm_fields=100,abc --exit_after_ticks=1 >/dev/null 2>"$T/bad.log"; then fail "bad fields accepted"; fi
grep -q "dcgm_fields=100,abc: 'abc' is not a field id" "$T/bad.log" || fail "bad fields: $(cat "$T/bad.log")"
if "$DYNOLOG" --port=0 --dcgm_fields=100,4242 --exit_after_ticks=1 >/dev/null 2>"$T/bad2.log"; then fail "unknown field accepted"; fi
grep -q "field 4242 has no metric name here" "$T/bad2.log" || fail "unknown field: $(cat "$T/bad2.log")"
echo ok
