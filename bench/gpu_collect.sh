#!/usr/bin/env bash
# Cost of GPU collection: two daemons side by side in one run, both with
# the host collectors at a 1 s interval; B also collects 8 fake GPUs
# (build/libfake-nvml.so, every metric including GPM) every 1 s.  Printed:
# CPU as % of one core (from /proc/<pid>/task/*/schedstat), peak and
# current RSS, and B's extra over A.  The fake's own work per call is a
# table lookup, so this measures the daemon's side (thread hand-off,
# frame, sinks), not the real driver's.  Never fails on the figures.
# Usage: bench/gpu_collect.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-${1:-build}}
SECS=${2:-20}
DYNOLOG=$PWD/$O/dynolog
LIB=$PWD/$O/libfake-nvml.so
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
		printf 'util %d 50:20,60:25\nmem %d 85899345920:1073741824\npower %d 250500\nenergy %d 1000,3500,7000\n' \
			"$i" "$i" "$i" "$i"
		printf 'clock_sm %d 1980\nclock_mem %d 2619\ntemp %d 45\npcie_tx %d 1000\npcie_rx %d 2000\n' \
			"$i" "$i" "$i" "$i" "$i"
		printf 'ecc_corr %d 0\necc_uncorr %d 0\nthrottle %d 4\n' "$i" "$i" "$i"
		for m in 1 2 3 4 5 10 11 12 13 60 61; do printf 'gpm %d %d 12.5\n' "$i" "$m"; done
	done
} >"$T/script"

COMMON=(--port=0 --kernel_monitor_reporting_interval_s=1 --json_log_file=/dev/null)
GPU=(--enable_gpu_monitor --dcgm_reporting_interval_s=1 --nvml_library="$LIB")
# A/B: the default history window (1 h: at 1 s the ring preallocates a
# slot per key per second, so more keys cost memory there -- the history's
# cost, not the collector's); A60/B60: a 60 s window, the collector's own cost
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
sleep 3
for n in B B60; do
	grep -q 'NVML sees 8 GPUs' "$T/$n.log" || { echo "$n did not find the 8 fake GPUs:"; cat "$T/$n.log"; exit 1; }
done
declare -A c0 c1
for n in A B A60 B60; do c0[$n]=$(cpu_ns ${!n}); done
t0=$(date +%s%N)
sleep "$SECS"
for n in A B A60 B60; do c1[$n]=$(cpu_ns ${!n}); done
t1=$(date +%s%N)
echo "== ${SECS} s, all at 1 s; B adds 8 fake GPUs (26 series each) every 1 s"
printf '%-34s %10s %10s %10s %8s\n' "" "A host" "B +8 GPUs" "B - A" "B / A"
row() { # label a b
	awk -v l="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%-34s %10.3f %10.3f %10.3f %8.2f\n", l, a, b, b - a, (a > 0 ? b / a : 0)}'
}
pct() { awk -v a="$1" -v b="$2" -v w="$((t1 - t0))" 'BEGIN {printf "%.4f", 100 * (b - a) / w}'; }
row "CPU, % of one core (1 h history)" "$(pct "${c0[A]}" "${c1[A]}")" "$(pct "${c0[B]}" "${c1[B]}")"
row "CPU, % of one core (60 s history)" "$(pct "${c0[A60]}" "${c1[A60]}")" "$(pct "${c0[B60]}" "${c1[B60]}")"
row "peak RSS MB (1 h history)" "$(kb $A VmHWM | awk '{print $1/1024}')" "$(kb $B VmHWM | awk '{print $1/1024}')"
row "peak RSS MB (60 s history)" "$(kb $A60 VmHWM | awk '{print $1/1024}')" "$(kb $B60 VmHWM | awk '{print $1/1024}')"
