#!/usr/bin/env bash
# A Kineto process in its own pid namespace (a container sharing the host
# network, as multi-node training pods do) reports getpid() == 2.  The
# daemon must track it under the pid the kernel gives it (SCM_CREDENTIALS),
# never publish host pid 2's (kthreadd's) CPU/RSS as the training process's,
# while the registry keeps the reported pid for --pids matching as upstream.
source "$(dirname "$0")/tracing-lib.bash"
unshare --pid --fork --kill-child --mount-proc true 2>/dev/null || {
	echo "unshare --pid not permitted here (needs root or user namespaces)"
	exit 77
}
JOB=$((80000 + RANDOM))
LOG=$WORK/metrics.jsonl
start_daemon --use_JSON=true --json_format=jsonl --json_log_file="$LOG" --kernel_monitor_reporting_interval_s=1

SLURM_JOB_ID=$JOB unshare --pid --fork --kill-child --mount-proc \
	"$FAKE" --daemon_name="$IPCNAME" --poll_interval_ms=100 --run_s=60 >"$WORK/fake.log" 2>&1 &
KIDS+=($!)
U=$!
wait_for has_procs 1 || fail "the namespaced process did not register: $(cat "$WORK/fake.log")"
inner=$(sed -n 's/^fake-kineto \([0-9]*\):.*/\1/p' "$WORK/fake.log")
[ -n "$inner" ] || fail "fake-kineto log: $(cat "$WORK/fake.log")"
host=$(sed -n "s/.*Kineto process $inner (job $JOB) is pid \([0-9]*\) here.*/\1/p" "$WORK/daemon.log")
[ -n "$host" ] && [ "$host" != "$inner" ] || fail "daemon did not map reported pid $inner: $(cat "$WORK/daemon.log")"
grep -q fake-kineto <<<"$(tr '\0' ' ' </proc/"$host"/cmdline)" || fail "host pid $host is not the fake-kineto process"
# the registry keeps what the process reported (upstream matching)
grep -q "\"jobId\":\"$JOB\",[^}]*\"pid\":$inner," <<<"$(rpc '{"fn":"getProcesses"}')" || fail "registry: $(rpc '{"fn":"getProcesses"}')"

seen() { grep -q "\"proc_rss_bytes\\.$host\":[1-9]" "$LOG"; }
wait_for seen || fail "no proc_rss_bytes.$host in the JSON log"
grep -q "\"proc_job_id\\.$host\":\"$JOB\"" "$LOG" || fail "proc_job_id.$host is not $JOB"
grep -q "\"proc_[a-z_]*\\.$inner\":" "$LOG" && fail "host pid $inner published as the training process"

kill -TERM "$U"
wait "$U" 2>/dev/null || true
n=$(wc -l <"$LOG")
has_lines() { [ "$(wc -l <"$LOG")" -ge "$1" ]; }
wait_for has_lines $((n + 2)) || fail "daemon stopped writing"
grep -q "\\.$host\"" <<<"$(tail -n 1 "$LOG")" && fail "keys of exited $host still published"
stop_daemon
echo ok
