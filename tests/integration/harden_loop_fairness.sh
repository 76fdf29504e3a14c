#!/usr/bin/env bash
# Loop fairness: floods cannot keep the daemon's one event loop inside one
# handler.  A real daemon with a 1 s kernel interval and the JSON log in a
# file takes, for ~10 s, a datagram flood from several sender processes
# (each refills the kernel queue, net.unix.max_dgram_qlen, as fast as the
# daemon drains it) and RPC connection churn plus non-reading getProcesses
# clients (bench/soak's churn and slow abuse: the listening socket's backlog
# is refilled as fast as it is accepted).  The JSON log must keep ticking:
# the ticks written during the abuse are counted (>= 70% of the seconds
# elapsed).  Counts, not latencies.  Costs ~12 s and both cores.
source "$(dirname "$0")/tracing-lib.bash"
SOAK=$PWD/$BUILD/bench/soak
[ -x "$SOAK" ] || { echo "needs $SOAK (make)"; exit 77; }
SECS=10
FLOODERS=${FAIRNESS_FLOODERS:-4}
# --ipc_bpf_filter=off: this tests the daemon's own bounds, the ones that
# hold when the kernel's datagram budget (ipc_filter.bpf.c) is not loaded
# or for senders within it; with it on, most of the flood never arrives.
start_daemon --ipc_bpf_filter=off --use_JSON=true --kernel_monitor_reporting_interval_s=1 --json_log_file="$WORK/ticks.json"
wait_for test -s "$WORK/ticks.json" || fail "no first tick"
t0=$(date +%s.%N)
n0=$(wc -l <"$WORK/ticks.json")
pids=()
for i in $(seq "$FLOODERS"); do
	# made-up processes from many sockets: the registry refuses most, but
	# every datagram is read, checked and answered
	timeout -s INT "$SECS" "$FAKE" --daemon_name="$IPCNAME" --flood=100000000 --flood_sockets=64 \
		--flood_npids=64 >"$WORK/flood$i.log" 2>&1 &
	pids+=($!)
done
"$SOAK" --pid="$DPID" --rpc_port="$PORT" --prom_port=1 --ipc_name="$IPCNAME" --json_log="$WORK/ticks.json" \
	--seconds="$SECS" --interval_s=1 --churn_threads=8 --slow_conns=64 --abuse=churn,flood,slow \
	>"$WORK/soak.log" 2>&1 &
pids+=($!)
KIDS+=("${pids[@]}")
for p in "${pids[@]}"; do wait "$p" || true; done
t1=$(date +%s.%N)
n1=$(wc -l <"$WORK/ticks.json")
kill -0 "$DPID" 2>/dev/null || fail "daemon died under the abuse"
sent=$(sed -n 's/^flood: sent \([0-9]*\).*/\1/p' "$WORK"/flood*.log | awk '{s += $1} END {print s + 0}')
churned=$(sed -n 's/.* churned=\([0-9]*\).*/\1/p' "$WORK/soak.log")
ticks=$((n1 - n0))
want=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d", (b - a) * 0.7}')
echo "abuse: $sent datagrams, ${churned:-?} RPC connections in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s; ticks $ticks (want >= $want)"
[ "$sent" -ge 1000 ] || fail "the flood was too light to test anything ($sent datagrams)"
[ "${churned:-0}" -ge 1000 ] || fail "the churn was too light to test anything: $(tail -n 5 "$WORK/soak.log")"
[ "$ticks" -ge "$want" ] || fail "$ticks ticks written during the abuse, want >= $want"
stop_daemon
echo ok
