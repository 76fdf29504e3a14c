#!/usr/bin/env bash
# KINETO_IPC_SOCKET_DIR mode, read by both sides: the daemon replaces a
# stale socket file, makes <dir>/<name> mode 0666, serves a fake Kineto
# process through the file system, and removes its socket at exit.  A
# --ipc_socket_dir spelled with a trailing slash (or "//") still serves
# clients that spell the directory plainly.
source "$(dirname "$0")/tracing-lib.bash"
export KINETO_IPC_SOCKET_DIR=$WORK/sockets
mkdir -p "$KINETO_IPC_SOCKET_DIR"
touch "$KINETO_IPC_SOCKET_DIR/$IPCNAME" # stale file from a crashed daemon
start_daemon
sock=$KINETO_IPC_SOCKET_DIR/$IPCNAME
[ -S "$sock" ] || fail "$sock is not a socket"
[ "$(stat -c %a "$sock")" = 666 ] || fail "mode $(stat -c %a "$sock")"
fake --run_s=30 --exit_after_traces=1
K=$LASTPID
wait_for has_procs 1 || fail "not registered via the file system"
ls "$KINETO_IPC_SOCKET_DIR" | grep -q '^dynoconfigclient[0-9a-f]\{8\}-[0-9a-f]\{4\}-4[0-9a-f]\{3\}-[89ab][0-9a-f]\{3\}-[0-9a-f]\{12\}$' ||
	fail "client endpoint name: $(ls "$KINETO_IPC_SOCKET_DIR")"
resp=$(rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/fs.pt.trace.json\\nACTIVITIES_DURATION_MSECS=100\",\"pids\":[$K]}")
echo "$resp" | grep -q "\"activityProfilersTriggered\":\[$K\]" || fail "$resp"
# .pt.trace.json names get the pid before the whole suffix (Kineto's rule)
wait_for test -s "$WORK/fs_$K.pt.trace.json" || fail "no trace: $(ls "$WORK")"
# the abstract name is not served in this mode
unset KINETO_IPC_SOCKET_DIR
"$FAKE" --daemon_name="$IPCNAME" --run_s=1 >"$WORK/abstract.log" 2>&1 || true
grep -q registered "$WORK/abstract.log" && fail "abstract endpoint answered in directory mode"
stop_daemon
[ -e "$sock" ] && fail "socket file left behind"

# "/dir//sub/" on the daemon's side, "/dir/sub" on the client's: once
# datagrams were dropped as foreign and nothing was ever traced
mkdir -p "$WORK/s2/sub"
start_daemon --ipc_socket_dir="$WORK/s2//sub/"
grep -q "IPC endpoint listening at $WORK/s2/sub/$IPCNAME\$" "$WORK/daemon.log" || fail "path not normalised"
export KINETO_IPC_SOCKET_DIR=$WORK/s2/sub
fake --run_s=30 --exit_after_traces=1
K=$LASTPID
wait_for has_procs 1 || fail "client on the plain path not registered"
resp=$(rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/s2.json\\nACTIVITIES_DURATION_MSECS=100\",\"pids\":[$K]}")
echo "$resp" | grep -q "\"activityProfilersTriggered\":\[$K\]" || fail "$resp"
wait_for test -s "$WORK/s2_$K.json" || fail "no trace: $(ls "$WORK")"
grep -q foreign "$WORK/daemon.log" && fail "datagrams dropped as foreign"
stop_daemon
echo ok
