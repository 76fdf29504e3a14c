#!/usr/bin/env bash
# The JSON metric log under a file size limit and after a cut (issue #35
# items 5 and 6).
# 5: under `ulimit -f 4` (4 KiB; a line of this host is ~2.4 KB, so the
#    second tick crosses it) the daemon used to die of SIGXFSZ (exit 153)
#    with a record cut mid-line.  Now it ignores SIGXFSZ, takes the cut line
#    back as on a full disk (EFBIG), keeps running and exits 0 on SIGTERM;
#    the file holds whole lines only.
# 6: a log that ends inside a line (a daemon killed mid-write) used to get
#    the next record glued to the partial one.  Now the file is cut back to
#    its last newline when opened: every line is a whole record.
source "$(dirname "$0")/tracing-lib.bash"
whole_lines() { # every line a complete upstream record
	[ -s "$1" ] || return 0
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || return 1
	! grep -v '^time = [0-9TZ:.-]* data = {.*}$' "$1" >/dev/null || return 1
	! grep -q 'time = .*time = ' "$1" # two records glued into one line
}
# --- 5: a file size limit
J=$WORK/limited.json
( ulimit -f 4; exec "$DYNOLOG" --port=0 --use_JSON=true --json_log_file="$J" --kernel_monitor_reporting_interval_s=1 \
	--enable_ipc_monitor=false ) 2> >(cat >"$WORK/daemon.log") &
DPID=$!
for _ in $(seq 200); do
	grep -q 'cannot write the JSON metric log' "$WORK/daemon.log" && break
	kill -0 "$DPID" 2>/dev/null || break
	sleep 0.05
done
kill -0 "$DPID" 2>/dev/null || { wait "$DPID" || rc=$?; DPID=; fail "daemon died under ulimit -f (exit ${rc:-0})"; }
grep -q 'cannot write the JSON metric log: File too large' "$WORK/daemon.log" || fail "EFBIG not reported"
stop_daemon
whole_lines "$J" || fail "a cut line in $J: $(tail -c 200 "$J")"
[ "$(wc -l <"$J")" -ge 1 ] || fail "no line before the limit"
# --- 6: a log that ends inside a line
C=$WORK/cut.json
printf 'time = 2026-01-01T00:00:00.000Z data = {"a":1}\ntime = 2026-01-01T00:00:01.000Z data = {"a":' >"$C"
start_daemon --use_JSON=true --json_log_file="$C" --kernel_monitor_reporting_interval_s=1
wait_for bash -c "[ \$(wc -l <'$C') -ge 2 ]" || fail "no record written"
stop_daemon
whole_lines "$C" || fail "a record glued to the partial line: $(head -c 300 "$C")"
head -n 1 "$C" | grep -q '"a":1}$' || fail "the whole line before the cut was lost"
grep -q 'ended inside a line' "$WORK/daemon.log" || fail "the cut was not logged"
echo ok
