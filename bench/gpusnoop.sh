#!/usr/bin/env bash
# gpusnoop's cost on the process it watches, with the stand-in CUDA
# runtime (no GPU), baseline and probed runs interleaved in one run.
#
# 1. Per call (bench/gpusnoop.c): the time added per allocate+free pair,
#    per cudaLaunchKernel, per direct cuLaunchKernel, per
#    cudaStreamSynchronize (--events mem,launch,sync): what one trap costs
#    on this machine.
# 2. At a training loop's rates (build/gpusnoop-churn, one thread: a
#    cudaMalloc+cudaFree pair from one of 1,024 distinct stacks, launches,
#    a sync every 100 pairs, and a fixed amount of CPU work between pairs
#    so the loop runs at the rate without probes): 50k, 100k and 200k
#    allocations+frees a second with as many launches, then the loop of
#    the targets, 35k allocations and 35k launches a second.  For each, per
#    mode (mem only; mem,launch,sync): the loop's slowdown (its CPU time,
#    probed over baseline: the machine may be shared, wall time is not
#    trusted), the events a second it reached under the probes, the
#    records gpusnoop saw and lost, and gpusnoop's own CPU time.  These
#    rows probe every launch (--launch-sample 100); then the targets' loop
#    over SAMPLE_SECONDS (20) with the launches sampled as by default
#    (--launch-sample 10: a 1 s window of each 10 s) and with every launch.
#    Section 1 also prints the floor the traps alone set for that loop and,
#    on the stand-ins built with -fcf-protection (build/cet), a sync probed
#    on its endbr64 (--probe-at-entry) and after it.
# 3. The BPF programs' own time per call (kernel.bpf_stats_enabled on for
#    one run of the targets' loop, put back after; needs bpftool).
#
# GPUSNOOP=path runs another build; GPUSNOOP_COMPARE=path also runs that
# one in the same rows (interleaved: baseline, GPUSNOOP, GPUSNOOP_COMPARE);
# BENCH_SECONDS (1) is the baseline length of each loop run, REPS (2) the
# baseline/probed pairs per figure (the least CPU of each kept).  Needs
# root (BPF); prints "unavailable" otherwise.
set -euo pipefail
O=${O:-build}
SNOOP=${GPUSNOOP:-$O/gpusnoop}
lib=$PWD/$O/libcudart-fake.so
RATE_SECONDS=${RATE_SECONDS:-1}
PHASE_SECONDS=${PHASE_SECONDS:-0.5}
BENCH_SECONDS=${BENCH_SECONDS:-1}
REPS=${REPS:-2}
export FAKE_CUDA_SYNC_US=0 # a sync returns at once: its probes' cost alone
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fig() { sed -n "s/^$1 //p" "$2"; }
# a number in a JSON report; 0 where absent (an older build's report)
json() {
	local v
	v=$(grep -o "\"$1\":[0-9.e+-]*" "$2" | head -n 1 | cut -d: -f2)
	echo "${v:-0}"
}

# start_snoop PID OUT ARGS...: gpusnoop on PID in the background ($snoop),
# its CPU time into OUT.cpu at its exit; returns once its probes are attached
start_snoop() {
	local pid=$1 out=$2
	shift 2
	: >"$out.err"
	( "${SNOOP_BIN:-$SNOOP}" --pid "$pid" --format json "$@" >"$out" 2>"$out.err"; times >"$out.cpu" ) &
	snoop=$!
	until grep -q '^gpusnoop: watching' "$out.err" || ! kill -0 "$snoop" 2>/dev/null; do sleep 0.05; done
	if ! grep -q '^gpusnoop: watching' "$out.err"; then
		echo "gpusnoop: unavailable here: $(tail -n 1 "$out.err")"
		exit 0
	fi
}

