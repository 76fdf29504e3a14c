#!/usr/bin/env bash
# A local user registering thousands of made-up processes must not flood
# the daemon's log: "registered process" and "expired process" lines are
# rate-limited per kind (a burst of 20, then one a second), and the next
# line that gets through says how many similar lines were suppressed.
# The same for what any RPC client can send: malformed requests and unknown
# functions (28,000 warning lines a minute under the soak before).
source "$(dirname "$0")/tracing-lib.bash"
# --ipc_bpf_filter=off: this tests the daemon's own bounds, the ones that
# hold when the kernel's datagram budget (ipc_filter.bpf.c) is not loaded
# or for senders within it; with it on, most of the flood never arrives.
start_daemon --ipc_process_expiry_s=1 --ipc_bpf_filter=off
"$FAKE" --daemon_name="$IPCNAME" --flood=3000 --flood_sockets=256 --flood_npids=1 >"$WORK/flood.log" 2>&1 ||
	fail "flood: $(cat "$WORK/flood.log")"
grep -q '^flood: sent 3000' "$WORK/flood.log" || fail "$(cat "$WORK/flood.log")"
sleep 3 # every flooded process expires (silent for more than 1 s)
fake --run_s=30
wait_for grep -q 'registered process .*similar lines suppressed)' "$WORK/daemon.log" ||
	fail "no suppressed count after the flood"
# 300 requests that are not JSON and 300 unknown functions, then one more
# of each once a token came back: it carries the suppressed count
RPCSEND=$RPC
t0=$(date +%s)
for i in $(seq 300); do
	"$RPCSEND" --port "$PORT" --timeout_ms 2000 --body '{not json' >/dev/null 2>&1 || true
	"$RPCSEND" --port "$PORT" --timeout_ms 2000 --body '{"fn":"noSuchCall"}' >/dev/null 2>&1 || true
done
sleep 1.5
"$RPCSEND" --port "$PORT" --timeout_ms 2000 --body '{not json' >/dev/null 2>&1 || true
"$RPCSEND" --port "$PORT" --timeout_ms 2000 --body '{"fn":"noSuchCall"}' >/dev/null 2>&1 || true
# a burst of 20, then one a second for as long as the loop ran
rpc_max=$((20 + $(date +%s) - t0 + 5))
stop_daemon
bad=$(grep -c 'invalid JSON' "$WORK/daemon.log")
unk=$(grep -c 'unknown RPC call' "$WORK/daemon.log")
[ "$bad" -le "$rpc_max" ] || fail "$bad invalid-JSON lines (at most $rpc_max)"
[ "$unk" -le "$rpc_max" ] || fail "$unk unknown-call lines (at most $rpc_max)"
grep -q 'invalid JSON.*similar lines suppressed)' "$WORK/daemon.log" || fail "no suppressed count for invalid JSON"
grep -q 'unknown RPC call.*similar lines suppressed)' "$WORK/daemon.log" || fail "no suppressed count for unknown calls"
reg=$(grep -c 'registered process' "$WORK/daemon.log")
exp=$(grep -c 'expired process' "$WORK/daemon.log")
# 5 s of flood at most: 20 + 5 lines of each kind, with margin for a slow machine
[ "$reg" -le 40 ] || fail "$reg registration lines"
[ "$exp" -le 40 ] || fail "$exp expiry lines"
[ "$(wc -l <"$WORK/daemon.log")" -le 250 ] || fail "$(wc -l <"$WORK/daemon.log") log lines"
n=$(sed -n 's/.*registered process .*(\([0-9]*\) similar lines suppressed).*/\1/p' "$WORK/daemon.log" | head -n 1)
[ "$n" -ge 2000 ] || fail "suppressed count $n"
echo ok
