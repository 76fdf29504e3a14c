#!/usr/bin/env bash
# Triggers end to end: a daemon collecting from a fixture /proc every 1 s,
# a fake Kineto process registered with it, and `dyno trigger`.  A metric
# condition that holds fires after its window and then exactly every
# --min-interval-s of ticks (the firings' clock_s, counted in ticks), and
# its trace request reaches the process, which writes the trace ({fire}
# numbered); conditions that do not hold or name an absent key never
# fire; fireTrigger fires and is then rate-limited; the triggers survive
# a restart in --trigger_file (firing numbers go on); a damaged file stops
# the daemon with the byte offset.
source "$(dirname "$0")/tracing-lib.bash"
: "${DYNO:=$PWD/$BUILD/dyno}"
ROOT=$WORK/root
cp -r "$PWD/tests/data/procfs/basic/t0" "$ROOT"
TF=$WORK/triggers.json
DFLAGS=(--procfs_root="$ROOT/proc" --sysfs_root="$ROOT/sys" --kernel_monitor_reporting_interval_s=1 --trigger_file="$TF")
start_daemon "${DFLAGS[@]}"
fake --run_s=120
FK=$LASTPID
# a process of job 7 for the fired trigger (a job of its own: mem's firings
# on job 0 would make it busy at random moments)
fake --run_s=120 --job_id=7
F7=$LASTPID
wait_for has_procs 2 || fail "fake Kineto did not register"

trig() { "$DYNO" trigger "$@" --port "$PORT"; }
trig add mem --job-id 0 --when 'mem_total_bytes > 1000 for 2s' --min-interval-s 3 --log-file "$WORK/mem_{fire}.json" \
	--duration-ms 50 >"$WORK/add.out" || fail "add: $(cat "$WORK/add.out")"
grep -q '"status":"ok"' "$WORK/add.out" || fail "add answer: $(cat "$WORK/add.out")"
trig add never --when 'mem_total_bytes < 1000' --min-interval-s 0 --log-file "$WORK/never.json" >/dev/null
# a known key this host lacks (no GPU here): accepted, never fires
trig add absent --when 'sm_active_ratio.0 > 0' --min-interval-s 0 --log-file "$WORK/absent.json" >/dev/null ||
	fail "a known key absent here was refused"
# a key no collector emits can never fire: refused, naming the closest keys
if trig add typo --when 'cpu_iowait > 30 for 60s' --log-file "$WORK/t.json" >"$WORK/typo.out" 2>&1; then
	fail "an unknown metric key was accepted: $(cat "$WORK/typo.out")"
fi
grep -q "no metric key 'cpu_iowait' (docs/metrics.md); closest: @cpu_ratio_iowait" "$WORK/typo.out" ||
	fail "unknown key message: $(cat "$WORK/typo.out")"
