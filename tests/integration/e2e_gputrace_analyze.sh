#!/usr/bin/env bash
# Issue #5 end to end with the real programs: dynolog (IPC monitor, RPC on a
# kernel-chosen port, loopback-only allow-list, trace path policy), two
# fake-kineto "ranks" of job J plus a decoy of another job, and the real
# dyno CLI:
#   - dyno status lists the three processes with their job ids;
#   - dyno gputrace --job-id J --wait triggers exactly the two ranks, both
#     trace_<pid>.json files appear, are valid Kineto traces of the right
#     process and rank, and dyno analyze loads them as ranks 0 and 1;
#   - one-shot: each rank received exactly one config although it kept
#     polling, and a poll on the wire right after a delivery gets nothing;
#   - gputrace --pids <rank 0> triggers only rank 0;
#   - gputrace --process-limit 1 triggers one of the two, and only its file
#     appears.
# Private IPC endpoint name and port: runs beside other tests and a real
# daemon on port 1778.
source "$(dirname "$0")/tracing-lib.bash"
JOB=$((100000 + RANDOM))
DECOY_JOB=$((JOB + 1))
RAW_JOB=$((JOB + 2))
T=$WORK/traces
mkdir -p "$T"
start_daemon --rpc_allow=127.0.0.0/8,::1/128 --trace_path_prefixes="$T"
dyno() { "$DYNO" --port "$PORT" "$@"; }

# rank N LOG [JOB]: a fake Kineto rank polling every 100 ms
rank() {
	SLURM_JOB_ID=${3:-$JOB} RANK=$1 WORLD_SIZE=2 "$FAKE" --daemon_name="$IPCNAME" --poll_interval_ms=100 \
		>"$WORK/$2" 2>&1 &
	KIDS+=($!)
	LASTPID=$!
}
rank 0 r0.log
R0=$LASTPID
rank 1 r1.log
R1=$LASTPID
rank 0 decoy.log "$DECOY_JOB"
DECOY=$LASTPID
wait_for has_procs 3 || fail "3 processes did not register: $(rpc '{"fn":"getProcesses"}')"
configs() { grep -c '^config ' "$WORK/$1" || true; }

# --- status lists them with their job ids
dyno status >"$WORK/status" 2>&1 || fail "dyno status: $(cat "$WORK/status")"
grep -q '^processes: 3 registered' "$WORK/status" || fail "status: $(cat "$WORK/status")"
for pj in "$R0 $JOB" "$R1 $JOB" "$DECOY $DECOY_JOB"; do
	set -- $pj
	grep -Eq "^ +$1 +$2 +idle " "$WORK/status" || fail "status lacks pid $1 job $2: $(cat "$WORK/status")"
done

# trig OUTPUT: the activityProfilersTriggered list of a gputrace output, sorted
trig() { sed -n 's/^response = .*"activityProfilersTriggered":\[\([0-9,]*\)\].*/\1/p' "$1" | tr ',' '\n' | sort -n | tr '\n' ' '; }
sorted() { printf '%s\n' "$@" | sort -n | tr '\n' ' '; }

# --- gputrace --job-id J --wait: both ranks, not the decoy
mkdir "$T/a"
dyno gputrace --job-id "$JOB" --log-file "$T/a/trace.json" --duration-ms 200 --wait --wait-timeout-s 30 \
	>"$WORK/g1" 2>&1 || fail "gputrace --job-id: $(cat "$WORK/g1")"
[ "$(trig "$WORK/g1")" = "$(sorted "$R0" "$R1")" ] || fail "triggered $(trig "$WORK/g1"), not $R0 $R1: $(cat "$WORK/g1")"
grep -q '^Matched 2 processes$' "$WORK/g1" || fail "gputrace: $(cat "$WORK/g1")"
grep -q '^all 2 trace files written$' "$WORK/g1" || fail "--wait: $(cat "$WORK/g1")"
[ "$(ls "$T/a" | sort | tr '\n' ' ')" = "$(printf 'trace_%s.json\n' "$R0" "$R1" | sort | tr '\n' ' ')" ] ||
	fail "files in $T/a: $(ls "$T/a")"
