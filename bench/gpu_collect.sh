#!/usr/bin/env bash
# Cost of GPU collection, and the daemon's memory with 8 busy GPUs: daemons
# side by side in one run, all with the host collectors at a 1 s interval;
# the B daemons also collect 8 fake GPUs (build/libfake-nvml.so, every
# metric including GPM and XID events) every 1 s.  The fake GPUs are busy:
# the noisy readings are drawn afresh each tick over a training job's range
# (utilization 96-100 %, temperature 60-70 C, power 550-650 W to the mW and
# the energy it adds, GPM ratios with full digits around their levels,
# NVLink 30-70 GiB/s, PCIe 0-40 MB/s; real readings drift, so this is the
# harder case for the history); memory, clocks, ECC and XIDs hold still.
#   A / B:     the default history window (1 h), no Prometheus: the
#              default daemon, whose RSS the issue bounds (<= 2.5 MB);
#   A60 / B60: a 60 s window: the collector's own cost, without an hour of
#              its history (<= 1 % of a core, <= 1 MB);
#   P:         B with Prometheus on, read for dynolog_history_bytes (the
#              history's block bytes) half-way and at the end.
# Printed: CPU as % of one core (from /proc/<pid>/task/*/schedstat), peak
# RSS (VmHWM), B's extra over A, and for B the projection to a full window:
# its VmHWM plus the history bytes still to come (the growth rate of the
# second half of the run, to 3600 s; an hour's run needs no projection).
# The fake's own work per call is a table lookup, so this measures the
# daemon's side (thread hand-off, frame, sinks), not the real driver's.
# Never fails on the figures.
# Usage: bench/gpu_collect.sh [BUILD_DIR] [SECONDS]   (SECONDS=3600: the full window)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-${1:-build}}
SECS=${2:-60}
case $O in /*) B=$O ;; *) B=$PWD/$O ;; esac
DYNOLOG=$B/dynolog
LIB=$B/libfake-nvml.so
[ -f "$LIB" ] || { echo "needs $LIB (make)"; exit 1; }
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
kb() { awk -v k="$2:" '$1 == k {print $2}' /proc/"$1"/status; }

{
	echo "gpus 8"
	for i in $(seq 0 7); do
		printf 'name %d NVIDIA H100 80GB HBM3\nuuid %d GPU-%08d-1111-2222-3333-444444444444\n' "$i" "$i" "$i"
		printf 'util %d R96~100:R30~60\nmem %d 85899345920:1073741824,85899345920:70866960384\n' "$i" "$i"
		printf 'power %d R550000~650000\nenergy %d +R550000~650000\n' "$i" "$i"
		printf 'clock_sm %d 1980\nclock_mem %d 2619\ntemp %d R60~70\n' "$i" "$i" "$i"
		printf 'pcie_tx %d R0~40000\npcie_rx %d R0~40000\n' "$i" "$i"
		printf 'ecc_corr %d 0\necc_uncorr %d 0\nthrottle %d 4\n' "$i" "$i" "$i"
		# GPM (%, MiB/s): graphics, SM active, occupancy, integer, tensor (any; DFMA, HMMA, IMMA),
		# DRAM, FP64, FP32, FP16, NVLink
		for m in 1:R92~98 2:R80~90 3:R40~50 4:R7~13 5:R45~65 6:0 7:R45~65 9:0 10:R50~70 11:0 12:R9~15 13:R5~11 \
			60:R30000~70000 61:R30000~70000; do
			printf 'gpm %d %s %s\n' "$i" "${m%%:*}" "${m#*:}"
		done
	done
} >"$T/script"

COMMON=(--port=0 --kernel_monitor_reporting_interval_s=1 --json_log_file=/dev/null)
GPU=(--enable_gpu_monitor --dcgm_reporting_interval_s=1 --nvml_library="$LIB")
start() { # name flags...
	local n=$1
	shift
	FAKE_NVML_SCRIPT=$T/script "$DYNOLOG" "${COMMON[@]}" "$@" 2>"$T/$n.log" &
	PIDS+=($!)
	eval "$n=$!"
}
start A
start B "${GPU[@]}"
start A60 --history_window_s=60
start B60 --history_window_s=60 "${GPU[@]}"
start P "${GPU[@]}" --use_prometheus --prometheus_port=0
sleep 3
for n in B B60 P; do
	grep -q 'NVML sees 8 GPUs' "$T/$n.log" || { echo "$n did not find the 8 fake GPUs:"; cat "$T/$n.log"; exit 1; }
done
PPORT=$(sed -n 's|.*serving Prometheus metrics on http://[^:]*:\([0-9]*\)/metrics.*|\1|p' "$T/P.log" | head -n 1)
hist_bytes() { curl -sf "http://127.0.0.1:$PPORT/metrics" | awk '$1 == "dynolog_history_bytes" {printf "%d", $2}'; }
declare -A c0 c1
for n in A B A60 B60; do c0[$n]=$(cpu_ns ${!n}); done
t0=$(date +%s%N)
sleep $((SECS / 2))
hb_mid=$(hist_bytes)
tm=$(date +%s%N)
sleep $((SECS - SECS / 2))
hb_end=$(hist_bytes)
for n in A B A60 B60; do c1[$n]=$(cpu_ns ${!n}); done
t1=$(date +%s%N)
nkeys=$(curl -sf "http://127.0.0.1:$PPORT/metrics" | awk '$1 == "dynolog_history_series" {print $2}')
echo "== ${SECS} s, all at 1 s; B adds 8 busy fake GPUs every 1 s ($nkeys history keys with them)"
printf '%-34s %10s %10s %10s %8s\n' "" "A host" "B +8 GPUs" "B - A" "B / A"
row() { # label a b
	awk -v l="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%-34s %10.3f %10.3f %10.3f %8.2f\n", l, a, b, b - a, (a > 0 ? b / a : 0)}'
}
pct() { awk -v a="$1" -v b="$2" -v w="$((t1 - t0))" 'BEGIN {printf "%.4f", 100 * (b - a) / w}'; }
row "CPU, % of one core (1 h history)" "$(pct "${c0[A]}" "${c1[A]}")" "$(pct "${c0[B]}" "${c1[B]}")"
row "CPU, % of one core (60 s history)" "$(pct "${c0[A60]}" "${c1[A60]}")" "$(pct "${c0[B60]}" "${c1[B60]}")"
row "peak RSS MB (1 h history)" "$(kb $A VmHWM | awk '{print $1/1024}')" "$(kb $B VmHWM | awk '{print $1/1024}')"
row "peak RSS MB (60 s history)" "$(kb $A60 VmHWM | awk '{print $1/1024}')" "$(kb $B60 VmHWM | awk '{print $1/1024}')"
awk -v mid="$hb_mid" -v end="$hb_end" -v tm="$tm" -v t1="$t1" -v t0="$t0" -v secs="$SECS" -v hwm="$(kb $B VmHWM)" 'BEGIN {
	rate = (end - mid) / ((t1 - tm) / 1e9)   # bytes a second, second half
	left = 3600 - (t1 - t0) / 1e9 - 3        # the daemons started ~3 s before t0
	if (left < 0) left = 0
	proj = end + rate * left
	printf "history bytes (B with Prometheus): %.0f kB after %d s, growing %.0f bytes/s: %.0f kB at 3600 s\n", end / 1000, secs + 3, rate, proj / 1000
	printf "B projected to a full 1 h window: VmHWM %.2f MB + %.0f kB of history still to come = %.2f MB (target <= 2.5 MB)\n", hwm / 1024, (proj - end) / 1000, (hwm * 1024 + proj - end) / 1048576
}'
