#!/usr/bin/env bash
# diff_bench.sh - `dyno analyze diff CONTROL TEST` on two large generated
# traces against the load of one of them, in the same run (not a test: it
# prints figures and a ratio, it never fails on speed; the issue's target is
# diff <= 2.5x the load of one).
#
#   bench/diff_bench.sh [BUILD_DIR]     (env: MB=size of each trace, default
#                                        200; REPS=runs, best kept, default 3)
#
# The load of one is measured as the diff of the big CONTROL against a tiny
# TEST (same loader options: CPU ops, every ProfilerStep), so the ratio is
# what the second trace and the comparison add.  The traces are scaled
# copies (bench/trace_gen) of two different real traces of one model.
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-200} REPS=${REPS:-3}
GEN=$O/bench/trace_gen DYNO=$O/dyno
[ -x "$GEN" ] && [ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-diff-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
"$GEN" "$TESTDATA/traces/trace_diff/control/control.json.gz" --mb "$MB" >"$TMP/control.json" 2>/dev/null
"$GEN" "$TESTDATA/traces/trace_diff/test/test.json.gz" --mb "$MB" >"$TMP/test.json" 2>/dev/null
tiny=$TESTDATA/traces/trace_compare/test/test.json.gz

best() { # best CMD... -> the fastest wall seconds of REPS runs
	local i s b=
	for ((i = 0; i < REPS; i++)); do
		/usr/bin/time -f %e -o "$TMP/t" "$@" >/dev/null 2>&1
		s=$(tail -n 1 "$TMP/t")
		if [ -z "$b" ] || awk -v a="$s" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$s; fi
	done
	echo "$b"
}
one=$(best "$DYNO" analyze diff "$TMP/control.json" "$tiny" -q)
two=$(best "$DYNO" analyze diff "$TMP/control.json" "$TMP/test.json" -q)
printf 'diff bench: two traces of %s MB each (%s)\n' "$MB" "$(du -h "$TMP/control.json" | cut -f1)"
printf '  load of one (diff against a tiny trace): %6.2f s\n' "$one"
printf '  diff of the two:                         %6.2f s  = %.2fx the load of one (target <= 2.5x)\n' \
	"$two" "$(awk -v a="$two" -v b="$one" 'BEGIN { print a / b }')"
"$DYNO" analyze diff "$TMP/control.json" "$TMP/test.json" -q --timings 2>&1 >/dev/null |
	grep -E '^  (load|analyses|output|total)|diff \(all' | sed 's/^/  /'
