#!/usr/bin/env bash
# Host-telemetry cost of dynolog against a peer on the same machine
# (Debian's prometheus-node-exporter, installed through apt if missing),
# measured in one run:
#   - peak RSS (VmHWM) with host collectors only
#   - CPU time per collection cycle (both scraped once a second; for
#     node_exporter a scrape *is* its collection cycle)
#   - wake-ups per second while idle (context switches of all threads;
#     dynolog must have none between its ticks)
# CPU time comes from /proc/<pid>/task/*/schedstat (ns), not from the
# 10 ms-granular utime/stime.  build/bench/collect_cycle (run first) gives
# the in-process figure per cycle.  Usage: bench/telemetry.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-${1:-build}}
SECS=${2:-20}
DYNOLOG=$PWD/$O/dynolog
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT

PEER=/usr/bin/prometheus-node-exporter
if [ ! -x "$PEER" ]; then
	echo "bench: installing prometheus-node-exporter (the peer to compare with)" >&2
	SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus-node-exporter \
		>/dev/null 2>&1 || true
fi

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
ctxt() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/_ctxt_switches/ {s += $2} END {printf "%d", s}'; }
hwm_kb() { awk '/^VmHWM/ {print $2}' /proc/"$1"/status; }
rss_kb() { awk '/^VmRSS/ {print $2}' /proc/"$1"/status; }
pss_kb() { awk '/^Pss:/ {print $2}' /proc/"$1"/smaps_rollup 2>/dev/null || echo -; }
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}
scrape_for() { # scrape_for PORT SECONDS
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt "$end" ]; do curl -s -o /dev/null "http://127.0.0.1:$1/metrics" || true; sleep 1; done
}

# --history_window_s=60 at 1 s keeps as many history slots as the default
# (1 h at 60 s), so memory is what a default daemon holds
if [ -x "$O/bench/collect_cycle" ]; then
	echo "== in-process CPU per collection cycle (live /proc)"
	"$O/bench/collect_cycle" 2000
	echo
fi

echo "== dynolog A: host collectors only (procfs + JSON log), 1 s interval, ${SECS} s"
"$DYNOLOG" --port=0 --kernel_monitor_reporting_interval_s=1 --history_window_s=60 --json_log_file="$T/a.jsonl" 2>"$T/a.log" &
AP=$!
PIDS+=($AP)
sleep 2
c0=$(cpu_ns $AP); l0=$(wc -l <"$T/a.jsonl")
sleep "$SECS"
c1=$(cpu_ns $AP); l1=$(wc -l <"$T/a.jsonl")
a_cycles=$((l1 - l0))
a_cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$a_cycles" 'BEGIN {printf "%.1f", (b - a) / n / 1000}')
a_hwm=$(hwm_kb $AP); a_pss=$(pss_kb $AP)
kill $AP; wait $AP 2>/dev/null || true

echo "== dynolog B: + Prometheus endpoint scraped every 1 s, ${SECS} s"
"$DYNOLOG" --port=0 --kernel_monitor_reporting_interval_s=1 --history_window_s=60 --use_prometheus --prometheus_port=0 \
	--json_log_file="$T/d.jsonl" 2>"$T/d.log" &
