#!/usr/bin/env bash
# `make demo`: on-demand PyTorch tracing, the whole loop on one machine
# without a GPU, with the real programs and nothing faked but the training:
#   1. a dynolog daemon with the IPC monitor (Kineto's socket) and its RPC
#      port on a free port, answering loopback clients only;
#   2. a launcher with two "training" ranks (build/fake-kineto speaks the
#      Kineto side of the IPC protocol, like PyTorch with KINETO_USE_DAEMON=1;
#      RANK/WORLD_SIZE as torchrun sets them, one SLURM job id);
#   3. `dyno status` (the registered processes), `dyno gputrace --job-id
#      --wait` (triggers both ranks, waits for their files), the traces;
#   4. `dyno analyze summary` on the directory of traces (HTA's analyses);
#   5. `dyno metrics`: the daemon's per-process telemetry of the ranks;
#   6. everything stopped cleanly (the daemon must exit 0).
# Usage: scripts/demo.sh [BUILD_DIR]   (make demo builds first)
# Environment: DEMO_DIR (where files go; default a new /tmp/dyno-demo-*),
# DEMO_JOB (job id, default 4242).  Exits non-zero if any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "${1:-build}" && pwd)
OUT=${DEMO_DIR:-$(mktemp -d /tmp/dyno-demo-XXXXXX)}
mkdir -p "$OUT/traces"
JOB=${DEMO_JOB:-4242}
NAME=dynolog_demo_$$ # a private IPC endpoint: a real daemon on this host is not disturbed
DPID= LAUNCHER=

cleanup() {
	if [ -n "$LAUNCHER" ]; then kill "$LAUNCHER" 2>/dev/null || true; fi
	if [ -n "$DPID" ]; then kill "$DPID" 2>/dev/null || true; fi
	wait 2>/dev/null || true
}
trap cleanup EXIT

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
# show a command (with build/ paths shortened), then run it
run() {
	printf '$ %s\n' "$(echo "$*" | sed "s#$B/#build/#g")"
	"$@"
}
die() {
	echo "demo: $*" >&2
	[ -f "$OUT/dynolog.log" ] && tail -n 20 "$OUT/dynolog.log" >&2
	exit 1
}

step "1. start the daemon: IPC monitor on, RPC on a free port, loopback clients only, traces only under $OUT/traces"
printf '$ build/dynolog --enable_ipc_monitor --ipc_endpoint_name=%s --port=0 --rpc_allow=127.0.0.0/8,::1/128 ' "$NAME"
printf -- '--trace_path_prefixes=%s/traces --kernel_monitor_reporting_interval_s=1 --json_format=jsonl --json_log_file=%s/metrics.jsonl &\n' "$OUT" "$OUT"
"$B/dynolog" --enable_ipc_monitor --ipc_endpoint_name="$NAME" --port=0 --rpc_allow=127.0.0.0/8,::1/128 \
	--trace_path_prefixes="$OUT/traces" --kernel_monitor_reporting_interval_s=1 \
	--json_format=jsonl --json_log_file="$OUT/metrics.jsonl" 2>"$OUT/dynolog.log" &
DPID=$!
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$OUT/dynolog.log" | head -n 1)
	[ -n "$PORT" ] && break
	kill -0 "$DPID" 2>/dev/null || die "the daemon exited"
	sleep 0.05
done
[ -n "$PORT" ] || die "the daemon did not start its RPC server"
sed 's/^/    daemon: /' "$OUT/dynolog.log"

step "2. start two training ranks of SLURM job $JOB under one launcher (they poll the daemon every second; Kineto: 5 s)"
echo "\$ SLURM_JOB_ID=$JOB WORLD_SIZE=2 RANK=0 build/fake-kineto --daemon_name=$NAME --poll_interval_ms=1000 &"
echo "\$ SLURM_JOB_ID=$JOB WORLD_SIZE=2 RANK=1 build/fake-kineto --daemon_name=$NAME --poll_interval_ms=1000 &"
SLURM_JOB_ID=$JOB WORLD_SIZE=2 bash -c '
	trap "kill \$(jobs -p) 2>/dev/null; wait" TERM
	RANK=0 "$1" --daemon_name="$2" --poll_interval_ms=1000 --run_s=300 &
	RANK=1 "$1" --daemon_name="$2" --poll_interval_ms=1000 --run_s=300 &
	wait' launcher "$B/fake-kineto" "$NAME" >"$OUT/ranks.log" 2>&1 &
LAUNCHER=$!
for _ in $(seq 100); do
	[ "$(grep -c '^registered$' "$OUT/ranks.log" 2>/dev/null)" = 2 ] && break
	sleep 0.05
done
[ "$(grep -c '^registered$' "$OUT/ranks.log")" = 2 ] || die "the ranks did not register: $(cat "$OUT/ranks.log")"

step "3. the daemon knows them: dyno status"
run "$B/dyno" --port "$PORT" status

step "4. trace every process of job $JOB: dyno gputrace --wait (returns when both trace files exist)"
run "$B/dyno" --port "$PORT" gputrace --job-id "$JOB" --log-file "$OUT/traces/trace.json" --duration-ms 500 --wait ||
	die "gputrace failed"
echo
run ls -l "$OUT/traces"
run "$B/dyno" json "$OUT"/traces/trace_*.json || die "a trace is not valid JSON"
[ "$(ls "$OUT"/traces/trace_*.json | wc -l)" = 2 ] || die "expected 2 trace files"

step "5. analyze the job's traces like Holistic Trace Analysis: dyno analyze summary"
run "$B/dyno" analyze summary "$OUT/traces" || die "dyno analyze failed"

step "6. the daemon also tracks the registered ranks' CPU, RSS and I/O: dyno metrics"
# CPU and I/O are per-interval deltas: they need a second tick after registration
for _ in $(seq 60); do
	[ "$(grep -c '"proc_cpu_ms\.' "$OUT/metrics.jsonl" 2>/dev/null)" -ge 1 ] && break
	sleep 0.05
done
run "$B/dyno" --port "$PORT" metrics --names 'proc_*' || die "dyno metrics failed"

step "7. stop the ranks and the daemon"
kill -TERM "$LAUNCHER"
wait "$LAUNCHER" || true
LAUNCHER=
echo "    ranks stopped"
kill -TERM "$DPID"
rc=0
wait "$DPID" || rc=$?
DPID=
[ $rc = 0 ] || die "the daemon exited with status $rc"
sed -n 's/^.*dynolog: \(RPC: .*\|IPC: .*\)$/    daemon: \1/p' "$OUT/dynolog.log"
echo "    daemon stopped (exit 0)"
echo
echo "# files kept in $OUT (traces/, dynolog.log, metrics.jsonl, ranks.log)"
