#!/usr/bin/env bash
# gpusnoop's refusals and endings, each with its message and exit status:
# usage (2), no such process (3), not permitted (4: BPF refused to a root
# without capabilities), no CUDA library mapped (5); --lib naming one the
# process does not map; the end by --duration and by SIGINT, each
# reporting what was seen (nothing) as zeros of a real count; the process
# killed mid-run: the report of what was seen until then.  (No uprobes in
# the kernel: the unit test gpusnoop_uprobe_check; a stripped library:
# gpusnoop_torch.sh.)
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

expect() { # STATUS MESSAGE-REGEX -- COMMAND...
	local want=$1 re=$2
	shift 3
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq "$want" ] || { echo "exit $rc, wanted $want: $*"; cat "$tmp/err"; exit 1; }
	grep -Eq "$re" "$tmp/err" || { echo "no '$re' in:"; cat "$tmp/err"; exit 1; }
}

expect 2 'gpusnoop: --pid is required' -- "$DYNO" gpusnoop
expect 2 "gpusnoop: --format: expected table or json, got 'xml'" -- "$DYNO" gpusnoop --pid 1 --format xml
# a pid that is not running: pid_max is an upper bound no process reaches
expect 3 "gpusnoop: no process $(cat /proc/sys/kernel/pid_max): No such process" -- \
	"$DYNO" gpusnoop --pid "$(cat /proc/sys/kernel/pid_max)"

sleep 60 &
sleeper=$!
pids+=("$sleeper")
# root without capabilities (an empty bounding set): the kernel refuses BPF
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	expect 4 'gpusnoop: the kernel refused to load BPF \(Operation not permitted\): run as root or with CAP_BPF and CAP_PERFMON' -- \
		setpriv --bounding-set=-all "$DYNO" gpusnoop --pid "$sleeper"
fi
rc=0
"$DYNO" gpusnoop --pid "$sleeper" --duration 0.01 >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" -eq 4 ]; then
	echo "skip: BPF refused here ($(tail -n 1 "$tmp/err"))"
	exit 77
fi
expect 5 "gpusnoop: process $sleeper maps no file holding the probed CUDA functions .*; if it loads one later, name it with --lib" -- \
	"$DYNO" gpusnoop --pid "$sleeper"

# --lib: probes a library the process does not map (yet); --duration ends the run
expect 0 "^gpusnoop: watching pid $sleeper: 20 probes on 13 functions in 2 files$" -- \
	"$DYNO" gpusnoop --pid "$sleeper" --duration 0.3 --lib "$BUILD/libcudart-fake.so:$BUILD/libcuda-fake.so"
grep -q "^gpusnoop: pid $sleeper, [0-9.]* s (duration), 20 probes in 2 files$" "$tmp/out"
grep -q '^seen: 0 allocations, 0 frees ' "$tmp/out"
expect 1 "gpusnoop: $BUILD/nonexistent.so: cannot open: No such file or directory" -- \
	"$DYNO" gpusnoop --pid "$sleeper" --duration 0.1 --lib "$BUILD/nonexistent.so"

# SIGINT: the report still comes, saying why it ended
"$DYNO" gpusnoop --pid "$sleeper" --format json --lib "$BUILD/libcudart-fake.so" >"$tmp/int.json" 2>"$tmp/err" &
snoop=$!
pids+=("$snoop")
for _ in $(seq 300); do
	grep -q '^gpusnoop: watching' "$tmp/err" && break
	sleep 0.1
done
kill -INT "$snoop"
wait "$snoop"
"$DYNO" json -q "$tmp/int.json"
grep -q '"end":"interrupted",' "$tmp/int.json"
grep -q '"allocations":0,"frees":0,' "$tmp/int.json"

# the process killed mid-run (after its work, while it holds): the report
# is what was seen, and says the process exited
SNOOP_CMD="env LEAKY_HOLD=1 $BUILD/gpusnoop-leaky" snoop_start "$tmp/killed.txt"
snoop_go
for _ in $(seq 300); do grep -q '^done$' "$tmp/prog.out" && break; sleep 0.1; done
kill -KILL "$prog"
wait "$prog" || true
prog_waited=1
snoop_end
grep -q "^gpusnoop: pid $prog, [0-9.]* s (process exited), 20 probes in 2 files$" "$tmp/killed.txt"
grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$tmp/killed.txt"
