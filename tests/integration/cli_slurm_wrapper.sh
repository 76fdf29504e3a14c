#!/usr/bin/env bash
# scripts/slurm/run_with_dynolog.sh: starts the daemon with --enable_ipc_monitor
# and the extra flags, runs the command with KINETO_USE_DAEMON=1, passes its
# exit status through, and stops the daemon afterwards even when the
# command fails.  A stand-in daemon records its arguments; the test checks
# that it is gone afterwards.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/fake-dynolog" <<FAKE
#!/usr/bin/env bash
echo "\$@" > "$tmp/daemon.args"
while :; do sleep 0.1; done
FAKE
chmod +x "$tmp/fake-dynolog"
export DYNOLOG=$tmp/fake-dynolog DYNOLOG_ARGS="--port=1779" DYNOLOG_LOG=$tmp/log DYNOLOG_WAIT_S=1

out=$(scripts/slurm/run_with_dynolog.sh sh -c 'sleep 0.3; echo "use=$KINETO_USE_DAEMON dir=$KINETO_ONDEMAND_TRACE_DIR"')
[ "$out" = "use=1 dir=/tmp" ] || { echo "command saw: $out"; exit 1; }
grep -qx -- "--enable_ipc_monitor --port=1779" "$tmp/daemon.args" || { echo "daemon args: $(cat "$tmp/daemon.args")"; exit 1; }
# (another daemon's @dynolog socket on this machine can end the wrapper's
# wait early, so the stand-in may be killed before it set its trap: check
# that the process is gone, not that it said so)
gone() { for _ in $(seq 50); do pgrep -f "$tmp/fake-dynolog" >/dev/null || return 0; sleep 0.1; done; return 1; }
gone || { echo "daemon was not stopped"; exit 1; }

# a failing command: its status comes back, the daemon is still stopped
rc=0
scripts/slurm/run_with_dynolog.sh sh -c 'exit 7' || rc=$?
[ $rc -eq 7 ] || { echo "exit status $rc, want 7"; exit 1; }
gone || { echo "daemon was not stopped after a failure"; exit 1; }

# no daemon binary: a clear message and 127
rc=0
DYNOLOG=/nonexistent/dynolog scripts/slurm/run_with_dynolog.sh true 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || { echo "ran without a daemon"; exit 1; }
echo ok