"$DYNO" json -q "$T"/a/trace_*.json || fail "a trace is not valid JSON"
for pr in "$R0 0" "$R1 1"; do
	set -- $pr
	f=$T/a/trace_$1.json
	grep -q '^{"schemaVersion":1,' <<<"$(head -c 4096 "$f")" || fail "$f: no Kineto schemaVersion"
	grep -q "\"distributedInfo\":{[^}]*\"rank\": $2, \"world_size\": 2}" "$f" || fail "$f: not rank $2 of 2"
	grep -q "\"traceEvents\":\[{" "$f" || fail "$f: no traceEvents"
	grep -q "\"cat\":\"kernel\"" "$f" || fail "$f: no GPU kernels"
	grep -q "\"pid\":$1," "$f" || fail "$f: events not of process $1"
done
[ "$(configs decoy.log)" = 0 ] || fail "the decoy of job $DECOY_JOB was traced"
# dyno analyze: both ranks, kernel time on each
"$DYNO" analyze temporal "$T/a" --format csv >"$WORK/an" 2>"$WORK/an.err" || fail "analyze: $(cat "$WORK/an.err")"
[ "$(cut -d, -f1 "$WORK/an" | tail -n +2 | tr '\n' ' ')" = "0 1 " ] || fail "analyze ranks: $(cat "$WORK/an")"
awk -F, 'NR > 1 && $5 + 0 <= 0 { exit 1 }' "$WORK/an" || fail "a rank without kernel time: $(cat "$WORK/an")"
"$DYNO" analyze summary "$T/a" >"$WORK/sum" 2>"$WORK/sum.err" || fail "analyze summary: $(cat "$WORK/sum.err")"
grep -q '^loaded 2 rank(s)' "$WORK/sum.err" || fail "analyze summary: $(cat "$WORK/sum.err")"

# --- one-shot: the ranks keep polling (5+ polls at 100 ms) and get nothing more
for f in r0.log r1.log; do wait_for test "$(grep -c '^trace ' "$WORK/$f")" = 1 || fail "$f: $(cat "$WORK/$f")"; done
sleep 0.6
[ "$(configs r0.log)" = 1 ] && [ "$(configs r1.log)" = 1 ] ||
	fail "a rank received its config more than once: $(cat "$WORK/r0.log" "$WORK/r1.log")"
dyno status >"$WORK/status2" 2>&1
[ "$(grep -Ec "^ +($R0|$R1) +$JOB +idle " "$WORK/status2")" = 2 ] || fail "not idle after delivery: $(cat "$WORK/status2")"
# ... and on the wire (spec 3.3): a process of our own, triggered, polls
# three times: the first poll takes the config, later ones get an empty reply.
le() { printf "%0$(($1 / 4))x" "$2" | sed 's/\(..\)/\1 /g' | awk '{for(i=NF;i>=1;i--) printf "%s",$i}'; }
hdr() { le 64 "$1"; printf '%s' "$(printf req | od -An -tx1 | tr -d ' \n')"; printf '0%.0s' $(seq 58); }
RAWPID=$((4000000 + RANDOM)) # above pid_max's default: no real process
poll_raw() { "$FAKE" --daemon_name="$IPCNAME" --raw="$(hdr 20)$(le 32 2)$(le 32 1)$(le 64 $RAW_JOB)$(le 32 $RAWPID)"; }
[ "$(poll_raw)" = "reply 40 bytes" ] || fail "raw poll (registration) not answered empty"
dyno gputrace --job-id "$RAW_JOB" --log-file "$T/raw.json" >"$WORK/g0" 2>&1 || fail "gputrace raw: $(cat "$WORK/g0")"
[ "$(trig "$WORK/g0")" = "$RAWPID " ] || fail "raw process not triggered: $(cat "$WORK/g0")"
first=$(poll_raw)
[ "$first" != "reply 40 bytes" ] && [[ "$first" == "reply "* ]] || fail "first poll after the trigger: $first"
[ "$(poll_raw)" = "reply 40 bytes" ] || fail "second poll got the config again"
[ "$(poll_raw)" = "reply 40 bytes" ] || fail "third poll got the config again"

