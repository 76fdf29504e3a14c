#!/usr/bin/env bash
# The daemon runs gpusnoop on demand: `dyno gpusnoop --hostname H ...` asks
# the real dynolog (the "gpusnoop" RPC) for a bounded session on
# build/gpusnoop-leaky; the daemon answers at once, runs gpusnoop as its
# child, logs its lines, and the report and the timeline land in files it
# created under --trace_path_prefixes.  Checks the exact leak in that
# report, the refusals (a second session over --gpusnoop_max_sessions, a
# path outside the prefixes, an existing file, a duration over the cap, no
# such process, a daemon without --trace_path_prefixes), and that the
# daemon answers other requests meanwhile.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

skip_unless_bpf

mkdir "$tmp/out"
start_daemon d --trace_path_prefixes="$tmp/out" --gpusnoop_max_sessions=1 --gpusnoop_max_duration_s=60
ask() { "$DYNO" gpusnoop --hostname 127.0.0.1 --port "$port_d" "$@"; }
expect_refusal() { # MESSAGE-REGEX ARGS...
	local re=$1
	shift
	rc=0
	ask "$@" >"$tmp/ans" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] && grep -Eq "$re" "$tmp/ans" || { echo "exit $rc, wanted 1 and '$re':"; cat "$tmp/ans"; exit 1; }
}

mkfifo "$tmp/go"
"$BUILD/gpusnoop-leaky" <"$tmp/go" >"$tmp/leaky.out" &
leaky=$!
pids+=("$leaky")
exec 7>"$tmp/go"
wait_ready "$tmp/leaky.out"
ask --pid "$leaky" --duration 30 --log-file "$tmp/out/report.txt" --trace-file "$tmp/out/trace.json" \
	--events mem,sync >"$tmp/ans" 2>&1
cat "$tmp/ans"
grep -q "^response = {\"duration_s\":30,\"log_file\":\"$tmp/out/report.txt\",\"pid\":$leaky,\"session\":1,\"snoop_pid\":[0-9]*,\"status\":\"started\",\"trace_file\":\"$tmp/out/trace.json\"}$" "$tmp/ans"
for _ in $(seq 300); do
	grep -q "gpusnoop session 1: gpusnoop: watching pid $leaky" "$tmp/d.err" && break
	sleep 0.1
done
grep -q "gpusnoop session 1: gpusnoop: watching pid $leaky: 35 probes" "$tmp/d.err" || { cat "$tmp/d.err"; exit 1; }

# while it runs: one session at most, the daemon still answers
expect_refusal 'refused: 1 gpusnoop sessions are running already \(--gpusnoop_max_sessions\)' \
	--pid "$leaky" --duration 5 --log-file "$tmp/out/second.txt"
[ ! -e "$tmp/out/second.txt" ]
"$DYNO" version --hostname 127.0.0.1 --port "$port_d" >/dev/null

echo go >&7
exec 7>&-
wait "$leaky"
for _ in $(seq 300); do
	grep -q 'gpusnoop session 1 (pid [0-9]* watched) ended' "$tmp/d.err" && break
	sleep 0.1
done
grep -q "gpusnoop session 1 (pid $leaky watched) ended: exit 0 (report written), report in $tmp/out/report.txt" "$tmp/d.err" ||
	{ cat "$tmp/d.err"; exit 1; }
cat "$tmp/out/report.txt"
grep -q "^gpusnoop: pid $leaky, .* (process exited), 35 probes in 2 files$" "$tmp/out/report.txt"
grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$tmp/out/report.txt"
grep -q '^synchronisations: 8 ' "$tmp/out/report.txt"
group "$tmp/out/report.txt" 3145728 3 memory cudaMalloc leak_here tests/gpusnoop/leaky\\.c
"$DYNO" json -q "$tmp/out/trace.json"
grep '"ph":"C"' "$tmp/out/trace.json" | tail -n 1 | grep -q '"args":{"memory":3177042,"handles":2097152,"mapped":0}}'
[ "$(grep -c '"ph":"X"' "$tmp/out/trace.json")" -eq 8 ]
[ "$(stat -c %a "$tmp/out/report.txt")" = 640 ]

# refusals, each answered with its reason, nothing created
expect_refusal "refused: trace path '/tmp/gpusnoop-outside.txt' is outside the allowed prefixes" \
	--pid "$sleeper" --duration 5 --log-file /tmp/gpusnoop-outside.txt
[ ! -e /tmp/gpusnoop-outside.txt ]
expect_refusal "refused: cannot create log_file $tmp/out/report.txt: File exists \(gpusnoop writes new files only\)" \
	--pid "$sleeper" --duration 5 --log-file "$tmp/out/report.txt"
expect_refusal 'refused: duration_s must be a number of seconds in \(0, 60\] \(--gpusnoop_max_duration_s\)' \
	--pid "$sleeper" --duration 61 --log-file "$tmp/out/long.txt"
expect_refusal "refused: no process $(cat /proc/sys/kernel/pid_max)" \
	--pid "$(cat /proc/sys/kernel/pid_max)" --duration 5 --log-file "$tmp/out/nobody.txt"
ls "$tmp/out" | sort | tr '\n' ' ' | grep -qx 'report.txt trace.json ' || { ls -l "$tmp/out"; exit 1; }
rc=0
ask --pid "$sleeper" --log-file "$tmp/out/x.txt" >"$tmp/ans" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--pid, --duration and --log-file are required with a daemon' "$tmp/ans"

# a daemon without --trace_path_prefixes refuses: it would write anywhere
start_daemon open
rc=0
"$DYNO" gpusnoop --hostname 127.0.0.1 --port "$port_open" --pid "$sleeper" --duration 5 \
	--log-file "$tmp/out/open.txt" >"$tmp/ans" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q 'refused: gpusnoop sessions need the daemon to run with --trace_path_prefixes' "$tmp/ans" ||
	{ cat "$tmp/ans"; exit 1; }
