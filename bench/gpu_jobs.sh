#!/usr/bin/env bash
# Cost of the GPU accounting (collect/gpu_jobs.c): two daemons side by side
# in one run, both collecting 8 fake GPUs (build/libfake-nvml.so) every 1 s
# with a 60 s history window; B's fake also lists 4 processes per GPU (32
# real processes of this script, so B reads their /proc entries: stat each
# tick, status/environ/cgroup once), A's lists none (the call is not
# supported: no accounting work).  Printed: CPU as % of one core (from
# /proc/<pid>/task/*/schedstat), peak and current RSS, and B's extra over
# A.  Never fails on the figures.
# Usage: bench/gpu_jobs.sh [BUILD_DIR] [SECONDS]
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

# 32 idle processes to be "on the GPUs"
SLEEPERS=()
for _ in $(seq 32); do
	SLURM_JOB_ID=$((1000 + ${#SLEEPERS[@]})) sleep 100000 &
	PIDS+=($!)
	SLEEPERS+=($!)
done
script() { # with-processes
	echo "gpus 8"
	for i in $(seq 0 7); do
		printf 'name %d NVIDIA H100 80GB HBM3\nuuid %d GPU-%d\nenergy %d 1000,3500,7000,10000,13000\n' \
			"$i" "$i" "$i" "$i"
		printf 'util %d 50:20\nmem %d 85899345920:1073741824\npower %d 250500\ntemp %d 45\n' "$i" "$i" "$i" "$i"
		if [ "$1" = 1 ]; then
			local l="${SLEEPERS[$((4 * i))]}:1048576+${SLEEPERS[$((4 * i + 1))]}:1048576"
			l+="+${SLEEPERS[$((4 * i + 2))]}:1048576+${SLEEPERS[$((4 * i + 3))]}:1048576"
			printf 'procs %d %s\n' "$i" "$l"
		fi
	done
}
script 0 >"$T/a.script"
script 1 >"$T/b.script"

COMMON=(--port=0 --kernel_monitor_reporting_interval_s=1 --json_log_file=/dev/null --history_window_s=60
	--enable_gpu_monitor --dcgm_reporting_interval_s=1 --nvml_library="$LIB")
start() { # name script
	FAKE_NVML_SCRIPT=$2 "$DYNOLOG" "${COMMON[@]}" 2>"$T/$1.log" &
	PIDS+=($!)
	eval "$1=$!"
}
start A "$T/a.script"
start B "$T/b.script"
sleep 3
for n in A B; do
	grep -q 'NVML sees 8 GPUs' "$T/$n.log" || { echo "$n did not find the 8 fake GPUs:"; cat "$T/$n.log"; exit 1; }
done
a0=$(cpu_ns "$A")
b0=$(cpu_ns "$B")
sleep "$SECS"
a1=$(cpu_ns "$A")
b1=$(cpu_ns "$B")
pct() { awk -v d="$1" -v s="$SECS" 'BEGIN { printf "%.3f", d / (s * 1e9) * 100 }'; }
echo "GPU accounting cost over ${SECS}s (8 fake GPUs at 1 s; B: 4 processes per GPU, 32 jobs)"
printf '%-34s %10s %10s %10s\n' daemon "CPU %core" "VmHWM kB" "VmRSS kB"
printf '%-34s %10s %10s %10s\n' "A: GPUs, no process lists" "$(pct $((a1 - a0)))" "$(kb "$A" VmHWM)" "$(kb "$A" VmRSS)"
printf '%-34s %10s %10s %10s\n' "B: GPUs + accounting" "$(pct $((b1 - b0)))" "$(kb "$B" VmHWM)" "$(kb "$B" VmRSS)"
echo "B - A: CPU $(awk -v a="$(pct $((a1 - a0)))" -v b="$(pct $((b1 - b0)))" 'BEGIN { printf "%+.3f", b - a }') % of one core," \
	"VmHWM $(($(kb "$B" VmHWM) - $(kb "$A" VmHWM))) kB"
