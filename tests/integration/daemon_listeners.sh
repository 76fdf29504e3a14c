#!/usr/bin/env bash
# Every listener the daemon cannot open stops it with one clear line and
# exit 1: the RPC port, the Prometheus port and the IPC name; a bad flag
# value is exit 2 and names the flag.  A
# daemon that ran on without RPC would look healthy under systemd while no
# dyno could reach it.  The ports are taken by a first real daemon on
# kernel-chosen ports, so the test never depends on a fixed port being free.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon --use_prometheus --prometheus_address=127.0.0.1 --prometheus_port=0
for _ in $(seq 100); do
	PROM=$(sed -n 's|.*Prometheus metrics on http://127.0.0.1:\([0-9][0-9]*\)/.*|\1|p' "$WORK/daemon.log" | head -n 1)
	[ -n "$PROM" ] && break
	sleep 0.05
done
[ -n "$PROM" ] || fail "no Prometheus port logged"

# second_daemon FLAGS...: must exit by itself (the bound is only for a hang)
# Exit status, one rule: 1 for what the machine refused (a listener), 2 for
# a configuration error (a bad flag value)
second_daemon() {
	rc=0
	timeout 60 "$DYNOLOG" --use_JSON=false --enable_ipc_monitor "$@" 2>"$WORK/second.log" || rc=$?
	[ "$rc" = "${WANT_RC:-1}" ] || fail "$*: exit $rc, not ${WANT_RC:-1}: $(cat "$WORK/second.log")"
	grep -q Sanitizer "$WORK/second.log" && fail "$(cat "$WORK/second.log")"
	return 0
}

second_daemon --port="$PORT" --ipc_endpoint_name="${IPCNAME}_2"
grep -q "^dynolog: cannot start the RPC server on port $PORT: .*in use" "$WORK/second.log" ||
	fail "RPC port in use: $(cat "$WORK/second.log")"
second_daemon --port=0 --ipc_endpoint_name="${IPCNAME}_3" --use_prometheus --prometheus_address=127.0.0.1 \
	--prometheus_port="$PROM"
grep -q "in use" "$WORK/second.log" || fail "Prometheus port in use: $(cat "$WORK/second.log")"
second_daemon --port=0 --ipc_endpoint_name="$IPCNAME"
grep -q "$IPCNAME" "$WORK/second.log" || fail "IPC name in use: $(cat "$WORK/second.log")"

# configuration errors: 2, the message naming the flag
WANT_RC=2 second_daemon --port=0 --ipc_endpoint_name="${IPCNAME}_4" --rpc_allow=garbage
grep -q "^dynolog: --rpc_allow=garbage: 'garbage' is not an IPv4 or IPv6 address" "$WORK/second.log" ||
	fail "bad --rpc_allow: $(cat "$WORK/second.log")"
WANT_RC=2 second_daemon --port=0 --ipc_endpoint_name="${IPCNAME}_5" --kernel_monitor_reporting_interval_s=0
grep -q "kernel_monitor_reporting_interval_s" "$WORK/second.log" || fail "bad interval: $(cat "$WORK/second.log")"

# the first daemon is untouched
rpc '{"fn":"getStatus"}' | grep -q '"status":1' || fail "first daemon stopped answering"
stop_daemon
echo ok
