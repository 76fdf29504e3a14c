#!/usr/bin/env bash
# A hung NVML call (a GPU fallen off the bus) never stops the daemon's
# loop: with a fake NVML whose temperature call sleeps forever on the third
# GPU tick, the hang is reported once, GPU series go absent (Prometheus
# too), and host ticks, Kineto IPC registration and RPC getStatus go on.
# Then a call that hangs for 3 s and comes back: the collector says so
# and GPU values return.  Counts, not latencies.
source "$(dirname "$0")/tracing-lib.bash"
# a daemon whose loop is stuck cannot act on SIGTERM (that is the failure
# this test looks for): end it with SIGKILL so a failing run still ends
kill_all() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null || true
	cleanup
}
trap kill_all EXIT
LIB=$PWD/$BUILD/libfake-nvml.so
[ -f "$LIB" ] || fail "needs $LIB (make)"
waitlong() { for _ in $(seq 400); do "$@" && return 0; sleep 0.05; done; return 1; }
ticks() { grep -c cpus_online "$WORK/m.jsonl" || true; }
gpu_ticks() { grep -c gpu_name "$WORK/m.jsonl" || true; }

run() { # script
	printf '%s\n' "$@" >"$WORK/script"
	rm -f "$WORK/m.jsonl"
	FAKE_NVML_SCRIPT=$WORK/script start_daemon --use_JSON=true --json_format=jsonl --json_log_file="$WORK/m.jsonl" \
		--kernel_monitor_reporting_interval_s=1 --enable_gpu_monitor --dcgm_reporting_interval_s=1 \
		--gpu_collect_timeout_ms=300 --nvml_library="$LIB" --use_prometheus --prometheus_port=0
	waitlong grep -q 'serving Prometheus' "$WORK/daemon.log" || fail "no Prometheus"
	PROM=$(sed -n 's|.*serving Prometheus metrics on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$WORK/daemon.log")
}

# ---- a call that never returns ----
run 'gpus 1' 'name 0 NVIDIA H100 80GB HBM3' 'power 0 100000' 'temp 0 40,41,H'
waitlong grep -q 'has not returned within 300 ms' "$WORK/daemon.log" || fail "hang not reported"
[ "$(gpu_ticks)" = 2 ] || fail "want 2 GPU ticks before the hang, got $(gpu_ticks)"
curl -sf "http://127.0.0.1:$PROM/metrics" >"$WORK/page.txt" || fail "Prometheus does not answer during the hang"
if grep '^dynolog_gpu_' "$WORK/page.txt"; then fail "GPU series published during the hang"; fi
grep -q '^node_cpu_seconds_total' "$WORK/page.txt" || fail "host series missing"
# the loop goes on: host ticks, Kineto IPC, RPC
n0=$(ticks)
fake --run_s=30
waitlong has_procs 1 || fail "Kineto IPC not handled during the hang"
rpc '{"fn":"getStatus"}' >"$WORK/status.json" || fail "getStatus not answered during the hang"
grep -q '"status"' "$WORK/status.json" || fail "getStatus: $(cat "$WORK/status.json")"
waitlong bash -c "[ \$(grep -c cpus_online '$WORK/m.jsonl') -ge $((n0 + 3)) ]" || fail "host ticks stopped"
[ "$(grep -c 'has not returned' "$WORK/daemon.log")" = 1 ] || fail "hang reported more than once"
[ "$(gpu_ticks)" = 2 ] || fail "GPU ticks during the hang: $(gpu_ticks)"
stop_daemon
for k in "${KIDS[@]}"; do kill "$k" 2>/dev/null || true; done
KIDS=()

# ---- a call that hangs for 3 s, then answers ----
run 'gpus 1' 'name 0 NVIDIA H100 80GB HBM3' 'temp 0 40,S3000=41,42'
waitlong grep -q 'has not returned within 300 ms' "$WORK/daemon.log" || fail "slow call not reported"
waitlong grep -q 'NVML answered again after' "$WORK/daemon.log" || fail "recovery not said"
waitlong grep -q '"gpu_temperature_c.0":42' "$WORK/m.jsonl" || fail "GPU values did not come back"
if grep -q '"gpu_temperature_c.0":41' "$WORK/m.jsonl"; then fail "the stale answer of the hung call was published"; fi
stop_daemon
echo ok