# probed OUT SNOOP-ARGS... -- CMD...: CMD started waiting for a line on a
# FIFO (its stdout OUT, where it says "ready"), gpusnoop attached to it
# with SNOOP-ARGS (its JSON report in OUT.json; not attached if
# SNOOP-ARGS is "-"), CMD released, both waited for; $DURING, if set, is
# run (eval) while CMD works
probed() {
	local out=$1 args=()
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	rm -f "$tmp/go"
	mkfifo "$tmp/go"
	"$@" <"$tmp/go" >"$out" &
	local prog=$!
	exec 7>"$tmp/go"
	until grep -q ready "$out"; do sleep 0.02; done
	[ "${args[0]}" = - ] || start_snoop "$prog" "$out.json" "${args[@]}"
	echo go >&7
	exec 7>&-
	[ -z "${DURING:-}" ] || eval "$DURING"
	wait "$prog"
	[ "${args[0]}" = - ] || wait "$snoop"
}

# gpusnoop's user+system seconds, from `times` (its second line: the children's)
snoop_cpu() {
	sed -n 2p "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.2f", t }'
}

echo "== per call (bench/gpusnoop.c, --events mem,launch,sync)"
echo go | "$O/bench/gpusnoop" "$lib" "$RATE_SECONDS" "$PHASE_SECONDS" >"$tmp/base"
probed "$tmp/probed" --events mem,launch,sync --launch-sample 100 -- "$O/bench/gpusnoop" "$lib" "$RATE_SECONDS" "$PHASE_SECONDS"
awk -v bp="$(fig pair_ns "$tmp/base")" -v pp="$(fig pair_ns "$tmp/probed")" \
	-v bl="$(fig launch_ns "$tmp/base")" -v pl="$(fig launch_ns "$tmp/probed")" \
	-v bd="$(fig drv_ns "$tmp/base")" -v pd="$(fig drv_ns "$tmp/probed")" \
	-v by="$(fig sync_ns "$tmp/base")" -v py="$(fig sync_ns "$tmp/probed")" \
	-v bs="$(fig slow_ms "$tmp/base")" -v ps="$(fig slow_ms "$tmp/probed")" 'BEGIN {
	printf "alloc+free pair:   %8.0f ns without probes, %8.0f ns with: +%.2f us (6 traps: cudaMalloc entry+return, cuMemAlloc_v2 inside entry+return, cudaFree, cuMemFree_v2 inside)\n", bp, pp, (pp - bp) / 1000
	printf "cudaLaunchKernel:  %8.0f ns without probes, %8.0f ns with: +%.2f us (2 traps: its entry, the driver launch inside)\n", bl, pl, (pl - bl) / 1000
	printf "cuLaunchKernel:    %8.0f ns without probes, %8.0f ns with: +%.2f us (1 trap)\n", bd, pd, (pd - bd) / 1000
	printf "cudaStreamSync:    %8.0f ns without probes, %8.0f ns with: +%.2f us (entry, return, its stack into the totals)\n", by, py, (py - by) / 1000
	printf "100-us allocations: %7.1f ms without probes, %7.1f ms with (2000 pairs): %+.2f%%\n", bs, ps, (ps / bs - 1) * 100
	# what one trap costs here: cudaStreamSynchronize is an entry whose first
	# instruction (push %rbp) the kernel emulates plus a return; the stand-in
	# cuLaunchKernel starts with a mov, single-stepped out of line
	printf "one trap:          %.2f us emulated first instruction (push %%rbp), %.2f us single-stepped (mov)\n", (py - by) / 2000, (pd - bd) / 1000
	printf "                   (a 35k allocations + 35k launches a second loop has 28.6 us per iteration: 3%% is 0.86 us, 8%% 2.3 us)\n"
	# what the traps alone cost that loop, every probed instruction emulated
	t = (py - by) / 2000
	printf "the floor here:    traps x %.2f us over 28.6 us: mem through the runtime 6 traps/iteration %.1f%%, PyTorch'"'"'s allocator 3 (allocate entry+return, its deleter) %.1f%%;\n", t, 600 * t / 28.6, 300 * t / 28.6
	printf "                   every launch adds 2 (cudaLaunchKernel, the driver launch inside) %.1f%%; a sync every 100 iterations ~0\n", 200 * t / 28.6
}'

