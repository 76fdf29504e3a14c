#!/usr/bin/env bash
# dyno against the real dynolog RPC server (not the tests' fake): version,
# status (with the process list when the daemon has getProcesses), gputrace
# with nothing registered (upstream lines plus the explanation), dcgm-pause
# without a GPU monitor ({"status":false} -> exit 1), unknown-fn handling.
set -uo pipefail
tmp=$(mktemp -d)
# --port=0: the kernel picks a free port, the daemon logs it
"$DYNOLOG" --port=0 >"$tmp/daemon.out" 2>"$tmp/daemon.err" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
port=
for _ in $(seq 300); do
	port=$(sed -n 's/.*RPC server listening on .* port \([0-9]*\).*/\1/p' "$tmp/daemon.err")
	[ -n "$port" ] && break
	kill -0 $dpid 2>/dev/null || { echo "daemon exited:"; cat "$tmp/daemon.err"; exit 1; }
	sleep 0.1
done
[ -n "$port" ] || { echo "daemon did not start its RPC server"; cat "$tmp/daemon.err"; exit 1; }
up=0
for _ in $(seq 100); do
	if "$DYNO" version --hostname 127.0.0.1 --port $port >"$tmp/v" 2>&1; then up=1; break; fi
	kill -0 $dpid 2>/dev/null || { echo "daemon exited:"; cat "$tmp/daemon.err"; exit 1; }
	sleep 0.1
done
[ $up = 1 ] || { echo "daemon did not answer on port $port"; cat "$tmp/v" "$tmp/daemon.err"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }

grep -q '^response = {"version":"' "$tmp/v" || fail "version: $(cat "$tmp/v")"
# upstream's option order, IPv6 loopback too (the daemon binds :: dual-stack)
"$DYNO" --hostname 127.0.0.1 --port $port status >"$tmp/s" 2>&1 || fail "status: $(cat "$tmp/s")"
grep -q '^response = {"extensions":\[.*"getProcesses".*\],\("ipc_[a-z_]*":[^,]*,\)*"status":1}$' "$tmp/s" || fail "status: $(cat "$tmp/s")"
if [ -e /proc/net/if_inet6 ]; then
	"$DYNO" status --hostname ::1 --port $port --no-processes >"$tmp/s6" 2>&1 || fail "status over ::1: $(cat "$tmp/s6")"
fi
"$DYNO" gputrace --hostname 127.0.0.1 --port $port --log-file /tmp/cli_real.json >"$tmp/g" 2>&1 ||
	fail "gputrace: $(cat "$tmp/g")"
grep -qx 'response = {"activityProfilersBusy":0,"activityProfilersTriggered":\[\],"eventProfilersBusy":0,"eventProfilersTriggered":\[\],"processesMatched":\[\]}' "$tmp/g" ||
	fail "gputrace answer (upstream's exact bytes expected): $(cat "$tmp/g")"
# the agreed getProcesses extension explains it
grep -q 'no process is registered with this daemon' "$tmp/g" || fail "no explanation: $(cat "$tmp/g")"
"$DYNO" status --hostname 127.0.0.1 --port $port >"$tmp/s2" 2>&1 || fail "status: $(cat "$tmp/s2")"
grep -q '^processes: 0 registered' "$tmp/s2" || fail "status without getProcesses: $(cat "$tmp/s2")"
grep -q '^No processes were matched, please check --job-id or --pids flags$' "$tmp/g" || fail "gputrace: $(cat "$tmp/g")"
rc=0
"$DYNO" dcgm-pause --hostname 127.0.0.1 --port $port >"$tmp/d" 2>&1 || rc=$?
grep -q '^response = {"status":false}$' "$tmp/d" && [ $rc = 1 ] || fail "dcgm-pause without GPU monitor (rc $rc): $(cat "$tmp/d")"
# many hosts, one of them twice under another spelling, one dead
"$DYNO" version --hostnames 127.0.0.1:$port,localhost:$port,127.0.0.1:1 >"$tmp/m" 2>&1 && fail "dead host not reported"
grep -q 'hosts: 2 ok, 1 failed' "$tmp/m" || grep -q 'hosts: 1 ok, 2 failed' "$tmp/m" || fail "fan-out: $(cat "$tmp/m")"
kill -0 $dpid || fail "daemon died during the test"
echo ok
