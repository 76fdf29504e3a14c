#!/usr/bin/env bash
# Per-node wrapper for SLURM jobs: start a dynolog daemon with the Kineto IPC
# monitor, run the training command with KINETO_USE_DAEMON=1 so PyTorch
# registers with it, and stop the daemon afterwards - also when the command
# fails or the job is cancelled (upstream's wrapper skips the cleanup then).
#
#   srun --ntasks-per-node=1 scripts/slurm/run_with_dynolog.sh python train.py ...
#   dyno gputrace --slurm-job "$SLURM_JOB_ID" --log-file '/tmp/trace_{host}.json'
#
# With several tasks per node, only the node's first task (SLURM_LOCALID 0)
# starts the daemon; the others wait for it and share it.
#
# Environment:
#   DYNOLOG            daemon binary (default: dynolog on PATH, else the one
#                      next to this checkout's build/)
#   DYNOLOG_ARGS       extra daemon flags (e.g. --port=1778 --rpc_bind=...)
#   DYNOLOG_LOG        daemon log file (default /tmp/dynolog-$SLURM_JOB_ID-$(hostname).log)
#   DYNOLOG_WAIT_S     seconds to wait for the daemon's IPC socket (default 5)
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 COMMAND [ARGS...]" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")/../.." && pwd)
daemon=${DYNOLOG:-}
if [ -z "$daemon" ]; then
	if command -v dynolog >/dev/null 2>&1; then daemon=$(command -v dynolog)
	elif [ -x "$here/build/dynolog" ]; then daemon=$here/build/dynolog
	else
		echo "run_with_dynolog: no dynolog binary (set DYNOLOG=/path/to/dynolog)" >&2
		exit 127
	fi
fi

job=${SLURM_JOB_ID:-nojob}
log=${DYNOLOG_LOG:-/tmp/dynolog-$job-$(hostname).log}
local_id=${SLURM_LOCALID:-0}
pid=
tries=$(( ${DYNOLOG_WAIT_S:-5} * 10 ))

cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
}

if [ "$local_id" = 0 ]; then
	# shellcheck disable=SC2086  # DYNOLOG_ARGS is a list of flags
	"$daemon" --enable_ipc_monitor ${DYNOLOG_ARGS:-} >>"$log" 2>&1 &
	pid=$!
	trap cleanup EXIT
	trap 'exit 143' TERM INT
	# The IPC socket must exist before PyTorch's first poll; give the daemon
	# a few seconds, and fail loudly if it died.
	for _ in $(seq $tries); do
		kill -0 "$pid" 2>/dev/null || { echo "run_with_dynolog: dynolog exited, see $log" >&2; exit 1; }
		grep -q '@dynolog' /proc/net/unix 2>/dev/null && break
		sleep 0.1
	done
else
	for _ in $(seq $tries); do
		grep -q '@dynolog' /proc/net/unix 2>/dev/null && break
		sleep 0.1
	done
fi

export KINETO_USE_DAEMON=1
# Traces go where Kineto allows on-demand output (newer Kineto: /tmp/ or here).
export KINETO_ONDEMAND_TRACE_DIR=${KINETO_ONDEMAND_TRACE_DIR:-/tmp}
status=0
"$@" || status=$?
exit $status
