#!/usr/bin/env bash
# Every sink at once (JSON log, Prometheus, OTLP towards a receiver that is
# down, history over RPC) with every collector (kernel over a fixture tree,
# tracked processes, perf): the names each sink shows are exactly the
# checked-in list telemetry_sinks.expected (taken from the daemon before
# its collectors and sinks became tables).  perf's own keys depend on the
# machine's PMU and are left out of the comparison; its collector label is
# checked.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
EXPECTED="$(dirname "$0")/telemetry_sinks.expected"

mkdir -p "$T/proc" "$T/sys"
cp -r tests/data/procfs/basic/t0/proc/. "$T/proc/"
cp -r tests/data/procfs/basic/t0/sys/. "$T/sys/"
cp -r tests/data/procfs/proc/t0/proc/. "$T/proc/"
OTLP=$(free_port)
RPC=$(free_port)
"$DYNOLOG" --procfs_root="$T/proc" --sysfs_root="$T/sys" --kernel_monitor_reporting_interval_s=1 \
	--track_pids=4242,5151 --json_log_file="$T/m.json" --use_prometheus --prometheus_port=0 \
	--use_otlp --otlp_endpoint="http://127.0.0.1:$OTLP" --otlp_timeout_ms=200 \
	--enable_perf_monitor --perf_monitor_reporting_interval_s=1 --port="$RPC" 2>"$T/d.log" &
PIDS+=($!)
fail() { echo "FAIL: $*"; tail -n 20 "$T/d.log"; exit 1; }
wait_for grep -q 'serving Prometheus' "$T/d.log" || fail "no Prometheus endpoint"
PORT=$(prom_port_from_log "$T/d.log")
# two kernel ticks (deltas) and the perf collector's first run
wait_for bash -c "[ \$(grep -c uptime '$T/m.json') -ge 2 ] && curl -sf http://127.0.0.1:$PORT/metrics | grep -q 'collector=\"perf\"'" ||
	fail "no two kernel ticks ($(grep -c uptime "$T/m.json") in the JSON log) or no perf collector on the page"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt" || fail "scrape failed"
"$BUILD/rpc-send" --port "$RPC" --body '{"fn":"getMetrics"}' >"$T/hist.json" || fail "getMetrics failed"

not_perf() { grep -Ev '^(perf_|ipc$|mips$|mega_cycles_per_second$|dynolog_perf_)' || true; }
{
	echo "# prometheus: families and types"
	sed -n 's/^# TYPE \([^ ]*\) \(.*\)$/\1 \2/p' "$T/page.txt" | not_perf | sort -u
	echo "# prometheus: collector labels"
	grep -o '^dynolog_collector_[a-z_]*{collector="[a-z]*"}' "$T/page.txt" | sort -u
	echo "# JSON log: keys of the kernel tick"
	grep uptime "$T/m.json" | tail -n 1 | grep -o '"[^"]*":' | tr -d '":' | sort -u
	echo "# getMetrics: keys"
	grep -o '"[^"]*":\[\[' "$T/hist.json" | sed 's/":\[\[$//; s/^"//' | not_perf | sort -u
} >"$T/names.txt"
if [ -n "${DYNO_WRITE_EXPECTED:-}" ]; then cp "$T/names.txt" "$EXPECTED"; exit 0; fi
diff -u "$EXPECTED" "$T/names.txt"