# where the probe sits: the stand-ins built with -fcf-protection (every
# function starts with endbr64, which the kernel single-steps), a
# cudaStreamSynchronize's entry+return probed on the endbr64
# (--probe-at-entry) and after it, on the push the kernel emulates
cet_sync() {
	probed "$tmp/cet" --events sync "$@" -- "$O/bench/gpusnoop" "$PWD/$O/cet/libcudart-fake.so" "$RATE_SECONDS" "$PHASE_SECONDS"
	fig sync_ns "$tmp/cet"
}
if [ -e "$O/cet/libcudart-fake.so" ]; then
	at_entry=$(cet_sync --probe-at-entry)
	after=$(cet_sync)
	awk -v b="$(fig sync_ns "$tmp/base")" -v e="$at_entry" -v a="$after" 'BEGIN {
		printf "endbr64 first:     cudaStreamSynchronize (entry+return) %8.0f ns probed on the endbr64 (single-stepped), %8.0f ns after it (push, emulated): %.1fx\n", e, a, e / a
	}'
fi

# loop RATE LAUNCHES PROBED-EVENTS OUT: one run of the churn loop at RATE
# pairs a second, LAUNCHES per pair; probed with --events PROBED-EVENTS,
# or not ("-"); its "done" line in OUT, gpusnoop's JSON report in OUT.json
loop() {
	local rate=$1 launches=$2 events=$3 out=$4 args=(-)
	# shellcheck disable=SC2206 # SNOOP_ARGS: words
	[ "$events" = - ] || args=(--events "$events" ${SNOOP_ARGS:---launch-sample 100})
	probed "$out" "${args[@]}" -- env CHURN_THREADS=1 CHURN_PAIRS=$((rate * ${LOOP_SECONDS:-$BENCH_SECONDS})) \
		CHURN_RATE="$rate" CHURN_LAUNCH="$launches" CHURN_SYNC=100 CHURN_STACKS=1024 CHURN_DEPTH=12 CHURN_LEAKS=5 \
		"$O/gpusnoop-churn"
}

cpu_of() { sed -n 's/.* cpu=\([0-9.]*\) .*/\1/p' "$1"; }
# best FILES...: the file of the least CPU
best() {
	local f b='' bf=''
	for f in "$@"; do
		if [ -z "$b" ] || awk -v x="$(cpu_of "$f")" -v y="$b" 'BEGIN { exit !(x < y) }'; then b=$(cpu_of "$f") bf=$f; fi
	done
	echo "$bf"
}

# row LABEL RATE LAUNCHES EVENTS: REPS interleaved baseline/probed runs, a line per build
row() {
	local label=$1 rate=$2 launches=$3 events=$4 bs=() ps=() cs=()
	for i in $(seq "$REPS"); do
		loop "$rate" "$launches" - "$tmp/b$i"
		loop "$rate" "$launches" "$events" "$tmp/p$i"
		bs+=("$tmp/b$i") ps+=("$tmp/p$i")
		if [ -n "${GPUSNOOP_COMPARE:-}" ]; then
			SNOOP_BIN=$GPUSNOOP_COMPARE loop "$rate" "$launches" "$events" "$tmp/c$i"
			cs+=("$tmp/c$i")
		fi
	done
	local b
	b=$(cpu_of "$(best "${bs[@]}")")
	line "$label" "$events" "$b" "$(best "${ps[@]}")"
	[ -z "${GPUSNOOP_COMPARE:-}" ] || line "  ($GPUSNOOP_COMPARE)" "$events" "$b" "$(best "${cs[@]}")"
}

