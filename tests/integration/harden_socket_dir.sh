#!/usr/bin/env bash
# Filesystem mode with two daemons on one directory: a second daemon must
# not steal the socket of a live one (it refuses to start, exit 1, and the
# first keeps serving); a daemon removes at exit only the socket file it
# bound, not one that another daemon put there since.
source "$(dirname "$0")/tracing-lib.bash"
export KINETO_IPC_SOCKET_DIR=$WORK/sockets
mkdir -p "$KINETO_IPC_SOCKET_DIR"
sock=$KINETO_IPC_SOCKET_DIR/$IPCNAME
start_daemon
A=$DPID
rc=0
timeout -s KILL 5 "$DYNOLOG" --port=0 --use_JSON=false --enable_ipc_monitor --ipc_endpoint_name="$IPCNAME" \
	2>"$WORK/second.log" || rc=$?
[ "$rc" = 1 ] || fail "second daemon: exit $rc: $(cat "$WORK/second.log")"
grep -q "another daemon is serving $sock" "$WORK/second.log" || fail "message: $(cat "$WORK/second.log")"
[ -S "$sock" ] || fail "first daemon's socket removed"
fake --run_s=30
wait_for has_procs 1 || fail "first daemon unreachable after the second one's attempt"

# the socket file is replaced under the first daemon: it must leave the new one alone
rm -f "$sock"

start_daemon
B=$DPID
BPORT=$PORT
DPID=$A
stop_daemon
[ -S "$sock" ] || fail "first daemon removed the second one's socket at exit"
DPID=$B
PORT=$BPORT
wait_for has_procs 1 || fail "second daemon unreachable"
stop_daemon
[ -e "$sock" ] && fail "socket file left behind by its owner"
echo ok
