#!/usr/bin/env bash
# gpusnoop --events launch,sync on build/gpusnoop-leaky (tests/gpusnoop/leaky.c
# lists what it calls, from which functions): the exact launch counts per
# entry point, cudaLaunchKernel's inner cuLaunchKernel not counted again,
# the sync counts, the stack that synchronised most (its function names),
# the JSON report, and the timeline's sync slices on the threads that
# waited.  The memory part is absent when not asked for, not zero.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

snoop "$tmp/report.txt" --events launch,sync --launch-sample 100 --trace "$tmp/trace.json"
cat "$tmp/report.txt"
# 4 launch functions (cudaLaunchKernel with its return probe) + 3 syncs with theirs
grep -q '^gpusnoop: pid [0-9]*, .* (process exited), 10 probes in 2 files$' "$tmp/report.txt"
grep -q '^launches: 11 ([0-9.]*/s): cudaLaunchKernel 5, cuLaunchKernel 3, cuLaunchKernelEx 2, cudaGraphLaunch 1; 5 driver launches inside cudaLaunchKernel not counted again$' "$tmp/report.txt"
grep -q '^synchronisations: 8 ([0-9.]*/s), [0-9.]* s waiting: cudaDeviceSynchronize 1, cudaStreamSynchronize 4, cudaEventSynchronize 3$' "$tmp/report.txt"
grep -q '^lost: 0 records dropped (ring buffer full), 0 calls untracked (too many in flight), 0 invalid records, .* 0 stacks unavailable$' "$tmp/report.txt"
# memory was not watched: no line about it
if grep -q '^never freed\|^seen:' "$tmp/report.txt"; then echo "memory lines without --events mem"; exit 1; fi
# each sync waits >= 1 ms in the stand-in: 8 of them >= 8 ms
waited=$(sed -n 's/^synchronisations: .*, \([0-9.]*\) s waiting.*/\1/p' "$tmp/report.txt")
awk -v w="$waited" 'BEGIN { exit !(w >= 0.008) }' || { echo "waited $waited s"; exit 1; }

# the stacks, most syncs first: sync_often's 4, the two threads' one stack
sync_group() { # COUNT VIA FUNCTION [CALLER]
	grep -A2 -E "^$1 synchronisations \(.*\) via $2$" "$tmp/report.txt" >"$tmp/g"
	sed -n 2p "$tmp/g" | grep -Eq "^    $3 \(.*tests/gpusnoop/leaky\.c:[0-9]+\)$" || { echo "no sync group: $*"; exit 1; }
	[ -z "${4:-}" ] || sed -n 3p "$tmp/g" | grep -q "^    $4 (" || { echo "no caller: $*"; exit 1; }
}
first=$(grep -m1 -A1 ' synchronisations (' "$tmp/report.txt")
[[ "$first" == "4 synchronisations ("*") via cudaStreamSynchronize"$'\n'"    sync_often ("* ]] || { echo "top: $first"; exit 1; }
sync_group 4 cudaStreamSynchronize sync_often main
sync_group 2 cudaEventSynchronize sync_in_thread thread_main
sync_group 1 cudaDeviceSynchronize sync_rarely
sync_group 1 cudaEventSynchronize sync_rarely
[ "$(grep -c ' synchronisations (.*) via ' "$tmp/report.txt")" -eq 4 ]

# the timeline: a slice per sync, on the thread that waited (6 on the main
# thread, whose tid is the pid; one on each other thread), each >= 1 ms;
# a launches/s counter; no memory counter
"$DYNO" json -q "$tmp/trace.json"
[ "$(grep -c '"ph":"X"' "$tmp/trace.json")" -eq 8 ]
[ "$(grep -c "\"ph\":\"X\",\"pid\":$prog,\"tid\":$prog," "$tmp/trace.json")" -eq 6 ]
[ "$(grep '"ph":"X"' "$tmp/trace.json" | sed 's/.*"tid":\([0-9]*\),.*/\1/' | sort -u | wc -l)" -eq 3 ]
[ "$(grep -c '"name":"cudaStreamSynchronize","ph":"X".*"args":{"stream":"0x1234"}' "$tmp/trace.json")" -eq 4 ]
grep '"ph":"X"' "$tmp/trace.json" | sed 's/.*"dur":\([0-9]*\)\..*/\1/' | while read -r d; do
	[ "$d" -ge 1000 ] || { echo "sync slice of $d us"; exit 1; }
done
grep -q '"name":"gpusnoop launches/s","ph":"C"' "$tmp/trace.json"
if grep -q 'outstanding bytes' "$tmp/trace.json"; then echo "memory counter without --events mem"; exit 1; fi

# --format json, all three groups: the same figures, valid JSON
snoop "$tmp/report.json" --format json --events mem,launch,sync --launch-sample 100
"$DYNO" json -q "$tmp/report.json"
grep -q '"events":\["mem","launch","sync"\],"probes":30,' "$tmp/report.json"
grep -q '"launches":{"total":11,"per_second":[0-9.e+-]*,"by_function":{"cudaLaunchKernel":5,"cuLaunchKernel":3,"cuLaunchKernelEx":2,"cudaGraphLaunch":1},"nested_driver_launches":5}' "$tmp/report.json"
grep -q '"syncs":{"total":8,.*"by_function":{"cudaDeviceSynchronize":1,"cudaStreamSynchronize":4,"cudaEventSynchronize":3},"stacks":\[{"count":4,"total_ns":[0-9]*,"max_ns":[0-9]*,"via":\["cudaStreamSynchronize"\],"stack":\[{"addr":"0x[0-9a-f]*","function":"sync_often",' "$tmp/report.json"
grep -q '"leaked":{"memory":{"bytes":3177042,"count":17,' "$tmp/report.json"

# a bad --events word
rc=0
"$DYNO" gpusnoop --pid "$$" --events mem,launches 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "^gpusnoop: --events: unknown event 'launches' (expected mem, launch, sync)$" "$tmp/err"
