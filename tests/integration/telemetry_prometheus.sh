#!/usr/bin/env bash
# A real Prometheus scrapes dynolog on loopback; a value is queried back
# through Prometheus' HTTP API and compared with /proc; promtool accepts
# our exposition.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	{ echo "prometheus/promtool not installed (scripts/install-deps.sh installs them)"; exit 77; }

"$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 --kernel_monitor_reporting_interval_s=1 \
	--json_log_file=/dev/null 2>"$T/dynolog.log" &
PIDS+=($!)
wait_for grep -q 'serving Prometheus' "$T/dynolog.log"
PORT=$(prom_port_from_log "$T/dynolog.log")
wait_for bash -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q node_cpu_seconds_total"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
promtool check metrics <"$T/page.txt"
grep -q '^# TYPE node_network_receive_bytes_total counter$' "$T/page.txt"
grep -q '^dynolog_build_info{version="' "$T/page.txt"
grep -q '^dynolog_collector_duration_seconds{collector="kernel"}' "$T/page.txt"
# the standard process_* metrics of dynolog itself, with its own values
DPID=${PIDS[0]}
grep -q '^# TYPE process_cpu_seconds_total counter$' "$T/page.txt"
rss=$(awk '/^process_resident_memory_bytes /{print $2}' "$T/page.txt")
[ -n "$rss" ] && awk -v r="$rss" 'BEGIN{exit !(r > 100000)}' || { echo "process_resident_memory_bytes: '$rss'"; exit 1; }
start=$(awk '/^process_start_time_seconds /{print $2}' "$T/page.txt")
# ps's elapsed time since the process started, from the current clock
pstart=$(( $(date +%s) - $(ps -o etimes= -p "$DPID") ))
awk -v a="$start" -v b="$pstart" 'BEGIN{d = a - b; exit !(d > -3 && d < 3)}' ||
	{ echo "process_start_time_seconds $start, ps says $pstart"; exit 1; }
[ "$(awk '/^process_max_fds /{print $2}' "$T/page.txt")" = "$(cut -d' ' -f1 <<<"$(ulimit -n)")" ] ||
	{ echo "process_max_fds: $(grep '^process_max_fds' "$T/page.txt"), ulimit $(ulimit -n)"; exit 1; }
grep -Eq '^process_open_fds [1-9][0-9]*$' "$T/page.txt"
grep -Eq '^process_virtual_memory_bytes [1-9][0-9]*$' "$T/page.txt"
# shortest round-trip numbers: no 17-digit artefacts of binary scaling of
# a counted value (ms -> s, kB -> bytes), nor of a ratio: utilization is
# (t - idle) / t, one division of integers, and a percentage scaled to a
# ratio keeps 15 digits where that is within 2 ulps (catalog.c: tidy).
if grep -E '^[a-z_]+(\{[^}]*\})? -?[0-9]+\.[0-9]*0000000[0-9]$|[0-9]\.[0-9]*9999999[0-9]$' "$T/page.txt"; then
	echo "long float forms on the page"; exit 1
fi

# another process may take the port we picked: retry on a fresh one
for attempt in 1 2 3; do
	WEB=$(free_port)
	cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: dynolog
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb$attempt" \
		--web.listen-address="127.0.0.1:$WEB" --log.level=warn 2>"$T/prometheus.log" &
	PP=$!
	PIDS+=($PP)
	sleep 2
	kill -0 $PP 2>/dev/null && break
	echo "prometheus exited (attempt $attempt):"; tail -3 "$T/prometheus.log"
done
q() { curl -sf "http://127.0.0.1:$WEB/api/v1/query" --data-urlencode "query=$1"; }
if ! wait_for bash -c "curl -sf 'http://127.0.0.1:$WEB/api/v1/query?query=dynolog_memory_total_bytes' | grep -q '\"value\"'"; then
	echo "Prometheus never got a sample"; tail -20 "$T/prometheus.log"; exit 1
fi
got=$(q dynolog_memory_total_bytes | sed -n 's/.*"value":\[[0-9.]*,"\([0-9.e+]*\)"\].*/\1/p')
want=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 ))
echo "MemTotal via Prometheus: $got, /proc: $want"
[ "$(printf '%.0f' "$got")" = "$want" ]
# the scrape target is healthy and a counter is usable with rate()
up=$(q 'up{job="dynolog"}')
grep -q '"1"' <<<"$up"
wait_for bash -c "curl -sf 'http://127.0.0.1:$WEB/api/v1/query' --data-urlencode 'query=rate(node_cpu_seconds_total[5s])' | grep -q '\"value\"'"
