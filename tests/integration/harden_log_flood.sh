#!/usr/bin/env bash
# A local user registering thousands of made-up processes must not flood
# the daemon's log: "registered process" and "expired process" lines are
# rate-limited per kind (a burst of 20, then one a second), and the next
# line that gets through says how many similar lines were suppressed.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon --ipc_process_expiry_s=1
"$FAKE" --daemon_name="$IPCNAME" --flood=3000 --flood_sockets=256 --flood_npids=1 >"$WORK/flood.log" 2>&1 ||
	fail "flood: $(cat "$WORK/flood.log")"
grep -q '^flood: sent 3000' "$WORK/flood.log" || fail "$(cat "$WORK/flood.log")"
sleep 3 # every flooded process expires (silent for more than 1 s)
fake --run_s=30
wait_for grep -q 'registered process .*similar lines suppressed)' "$WORK/daemon.log" ||
	fail "no suppressed count after the flood"
stop_daemon
reg=$(grep -c 'registered process' "$WORK/daemon.log")
exp=$(grep -c 'expired process' "$WORK/daemon.log")
# 5 s of flood at most: 20 + 5 lines of each kind, with margin for a slow machine
[ "$reg" -le 40 ] || fail "$reg registration lines"
[ "$exp" -le 40 ] || fail "$exp expiry lines"
[ "$(wc -l <"$WORK/daemon.log")" -le 150 ] || fail "$(wc -l <"$WORK/daemon.log") log lines"
n=$(sed -n 's/.*registered process .*(\([0-9]*\) similar lines suppressed).*/\1/p' "$WORK/daemon.log" | head -n 1)
[ "$n" -ge 2000 ] || fail "suppressed count $n"
echo ok
