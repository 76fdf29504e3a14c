#!/usr/bin/env bash
# End to end with real processes and sockets: a daemon, a "launcher" with
# two fake Kineto children (like torchrun and two ranks), an upstream-shaped
# gputrace request naming the launcher's pid, one-shot delivery, and the two
# trace files Kineto would write (<name>_<pid>.json), valid JSON carrying
# the REQUEST_TRACE_ID.  Then process_limit and job-id matching.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon

# launcher: a shell whose two children are the "ranks"
bash -c "\"$FAKE\" --daemon_name=$IPCNAME --poll_interval_ms=100 --run_s=30 >$WORK/r1.log &
         \"$FAKE\" --daemon_name=$IPCNAME --poll_interval_ms=100 --run_s=30 >$WORK/r2.log &
         wait" &
LAUNCHER=$!
KIDS+=("$LAUNCHER")
wait_for has_procs 2 || fail "two processes did not register: $(rpc '{"fn":"getProcesses"}')"
procs=$(rpc '{"fn":"getProcesses"}')
echo "$procs" | grep -q "\"pids\":\[[0-9]*,$LAUNCHER" || fail "ancestry lacks the launcher pid: $procs"
echo "$procs" | grep -q '"state":"idle"' || fail "not idle: $procs"

# the request upstream dyno would send for --log-file $WORK/trace.json --pids $LAUNCHER
cfg="ACTIVITIES_LOG_FILE=$WORK/trace.json\\nPROFILE_START_TIME=0\\nACTIVITIES_DURATION_MSECS=200\\nPROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_MODULES=false"
body=$(printf '\n{\n    "fn": "setKinetOnDemandRequest",\n    "config": "%s",\n    "job_id": 0,\n    "pids": [%s],\n    "process_limit": 3\n}' "$cfg" "$LAUNCHER")
resp=$(rpc "$body")
echo "$resp" | grep -q '"activityProfilersBusy":0,"activityProfilersTriggered":\[[0-9]*,[0-9]*\]' || fail "not triggered: $resp"

wait_for bash -c "ls $WORK/trace_*.json 2>/dev/null | wc -l | grep -qx 2" || fail "no trace files: $(ls $WORK; cat $WORK/r*.log)"
for f in "$WORK"/trace_*.json; do
	pid=${f##*trace_}; pid=${pid%.json}
	echo "$resp" | grep -q "$pid" || fail "trace $f is not from a triggered pid"
	grep -q '"traceEvents":\[' "$f" || fail "$f has no traceEvents"
	grep -q '"trace_id":"[0-9][0-9]*"' "$f" || fail "$f lacks the REQUEST_TRACE_ID"
	if command -v python3 >/dev/null; then python3 -m json.tool "$f" >/dev/null || fail "$f is not valid JSON"; fi
done
# one-shot: each rank got exactly one config
[ "$(cat "$WORK"/r1.log "$WORK"/r2.log | grep -c '^config ')" = 2 ] || fail "configs delivered more than once"

# process_limit 1 and pids [0] (trace all of job 0): one triggered, both matched
resp=$(rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/lim.json\",\"job_id\":0,\"pids\":[0],\"process_limit\":1}")
echo "$resp" | grep -q '"activityProfilersTriggered":\[[0-9]*\],.*"processesMatched":\[[0-9]*,[0-9]*\]' || fail "limit 1: $resp"

# a job id nobody has
resp=$(rpc '{"fn":"setKinetOnDemandRequest","config":"X=1","job_id":4242,"pids":[0]}')
[ "$resp" = '{"activityProfilersBusy":0,"activityProfilersTriggered":[],"eventProfilersBusy":0,"eventProfilersTriggered":[],"processesMatched":[]}' ] || fail "unknown job: $resp"

# SLURM: a process with SLURM_JOB_ID is found under that job id only
SLURM_JOB_ID=777 "$FAKE" --daemon_name="$IPCNAME" --poll_interval_ms=100 --run_s=30 --exit_after_traces=1 >"$WORK/slurm.log" &
SL=$!
KIDS+=("$SL")
wait_for has_procs 3 || fail "slurm process did not register"
resp=$(rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/slurm.json\\nACTIVITIES_DURATION_MSECS=100\",\"job_id\":777,\"pids\":[0]}")
echo "$resp" | grep -q "\"processesMatched\":\[$SL\]" || fail "job 777: $resp"
wait_for test -s "$WORK/slurm_$SL.json" || fail "no slurm trace"
stop_daemon
grep -q 'IPC: .* 0 malformed' "$WORK/daemon.log" || fail "unexpected malformed datagrams"
echo ok