# every condition the docs and the help show is one the daemon takes
conds=$( (cat README.md docs/*.md | grep -o -- "--when '[^']*'"; "$DYNO" trigger add --help | grep -o "e\.g\. '[^']*'") |
	sed "s/^[^']*'//;s/'\$//" | sort -u)
[ -n "$conds" ] || fail "no --when example found in the docs"
n=0
while IFS= read -r c; do
	n=$((n + 1))
	trig add "doc$n" --when "$c" --log-file "$WORK/doc.json" >"$WORK/doc.out" 2>&1 ||
		fail "the documented condition '$c' is refused: $(cat "$WORK/doc.out")"
	trig rm "doc$n" >/dev/null || fail "rm doc$n"
done <<<"$conds"
# a bad condition is refused with the reason, nothing added
if trig add bad --when 'mem_total_bytes >> 3' --log-file "$WORK/b.json" >"$WORK/bad.out" 2>&1; then
	fail "a bad condition was accepted"
fi
grep -q 'when: column 17' "$WORK/bad.out" || fail "bad condition message: $(cat "$WORK/bad.out")"

list() { rpc '{"fn":"listTriggers"}'; }
count() { list | grep -o "\"trigger\":\"$1\"" | wc -l; }
for _ in $(seq 300); do [ "$(count mem)" -ge 3 ] && break; sleep 0.1; done
[ "$(count mem)" -ge 3 ] || fail "mem fired $(count mem) times in 30 s: $(list)"
# exactly 3 ticks apart: the rate limit, counted in ticks
clocks=$(list | grep -o '"clock_s":[0-9]*,"job":"0","result":{[^}]*},"sample_time":"[^"]*","seq":[0-9]*,"time":"[^"]*","time_ms":[0-9]*,"trigger":"mem"' |
	sed 's/"clock_s":\([0-9]*\).*/\1/' || true)
[ -n "$clocks" ] || fail "no firing records of mem: $(list)"
prev=
for c in $clocks; do
	[ -z "$prev" ] || [ $((c - prev)) = 3 ] || fail "firings $((c - prev)) ticks apart: $clocks"
	prev=$c
done
[ "$(count never)" = 0 ] || fail "a condition that never holds fired: $(list)"
[ "$(count absent)" = 0 ] || fail "a condition on an absent key fired: $(list)"
list | grep -q '"why":"mem_total_bytes = 16777216000: mem_total_bytes > 1000 for 2s"' || fail "why: $(list)"
list | grep -q "\"triggered\":\[$FK\]" || fail "the process was not triggered: $(list)"
# the trace request reached the fake Kineto process, which wrote the trace
wait_for test -s "$WORK/mem_0_$FK.json" || fail "no trace from the first firing: $(ls "$WORK")"
grep -q '"trace_id":"[0-9][0-9]*"' "$WORK/mem_0_$FK.json" || fail "trace lacks the request id"
python3 -m json.tool "$TF" >/dev/null || fail "trigger file is not JSON: $(cat "$TF")"

# fireTrigger, then the rate limit
trig add man --job-id 7 --min-interval-s 3600 --log-file "$WORK/man.json" >/dev/null
trig fire man >"$WORK/fire1.out" || fail "fire: $(cat "$WORK/fire1.out")"
grep -q "\"triggered\":\[$F7\]" "$WORK/fire1.out" || fail "fire: $(cat "$WORK/fire1.out")"
trig fire man >"$WORK/fire2.out" || fail "fire 2: $(cat "$WORK/fire2.out")"
grep -q '"firings":\[\],"rate_limited":\["7"\]' "$WORK/fire2.out" || fail "not rate-limited: $(cat "$WORK/fire2.out")"
"$DYNO" trigger list --port "$PORT" >"$WORK/list.txt" || fail "dyno trigger list"
# global options before the command, as upstream's dyno takes them
"$DYNO" --port "$PORT" trigger list >"$WORK/list2.txt" || fail "dyno --port P trigger list"
"$DYNO" --hostname 127.0.0.1 --port="$PORT" trigger list --json >"$WORK/list3.txt" ||
	fail "dyno --hostname H --port=P trigger list --json"
grep -q '^mem  *mem_total_bytes > 1000 for 2s' "$WORK/list2.txt" || fail "dyno --port P trigger list: $(cat "$WORK/list2.txt")"
grep -q '"triggers":' "$WORK/list3.txt" || fail "--json after hoisted options: $(cat "$WORK/list3.txt")"
grep -q '^mem  *mem_total_bytes > 1000 for 2s  *0  *3s' "$WORK/list.txt" || fail "list: $(cat "$WORK/list.txt")"
grep -q 'man job 7: fireTrigger RPC -> 1 matched, 1 triggered' "$WORK/list.txt" || fail "list: $(cat "$WORK/list.txt")"
last=$(list | grep -o '"seq":[0-9]*' | tail -n 1 | cut -d: -f2)

# restart: the triggers come back from the file, the firing numbers go on
stop_daemon
start_daemon "${DFLAGS[@]}"
list | grep -q '"firings":\[\]' || fail "firings after restart: $(list)"
for id in mem never absent man; do list | grep -q "\"id\":\"$id\"" || fail "$id lost in the restart: $(list)"; done
trig rm never >/dev/null || fail "rm"
grep -q '"id":"never"' "$TF" && fail "removed trigger still in the file"
wait_for has_procs 2 || fail "fake Kineto did not register again"
for _ in $(seq 100); do [ "$(count mem)" -ge 1 ] && break; sleep 0.1; done
seq1=$(list | grep -o '"seq":[0-9]*' | head -n 1 | cut -d: -f2)
[ -n "$seq1" ] && [ "$seq1" -gt "$last" ] || fail "firing numbers restarted ($seq1 after $last)"
stop_daemon

# a damaged file: the daemon does not start, and says where
printf '{"version":1,"triggers":[{"id":"x",]}' >"$TF"
if "$DYNOLOG" --port=0 --use_JSON=false "${DFLAGS[@]}" 2>"$WORK/bad.log"; then fail "started with a damaged file"; fi
grep -q "trigger file $TF: byte 35" "$WORK/bad.log" || fail "damaged file message: $(cat "$WORK/bad.log")"
echo ok
