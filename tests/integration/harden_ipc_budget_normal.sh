#!/usr/bin/env bash
# The IPC datagram budget (issue #22, src/daemon/ipc/ipc_filter.bpf.c) leaves
# honest clients alone: eight fake Kineto processes of one user (root),
# each with a `ctxt` at start and a poll every 100 ms (Kineto polls every
# few seconds: this is 20-50 times its rate), for 4 s.  Every poll is sent
# (none refused), getStatus says the budget is on and dropped nothing, the
# metric ipc_dropped_over_budget is published and 0, and no drop is
# logged.  Fails if the defaults (--ipc_rate_per_uid,
# --ipc_rate_per_process and their bursts) are cut below what real
# processes need.  Skips (77) when the kernel refuses the BPF program (not root, no
# CAP_BPF).  Costs ~5 s.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon --use_JSON=true --json_log_file="$WORK/ticks.json" --kernel_monitor_reporting_interval_s=1
wait_for grep -q 'IPC: datagram budget on\|running without the datagram budget' "$WORK/daemon.log" ||
	fail "no word on the datagram budget"
if grep -q 'running without the datagram budget' "$WORK/daemon.log"; then
	echo "skip: $(sed -n 's/.*per user: \(.*\); one local.*/\1/p' "$WORK/daemon.log")"
	exit 77
fi
rpc '{"fn":"getStatus","extensions":true}' >"$WORK/status0.json"
grep -q '"ipc_filter":"on"' "$WORK/status0.json" || fail "getStatus: $(cat "$WORK/status0.json")"
pids=()
for i in $(seq 8); do
	"$FAKE" --daemon_name="$IPCNAME" --poll_interval_ms=100 --run_s=4 --ctxt_gpu=$((i % 8)) \
		>"$WORK/legit$i.log" 2>&1 &
	pids+=($!)
done
KIDS+=("${pids[@]}")
for p in "${pids[@]}"; do wait "$p" || fail "a fake Kineto process failed"; done
for i in $(seq 8); do
	line=$(grep '^polls:' "$WORK/legit$i.log") || fail "no poll tally: $(cat "$WORK/legit$i.log")"
	read -r polls answered failed < <(sed -n 's/^polls: \([0-9]*\) sent, \([0-9]*\) answered, \([0-9]*\) send failed, [0-9]* retried$/\1 \2 \3/p' <<<"$line")
	grep -q '^ctxt gpu [0-9]*: count [0-9]' "$WORK/legit$i.log" || fail "process $i: ctxt unanswered"
	[ "${polls:-0}" -ge 20 ] || fail "process $i polled too little: $line"
	# every send got through; an answer later than Kineto's 90 ms window is
	# the host's latency (a loaded CI host), not the budget: a datagram the
	# filter dropped would show in the drop counters checked below
	[ "$failed" -eq 0 ] && [ "$answered" -gt 0 ] || fail "process $i: $line"
done
sleep 1.1 # the daemon reads the filter's counters at most once a second
rpc '{"fn":"getStatus","extensions":true}' >"$WORK/status1.json"
grep -q '"ipc_filter":"on","ipc_dropped_over_budget":0,' "$WORK/status1.json" ||
	fail "getStatus after the polls: $(cat "$WORK/status1.json")"
stop_daemon
grep -q '"ipc_dropped_over_budget":0' "$WORK/ticks.json" || fail "the drop metric was not published"
! grep -q '"ipc_dropped_over_budget":[1-9]' "$WORK/ticks.json" || fail "the drop metric counted drops"
! grep -q 'over its datagram budget\|dropped over their sender' "$WORK/daemon.log" ||
	fail "honest processes had datagrams dropped: $(grep 'budget' "$WORK/daemon.log")"
echo ok
