#!/usr/bin/env bash
# What the GPU collector asks NVML, counted by the fake NVML itself
# (FAKE_NVML_COUNTS: every entry point's calls per device, written at
# nvmlShutdown): what does not change (the devices, their names and UUIDs,
# GPM support, MIG mode, the XID registration) once; each query a tick
# publishes once per tick; a query a device answers NOT_SUPPORTED once,
# never again.  And the collector's own timings: one series per entry point
# on Prometheus and in the history (dyno metrics), and its CPU per tick.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
LIB=$PWD/$BUILD/libfake-nvml.so
[ -f "$LIB" ] || { echo "needs $LIB (make)"; exit 1; }
fail() { echo "FAIL: $*"; tail -n 20 "$T"/*.log 2>/dev/null; exit 1; }

# GPU 0: an H100 answering every query; GPU 1: an A100 (no GPM) answering
# only its temperature (everything else NOT_SUPPORTED), MIG on with one
# instance (memory only)
cat >"$T/script" <<'S'
gpus 2
name 0 NVIDIA H100 80GB HBM3
uuid 0 GPU-0
util 0 50:20
mem 0 85899345920:1073741824:644874240
power 0 250000
energy 0 1000,2000,3000,4000
clock_sm 0 1980
clock_mem 0 2619
temp 0 45
pcie_tx 0 1000
pcie_rx 0 2000
ecc_corr 0 0
ecc_uncorr 0 0
throttle 0 4
enc 0 0
dec 0 0
procs 0 -
gprocs 0 -
memtemp 0 50
pcie_replay 0 0
remap_cor 0 0
remap_unc 0 0
remap_fail 0 0
gpm 0 2 50
name 1 NVIDIA A100-SXM4-80GB
uuid 1 GPU-1
nogpm 1
temp 1 40
mig 1 1
name 1/mig0 NVIDIA A100 MIG 1g.10gb
uuid 1/mig0 MIG-1
mem 1/mig0 10000000000:123456
S

FAKE_NVML_SCRIPT=$T/script FAKE_NVML_COUNTS=$T/counts "$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 \
	--kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor --dcgm_reporting_interval_s=1 \
	--gpu_collect_timeout_ms=10000 --nvml_library="$LIB" --json_format=jsonl --json_log_file="$T/d.jsonl" \
	2>"$T/d.log" &
DPID=$!
PIDS+=($DPID)
wait_for grep -q 'serving Prometheus' "$T/d.log" || fail "no Prometheus"
PORT=$(prom_port_from_log "$T/d.log")
RPC=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$T/d.log" | head -n 1)
wait_for bash -c "[ \$(grep -c gpu_name '$T/d.jsonl') -ge 4 ]" || fail "fewer than 4 GPU ticks"

# the self-timings: Prometheus, the JSON log, the history
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
grep -q '^# TYPE dynolog_collector_call_seconds gauge$' "$T/page.txt" || fail "no call-time family"
for c in nvmlDeviceGetUtilizationRates nvmlDeviceGetMemoryInfo_v2 nvmlDeviceGetFieldValues nvmlGpmSampleGet \
	nvmlGpmMetricsGet nvmlEventSetWait_v2 nvmlDeviceGetRunningProcesses_v3; do
	grep -Eq "^dynolog_collector_call_seconds\{call=\"$c\",collector=\"nvml\"\} [0-9.e+-]+$" "$T/page.txt" ||
		fail "no call time of $c: $(grep collector_call "$T/page.txt")"
done
# v1 memory is not asked where v2 answers: no time for it
if grep -q 'call="nvmlDeviceGetMemoryInfo"' "$T/page.txt"; then fail "a v1 memory call timed"; fi
grep -Eq '^dynolog_collector_cpu_seconds\{collector="nvml"\} [0-9.e+-]+$' "$T/page.txt" || fail "no CPU per tick"
grep -q '"nvml_tick_cpu_ns":' <<<"$(grep gpu_name "$T/d.jsonl" | tail -n 1)" || fail "JSON log: no CPU per tick"
"$DYNO" metrics --port="$RPC" --names='nvml_call_ns.*,nvml_tick_cpu_ns' >"$T/metrics.txt" || fail "dyno metrics"
grep -q '^nvml_call_ns.nvmlDeviceGetUtilizationRates ' "$T/metrics.txt" || fail "dyno metrics: $(cat "$T/metrics.txt")"
grep -q '^nvml_tick_cpu_ns ' "$T/metrics.txt" || fail "dyno metrics: no CPU per tick: $(cat "$T/metrics.txt")"

# stop the daemon: nvmlShutdown writes the counts; every tick that ran
# published its JSON line (one loop callback collects and publishes)
kill -TERM "$DPID"
wait "$DPID" || fail "daemon exit status $?"
[ -s "$T/counts" ] || fail "no call counts written"
N=$(grep -c '"gpu_name.0"' "$T/d.jsonl")
calls() { awk -v c="$1" -v d="$2" '$1 == c && $2 == d { n = $3 } END { print n + 0 }' "$T/counts"; }
want() { # call dev n why
	local got
	got=$(calls "$1" "$2")
	[ "$got" = "$3" ] || fail "$1 on $2: $got calls, want $3 ($4); all: $(tr '\n' ';' <"$T/counts")"
}
# once: what does not change
want init - 1 "NVML started once"
want count - 1 "the devices counted once"
for d in 0 1; do
	want handle "$d" 1 "a GPU's handle once"
	want gpm_support "$d" 1 "GPM support asked once"
	want mig_mode "$d" 1 "MIG mode asked once"
	want ev_register "$d" 1 "XID registration once"
done
for d in 0 1 1/mig0; do
	want name "$d" 1 "a name once"
	want uuid "$d" 1 "a UUID once"
done
# each tick, once: what GPU 0 publishes
for c in util mem_v2 power energy clock_sm clock_mem temp pcie_tx pcie_rx ecc_corr ecc_uncorr throttle enc dec \
	procs gprocs fields gpm_sample; do
	want "$c" 0 "$N" "once per tick ($N ticks)"
done
want gpm_get 0 $((N - 1)) "from the second tick (two samples)"
want mem 0 0 "v1 memory not asked where v2 answers"
want ev_wait - "$N" "one 0 ms wait per tick when no XID came"
# NOT_SUPPORTED: asked once, never again (GPU 1 answers only its temperature)
want temp 1 "$N" "GPU 1's temperature, supported"
want fields 1 1 "every field value refused at the first call: none asked again"
for c in util mem_v2 power energy clock_sm clock_mem pcie_tx pcie_rx ecc_corr ecc_uncorr throttle enc dec; do
	want "$c" 1 1 "refused once, not asked again"
done
want procs 1 0 "a MIG parent's processes are listed on its instances"
# the MIG instance: its memory each tick, the rest once
want mem_v2 1/mig0 "$N" "the instance's memory"
for c in util power temp enc procs; do
	want "$c" 1/mig0 1 "refused once, not asked again"
done
want fields 1/mig0 0 "no field values for a MIG instance"
echo ok
