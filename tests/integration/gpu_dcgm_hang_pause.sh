#!/usr/bin/env bash
# The DCGM backend's hang bound and profiling pause, with our fake DCGM:
# a dcgmGetLatestValues_v2 that never returns is reported once while host
# ticks, Kineto IPC and RPC go on; dcgmProfPause / dcgmProfResume (the body
# upstream dyno sends, and our dyno) call DCGM's own pause and resume (the
# fake records them), the profiling fields are absent while paused, an
# expired pause is resumed by the next tick; a failing dcgmProfPause
# answers false.  Ticks are counted, never timed.
source "$(dirname "$0")/tracing-lib.bash"
kill_all() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null || true
	cleanup
}
trap kill_all EXIT
LIB=$PWD/$BUILD/libfake-dcgm.so
DYNO=$PWD/$BUILD/dyno
[ -f "$LIB" ] || fail "needs $LIB (make)"
waitlong() { for _ in $(seq 400); do "$@" && return 0; sleep 0.05; done; return 1; }
gpu_lines() { grep gpu_name "$WORK/m.jsonl" || true; }
wait_ticks() { # N: wait for N more GPU ticks; FROM: the first new line
	FROM=$(($(gpu_lines | wc -l) + 1))
	waitlong bash -c "[ \$(grep -c gpu_name '$WORK/m.jsonl') -ge $((FROM + $1 - 1)) ]" || fail "GPU ticks stopped"
}
since() { gpu_lines | tail -n +"$FROM"; }
run() { # script lines...
	printf '%s\n' 'gpus 1' 'name 0 NVIDIA H100 80GB HBM3' 'field 0 155 300.5' 'field 0 1002 0.5' "$@" >"$WORK/script"
	rm -f "$WORK/m.jsonl" "$WORK/calls"
	FAKE_DCGM_SCRIPT=$WORK/script FAKE_DCGM_LOG=$WORK/calls start_daemon --use_JSON=true --json_format=jsonl \
		--json_log_file="$WORK/m.jsonl" --kernel_monitor_reporting_interval_s=1 --enable_gpu_monitor \
		--dcgm_reporting_interval_s=1 --gpu_collect_timeout_ms=300 --dcgm_library="$LIB" \
		--nvml_library="$WORK/none.so" --gpu_backend=dcgm
}

# ---- pause and resume ----
run
waitlong grep -q '"sm_active_ratio.0":0.5' "$WORK/m.jsonl" || fail "no profiling value before the pause"
printf '\n{\n    "fn": "dcgmProfPause",\n    "duration_s": %d\n}' 2 >"$WORK/pause"
[ "$("$RPC" --port="$PORT" <"$WORK/pause")" = '{"status":true}' ] || fail "dcgmProfPause not true"
grep -q '^dcgmProfPause 1 -> 0$' "$WORK/calls" || fail "DCGM's pause not called: $(cat "$WORK/calls")"
wait_ticks 1
if since | grep -q sm_active_ratio; then fail "profiling field published while paused: $(since)"; fi
since | grep -q '"gpu_power_draw.0":300.5' || fail "device fields stopped with the pause"
# it expires: the next tick calls DCGM's resume, values come back
waitlong grep -q '^dcgmProfResume 1 -> 0$' "$WORK/calls" || fail "the expired pause was not resumed in DCGM"
wait_ticks 1
since | grep -q '"sm_active_ratio.0":0.5' || fail "profiling values did not come back: $(since)"
out=$("$DYNO" --port="$PORT" dcgm-pause --duration-s 300) || fail "dyno dcgm-pause: $out"
[ "$(grep -c '^dcgmProfPause' "$WORK/calls")" = 2 ] || fail "dyno dcgm-pause: DCGM not paused"
out=$("$DYNO" --port="$PORT" dcgm-resume) || fail "dyno dcgm-resume: $out"
[ "$(tail -n 1 <<<"$out")" = 'response = {"status":true}' ] || fail "dyno dcgm-resume: $out"
[ "$(grep -c '^dcgmProfResume' "$WORK/calls")" = 2 ] || fail "dyno dcgm-resume: DCGM not resumed"
stop_daemon

# ---- DCGM refuses the pause: false, nothing paused ----
run 'call pause E-6'
waitlong grep -q '"sm_active_ratio.0":0.5' "$WORK/m.jsonl" || fail "no profiling value"
[ "$("$RPC" --port="$PORT" <"$WORK/pause")" = '{"status":false}' ] || fail "a failed dcgmProfPause is not false"
grep -q 'DCGM: dcgmProfPause failed: not supported (-6)' "$WORK/daemon.log" || fail "pause failure not said"
wait_ticks 1
since | grep -q '"sm_active_ratio.0":0.5' || fail "paused although DCGM refused"
stop_daemon

# ---- a call that never returns ----
run 'call latest 0,0,H'
waitlong grep -q 'a DCGM call has not returned within 300 ms' "$WORK/daemon.log" || fail "hang not reported"
n0=$(grep -c cpus_online "$WORK/m.jsonl")
fake --run_s=30
waitlong has_procs 1 || fail "Kineto IPC not handled during the hang"
rpc '{"fn":"getStatus"}' | grep -q '"status"' || fail "getStatus not answered during the hang"
[ "$("$RPC" --port="$PORT" <"$WORK/pause")" = '{"status":false}' ] || fail "pause during the hang not false"
waitlong bash -c "[ \$(grep -c cpus_online '$WORK/m.jsonl') -ge $((n0 + 3)) ]" || fail "host ticks stopped"
[ "$(grep -c 'has not returned' "$WORK/daemon.log")" = 1 ] || fail "hang reported more than once"
[ "$(gpu_lines | wc -l)" = 2 ] || fail "GPU ticks during the hang: $(gpu_lines | wc -l)"
# it still exits cleanly: the stuck thread is left behind
stop_daemon
echo ok
