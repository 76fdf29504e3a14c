#!/usr/bin/env bash
# critical_path_bench.sh - `dyno analyze critical-path` (one iteration of a
# big trace) against our own load time of that trace, measured in the same
# run (`--timings`), and HTA's recorded critical-path time
# (tests/data/conformance/hta-timings.md, scaled to the iteration, which does
# not grow with MB).  Not a test: it prints figures and a ratio, it never
# fails on speed.  The target is analysis <= 2x load.
#
#   bench/critical_path_bench.sh [BUILD_DIR]   (env: MB=size of the trace,
#                                               default 1000; REPS=runs, best
#                                               kept, default 3; BASE=the
#                                               trace to scale)
#
# trace_gen repeats the ns-resolution trace's events with shifted times and
# renumbered ProfilerSteps, so one iteration (ProfilerStep instance 1) stays
# the base's size while the rank grows: the analysis' whole-rank passes
# (window scan, queue length over every launch) are what grows with MB.
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-1000}
REPS=${REPS:-3}
BASE=${BASE:-$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz}
GEN=$O/bench/trace_gen DYNO=$O/dyno
[ -x "$GEN" ] && [ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-cp-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

echo "== generating a ${MB} MB trace from $(basename "$BASE")"
"$GEN" "$BASE" --mb "$MB" >"$TMP/t.json"
cat "$TMP/t.json" >/dev/null # page cache
best_load= best_cp=
for ((i = 0; i < REPS; i++)); do
	"$DYNO" analyze critical-path "$TMP/t.json" -q --timings >"$TMP/out" 2>"$TMP/t"
	load=$(awk '$1 == "load" {print $2; exit}' "$TMP/t")
	cp=$(awk '$1 == "critical-path" {print $NF; exit}' "$TMP/t")
	echo "run $((i + 1)): load ${load} s, critical-path ${cp} s, ratio $(awk -v a="$cp" -v b="$load" 'BEGIN {printf "%.3f", a / b}')"
	if [ -z "$best_load" ] || awk -v a="$load" -v b="$best_load" 'BEGIN {exit !(a < b)}'; then best_load=$load; fi
	if [ -z "$best_cp" ] || awk -v a="$cp" -v b="$best_cp" 'BEGIN {exit !(a < b)}'; then best_cp=$cp; fi
done
grep "graph of" "$TMP/out" || true
rows=$(grep -o '[0-9]* rows' "$TMP/t" | head -1 || true)
hta=$(awk -F'|' '$2 ~ /^ ns_resolution_trace / && NF > 10 {gsub(/ /, "", $11); split($11, a, "/"); print a[1]}' \
	"$TESTDATA/conformance/hta-timings.md")
echo
echo "trace: $(stat -c %s "$TMP/t.json") bytes; best of $REPS: load ${best_load} s, critical-path ${best_cp} s"
awk -v a="$best_cp" -v b="$best_load" 'BEGIN {printf "critical-path / load = %.3f (target <= 2)\n", a / b}'
[ -n "$hta" ] && echo "HTA (hta-timings.md, the base trace's one iteration, not re-run here): critical_path ${hta} s"
