#!/usr/bin/env bash
# On-demand tracing, the whole loop on one machine without a GPU:
#   a dynolog daemon with the IPC monitor, a "launcher" with two fake Kineto
#   ranks (build/fake-kineto, what PyTorch with KINETO_USE_DAEMON=1 does),
#   a gputrace request for the launcher's pid, and the two trace files.
# Uses `dyno gputrace` when the CLI has it, else sends upstream dyno's exact
# request bytes with build/rpc-send.  Usage: scripts/demo-tracing.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
OUT=$(mktemp -d /tmp/dyno-demo-XXXXXX)
NAME=dynolog_demo_$$
cleanup() { kill "${RANKS:-}" "${DPID:-}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT

echo "# daemon: $B/dynolog --enable_ipc_monitor --port=0 (log: $OUT/dynolog.log)"
"$B/dynolog" --enable_ipc_monitor --ipc_endpoint_name="$NAME" --port=0 --use_JSON=false 2>"$OUT/dynolog.log" &
DPID=$!
for _ in $(seq 100); do
	PORT=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$OUT/dynolog.log" | head -n 1)
	[ -n "$PORT" ] && break
	sleep 0.05
done
echo "# two training ranks under one launcher, polling every second"
WORLD_SIZE=2 bash -c "RANK=0 \"$B/fake-kineto\" --daemon_name=$NAME --poll_interval_ms=1000 --exit_after_traces=1 --run_s=60 &
         RANK=1 \"$B/fake-kineto\" --daemon_name=$NAME --poll_interval_ms=1000 --exit_after_traces=1 --run_s=60 &
         wait" >"$OUT/ranks.log" &
RANKS=$!
sleep 1.5
echo "# registered processes:"
"$B/rpc-send" --port="$PORT" --body='{"fn":"getProcesses"}'
echo
LOG=$OUT/trace.json
if "$B/dyno" --port "$PORT" gputrace --help >/dev/null 2>&1; then
	echo "# dyno gputrace --pids $RANKS --log-file $LOG"
	"$B/dyno" --port "$PORT" gputrace --pids "$RANKS" --log-file "$LOG" --duration-ms 500
else
	echo "# (no dyno gputrace in this build) sending upstream dyno's request bytes for --pids $RANKS --log-file $LOG"
	printf '\n{\n    "fn": "setKinetOnDemandRequest",\n    "config": "ACTIVITIES_LOG_FILE=%s\\nPROFILE_START_TIME=0\\nACTIVITIES_DURATION_MSECS=500\\nPROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_WITH_STACK=false\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_MODULES=false",\n    "job_id": 0,\n    "pids": [%s],\n    "process_limit": 3\n}' "$LOG" "$RANKS" |
		"$B/rpc-send" --port="$PORT"
	echo
fi
echo "# waiting for the ranks' next poll and their 500 ms trace window"
for _ in $(seq 100); do
	[ "$(ls "$OUT"/trace_*.json 2>/dev/null | wc -l)" = 2 ] && break
	sleep 0.1
done
cat "$OUT/ranks.log"
ls -l "$OUT"/trace_*.json
if "$B/dyno" analyze --help >/dev/null 2>&1; then
	echo "# dyno analyze $OUT"
	"$B/dyno" analyze "$OUT" || true
fi
echo "# files kept in $OUT"
