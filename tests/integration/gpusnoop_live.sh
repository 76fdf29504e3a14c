#!/usr/bin/env bash
# gpusnoop's live table (--live into a file; then on a terminal, through
# script(1)'s pty, where it is on by itself): build/gpusnoop-leaky does its
# work and holds (LEAKY_HOLD) while the table is looked at.  Checks the
# content of a frame - the outstanding bytes per space, the top stacks by
# bytes with the leaking function first, launches and syncs - not when it
# came: the test waits (up to 30 s) for a frame with the leak in it.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

SNOOP_CMD="env LEAKY_HOLD=1 $BUILD/gpusnoop-leaky" snoop_start "$tmp/live.txt" --live --events mem,launch,sync --launch-sample 100 --top 3
snoop_go
wait_for "$tmp/prog.out" '^done$'
wait_for "$tmp/live.txt" '^ +3145728 +3 memory +leak_here '
echo again >&7
snoop_end
cat "$tmp/live.txt"
# the last frame before the report (the leak was complete then)
awk '/^gpusnoop live:/ { f = "" } /^gpusnoop: pid/ { exit } { f = f $0 "\n" } END { printf "%s", f }' \
	"$tmp/live.txt" >"$tmp/frame"
grep -q "^gpusnoop live: pid $prog, [0-9]* s | launches 11 counted ([0-9]*/s) | syncs 8 ([0-9]*/s, [0-9.]* ms waiting/s)$" "$tmp/live.txt"
grep -qx 'outstanding: memory 3177042 bytes, handles 2097152 bytes, mapped 0 bytes' "$tmp/frame"
grep -Eqx ' +bytes +count space +stack \(top 3 of 7\)' "$tmp/frame"
# the three largest, in order, the leaking function with file:line, then its callers
sed -n '/^ *bytes /,$p' "$tmp/frame" | sed -n 2,4p >"$tmp/top"
sed -n 1p "$tmp/top" | grep -Eq '^ +3145728 +3 memory +leak_here \(.*tests/gpusnoop/leaky\.c:[0-9]+\) < main < '
sed -n 2p "$tmp/top" | grep -Eq '^ +2097152 +1 handles +leak_handle \(.*tests/gpusnoop/leaky\.c:[0-9]+\) < main'
sed -n 3p "$tmp/top" | grep -Eq '^ +12345 +1 memory +leak_driver \('
# not a terminal: frames follow one another, no escape sequences
if grep -q $'\033' "$tmp/live.txt"; then echo "escape sequences in a file"; exit 1; fi
# the report still comes at the end
grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$tmp/live.txt"

# on a terminal the table is on without --live, each frame clearing the screen
if ! command -v script >/dev/null; then
	echo "(no script(1): the terminal case is not checked)"
	exit 0
fi
start_leaky prog2
prog2=$leaky
script -qec "$DYNO gpusnoop --pid $prog2 --top 2" /dev/null </dev/null >"$tmp/tty.txt" 2>&1 &
pids+=($!)
wait_for "$tmp/tty.txt" '^gpusnoop: watching'
echo go >&8
wait_for "$tmp/prog2.out" '^done$'
wait_for "$tmp/tty.txt" '3145728 +3 memory +leak_here '
echo again >&8
exec 8>&-
wait "$prog2"
for _ in $(seq 300); do grep -q '^never freed (memory)' "$tmp/tty.txt" && break; sleep 0.1; done
grep -q $'\033\\[H\033\\[2Jgpusnoop live: pid '"$prog2" "$tmp/tty.txt"
grep -Eq '\(top 2 of 7\)' "$tmp/tty.txt"
grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$tmp/tty.txt"
