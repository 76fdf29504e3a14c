#!/usr/bin/env bash
# gpusnoop at a training loop's allocation rates, default settings: the
# loss seen on a real PyTorch run (a quarter of the records dropped, and
# freed memory reported as never freed) reproduced with the stand-ins and
# shown gone.  build/gpusnoop-churn (tests/gpusnoop/churn.c): 4 threads
# making 100,000 cudaMalloc+cudaFree pairs (200,000 probed allocations and
# frees, with CPU work between them that makes 200,000 a second without
# probes; under them, what the traps leave) in bursts of 5,000 pairs,
# from 1,024 distinct 25-frame stacks, with 20 leaks of 64 KiB planted
# among them.  The reader is starved: stopped (SIGSTOP) for the
# whole run - a ring buffer of records overflowed there (150,000 dropped,
# 246 false leak groups) - then niced on the producers' CPU with the live
# table (symbolizing each second) and launches and syncs as well.  Each
# time nothing is lost and the leak report is exactly the planted leaks.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

export CHURN_THREADS=4 CHURN_PAIRS=25000 CHURN_RATE=25000 CHURN_BURST=5000 CHURN_PAUSE_US=20000
export CHURN_STACKS=1024 CHURN_DEPTH=12 CHURN_LEAKS=5

# exact: every allocation and free seen, nothing lost, only the planted leaks
exact() {
	cat "$1"
	grep -q '^seen: 100020 allocations, 200000 frees ' "$1"
	grep -q '^lost: 0 records dropped (ring buffer full), 0 calls untracked (too many in flight), 0 invalid records, 0 allocations whose free was missed; [0-9]* stacks unavailable$' "$1"
	grep -q '^never freed (memory): 1310720 bytes in 20 allocations ' "$1"
	[ "$(grep -c ' bytes in .* allocations (.*) via ' "$1")" -eq 1 ]
	group "$1" 1310720 20 memory cudaMalloc plant_leak tests/gpusnoop/churn\.c
}

SNOOP_CMD="$BUILD/gpusnoop-churn" snoop_start "$tmp/stopped.txt"
kill -STOP "$snooper"
snoop_go
snoop_wait_prog
kill -CONT "$snooper"
snoop_end
cat "$tmp/prog.out"
exact "$tmp/stopped.txt"

# the reader at nice 19 on the CPU the producers use, the live table on
# (into a file), launches and syncs too: a runtime launch per pair (its
# driver launch inside not counted again), then a direct driver launch from
# deeper frames (counted: cudaLaunchKernel has no return probe, and this
# tells a launch inside it from one after it), a sync every 100 pairs per
# thread
FAKE_CUDA_SYNC_US=100 CHURN_LAUNCH=1 CHURN_DRV=1 CHURN_SYNC=100 SNOOP_WRAP="nice -n 19 taskset -c 0" SNOOP_CMD="taskset -c 0 $BUILD/gpusnoop-churn" \
	snoop "$tmp/niced.txt" --events mem,launch,sync --launch-sample 100 --live
cat "$tmp/prog.out"
exact "$tmp/niced.txt"
grep -q '^launches: 200000 (.*): cudaLaunchKernel 100000, cuLaunchKernel 100000, cuLaunchKernelEx 0, cudaGraphLaunch 0; 100000 driver launches inside' "$tmp/niced.txt"
grep -q '^synchronisations: 1000 (.*waiting: cudaDeviceSynchronize 0, cudaStreamSynchronize 1000, ' "$tmp/niced.txt"
# the live table's frames: the planted leaks' stack among the top ones
grep -q '^gpusnoop live: pid ' "$tmp/niced.txt"
