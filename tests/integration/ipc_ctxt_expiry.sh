#!/usr/bin/env bash
# Legacy Kineto: ctxt counts distinct pids per (job, GPU); old poll types
# (3 idle, 1 busy) still get configs; and a process that stops polling is
# expired by the daemon's timer (--ipc_process_expiry_s=1 here, upstream 60).
source "$(dirname "$0")/tracing-lib.bash"
start_daemon --ipc_process_expiry_s=1
"$FAKE" --daemon_name="$IPCNAME" --ctxt_gpu=0 --legacy --run_s=1 --job_id=55 >"$WORK/a.log"
grep -q '^ctxt gpu 0: count 1$' "$WORK/a.log" || fail "first ctxt: $(cat "$WORK/a.log")"
"$FAKE" --daemon_name="$IPCNAME" --ctxt_gpu=0 --legacy --run_s=1 --job_id=55 >"$WORK/b.log"
grep -q '^ctxt gpu 0: count 2$' "$WORK/b.log" || fail "second ctxt: $(cat "$WORK/b.log")"
"$FAKE" --daemon_name="$IPCNAME" --ctxt_gpu=1 --legacy --run_s=1 --job_id=55 >"$WORK/c.log"
grep -q '^ctxt gpu 1: count 1$' "$WORK/c.log" || fail "other gpu: $(cat "$WORK/c.log")"

# a legacy poller (type 3) receives a config
"$FAKE" --daemon_name="$IPCNAME" --legacy --poll_interval_ms=100 --run_s=20 --job_id=56 --exit_after_traces=1 >"$WORK/l.log" &
L=$!
KIDS+=("$L")
wait_for bash -c "$RPC --port=$PORT --body='{\"fn\":\"getProcesses\"}' | grep -q '\"pid\":$L'" || fail "legacy not registered"
rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/legacy.json\\nACTIVITIES_DURATION_MSECS=300\",\"job_id\":56,\"pids\":[$L]}" >/dev/null
wait_for grep -q '^config ' "$WORK/l.log" || fail "legacy got no config"
# while tracing it polls with type 1: the daemon reports it busy
wait_for bash -c "$RPC --port=$PORT --body='{\"fn\":\"getProcesses\"}' | grep -q '\"pid\":$L,[^}]*\"state\":\"busy\"'" || fail "not busy while tracing"
wait_for test -s "$WORK/legacy_$L.json" || fail "legacy wrote no trace"
wait "$L" || true

# every process has stopped polling: all expire within ~2 s
wait_for has_procs 0 || fail "not expired: $(rpc '{"fn":"getProcesses"}')"
grep -q 'expired process' "$WORK/daemon.log" || fail "no expiry logged"
stop_daemon
echo ok