DP=$!
PIDS+=($DP)
for _ in $(seq 100); do grep -q 'serving Prometheus' "$T/d.log" && break; sleep 0.1; done
DPORT=$(sed -n 's|.*serving Prometheus metrics on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$T/d.log" | tail -1)
sleep 2
c0=$(cpu_ns $DP); l0=$(wc -l <"$T/d.jsonl")
scrape_for "$DPORT" "$SECS"
c1=$(cpu_ns $DP); l1=$(wc -l <"$T/d.jsonl")
d_cycles=$((l1 - l0))
d_cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$d_cycles" 'BEGIN {printf "%.1f", (b - a) / n / 1000}')
d_hwm=$(hwm_kb $DP); d_rss=$(rss_kb $DP)
kill $DP; wait $DP 2>/dev/null || true

echo "== dynolog idle: 5 s interval, no scrapes, 21 s window"
"$DYNOLOG" --port=0 --kernel_monitor_reporting_interval_s=5 --history_window_s=300 --use_prometheus --prometheus_port=0 \
	--json_log_file="$T/i.jsonl" 2>"$T/i.log" &
IP=$!
PIDS+=($IP)
sleep 3
x0=$(ctxt $IP); l0=$(wc -l <"$T/i.jsonl")
sleep 21
x1=$(ctxt $IP); l1=$(wc -l <"$T/i.jsonl")
i_ticks=$((l1 - l0)); i_wake=$((x1 - x0))
i_hwm=$(hwm_kb $IP)
kill $IP; wait $IP 2>/dev/null || true
d_wps=$(awk -v w="$i_wake" 'BEGIN {printf "%.2f", w / 21}')
d_between=$((i_wake - i_ticks))

p_line="(not available: prometheus-node-exporter could not be installed)"
if [ -x "$PEER" ]; then
	echo "== prometheus-node-exporter $($PEER --version 2>&1 | head -1 | awk '{print $3}'): default collectors, scraped every 1 s, ${SECS} s"
	PPORT=$(free_port)
	"$PEER" --web.listen-address="127.0.0.1:$PPORT" >/dev/null 2>&1 &
	PP=$!
	PIDS+=($PP)
	for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PPORT/metrics" && break; sleep 0.1; done
	sleep 1
	c0=$(cpu_ns $PP)
	n0=$SECONDS
	scrape_for "$PPORT" "$SECS"
	c1=$(cpu_ns $PP)
	p_cycles=$SECS
	p_cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$p_cycles" 'BEGIN {printf "%.1f", (b - a) / n / 1000}')
	p_hwm=$(hwm_kb $PP); p_pss=$(pss_kb $PP)
	echo "== prometheus-node-exporter idle: no scrapes, 21 s window"
	x0=$(ctxt $PP); sleep 21; x1=$(ctxt $PP)
	p_wps=$(awk -v w="$((x1 - x0))" 'BEGIN {printf "%.2f", w / 21}')
	kill $PP; wait $PP 2>/dev/null || true
fi

echo
printf '%-40s %14s %14s %10s\n' "" "dynolog" "node_exporter" "ratio"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
printf '%-40s %11s kB %11s kB %10s\n' "peak RSS (VmHWM), host collectors only" "$a_hwm" "${p_hwm:--}" "$(ratio "$a_hwm" "${p_hwm:-0}")"
printf '%-40s %11s kB %11s kB %10s\n' "PSS (shared pages split), host only" "$a_pss" "${p_pss:--}" "$(ratio "$a_pss" "${p_pss:-0}")"
printf '%-40s %11s kB %11s kB %10s\n' "peak RSS (VmHWM), + Prometheus scraped" "$d_hwm" "${p_hwm:--}" "$(ratio "$d_hwm" "${p_hwm:-0}")"
printf '%-40s %11s us %14s %10s\n' "CPU per cycle, host collectors only" "$a_cpu_us" "" ""
printf '%-40s %11s us %11s us %10s\n' "CPU per cycle, + one scrape per cycle" "$d_cpu_us" "${p_cpu_us:--}" "$(ratio "$d_cpu_us" "${p_cpu_us:-0}")"
printf '%-40s %14s %14s %10s\n' "wake-ups per second, idle" "$d_wps" "${p_wps:--}" "$(ratio "$d_wps" "${p_wps:-0}")"
printf '%-40s %14s\n' "dynolog wake-ups between ticks" "$d_between ($i_wake wake-ups, $i_ticks ticks)"
echo "(dynolog: $a_cycles / $d_cycles cycles measured; targets: RSS <= 2048 kB, CPU <= 300 us/cycle, 0 wake-ups between ticks)"
[ -x "$PEER" ] || echo "peer: $p_line"
