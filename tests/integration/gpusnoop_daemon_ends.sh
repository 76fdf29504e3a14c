#!/usr/bin/env bash
# How a daemon's gpusnoop session ends when it does not end well, on the
# real dynolog and gpusnoop:
# - a session that fails (exit 5: the watched process maps no CUDA
#   library) has the reason in its report file, table or JSON, not only
#   in the daemon's log;
# - a session still running at its deadline (duration + --gpusnoop_grace_s)
#   is stopped there: gpusnoop, held stopped (SIGSTOP) past its duration
#   while the watched program keeps running, gets SIGTERM and SIGCONT,
#   writes its partial report (the exact leak seen until then), and the
#   daemon logs it and says so in the report; the watched program lives on.
# Events are waited for and counted, never timed.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

skip_unless_bpf
mkdir "$tmp/out"
start_daemon d --trace_path_prefixes="$tmp/out" --gpusnoop_grace_s=1
ask() { "$DYNO" gpusnoop --hostname 127.0.0.1 --port "$port_d" "$@"; }

# a failed session: the reason in the report file
ask --pid "$sleeper" --duration 5 --log-file "$tmp/out/fail.txt" >"$tmp/ans" 2>&1
wait_for "$tmp/d.err" "gpusnoop session 1 \(pid $sleeper watched\) ended: exit 5 \(no CUDA library mapped\), report in $tmp/out/fail.txt$"
cat "$tmp/out/fail.txt"
[ "$(head -n 2 "$tmp/out/fail.txt")" = "gpusnoop session 1 (pid $sleeper watched): gpusnoop failed: exit 5 (no CUDA library mapped)
gpusnoop said:" ]
grep -q "^gpusnoop: process $sleeper maps no file holding the probed CUDA functions (cudaMalloc, cuMemAlloc_v2, ...); if it loads one later, name it with --lib$" "$tmp/out/fail.txt"
# the same in JSON: one object, the lines gpusnoop wrote in it
ask --pid "$sleeper" --duration 5 --log-file "$tmp/out/fail.json" --format json >"$tmp/ans" 2>&1
wait_for "$tmp/d.err" "gpusnoop session 2 \(pid $sleeper watched\) ended: exit 5 "
"$DYNO" json -q "$tmp/out/fail.json"
grep -q "^{\"error\":\"gpusnoop failed: exit 5 (no CUDA library mapped)\",\"session\":2,\"pid\":$sleeper,\"stderr\":\"gpusnoop: process $sleeper maps no file holding" "$tmp/out/fail.json"

# the deadline: gpusnoop stopped before its duration ends, while leaky,
# having leaked, waits (LEAKY_HOLD)
start_leaky leaky
ask --pid "$leaky" --duration 5 --log-file "$tmp/out/deadline.txt" >"$tmp/ans" 2>&1
snoop_pid=$(sed -n 's/.*"snoop_pid":\([0-9]*\),.*/\1/p' "$tmp/ans")
[ -n "$snoop_pid" ] || { cat "$tmp/ans"; exit 1; }
wait_for "$tmp/d.err" "gpusnoop session 3: gpusnoop: watching pid $leaky"
echo go >&8
wait_for "$tmp/leaky.out" '^done$'
kill -STOP "$snoop_pid"
# gpusnoop cannot end by itself now: the deadline ends it, with SIGTERM
wait_for "$tmp/d.err" "gpusnoop session 3 \(pid $leaky watched\) ended"
cat "$tmp/out/deadline.txt"
[ "$(grep -c 'gpusnoop session 3 still running past its duration: SIGTERM$' "$tmp/d.err")" -eq 1 ]
grep -q "gpusnoop session 3 (pid $leaky watched) ended: exit 0 (report written), stopped at its deadline, report in $tmp/out/deadline.txt$" "$tmp/d.err" ||
	{ cat "$tmp/d.err"; exit 1; }
if grep -q 'gpusnoop session 3 still running past its duration: SIGKILL' "$tmp/d.err"; then echo "SIGKILL sent"; exit 1; fi
# the partial report: what was seen until the deadline, exact
grep -q "^gpusnoop: pid $leaky, .* (interrupted), " "$tmp/out/deadline.txt"
grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$tmp/out/deadline.txt"
[ "$(tail -n 1 "$tmp/out/deadline.txt")" = "gpusnoop session 3 (pid $leaky watched): stopped by the daemon 1 s past its duration (SIGTERM): the report above is what was seen until then" ]
# the watched program was not touched
kill -0 "$leaky"
echo done >&8
exec 8>&-
wait "$leaky"
