#!/usr/bin/env bash
# A setKinetOnDemandRequest config too big to reach a process in one
# datagram (300,000 bytes, under the 1 MiB RPC frame cap) is refused when
# it is requested, in upstream's answer shape plus an "error" member (so
# upstream dyno prints it, and our dyno gputrace says so); nothing is left
# pending, and the process still polls and takes the next normal config.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon
fake --run_s=30 --exit_after_traces=1
K=$LASTPID
wait_for has_procs 1 || fail "not registered"
pad=$(head -c 300000 /dev/zero | tr '\0' x)
printf '{"fn":"setKinetOnDemandRequest","config":"ACTIVITIES_LOG_FILE=%s/big.json\\n#%s","pids":[0]}' "$WORK" "$pad" >"$WORK/big.req"
r=$("$RPC" --port="$PORT" <"$WORK/big.req")
echo "$r" | grep -q '"activityProfilersTriggered":\[\],"error":"config is 300[0-9]* bytes; a process can receive at most [0-9]* bytes in one datagram' ||
	fail "big config: ${r:0:300}"
echo "$r" | grep -q '"processesMatched":\[\]' || fail "not upstream's shape: ${r:0:300}"
grep -q "on-demand request refused: config is 300" "$WORK/daemon.log" || fail "refusal not logged"
# our CLI shows the reason
long=$WORK/$(head -c 70000 /dev/zero | tr '\0' a).json
out=$("$DYNO" --port="$PORT" gputrace --log-file "$long" 2>&1) && fail "dyno exit 0: ${out:0:500}"
echo "$out" | grep -q 'a process can receive at most' || fail "dyno: ${out:0:500}"
# the process is not blocked: the next config is delivered and traced
r=$(rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/ok.json\\nACTIVITIES_DURATION_MSECS=100\",\"pids\":[0]}")
echo "$r" | grep -q "\"activityProfilersTriggered\":\[$K\]" || fail "normal config: $r"
wait_for test -s "$WORK/ok_$K.json" || fail "no trace after the refused config"
stop_daemon
echo ok
