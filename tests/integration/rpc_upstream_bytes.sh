#!/usr/bin/env bash
# Byte-exact RPC with the real daemon binary: the exact bodies upstream dyno
# sends (wire-protocols.md 2.6) and the exact answers; then every bad frame
# (zero, negative and oversized lengths, short body, invalid JSON, no fn,
# unknown fn) is closed without a byte, the daemon keeps serving, and its
# exit summary counts them.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon --rpc_max_frame=65536 --rpc_timeout_ms=1000
printf '%s' '{"fn":"getStatus"}' >"$WORK/status"
[ "$("$RPC" --port="$PORT" <"$WORK/status")" = '{"status":1}' ] || fail getStatus
# the framed answer, byte for byte: 0c 00 00 00 + body
printf '\x12\x00\x00\x00{"fn":"getStatus"}' >"$WORK/framed"
"$RPC" --port="$PORT" --raw <"$WORK/framed" >"$WORK/answer"
printf '\x0c\x00\x00\x00{"status":1}' | cmp - "$WORK/answer" || fail "framed getStatus answer"
v=$("$RPC" --port="$PORT" --body='{"fn":"getVersion"}')
echo "$v" | grep -q '^{"version":"[0-9.]*"}$' || fail "getVersion: $v"
printf '\n{\n    "fn": "dcgmProfPause",\n    "duration_s": 300\n}' >"$WORK/pause"
[ "$(wc -c <"$WORK/pause")" = 53 ] || fail "pause body size"
[ "$("$RPC" --port="$PORT" <"$WORK/pause")" = '{"status":false}' ] || fail dcgmProfPause
[ "$("$RPC" --port="$PORT" --body='{"fn":"dcgmProfResume"}')" = '{"status":false}' ] || fail dcgmProfResume

# register one process, then the 329-byte gputrace body
fake --run_s=30
K=$LASTPID
wait_for has_procs 1 || fail "no process"
printf '\n{\n    "fn": "setKinetOnDemandRequest",\n    "config": "ACTIVITIES_LOG_FILE=/tmp/libkineto_trace.json\\nPROFILE_START_TIME=0\\nACTIVITIES_DURATION_MSECS=500\\nPROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_MODULES=false",\n    "job_id": 0,\n    "pids": [0],\n    "process_limit": 3\n}' >"$WORK/gputrace"
[ "$(wc -c <"$WORK/gputrace")" = 329 ] || fail "gputrace body is $(wc -c <"$WORK/gputrace") bytes"
want="{\"activityProfilersBusy\":0,\"activityProfilersTriggered\":[$K],\"eventProfilersBusy\":0,\"eventProfilersTriggered\":[],\"processesMatched\":[$K]}"
got=$("$RPC" --port="$PORT" <"$WORK/gputrace")
[ "$got" = "$want" ] || fail "gputrace answer: $got"
kill "$K"

# bad frames: the daemon closes without answering (rpc-send exits 3)
bad() {
	local rc=0
	"$RPC" --port="$PORT" --raw --timeout_ms=3000 <"$WORK/bad" >"$WORK/out" || rc=$?
	[ "$rc" = 3 ] && [ ! -s "$WORK/out" ] || fail "bad frame '$1' got rc $rc: $(cat "$WORK/out")"
}
printf '\x00\x00\x00\x00' >"$WORK/bad"; bad "length 0"
printf '\xff\xff\xff\xff{}' >"$WORK/bad"; bad "length -1"
printf '\x00\x00\x10\x00' >"$WORK/bad"; bad "length 1 MiB > --rpc_max_frame"
printf '\x40\x00\x00\x00{"fn":' >"$WORK/bad"; bad "short body"
printf '\x02\x00' >"$WORK/bad"; bad "short prefix"
for body in '{"fn":"getStatus"' '[]' '{}' '{"fn":1}' '{"fn":"noSuchFunction"}' 'null'; do
	rc=0; "$RPC" --port="$PORT" --body="$body" >"$WORK/out" 2>/dev/null || rc=$?
	[ "$rc" = 3 ] || fail "body $body: rc $rc"
done
# a client that connects and closes at once
rc=0; "$RPC" --port="$PORT" --raw --timeout_ms=5000 </dev/null >/dev/null || rc=$?
[ "$rc" = 3 ] || fail "empty connection: rc $rc"
[ "$("$RPC" --port="$PORT" --body='{"fn":"getStatus"}')" = '{"status":1}' ] || fail "daemon stopped serving"
stop_daemon
grep -q 'RPC: .* 6 unanswered, 5 bad frames, 1 oversized' "$WORK/daemon.log" ||
	fail "counters: $(grep 'RPC:' "$WORK/daemon.log")"
echo ok
