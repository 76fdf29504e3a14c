#!/usr/bin/env bash
# dyno gputrace to several daemons with DEFAULT options must get every trace,
# also from processes that started before their daemon.  Two daemons, three
# fake-kineto clients each at Kineto's real timing (5 s polls, 1 s tick,
# 5 s warm-up, start times too close refused): two per daemon start before
# it with --late_replies (libkineto's bug: they read every reply one poll
# late), one after it.  The synchronized start time must cover the worst
# case (docs/cli.md, "Many daemons at once").  Then a too-small
# --start-delay-s must make --wait name the reason for the missing files.
source "$(dirname "$0")/tracing-lib.bash"
JOB=$((200000 + RANDOM))

# daemon I: dynolog on a kernel-chosen port with IPC name ${IPCNAME}_I
daemon() {
	"$DYNOLOG" --port=0 --use_JSON=false --enable_ipc_monitor --ipc_endpoint_name="${IPCNAME}_$1" \
		2>"$WORK/daemon$1.log" &
	KIDS+=($!)
	local port=
	for _ in $(seq 200); do
		port=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$WORK/daemon$1.log" | head -n 1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || fail "daemon $1 did not start: $(cat "$WORK/daemon$1.log")"
	eval "PORT$1=$port"
}
# client I NAME [flags]: a fake Kineto process of daemon I, Kineto's 5 s polls
client() {
	local d=$1 n=$2
	shift 2
	SLURM_JOB_ID=$JOB "$FAKE" --daemon_name="${IPCNAME}_$d" "$@" >"$WORK/$n.log" 2>&1 &
	KIDS+=($!)
}
procs() { "$RPC" --port="$1" --body='{"fn":"getProcesses"}' | sed -n 's/^{"count":\([0-9]*\).*/\1/p'; }

# Clients that start before their daemon (their first sends are refused and
# retried, and the one that succeeds reports failure); started apart, so
# their retries, hence their poll phases, differ.
client 1 early1a --late_replies
sleep 0.3
client 2 early2a --late_replies
sleep 0.3
client 1 early1b --late_replies
sleep 0.3
client 2 early2b --late_replies
daemon 1
daemon 2
client 1 late1 --poll_phase_ms=600
client 2 late2 --poll_phase_ms=4100
for _ in $(seq 300); do
	[ "$(procs "$PORT1")" = 3 ] && [ "$(procs "$PORT2")" = 3 ] && break
	sleep 0.1
done
[ "$(procs "$PORT1")" = 3 ] && [ "$(procs "$PORT2")" = 3 ] || fail "clients did not register"
for n in early1a early1b early2a early2b; do
	grep -q 'replies will be read one poll late' "$WORK/$n.log" || fail "$n is not one poll late: $(cat "$WORK/$n.log")"
done

HOSTS=127.0.0.1:$PORT1,127.0.0.1:$PORT2
"$DYNO" gputrace --hostnames "$HOSTS" --job-id "$JOB" --log-file "$WORK/a_{host}.json" --wait >"$WORK/g1" 2>&1 ||
	fail "default options lost traces: $(cat "$WORK/g1"; tail -n 3 "$WORK"/*.log)"
grep -q '^all 6 trace files written$' "$WORK/g1" || fail "$(cat "$WORK/g1")"

# Too small a delay: the late readers refuse it, and --wait says why.
"$DYNO" gputrace --hostnames "$HOSTS" --job-id "$JOB" --log-file "$WORK/b_{host}.json" --start-delay-s 6 \
	--wait --wait-timeout-s 20 >"$WORK/g2" 2>&1 && fail "a 6 s start delay got every trace: $(cat "$WORK/g2")"
grep -q 'start time too close to its poll' "$WORK/g2" || fail "no reason given: $(cat "$WORK/g2")"
grep -q 'config refused: start time too close' "$WORK/early1a.log" || fail "$(cat "$WORK/early1a.log")"
echo ok
