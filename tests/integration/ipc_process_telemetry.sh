#!/usr/bin/env bash
# Issue #4's per-process link: a Kineto process that registers over IPC is
# tracked by the daemon's per-process collector (main.c hooks the registry
# to telemetry_track_pid).  Its CPU/RSS/threads/IO keys and its SLURM job
# id appear in the JSON log and in getMetrics (dyno metrics) with its pid,
# and stop appearing once it exits.  Nothing is tracked before it registers.
source "$(dirname "$0")/tracing-lib.bash"
JOB=$((70000 + RANDOM))
LOG=$WORK/metrics.jsonl
start_daemon --rpc_allow=127.0.0.0/8,::1/128 --use_JSON=true --json_format=jsonl --json_log_file="$LOG" \
	--kernel_monitor_reporting_interval_s=1

lines() { [ -f "$LOG" ] && wc -l <"$LOG" || echo 0; }
has_lines() { [ "$(lines)" -ge "$1" ]; }
wait_for has_lines 2 || fail "no JSON lines from the daemon"
grep -q '"proc_' "$LOG" && fail "per-process keys before any process registered: $(grep -o '"proc_[^"]*"' "$LOG" | head -3)"

SLURM_JOB_ID=$JOB fake --poll_interval_ms=200
P=$LASTPID
wait_for has_procs 1 || fail "fake-kineto $P did not register"
"$DYNO" --port "$PORT" status >"$WORK/status" 2>&1 || fail "dyno status: $(cat "$WORK/status")"
grep -Eq "^ +$P +$JOB +" "$WORK/status" || fail "status does not list $P with job $JOB: $(cat "$WORK/status")"

# The next tick after registration reports it (ticks every second: allow 5
# s); deltas (CPU, I/O) from its second tick on.
seen() { grep -q "\"proc_rss_bytes\\.$P\":[1-9][0-9]*" "$LOG"; }
wait_for seen || fail "no proc_rss_bytes.$P in the JSON log: $(tail -n 1 "$LOG" | cut -c1-300)"
seen2() { grep -q "\"proc_cpu_ms\\.$P\":" "$LOG"; }
wait_for seen2 || fail "no proc_cpu_ms.$P in the JSON log on its second tick"
line=$(grep "\"proc_cpu_ms\\.$P\"" "$LOG" | tail -n 1)
for k in proc_cpu_ms proc_threads proc_read_bytes proc_written_bytes; do
	# I/O counters need privileges on some systems: absent is allowed, 0 is not faked
	case $k in proc_read_bytes | proc_written_bytes) [ -r /proc/$P/io ] || continue ;; esac
	grep -q "\"$k\\.$P\":" <<<"$line" || fail "$k.$P missing from $(echo "$line" | cut -c1-400)"
done
grep -q "\"proc_threads\\.$P\":1[,}]" <<<"$line" || fail "fake-kineto has one thread: $line"
grep -q "\"proc_job_id\\.$P\":\"$JOB\"" <<<"$line" || fail "proc_job_id.$P is not $JOB: $line"
# RSS as the kernel reports it now (pages x page size) within a factor 2 of the log's
rss_log=$(echo "$line" | sed -n "s/.*\"proc_rss_bytes\\.$P\":\([0-9]*\).*/\1/p")
rss_now=$(($(awk '{print $24}' /proc/$P/stat) * $(getconf PAGESIZE)))
[ "$rss_log" -gt $((rss_now / 2)) ] && [ "$rss_log" -lt $((rss_now * 2)) ] ||
	fail "proc_rss_bytes.$P = $rss_log, /proc says $rss_now"

"$DYNO" --port "$PORT" metrics --names "proc_*" --json >"$WORK/m" 2>&1 || fail "dyno metrics: $(cat "$WORK/m")"
grep -q "\"proc_rss_bytes\\.$P\":\[\[" "$WORK/m" || fail "getMetrics lacks proc_rss_bytes.$P: $(cut -c1-300 "$WORK/m")"

# exit -> dropped: lines written after it has gone carry none of its keys
kill -TERM "$P"
wait "$P" 2>/dev/null || true
n=$(lines)
wait_for has_lines $((n + 2)) || fail "daemon stopped writing"
grep -q "\\.$P\"" <<<"$(tail -n 1 "$LOG")" && fail "keys of exited $P still published: $(tail -n 1 "$LOG" | grep -o "\"proc_[a-z_]*\\.$P\"")"
grep -q "process $P is gone" "$WORK/daemon.log" || fail "no 'gone' log line for $P"
stop_daemon
echo ok
