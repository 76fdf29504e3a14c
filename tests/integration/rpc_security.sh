#!/usr/bin/env bash
# Security options on the real daemon: --rpc_bind (loopback only),
# --rpc_allow (a peer outside is cut off before reading), --rpc_token_file
# (requests without the token are refused with a reason), and
# --trace_path_prefixes (a trace outside the allowed directories is refused
# with a reason, inside is delivered).  Bad option values stop the daemon
# with a clear message.
source "$(dirname "$0")/tracing-lib.bash"
printf 'correct-horse-battery\n' >"$WORK/token"
chmod 600 "$WORK/token"
start_daemon --rpc_bind=127.0.0.1 --rpc_token_file="$WORK/token" --trace_path_prefixes="$WORK/traces"
grep -q 'listening on 127.0.0.1 port' "$WORK/daemon.log" || fail "bind"
"$RPC" --host=::1 --port="$PORT" --body='{"fn":"getStatus"}' 2>/dev/null && fail "reachable on ::1"
r=$("$RPC" --host=127.0.0.1 --port="$PORT" --body='{"fn":"getStatus"}')
echo "$r" | grep -q '"error":"unauthorized' || fail "no token: $r"
r=$("$RPC" --host=127.0.0.1 --port="$PORT" --body='{"fn":"getStatus","token":"wrong-horse-battery"}')
echo "$r" | grep -q unauthorized || fail "wrong token: $r"
r=$("$RPC" --host=127.0.0.1 --port="$PORT" --body='{"fn":"getStatus","token":"correct-horse-battery"}')
[ "$r" = '{"status":1}' ] || fail "good token: $r"

mkdir -p "$WORK/traces"
fake --run_s=30 --exit_after_traces=1
K=$LASTPID
tok='"token":"correct-horse-battery"'
wait_for bash -c "$RPC --host=127.0.0.1 --port=$PORT --body='{\"fn\":\"getProcesses\",$tok}' | grep -q '\"count\":1'" || fail "no process"
r=$("$RPC" --host=127.0.0.1 --port="$PORT" --body="{\"fn\":\"setKinetOnDemandRequest\",$tok,\"config\":\"ACTIVITIES_LOG_FILE=/etc/evil.json\",\"pids\":[0]}")
echo "$r" | grep -q '"error":"trace path '"'"'/etc/evil.json'"'"' is outside the allowed prefixes' || fail "outside: $r"
r=$("$RPC" --host=127.0.0.1 --port="$PORT" --body="{\"fn\":\"setKinetOnDemandRequest\",$tok,\"config\":\"ACTIVITIES_LOG_FILE=$WORK/traces/../x.json\",\"pids\":[0]}")
echo "$r" | grep -q "contains '..'" || fail "dotdot: $r"
r=$("$RPC" --host=127.0.0.1 --port="$PORT" --body="{\"fn\":\"setKinetOnDemandRequest\",$tok,\"config\":\"ACTIVITIES_LOG_FILE=$WORK/traces/ok.json\\nACTIVITIES_DURATION_MSECS=100\",\"pids\":[0]}")
echo "$r" | grep -q "\"activityProfilersTriggered\":\[$K\]" || fail "inside: $r"
wait_for test -s "$WORK/traces/ok_$K.json" || fail "no trace inside the allowed directory"
stop_daemon

# allow-list that excludes loopback: connection cut, counted
start_daemon --rpc_allow=192.0.2.0/24
# (closed unread: the client sees EOF, rc 3, or a reset, rc 1; never an answer)
rc=0; "$RPC" --port="$PORT" --body='{"fn":"getStatus"}' >"$WORK/out" 2>/dev/null || rc=$?
{ [ "$rc" = 3 ] || [ "$rc" = 1 ]; } && [ ! -s "$WORK/out" ] || fail "allow-list: rc $rc, $(cat "$WORK/out")"
stop_daemon
grep -q 'refused connection from' "$WORK/daemon.log" || fail "refusal not logged"
grep -q '1 refused peers' "$WORK/daemon.log" || fail "refusal not counted"

# bad option values: clear message, non-zero exit, no crash
for flags in "--rpc_allow=10.0.0.0/99" "--rpc_token_file=$WORK/missing" "--trace_path_prefixes=relative/dir" "--rpc_bind=nonsense"; do
	# every one of these is fatal, --rpc_bind too (a listener that cannot be
	# opened stops the daemon); the bound is generous, only a hang reaches it
	rc=0; timeout 60 "$DYNOLOG" --port=0 --use_JSON=false $flags 2>"$WORK/err.log" || rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" -lt 128 ] || fail "$flags: exit $rc"
	[ -s "$WORK/err.log" ] || fail "$flags: no message"
	grep -q Sanitizer "$WORK/err.log" && fail "$flags: $(cat "$WORK/err.log")"
done
printf 'short\n' >"$WORK/short"
chmod 600 "$WORK/short"
rc=0; "$DYNOLOG" --port=0 --use_JSON=false --rpc_token_file="$WORK/short" 2>"$WORK/err.log" || rc=$?
[ "$rc" = 1 ] && grep -q '8 to 1024 bytes' "$WORK/err.log" || fail "short token accepted"
grep -q Sanitizer "$WORK/err.log" && fail "$(cat "$WORK/err.log")"
echo ok
