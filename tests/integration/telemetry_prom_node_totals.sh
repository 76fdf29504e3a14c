#!/usr/bin/env bash
# Issue #15 item 6: the node_exporter-named counters on dynolog's
# Prometheus page are the kernel's own totals (as node_exporter publishes
# them), not counts from 0 at daemon start.  A real daemon on the live
# /proc is scraped twice; each value is compared with /proc read around
# the scrape (the daemon's value is from its last tick, at most a few
# seconds old: it lies between /proc read before the daemon started and
# /proc read after the scrape) and must not go down between scrapes.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
command -v curl >/dev/null || { echo "curl not installed"; exit 77; }
HZ=$(getconf CLK_TCK)

# cpu0 user jiffies, context switches, lo's received bytes, from /proc
proc_now() {
	awk '$1 == "cpu0" {u = $2} $1 == "ctxt" {c = $2} END {print u, c}' /proc/stat
	awk -F'[: ]+' '$2 == "lo" {print $3}' /proc/net/dev
}
read -r U0 C0 < <(proc_now | head -n 1)
R0=$(proc_now | tail -n 1)

"$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 --kernel_monitor_reporting_interval_s=1 \
	--json_log_file="$T/m.json" 2>"$T/d.log" &
PIDS+=($!)
wait_for grep -q 'serving Prometheus' "$T/d.log"
PORT=$(prom_port_from_log "$T/d.log")
wait_for bash -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q 'node_network_receive_bytes_total{device=\"lo\"}'"

val() { awk -v s="$1" 'index($0, s " ") == 1 {print $NF}' "$2"; }
check() { # name value low high
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v != "" && v + 0 >= lo && v + 0 <= hi)}' ||
		{ echo "$1 = '$2', want within [$3, $4] (the kernel's total)"; exit 1; }
}
prev_u= prev_c= prev_r=
for scrape in 1 2; do
	curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page$scrape.txt"
	read -r U1 C1 < <(proc_now | head -n 1)
	R1=$(proc_now | tail -n 1)
	u=$(val 'node_cpu_seconds_total{cpu="0",mode="user"}' "$T/page$scrape.txt")
	c=$(val 'node_context_switches_total' "$T/page$scrape.txt")
	r=$(val 'node_network_receive_bytes_total{device="lo"}' "$T/page$scrape.txt")
	# a CPU's user time in /proc/stat is not strictly monotonic under
	# tickless accounting: a read can come out a few ticks lower than an
	# earlier one or higher than a later one (seen on this VM: the
	# daemon's 10415.95 s after the test's 10416.00 s, and 11215.72 s
	# before its 11215.70 s): 0.25 s of slack on both sides, far from a
	# count since the daemon started
	check 'node_cpu_seconds_total{cpu="0",mode="user"}' "$u" "$(awk -v a="$U0" -v h="$HZ" 'BEGIN{print a / h - 0.25}')" \
		"$(awk -v a="$U1" -v h="$HZ" 'BEGIN{print a / h + 0.25}')"
	check node_context_switches_total "$c" "$C0" "$C1"
	check 'node_network_receive_bytes_total{device="lo"}' "$r" "$R0" "$R1"
	if [ -n "$prev_u" ]; then
		awk -v a="$prev_u" -v b="$u" -v c="$prev_c" -v d="$c" -v e="$prev_r" -v f="$r" \
			'BEGIN{exit !(b >= a && d >= c && f >= e)}' || { echo "a counter went down between scrapes"; exit 1; }
	fi
	prev_u=$u prev_c=$c prev_r=$r
	# the next scrape after at least one more kernel tick
	n=$(grep -c uptime "$T/m.json" || true)
	wait_for bash -c "[ \$(grep -c uptime '$T/m.json') -gt $n ]"
done
# every mode node_exporter has, for every CPU in /proc/stat
for mode in user nice system idle iowait irq softirq steal; do
	grep -q "^node_cpu_seconds_total{cpu=\"0\",mode=\"$mode\"} " "$T/page2.txt" || { echo "no $mode for cpu 0"; exit 1; }
done
[ "$(grep -c '^node_cpu_seconds_total{cpu="[0-9]*",mode="user"} ' "$T/page2.txt")" = "$(grep -c '^cpu[0-9]' /proc/stat)" ] ||
	{ echo "node_cpu_seconds_total does not have one user series per CPU line of /proc/stat"; exit 1; }
# dynolog_cpu_mode_ratio has every mode: they add up to 1 (guest and
# guest_nice are inside user and nice, as in /proc/stat)
awk '/^dynolog_cpu_mode_ratio\{mode="(user|nice|system|idle|iowait|irq|softirq|steal)"\} / {s += $NF; n++}
	END {exit !(n == 8 && s > 0.999999 && s < 1.000001)}' "$T/page2.txt" ||
	{ echo "dynolog_cpu_mode_ratio modes do not add up to 1:"; grep '^dynolog_cpu_mode_ratio' "$T/page2.txt"; exit 1; }
# the JSON log keeps upstream's per-interval records: no totals there
if grep -q '"@' "$T/m.json"; then echo "an export-only key reached the JSON log"; exit 1; fi
echo ok
