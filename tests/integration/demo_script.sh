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
fail() { echo "FAIL: $*"; echo "$out" | tail -n 60; exit 1; }
n=$(ls "$dir"/traces/trace_*.json | wc -l)
[ "$n" = 2 ] || fail "expected 2 traces, got $n"
cat "$dir"/traces/trace_*.json | grep -o '"rank": [01]' | sort | tr '\n' ' ' | grep -qx '"rank": 0 "rank": 1 ' ||
	fail "ranks wrong"
echo "$out" | grep -q 'processes: 2 registered' || fail "status did not list 2 processes"
[ "$(echo "$out" | grep -Ec '^  [0-9]+ +515 +idle')" = 2 ] || fail "status rows without job 515"
echo "$out" | grep -q '^all 2 trace files written$' || fail "gputrace --wait did not see both files"
echo "$out" | grep -q 'loaded 2 rank(s)' || fail "analyze did not load 2 ranks"
echo "$out" | grep -q '^Temporal breakdown' || fail "no analysis printed"
[ "$(echo "$out" | grep -Ec '^proc_rss_bytes\.[0-9]+ ')" = 2 ] || fail "metrics: no proc_rss_bytes of both ranks"
echo "$out" | grep -q 'daemon stopped (exit 0)' || fail "daemon did not stop cleanly"
echo ok
