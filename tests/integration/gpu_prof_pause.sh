#!/usr/bin/env bash
# dcgmProfPause / dcgmProfResume with the real daemon and our fake NVML:
# the body upstream dyno sends pauses the GPM (profiling) series, which go
# absent (not 0) while the rest of the GPU series go on; the pause ends by
# itself when it expires; `dyno dcgm-pause` / `dyno dcgm-resume` (our CLI,
# upstream's bytes) pause and resume at once.  A driver without GPM has no
# profiling metrics: both answer false, as a daemon without a GPU backend.
# Ticks are counted, never timed.
source "$(dirname "$0")/tracing-lib.bash"
LIB=$PWD/$BUILD/libfake-nvml.so
OLD=$PWD/$BUILD/libfake-nvml-old.so
DYNO=$PWD/$BUILD/dyno
[ -f "$LIB" ] && [ -f "$OLD" ] || fail "needs $LIB and $OLD (make)"
waitlong() { for _ in $(seq 400); do "$@" && return 0; sleep 0.05; done; return 1; }
gpu_lines() { grep gpu_name "$WORK/m.jsonl" || true; }
gpu_ticks() { gpu_lines | wc -l; }
# wait_ticks N: wait until N more GPU ticks than now are logged; sets FROM
# to the first line number of the new ones
wait_ticks() {
	FROM=$(($(gpu_ticks) + 1))
	waitlong bash -c "[ \$(grep -c gpu_name '$WORK/m.jsonl') -ge $((FROM + $1 - 1)) ]" || fail "GPU ticks stopped"
}
# lines FROM.. of the GPU ticks
since() { gpu_lines | tail -n +"$FROM"; }
cat >"$WORK/script" <<'S'
gpus 1
name 0 NVIDIA H100 80GB HBM3
power 0 100000
gpm 0 2 45.5
S
run() { # library
	rm -f "$WORK/m.jsonl"
	FAKE_NVML_SCRIPT=$WORK/script start_daemon --use_JSON=true --json_format=jsonl \
		--json_log_file="$WORK/m.jsonl" --kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor \
		--dcgm_reporting_interval_s=1 --nvml_library="$1"
}
pause_body() { printf '\n{\n    "fn": "dcgmProfPause",\n    "duration_s": %d\n}' "$1"; }

run "$LIB"
waitlong bash -c "grep -q '\"sm_active_ratio.0\":0.455' '$WORK/m.jsonl'" || fail "no GPM value before the pause"
# the 51-byte body upstream dyno sends for --duration-s 3
pause_body 3 >"$WORK/pause"
[ "$(wc -c <"$WORK/pause")" = 51 ] || fail "pause body is $(wc -c <"$WORK/pause") bytes"
[ "$("$RPC" --port="$PORT" <"$WORK/pause")" = '{"status":true}' ] || fail "dcgmProfPause not true"
wait_ticks 2
if since | grep -q sm_active_ratio; then fail "GPM series published while paused: $(since)"; fi
since | grep -q '"gpu_power_draw.0":100' || fail "non-profiling series stopped with the pause"
# it expires by itself: a new GPM baseline, then values
waitlong grep -q 'profiling pause has expired' "$WORK/daemon.log" || fail "the pause did not expire"
wait_ticks 2
since | grep -q '"sm_active_ratio.0":0.455' || fail "GPM did not come back after the pause: $(since)"

# our dyno, upstream's bytes: a long pause, then a resume at once
out=$("$DYNO" --port="$PORT" dcgm-pause --duration-s 300) || fail "dyno dcgm-pause: $out"
grep -qF '"status": true' <<<"$out" || grep -qF '"status":true' <<<"$out" || fail "dyno dcgm-pause: $out"
wait_ticks 2
if since | grep -q sm_active_ratio; then fail "GPM published during the 300 s pause"; fi
out=$("$DYNO" --port="$PORT" dcgm-resume) || fail "dyno dcgm-resume: $out"
[ "$(tail -n 1 <<<"$out")" = 'response = {"status":true}' ] || fail "dyno dcgm-resume: $out"
grep -q 'profiling metrics resumed (dcgmProfResume)' "$WORK/daemon.log" || fail "resume not logged"
wait_ticks 2
since | grep -q '"sm_active_ratio.0":0.455' || fail "GPM did not come back after the resume: $(since)"
# missing duration_s: upstream's failure answer
[ "$(rpc '{"fn":"dcgmProfPause"}')" = '{"status":"failed"}' ] || fail "pause without duration_s"
stop_daemon

# ---- no profiling metrics (a driver without GPM): false, as upstream without DCGM ----
run "$OLD"
wait_ticks 1
[ "$("$RPC" --port="$PORT" <"$WORK/pause")" = '{"status":false}' ] || fail "old driver: pause not false"
[ "$(rpc '{"fn":"dcgmProfResume"}')" = '{"status":false}' ] || fail "old driver: resume not false"
stop_daemon
echo ok
