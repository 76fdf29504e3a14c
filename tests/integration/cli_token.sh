#!/usr/bin/env bash
# dyno against a real daemon started with --rpc_token_file: without a token
# every command fails with a message naming --token-file (not "answer has
# no integer status"); --token-file and DYNO_TOKEN_FILE send it (status with
# its process list, version, metrics, gputrace, fan-out to two daemons); a
# wrong token is called wrong; unusable token files (missing, a directory,
# a FIFO, too short, too big) are usage errors (exit 2) without hanging.
source "$(dirname "$0")/tracing-lib.bash"
: "${DYNO:=$PWD/$BUILD/dyno}"
printf 'correct-horse-battery\n' >"$WORK/token"
printf 'wrong-horse-battery\n' >"$WORK/wrong"
chmod 600 "$WORK/token" "$WORK/wrong"
start_daemon --rpc_token_file="$WORK/token"
H=(--hostname 127.0.0.1 --port "$PORT" --timeout-s 5)

# no token: a clear refusal, exit 1
rc=0; "$DYNO" status "${H[@]}" >"$WORK/o" 2>"$WORK/e" || rc=$?
[ $rc = 1 ] || fail "status without a token: exit $rc"
grep -q 'the daemon requires a token: --token-file' "$WORK/e" || fail "no-token message: $(cat "$WORK/e")"
grep -q 'integer' "$WORK/e" && fail "misleading message: $(cat "$WORK/e")"

# the token, by option and by environment
fake --run_s=30
K=$LASTPID
wait_for bash -c "'$DYNO' status --hostname 127.0.0.1 --port $PORT --token-file '$WORK/token' | grep -q '^processes: 1 registered'" ||
	fail "status with the token: $("$DYNO" status "${H[@]}" --token-file "$WORK/token" 2>&1)"
"$DYNO" status "${H[@]}" --token-file "$WORK/token" >"$WORK/o" 2>&1 || fail "status: $(cat "$WORK/o")"
grep -q '^response = {"extensions":\[.*"getProcesses".*\],\("ipc_[a-z_]*":[^,]*,\)*"status":1}$' "$WORK/o" || fail "status: $(cat "$WORK/o")"
grep -q "^  $K " "$WORK/o" || fail "process list: $(cat "$WORK/o")"
DYNO_TOKEN_FILE="$WORK/token" "$DYNO" version "${H[@]}" >"$WORK/o" 2>&1 || fail "version via DYNO_TOKEN_FILE: $(cat "$WORK/o")"
grep -q '^response = {"version":"' "$WORK/o" || fail "version: $(cat "$WORK/o")"
DYNO_TOKEN_FILE="$WORK/token" "$DYNO" metrics "${H[@]}" >"$WORK/o" 2>&1 || fail "metrics: $(cat "$WORK/o")"
"$DYNO" gputrace "${H[@]}" --token-file "$WORK/token" --log-file "$WORK/t.json" --duration-ms 100 >"$WORK/o" 2>&1 ||
	fail "gputrace: $(cat "$WORK/o")"
grep -q '^Matched 1 processes' "$WORK/o" || fail "gputrace: $(cat "$WORK/o")"
# --token-file wins over the environment
rc=0; DYNO_TOKEN_FILE="$WORK/wrong" "$DYNO" version "${H[@]}" --token-file "$WORK/token" >"$WORK/o" 2>&1 || rc=$?
[ $rc = 0 ] || fail "--token-file over DYNO_TOKEN_FILE: $(cat "$WORK/o")"

# a wrong token is called wrong, one line per daemon in a fan-out too
rc=0; "$DYNO" status "${H[@]}" --token-file "$WORK/wrong" >"$WORK/o" 2>"$WORK/e" || rc=$?
[ $rc = 1 ] && grep -q 'refused the token of --token-file' "$WORK/e" || fail "wrong token (rc $rc): $(cat "$WORK/e")"
D1=$DPID P1=$PORT
KIDS+=("$D1")
DPID=; mv "$WORK/daemon.log" "$WORK/daemon1.log"
IPCNAME=${IPCNAME}_2 start_daemon --rpc_token_file="$WORK/token"
HS=(--hostnames "127.0.0.1:$P1,127.0.0.1:$PORT" --timeout-s 5)
"$DYNO" status "${HS[@]}" --token-file "$WORK/token" >"$WORK/o" 2>&1 || fail "fan-out with the token: $(cat "$WORK/o")"
grep -q '2 hosts: 2 ok, 0 failed' "$WORK/o" || fail "fan-out: $(cat "$WORK/o")"
rc=0; "$DYNO" version "${HS[@]}" >"$WORK/o" 2>&1 || rc=$?
[ $rc = 1 ] && [ "$(grep -c 'requires a token: --token-file' "$WORK/o")" = 2 ] || fail "fan-out without the token: $(cat "$WORK/o")"
rc=0; "$DYNO" gputrace "${HS[@]}" --log-file '/tmp/none_{host}.json' >"$WORK/o" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'requires a token' "$WORK/o" || fail "gputrace fan-out without the token: $(cat "$WORK/o")"
kill "$D1"; wait "$D1" 2>/dev/null || true

# unusable token files: usage errors, no hang (a FIFO must not block)
mkfifo "$WORK/fifo"
printf 'short\n' >"$WORK/short"
head -c 5000 /dev/zero | tr '\0' 'a' >"$WORK/big"
for f in "$WORK/missing" "$WORK" "$WORK/fifo" "$WORK/short" "$WORK/big"; do
	rc=0; timeout 10 "$DYNO" status "${H[@]}" --token-file "$f" >"$WORK/o" 2>&1 || rc=$?
	[ $rc = 2 ] && grep -q "token file $f" "$WORK/o" || fail "token file $f: rc $rc: $(cat "$WORK/o")"
done
grep -q 'not a regular file' <("$DYNO" version "${H[@]}" --token-file "$WORK/fifo" 2>&1) || fail "fifo message"
grep -q Sanitizer "$WORK/daemon.log" "$WORK/daemon1.log" && fail "sanitizer"
echo ok
