#!/usr/bin/env bash
# analyze_inputs.sh - what every `dyno analyze` analysis takes as input
# besides one trace or directory: several files of one job (the same as
# their directory), a trace on stdin (plain or gzip: the same as the
# file), and the row selection --iterations / --time-range (bad values
# exit 2, a selection that keeps nothing exits 4 saying what the trace
# holds; the counts themselves are checked in test_trace_select.c).
set -uo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
F=$TESTDATA/traces/trace_filter
C=$TESTDATA/traces/trace_diff/control/control.json.gz

"$DYNO" analyze summary "$F" --format json -q >"$T/dir.json"
"$DYNO" analyze summary "$F/sampled_rank-0.json.gz" "$F/sampled_rank-1.json.gz" --format json -q >"$T/two.json"
cmp -s "$T/dir.json" "$T/two.json" || { echo "FAIL: two files differ from their directory"; fail=1; }
gzip -dc "$F/sampled_rank-1.json.gz" >"$T/plain.json"
"$DYNO" analyze summary "$F/sampled_rank-0.json.gz" - --format json -q <"$T/plain.json" >"$T/stdin.json"
cmp -s "$T/dir.json" "$T/stdin.json" || { echo "FAIL: plain stdin differs from the file"; fail=1; }
"$DYNO" analyze summary - "$F/sampled_rank-0.json.gz" --format json -q <"$F/sampled_rank-1.json.gz" >"$T/stdin.json"
cmp -s "$T/dir.json" "$T/stdin.json" || { echo "FAIL: gzip stdin differs from the file"; fail=1; }

expect() { # STATUS MESSAGE ARGS...
	local want=$1 msg=$2; shift 2
	"$DYNO" analyze "$@" >"$T/o" 2>"$T/e" </dev/null
	local rc=$?
	if [ $rc -ne "$want" ] || ! grep -q -- "$msg" "$T/e" "$T/o"; then
		echo "FAIL: dyno analyze $*: exit $rc (want $want), no '$msg'"; cat "$T/e"; fail=1
	fi
}
expect 1 'stdin can be read once only' temporal - -
expect 2 "bad --iterations '5-3'" temporal "$C" --iterations 5-3
expect 2 "bad --iterations 'x'" temporal "$C" --iterations x
expect 2 "bad --time-range '9:2'" temporal "$C" --time-range 9:2
expect 4 'keeps no event: --iterations 3-5; the trace has ProfilerStep#1009..1013 (the last one dropped' \
	temporal "$C" --iterations 3-5
expect 4 'keeps no event: --time-range 1e+12:2e+12; the trace spans 0..' temporal "$C" --time-range 1e12:2e12
expect 4 'the trace has no ProfilerStep#N event' temporal "$TESTDATA/traces/critical_path/simple_add" --iterations 1-2
# the selection reaches the analyses: fewer kernels, a shorter span
"$DYNO" analyze temporal "$C" --format csv -q >"$T/all.csv"
"$DYNO" analyze temporal "$C" --iterations 1010 --format csv -q >"$T/one.csv" || { echo "FAIL: --iterations 1010"; fail=1; }
k_all=$(tail -1 "$T/all.csv" | cut -d, -f5) k_one=$(tail -1 "$T/one.csv" | cut -d, -f5)
awk -v a="$k_all" -v b="$k_one" 'BEGIN { exit !(b > 0 && b < a) }' ||
	{ echo "FAIL: kernel_time with --iterations 1010 ($k_one) not below the whole ($k_all)"; fail=1; }
"$DYNO" analyze temporal "$C" --time-range 0:100000 --format csv -q >"$T/tr.csv" || { echo "FAIL: --time-range"; fail=1; }
cmp -s "$T/all.csv" "$T/tr.csv" && { echo "FAIL: --time-range changed nothing"; fail=1; }
# diff: the first iteration left by the selection is compared
expect 0 'control: rank 3, ProfilerStep#1011' diff "$C" "$TESTDATA/traces/trace_diff/test" --iterations 1011-1012
# a JSON file beside the traces that is no trace (a config.json): named and
# left out, the results whole (exit 0), as `dyno report` does
# (report_inputs.sh); named alone it is an error
mkdir "$T/cfg"
cp "$F"/*.json.gz "$T/cfg/"
echo '{"lr": 0.1, "batch": 32}' >"$T/cfg/config.json"
"$DYNO" analyze temporal "$T/cfg" --format csv >"$T/cfg.csv" 2>"$T/cfg.err"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: a directory with a config.json: exit $rc: $(cat "$T/cfg.err")"; fail=1; }
grep -q 'config.json: .*not a Kineto trace; this file is left out' "$T/cfg.err" ||
	{ echo "FAIL: config.json not named: $(cat "$T/cfg.err")"; fail=1; }
"$DYNO" analyze temporal "$F" --format csv -q | cmp -s - "$T/cfg.csv" || { echo "FAIL: config.json changed the results"; fail=1; }
expect 1 'config.json: byte 25 (line 2, column 1): no traceEvents array: not a Kineto trace' temporal "$T/cfg/config.json"
exit $fail
