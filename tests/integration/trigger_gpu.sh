#!/usr/bin/env bash
# A trigger on a GPU metric, end to end on a scripted stream: the fake NVML
# (build/libfake-nvml.so) gives GPU 0's SM activity per tick as high, a
# two-tick dip, high, then low for good; `sm_active_ratio.0 < 0.2 for 3s
# while a job runs` must fire exactly on the third tick of the final low
# run (the dip is too short) - found on the JSON log by the firing's
# sample_time - once (rate limit), and the fake Kineto process registered
# with the daemon gets the trace request and writes the trace.
source "$(dirname "$0")/tracing-lib.bash"
: "${DYNO:=$PWD/$BUILD/dyno}"
LIB=$PWD/$BUILD/libfake-nvml.so
[ -f "$LIB" ] || fail "needs $LIB (make)"
# one value per GPU tick (the last repeats); GPM needs two samples, so the
# first tick has none
cat >"$WORK/script" <<'S'
gpus 1
name 0 NVIDIA H100 80GB HBM3
uuid 0 GPU-00000000-1111-2222-3333-444444444444
gpm 0 2 80,80,80,80,80,80,10,10,80,10
S
export FAKE_NVML_SCRIPT=$WORK/script
# the trigger is in the daemon's file from its start (written by hand, as
# an operator may); --while-job holds it until the fake process registers,
# which takes one poll (100 ms), long before the stream's dip (ticks 7-8)
cat >"$WORK/triggers.json" <<J
{"version": 1, "triggers": [
  {"id": "low-sm", "when": "sm_active_ratio.0 < 0.2 for 3s", "while_job": true, "min_interval_s": 100,
   "config": "ACTIVITIES_LOG_FILE=$WORK/lowsm_{fire}.json\nPROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=50"}
]}
J
start_daemon --kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor --dcgm_reporting_interval_s=1 \
	--nvml_library="$LIB" --json_format=jsonl --use_JSON --json_log_file="$WORK/m.jsonl" \
	--trigger_file="$WORK/triggers.json"
fake --run_s=60
FK=$LASTPID
wait_for has_procs 1 || fail "fake Kineto did not register"
"$DYNO" trigger list --port "$PORT" | grep -q '^low-sm  *sm_active_ratio.0 < 0.2 for 3s' || fail "trigger not loaded"

list() { rpc '{"fn":"listTriggers"}'; }
for _ in $(seq 300); do list | grep -q '"trigger":"low-sm"' && break; sleep 0.1; done
rec=$(list)
st=$(echo "$rec" | grep -o '"sample_time":"[^"]*"' | head -n 1 | cut -d'"' -f4 || true)
[ -n "$st" ] || fail "low-sm never fired: $rec"
# the GPU ticks' values in order, up to the one that fired
vals=$(grep -o '"time":"[^"]*".*"sm_active_ratio.0":[0-9.e-]*' "$WORK/m.jsonl" |
	sed 's/"time":"\([^"]*\)".*"sm_active_ratio.0":\([0-9.e-]*\)/\1 \2/')
upto=$(echo "$vals" | awk -v st="$st" '{print $2} $1 == st {exit}' | tr '\n' ' ')
echo "$vals" | grep -q "^$st " || fail "no GPU tick at $st on the JSON log"
case "$upto" in
*"0.8 0.8 0.1 0.1 0.8 0.1 0.1 0.1 ") ;;
*) fail "fired after the SM activity stream \"$upto\": not the third tick of the last low run" ;;
esac
# once: held on, it stays within its 100 s rate limit
sleep 3
[ "$(list | grep -o '"trigger":"low-sm"' | wc -l)" = 1 ] || fail "fired more than once: $(list)"
echo "$rec" | grep -q "\"triggered\":\[$FK\]" || fail "the process was not triggered: $rec"
echo "$rec" | grep -q '"values":{"sm_active_ratio.0":0.1}' || fail "value: $rec"
wait_for test -s "$WORK/lowsm_0_$FK.json" || fail "no trace written: $(ls "$WORK")"
stop_daemon
echo ok
