#!/usr/bin/env bash
# Without the IPC datagram budget tracing still works, and the daemon says
# why it runs without it: once with --ipc_bpf_filter=off, once as root
# without capabilities (an empty bounding set: the kernel refuses the BPF
# program, as for a non-root daemon).  Each time a fake Kineto process
# registers and is answered, getStatus says "ipc_filter":"off: <why>", and
# the drop metric is absent (unavailable, not 0).  Skips (77) when not root.
source "$(dirname "$0")/tracing-lib.bash"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (drops its capabilities)"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: needs setpriv (util-linux)"; exit 77; }

check_off() { # $1: what getStatus must say after "off: "
	rpc '{"fn":"getStatus","extensions":true}' >"$WORK/status.json"
	grep -q "\"ipc_filter\":\"off: $1" "$WORK/status.json" || fail "getStatus: $(cat "$WORK/status.json")"
	! grep -q 'ipc_dropped_over_budget' "$WORK/status.json" || fail "a drop count without a filter"
	"$FAKE" --daemon_name="$IPCNAME" --poll_interval_ms=100 --run_s=2 >"$WORK/fake.log" 2>&1 ||
		fail "fake: $(cat "$WORK/fake.log")"
	grep -q '^registered' "$WORK/fake.log" || fail "the process did not register: $(cat "$WORK/fake.log")"
	grep -Eq '^polls: ([0-9]+) sent, \1 answered, 0 send failed' "$WORK/fake.log" ||
		fail "polls unanswered: $(grep '^polls' "$WORK/fake.log")"
	stop_daemon
	! grep -q 'ipc_dropped_over_budget' "$WORK/ticks.json" || fail "the drop metric published without a filter"
	grep -q '"cpu_util"' "$WORK/ticks.json" || fail "no tick in the JSON log"
}

start_daemon --ipc_bpf_filter=off --use_JSON=true --json_log_file="$WORK/ticks.json" \
	--kernel_monitor_reporting_interval_s=1
check_off 'not enabled (--ipc_bpf_filter=off)'
grep -q 'running without the datagram budget per user: not enabled' "$WORK/daemon.log" ||
	fail "the daemon did not say it runs without the budget"

rm -f "$WORK/ticks.json"
DYNOLOG_REAL=$DYNOLOG
DYNOLOG=$WORK/dynolog-nocaps
printf '#!/bin/sh\nexec setpriv --bounding-set=-all --inh-caps=-all "%s" "$@"\n' "$DYNOLOG_REAL" >"$DYNOLOG"
chmod +x "$DYNOLOG"
start_daemon --use_JSON=true --json_log_file="$WORK/ticks.json" --kernel_monitor_reporting_interval_s=1
wait_for grep -q 'running without the datagram budget' "$WORK/daemon.log" || fail "no word on the budget"
grep -q 'running without the datagram budget per user: the kernel refused the BPF program (Operation not permitted): needs root or CAP_BPF' "$WORK/daemon.log" ||
	fail "unexpected reason: $(grep budget "$WORK/daemon.log")"
[ "$(grep -c 'datagram budget' "$WORK/daemon.log")" -eq 1 ] || fail "said more than once"
check_off 'the kernel refused the BPF program'
echo ok
