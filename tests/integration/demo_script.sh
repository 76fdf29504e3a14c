#!/usr/bin/env bash
# `make demo` (scripts/demo.sh) runs start to finish: both ranks registered
# with the job id, one trace per rank (ranks 0 and 1, valid JSON), dyno
# analyze loaded 2 ranks, dyno metrics showed the ranks' per-process keys,
# and the daemon exited 0.  (e2e_gputrace_analyze.sh checks the details.)
set -euo pipefail
: "${BUILD:=build}"
dir=$(mktemp -d /tmp/dyno-demo-test-XXXXXX)
trap 'rm -rf "$dir"' EXIT
out=$(DEMO_DIR=$dir DEMO_JOB=515 scripts/demo.sh "$BUILD" 2>&1) || { echo "$out"; exit 1; }
# the reason last: tests/run.sh shows the last 40 lines
fail() { echo "$out" | tail -n 30; echo "FAIL: $*"; exit 1; }
n=$(ls "$dir"/traces/trace_*.json | wc -l)
[ "$n" = 2 ] || fail "expected 2 traces, got $n"
ranks=$(cat "$dir"/traces/trace_*.json | grep -o '"rank": [01]' | sort | tr '\n' ' ')
[ "$ranks" = '"rank": 0 "rank": 1 ' ] || fail "ranks wrong: $ranks"
grep -q 'processes: 2 registered' <<<"$out" || fail "status did not list 2 processes"
[ "$(echo "$out" | grep -Ec '^  [0-9]+ +515 +idle')" = 2 ] || fail "status rows without job 515"
grep -q '^all 2 trace files written$' <<<"$out" || fail "gputrace --wait did not see both files"
grep -q 'loaded 2 rank(s)' <<<"$out" || fail "analyze did not load 2 ranks"
grep -q '^Temporal breakdown' <<<"$out" || fail "no analysis printed"
[ "$(echo "$out" | grep -Ec '^proc_rss_bytes\.[0-9]+ ')" = 2 ] || fail "metrics: no proc_rss_bytes of both ranks"
grep -q 'daemon stopped (exit 0)' <<<"$out" || fail "daemon did not stop cleanly"
echo ok
