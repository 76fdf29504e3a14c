#!/usr/bin/env bash
# gpusnoop's cost on the process it watches (bench/gpusnoop.c, the
# stand-in CUDA runtime): the same workload without probes (baseline) and
# with gpusnoop attached (--events mem,launch,sync), in one run.  Prints the
# added time per probed allocate+free pair (target <= 3 us), per launch
# (cudaLaunchKernel, and cuLaunchKernel called directly) and per sync, the
# slowdown of a loop whose allocations take ~100 us each (target <= 2%),
# and the events per second gpusnoop followed with its loss counts
# (ring-buffer drops never silent).  Needs root (BPF); prints "unavailable"
# otherwise.
set -euo pipefail
O=${O:-build}
lib=$PWD/$O/libcudart-fake.so
RATE_SECONDS=${RATE_SECONDS:-2}
PHASE_SECONDS=${PHASE_SECONDS:-1}
export FAKE_CUDA_SYNC_US=0 # a sync returns at once: its probes' cost alone
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fig() { sed -n "s/^$1 //p" "$2"; }

echo go | "$O/bench/gpusnoop" "$lib" "$RATE_SECONDS" "$PHASE_SECONDS" >"$tmp/base"

mkfifo "$tmp/go"
"$O/bench/gpusnoop" "$lib" "$RATE_SECONDS" "$PHASE_SECONDS" <"$tmp/go" >"$tmp/probed" &
work=$!
exec 7>"$tmp/go"
until grep -q ready "$tmp/probed"; do sleep 0.05; done
"$O/gpusnoop" --pid "$work" --events mem,launch,sync --format json >"$tmp/report" 2>"$tmp/err" &
snoop=$!
until grep -q '^gpusnoop: watching' "$tmp/err" || ! kill -0 "$snoop" 2>/dev/null; do sleep 0.05; done
if ! grep -q '^gpusnoop: watching' "$tmp/err"; then
	echo "gpusnoop: unavailable here: $(tail -n 1 "$tmp/err")"
	exec 7>&-
	wait "$work" || true
	exit 0
fi
echo go >&7
exec 7>&-
wait "$work"
wait "$snoop"

b_pair=$(fig pair_ns "$tmp/base") p_pair=$(fig pair_ns "$tmp/probed")
b_launch=$(fig launch_ns "$tmp/base") p_launch=$(fig launch_ns "$tmp/probed")
b_drv=$(fig drv_ns "$tmp/base") p_drv=$(fig drv_ns "$tmp/probed")
b_sync=$(fig sync_ns "$tmp/base") p_sync=$(fig sync_ns "$tmp/probed")
launches=$(grep -o '"launches":{"total":[0-9]*' "$tmp/report" | grep -o '[0-9]*$')
syncs=$(grep -o '"syncs":{"total":[0-9]*' "$tmp/report" | grep -o '[0-9]*$')
b_slow=$(fig slow_ms "$tmp/base") p_slow=$(fig slow_ms "$tmp/probed")
b_rate=$(fig rate "$tmp/base") p_rate=$(fig rate "$tmp/probed")
allocs=$(grep -o '"allocations":[0-9]*' "$tmp/report" | cut -d: -f2)
frees=$(grep -o '"frees":[0-9]*' "$tmp/report" | cut -d: -f2)
secs=$(grep -o '"seconds":[0-9.e+-]*' "$tmp/report" | cut -d: -f2)
drops=$(grep -o '"ringbuf_drops":[0-9]*' "$tmp/report" | cut -d: -f2)
untracked=$(grep -o '"calls_in_flight_full":[0-9]*' "$tmp/report" | cut -d: -f2)
awk -v bp="$b_pair" -v pp="$p_pair" -v bs="$b_slow" -v ps="$p_slow" -v br="$b_rate" -v pr="$p_rate" \
	-v bl="$b_launch" -v pl="$p_launch" -v bd="$b_drv" -v pd="$p_drv" -v by="$b_sync" -v py="$p_sync" \
	-v a="$allocs" -v f="$frees" -v s="$secs" -v d="$drops" -v u="$untracked" -v nl="$launches" -v ny="$syncs" 'BEGIN {
	printf "alloc+free pair:   %8.0f ns without probes, %8.0f ns with: +%.2f us per pair (target <= 3 us), x%.1f\n", bp, pp, (pp - bp) / 1000, pp / bp
	printf "cudaLaunchKernel:  %8.0f ns without probes, %8.0f ns with: +%.2f us per launch (3 probe hits: entry, the driver launch inside, return), x%.1f\n", bl, pl, (pl - bl) / 1000, pl / bl
	printf "cuLaunchKernel:    %8.0f ns without probes, %8.0f ns with: +%.2f us per launch (1 probe hit), x%.1f\n", bd, pd, (pd - bd) / 1000, pd / bd
	printf "cudaStreamSync:    %8.0f ns without probes, %8.0f ns with: +%.2f us per sync (entry, return, a record with its stack), x%.1f\n", by, py, (py - by) / 1000, py / by
	printf "100-us allocations: %7.1f ms without probes, %7.1f ms with (2000 pairs): %+.2f%% (target <= 2%%)\n", bs, ps, (ps / bs - 1) * 100
	printf "tight loop:        %8.0f pairs/s without probes, %8.0f with (x%.2f)\n", br, pr, pr / br
	printf "gpusnoop followed: %d allocations + %d frees in %.1f s = %.0f events/s; ring-buffer drops %d, calls untracked %d\n", a, f, s, (a + f) / s, d, u
	printf "                   %d launches and %d syncs counted\n", nl, ny
}'