# --- --pids of rank 0: only rank 0
mkdir "$T/b"
dyno gputrace --job-id "$JOB" --pids "$R0" --log-file "$T/b/trace.json" --duration-ms 200 --wait --wait-timeout-s 30 \
	>"$WORK/g2" 2>&1 || fail "gputrace --pids: $(cat "$WORK/g2")"
[ "$(trig "$WORK/g2")" = "$R0 " ] || fail "--pids $R0 triggered $(trig "$WORK/g2"): $(cat "$WORK/g2")"
[ "$(ls "$T/b")" = "trace_$R0.json" ] || fail "files in $T/b: $(ls "$T/b")"
sleep 0.3
[ "$(configs r0.log)" = 2 ] && [ "$(configs r1.log)" = 1 ] || fail "config counts after --pids: r0 $(configs r0.log), r1 $(configs r1.log)"

# --- --process-limit 1: one of the two, and only its file
wait_for test "$(grep -c '^trace ' "$WORK/r0.log")" = 2 || fail "rank 0 did not finish its second trace"
mkdir "$T/c"
dyno gputrace --job-id "$JOB" --process-limit 1 --log-file "$T/c/trace.json" --duration-ms 200 --wait \
	--wait-timeout-s 30 >"$WORK/g3" 2>&1 || fail "gputrace --process-limit 1: $(cat "$WORK/g3")"
one=$(trig "$WORK/g3")
[ "$one" = "$R0 " ] || [ "$one" = "$R1 " ] || fail "--process-limit 1 triggered '$one': $(cat "$WORK/g3")"
[ "$(ls "$T/c")" = "trace_${one% }.json" ] || fail "files in $T/c: $(ls "$T/c") (triggered $one)"
sleep 0.3
[ $(($(configs r0.log) + $(configs r1.log))) = 4 ] || fail "more than one rank traced under --process-limit 1"
[ "$(configs decoy.log)" = 0 ] || fail "the decoy was traced"

# --- the traces carry what Kineto writes: ts relative to baseTimeNanoseconds
# (a whole second), not the Unix time again; the warehouse dates them now,
# not in the 2080s (the base added twice)
python3 - "$T/c/trace_${one% }.json" <<'PY' || fail "fake-kineto's trace clock"
import json, sys, time
t = json.load(open(sys.argv[1]))
base = t["baseTimeNanoseconds"]
assert base % 1000000000 == 0, base
ts = [e["ts"] for e in t["traceEvents"] if "ts" in e]
assert ts and max(ts) < 3600e6, max(ts)  # microseconds since the base: under an hour
start = base / 1e9 + min(ts) / 1e6
assert abs(start - time.time()) < 3600, (start, time.time())
PY
"$DYNO" warehouse ingest "$T/c" --job e2e --host h1 --db "$WORK/w.db" >"$WORK/wi" 2>&1 || fail "ingest: $(cat "$WORK/wi")"
"$DYNO" warehouse report --jobs --format json --db "$WORK/w.db" >"$WORK/wj" || fail "warehouse report --jobs"
year=$(date -u +%Y)
grep -q "\"first\":\"$year-" "$WORK/wj" || fail "the warehouse dates the trace elsewhere than $year: $(cat "$WORK/wj")"

kill -0 "$DPID" || fail "daemon died"
stop_daemon
grep -q ' 0 malformed, 0 unknown type, 0 foreign, ' "$WORK/daemon.log" || fail "IPC counters: $(grep 'IPC:' "$WORK/daemon.log")"
echo ok
