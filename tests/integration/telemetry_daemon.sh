#!/usr/bin/env bash
# dynolog as a process: upstream JSON lines, --help lists the upstream
# flags, the JSON config file, SIGHUP reload (good and bad config), SIGTERM
# exits 0, fixture procfs through --procfs_root.
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"

# --help is complete: every upstream flag we accept is listed
"$DYNOLOG" --help >"$T/help.txt"
for f in kernel_monitor_reporting_interval_s use_JSON enable_perf_monitor perf_monitor_reporting_interval_s \
	use_prometheus prometheus_address prometheus_port use_otlp otlp_endpoint filter_nic_interfaces \
	allow_interface_prefixes track_pids procfs_root history_window_s config flagfile; do
	grep -q -- "--$f" "$T/help.txt" || { echo "--help lacks --$f"; exit 1; }
done
# args_help appends "(default: X)": a help string repeating its default is a duplicate
if grep -E '\(default[ :][^)]*\).*\(default: ' "$T/help.txt"; then echo "--help repeats a default"; exit 1; fi

# upstream JSON lines from the fixture tree: first line absolute values, second deltas
DATA=$PWD/tests/data/procfs/basic/t0
"$DYNOLOG" --port=0 --procfs_root="$DATA/proc" --sysfs_root="$DATA/sys" --kernel_monitor_reporting_interval_s=1 \
	--exit_after_ticks=2 >"$T/json.txt" 2>"$T/err.txt"
[ "$(wc -l <"$T/json.txt")" = 2 ]
head -1 "$T/json.txt" | grep -Eq '^time = [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z data = \{'
head -1 "$T/json.txt" | grep -q '"mem_total_bytes":16777216000'
head -1 "$T/json.txt" | grep -q '"uptime":86400'
# same tree twice: zero CPU time passed, so no made-up utilization; counters zero
tail -1 "$T/json.txt" | grep -q '"ctxt":0'
if tail -1 "$T/json.txt" | grep -q '"cpu_util"'; then echo "cpu_util made up from no time"; exit 1; fi

# upstream flag file + our JSON config; the command line wins over the config file
echo '--kernel_monitor_reporting_interval_s=1' >"$T/flags"
echo '{"use_prometheus": false, "json_format": "jsonl", "kernel_monitor_reporting_interval_s": 30}' >"$T/cfg.json"
"$DYNOLOG" --flagfile="$T/flags" --config="$T/cfg.json" --prometheus_port=0 --port=0 --json_log_file="$T/metrics.jsonl" \
	--enable_perf_monitor --perf_monitor_reporting_interval_s=1 \
	--log_level=debug 2>"$T/d.log" &
PID=$!
PIDS+=($PID)
wait_for grep -q 'started' "$T/d.log"
wait_for test -s "$T/metrics.jsonl"
head -1 "$T/metrics.jsonl" | grep -q '^{"time":"'
grep -q 'kernel monitor every 1s' "$T/d.log" # flagfile beat the config file
if grep -q 'serving Prometheus' "$T/d.log"; then echo "config file did not turn Prometheus off"; exit 1; fi

# SIGHUP with Prometheus switched on
echo '{"use_prometheus": true, "json_format": "jsonl"}' >"$T/cfg.json"
kill -HUP $PID
wait_for grep -q 'configuration reloaded' "$T/d.log"
PORT=$(prom_port_from_log "$T/d.log")
[ -n "$PORT" ]
wait_for bash -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q node_load1"

# SIGHUP reopens the JSON log (logrotate moved it away)
mv "$T/metrics.jsonl" "$T/metrics.jsonl.1"
echo '{"use_prometheus": true, "json_format": "jsonl"}' >"$T/cfg.json"
kill -HUP $PID
wait_for test -s "$T/metrics.jsonl"

# SIGHUP with a broken config: rejected, the daemon keeps running and serving
echo '{"use_prometheus": tru' >"$T/cfg.json"
kill -HUP $PID
wait_for grep -q 'reload failed' "$T/d.log"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
grep -q node_load1 "$T/page.txt"
echo '{"prometheus_port": "eighty"}' >"$T/cfg.json"
kill -HUP $PID
wait_for bash -c "[ \$(grep -c 'reload failed' '$T/d.log') = 2 ]"
kill -0 $PID

# SIGTERM: clean exit 0, quickly
kill -TERM $PID
for _ in $(seq 50); do kill -0 $PID 2>/dev/null || break; sleep 0.1; done
wait $PID; rc=$?
[ $rc = 0 ]
grep -q 'shutting down' "$T/d.log"

# bad flags: clear message, exit 2, no crash
set +e
"$DYNOLOG" --json_format=xml 2>"$T/bad.txt"; rc=$?
set -e
[ $rc = 2 ] && grep -q 'json_format' "$T/bad.txt"
set +e
"$DYNOLOG" --track_pids=12,abc 2>"$T/bad.txt"; rc=$?
set -e
[ $rc = 2 ] && grep -q 'track_pids' "$T/bad.txt"
echo '{"nope": 1, "use_JSON": "yes"}' >"$T/bad.json"
set +e
"$DYNOLOG" --config="$T/bad.json" 2>"$T/bad.txt"; rc=$?
set -e
[ $rc = 2 ] && grep -q "use_JSON' wants a boolean" "$T/bad.txt"

# the packaged sample config and flag file are valid
"$DYNOLOG" --config=packaging/dynolog.json --flagfile=packaging/dynolog.gflags --exit_after_ticks=1 \
	--port=0 --json_log_file="$T/pkg.txt" 2>"$T/pkg.log"
grep -q '^time = ' "$T/pkg.txt"
if grep -q ' [WE] dynolog: config file' "$T/pkg.log"; then echo "sample config has problems:"; cat "$T/pkg.log"; exit 1; fi
grep -q '^ExecStart=.*--config=/etc/dynolog.json' packaging/dynolog.service
grep -q '^Type=notify' packaging/dynolog.service
