# Helpers for the on-demand tracing integration tests (sourced, not a test:
# tests/run.sh only runs *.sh).  Each test gets a private work dir, a daemon
# on a kernel-chosen port and an IPC endpoint name of its own, so tests can
# run next to each other and next to a real daemon on the same host.
set -euo pipefail
: "${BUILD:=build}" "${DYNOLOG:=$PWD/$BUILD/dynolog}"
FAKE=$PWD/$BUILD/fake-kineto
RPC=$PWD/$BUILD/rpc-send
WORK=$(mktemp -d /tmp/dyno-it-XXXXXX)
IPCNAME=dynolog_it_$$
DPID=
KIDS=()

cleanup() {
	for k in "${KIDS[@]}"; do kill "$k" 2>/dev/null || true; done
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; [ -f "$WORK/daemon.log" ] && tail -n 30 "$WORK/daemon.log" >&2; exit 1; }

# start_daemon [flags...]: sets DPID and PORT.  A second daemon: DLOG (its
# log, default $WORK/daemon.log) and IPCNAME set for the call.
start_daemon() {
	local log=${DLOG:-$WORK/daemon.log}
	# emptied here, not only by the redirection below: that one runs in the
	# forked child, maybe after the loop has read a previous daemon's port
	# from the old log (seen on a loaded CI host: RPCs to a stopped daemon)
	: >"$log"
	"$DYNOLOG" --port=0 --use_JSON=false --enable_ipc_monitor --ipc_endpoint_name="$IPCNAME" "$@" \
		2>"$log" &
	DPID=$!
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
		[ -n "$PORT" ] && return 0
		kill -0 "$DPID" 2>/dev/null || fail "daemon exited: $(cat "$log")"
		sleep 0.05
	done
	fail "daemon did not start"
}

stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID" || fail "daemon exit status $?"
	DPID=
}

# fake [flags...]: start a fake Kineto process polling every 100 ms, output in $WORK/fake-<pid>.log
fake() {
	"$FAKE" --daemon_name="$IPCNAME" --poll_interval_ms=100 "$@" >"$WORK/fake.tmp.$BASHPID.$RANDOM" 2>&1 &
	local p=$!
	KIDS+=("$p")
	LASTPID=$p
}

rpc() { "$RPC" --port="$PORT" --body="$1"; }

# wait_for CMD...: retry for up to 5 s
wait_for() {
	for _ in $(seq 100); do
		if "$@"; then return 0; fi
		sleep 0.05
	done
	return 1
}

count_procs() { rpc '{"fn":"getProcesses"}' | sed -n 's/^{"count":\([0-9]*\).*/\1/p'; }
has_procs() { [ "$(count_procs)" = "$1" ]; }