# line LABEL EVENTS BASE-CPU PROBED-RUN
line() {
	local label=$1 events=$2 best_b=$3 pf=$4
	local best_p
	best_p=$(cpu_of "$pf")
	local r=$pf.json
	local seen=$(($(json allocations "$r") + $(json frees "$r")))
	local lost=$(($(json ringbuf_drops "$r") + $(json calls_in_flight_full "$r") + $(json live_full "$r") + $(json reallocated_without_free "$r")))
	local pairs
	pairs=$(sed -n 's/.*pairs=\([0-9]*\) .*/\1/p' "$pf")
	awk -v l="$label" -v e="$events" -v b="$best_b" -v p="$best_p" -v s="$seen" -v x="$lost" -v c="$(snoop_cpu "$r.cpu")" \
		-v n="$pairs" -v cp="$best_p" 'BEGIN {
		printf "%-36s %-16s %6.3f s %6.3f s %+8.1f%% %9.0f %9d %6d %7s s\n", l, e, b, p, (p / b - 1) * 100, 2 * n / cp, s, x, c
	}'
}

echo
echo "== at a training loop's rates (gpusnoop-churn, one thread; CPU seconds of the loop, best of $REPS)"
printf "%-36s %-16s %8s %8s %9s %9s %9s %6s %9s\n" "loop" "--events" "base" "probed" "slowdown" "events/s" "seen" "lost" "gpusnoop"
for r in 50000 100000 200000; do
	for ev in mem mem,launch,sync; do
		row "$((r / 1000))k allocs+frees/s, $((r / 1000))k launches/s" $((r / 2)) 2 "$ev"
	done
done
for ev in mem mem,launch,sync; do
	row "35k allocs + 35k launches/s" 35000 1 "$ev"
done
# the launches sampled as by default (--launch-sample 10: a 1 s window of
# each 10 s), over runs long enough to hold whole periods
LONG=${SAMPLE_SECONDS:-20}
LOOP_SECONDS=$LONG SNOOP_ARGS="--launch-sample 10" row "35k+35k/s ${LONG} s, launches 10%" 35000 1 mem,launch,sync
LOOP_SECONDS=$LONG SNOOP_ARGS="--launch-sample 100" row "35k+35k/s ${LONG} s, every launch" 35000 1 mem,launch,sync

# the BPF programs' own time per call (kernel.bpf_stats_enabled for the
# run, put back after): what the bookkeeping costs beside the trap
if command -v bpftool >/dev/null && [ -w /proc/sys/kernel/bpf_stats_enabled ]; then
	was=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	DURING='sleep 0.5; bpftool -j prog show >"$tmp/progs.json" 2>/dev/null || true' \
		probed "$tmp/st.out" --events mem,launch,sync --launch-sample 100 -- env CHURN_THREADS=1 CHURN_PAIRS=35000 \
		CHURN_RATE=35000 CHURN_LAUNCH=1 CHURN_SYNC=100 CHURN_STACKS=1024 CHURN_DEPTH=12 CHURN_LEAKS=5 "$O/gpusnoop-churn"
	echo "$was" >/proc/sys/kernel/bpf_stats_enabled
	echo
	echo "== the BPF programs' own time per call (the 35k loop, 12-frame recursion under 10 distinct levels)"
	python3 - "$tmp/progs.json" <<'PY'
import json, sys
try:
    progs = json.load(open(sys.argv[1]))
except ValueError:
    progs = []
for p in progs:
    n = p.get("name", "")
    if n in ("alloc_entry", "alloc_return", "free_entry", "launch_entry", "sync_entry", "sync_return") and p.get("run_cnt"):
        print("%-14s %8.0f ns a call (%d calls)" % (n, p["run_time_ns"] / p["run_cnt"], p["run_cnt"]))
PY
fi
echo
echo "(events/s: allocations+frees a second the probed loop reached, by its CPU time; seen: allocations + frees"
echo " gpusnoop counted, cudaFree's inner cuMemFree_v2 included; lost: dropped, untracked, not followed, missed frees;"
echo " rows without \"sampled\" count every launch, --launch-sample 100)"
