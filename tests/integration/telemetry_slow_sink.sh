#!/usr/bin/env bash
# The default sink stalls: dynolog's stdout is a pipe nobody reads.  Ticks
# must go on (lines dropped and counted, never a blocked loop), and the
# Prometheus endpoint must keep answering.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"

# a procfs tree whose JSON line is ~50 KB: one fits in a 64 KB pipe, two do not
mkdir -p "$T/proc/net"
cp tests/data/procfs/basic/t0/proc/{stat,meminfo,uptime,loadavg,diskstats} "$T/proc/"
{
	echo 'Inter-|   Receive                                                |  Transmit'
	echo ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed'
	for i in $(seq 250); do echo "  veth$i: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0"; done
} >"$T/proc/net/dev"

# stdout -> a FIFO held open for writing... and never read
mkfifo "$T/fifo"
sleep 60 <"$T/fifo" &
PIDS+=($!)
"$DYNOLOG" --port=0 --procfs_root="$T/proc" --kernel_monitor_reporting_interval_s=1 --use_prometheus \
	--prometheus_port=0 >"$T/fifo" 2>"$T/d.log" &
PIDS+=($!)
wait_for grep -q 'serving Prometheus' "$T/d.log"
PORT=$(prom_port_from_log "$T/d.log")
dropped() {
	curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$T/page.txt" || return 1
	sed -n 's/^dynolog_json_lines_dropped_total \([0-9.e+]*\)$/\1/p' "$T/page.txt"
}
wait_for bash -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q '^dynolog_json_lines_dropped_total [1-9]'"
a=$(dropped)
sleep 3
b=$(dropped)
echo "JSON lines dropped: $a, 3 s later: $b"
# collection went on: more lines were attempted (and dropped) while blocked
awk -v a="$a" -v b="$b" 'BEGIN { exit !(b >= a + 2) }'
grep -q 'output would block' "$T/d.log"
# what did get through is whole lines only (a line that does not fit is
# dropped whole, never cut)
timeout 5 cat "$T/fifo" >"$T/got.txt" || true
n=$(wc -l <"$T/got.txt")
bad=$(grep -cv '^time = .*}$' "$T/got.txt" || true)
echo "lines that got through: $n, malformed: $bad"
[ "$n" -ge 1 ] && [ "$bad" = 0 ]
