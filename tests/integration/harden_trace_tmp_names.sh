#!/usr/bin/env bash
# --trace_path_prefixes checks the names Kineto actually writes (issue #35
# item 7).  From ACTIVITIES_LOG_FILE=<dir>/t.json a process with pid P
# writes <dir>/t_P.json.tmp and renames it to <dir>/t_P.json; a user who
# can write in the allowed directory planted a symlink at the .tmp name and
# a root process's trace went where it led.  Now a request is refused when
# a derived name of a matched process exists as a symlink (inside or out
# of the prefix) or as a hard link; EVENTS_LOG_FILE is checked like
# ACTIVITIES_LOG_FILE; addTrigger refuses a gpusnoop log outside the
# prefixes (it was refused only when the trigger fired).  A clean request
# still goes through and the trace lands at the final name.
source "$(dirname "$0")/tracing-lib.bash"
mkdir -p "$WORK/ok" "$WORK/outside"
start_daemon --trace_path_prefixes="$WORK/ok" --trigger_file="$WORK/triggers.json"
fake --run_s=60
K=$LASTPID
wait_for has_procs 1 || fail "fake Kineto did not register"
req() { rpc "{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"$1\\nACTIVITIES_DURATION_MSECS=50\",\"pids\":[$K]}"; }
refused() { # refused PATTERN CONFIG
	local r
	r=$(req "$2")
	echo "$r" | grep -q '"status":"failed"' || fail "accepted: $2: $r"
	echo "$r" | grep -q "$1" || fail "reason for $2: $r"
}
# a symlink at the .tmp name leading out of the prefix
ln -s "$WORK/outside/victim" "$WORK/ok/t_$K.json.tmp"
refused "t_$K.json.tmp" "ACTIVITIES_LOG_FILE=$WORK/ok/t.json"
rm "$WORK/ok/t_$K.json.tmp"
# a symlink at the final name, even one that stays inside
touch "$WORK/ok/other"
ln -s "$WORK/ok/other" "$WORK/ok/a_$K.pt.trace.json"
refused "exists as a symlink" "ACTIVITIES_LOG_FILE=$WORK/ok/a.pt.trace.json"
rm "$WORK/ok/a_$K.pt.trace.json"
# a hard link at the .tmp name (Kineto opens it with O_TRUNC)
touch "$WORK/ok/file"
ln "$WORK/ok/file" "$WORK/ok/h_$K.json.tmp"
refused "not a plain file" "ACTIVITIES_LOG_FILE=$WORK/ok/h.json"
# EVENTS_LOG_FILE is an output path like ACTIVITIES_LOG_FILE
refused "outside the allowed prefixes" "ACTIVITIES_LOG_FILE=$WORK/ok/e.json\\nEVENTS_LOG_FILE=$WORK/outside/ev.log"
[ ! -e "$WORK/outside/victim" ] || fail "a trace went through the symlink"
# a clean request goes through; the trace is at the derived final name
r=$(req "ACTIVITIES_LOG_FILE=$WORK/ok/t.json")
echo "$r" | grep -q "\"activityProfilersTriggered\":\[$K\]" || fail "clean request: $r"
wait_for test -s "$WORK/ok/t_$K.json" || fail "no trace at $WORK/ok/t_$K.json"
# addTrigger: a gpusnoop log outside the prefixes is refused at once
r=$(rpc "{\"fn\":\"addTrigger\",\"trigger\":{\"id\":\"s\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/ok/s.json\",\"gpusnoop_s\":5,\"gpusnoop_log\":\"$WORK/outside/snoop\"}}")
echo "$r" | grep -q '"status":"failed"' || fail "gpusnoop log outside accepted: $r"
echo "$r" | grep -q 'outside the allowed prefixes' || fail "gpusnoop log reason: $r"
r=$(rpc "{\"fn\":\"addTrigger\",\"trigger\":{\"id\":\"s\",\"config\":\"ACTIVITIES_LOG_FILE=$WORK/ok/s.json\",\"gpusnoop_s\":5,\"gpusnoop_log\":\"$WORK/ok/snoop\"}}")
echo "$r" | grep -q '"status":"ok"' || fail "gpusnoop log inside refused: $r"
stop_daemon
echo ok
