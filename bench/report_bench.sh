#!/usr/bin/env bash
# report_bench.sh - `dyno report` on a big trace against `dyno analyze
# summary` on the same file, in the same run, alternating (this shared
# machine's speed drifts): wall time (best of REPS), peak RSS, and the HTML
# size.  Targets (issue 17): report time <= 1.5x summary's, HTML < 5 MB
# (long series are downsampled).  Not a test: it prints figures and ratios,
# it never fails on speed.
#
#   bench/report_bench.sh [BUILD_DIR]   (env: MB=size of the trace, default
#                                        1000; REPS=runs of each, default 3;
#                                        BASE=the trace to scale)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-1000}
REPS=${REPS:-3}
BASE=${BASE:-$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz}
GEN=$O/bench/trace_gen DYNO=$O/dyno
[ -x "$GEN" ] && [ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-report-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

echo "== generating a ${MB} MB trace from $(basename "$BASE")"
"$GEN" "$BASE" --mb "$MB" >"$TMP/t.json"
cat "$TMP/t.json" >/dev/null # page cache
echo "trace: $(($(stat -c %s "$TMP/t.json") / 1000000)) MB JSON"

best() { # best OLD NEW: the smaller
	if [ -z "$1" ] || awk -v a="$2" -v b="$1" 'BEGIN {exit !(a < b)}'; then echo "$2"; else echo "$1"; fi
}
bs= br= rs= rr=
for ((i = 0; i < REPS; i++)); do
	/usr/bin/time -f '%e %M' -o "$TMP/ts" "$DYNO" analyze summary "$TMP/t.json" -q >/dev/null
	/usr/bin/time -f '%e %M' -o "$TMP/tr" "$DYNO" report "$TMP/t.json" -o "$TMP/r.html" -q
	read -r s sm <"$TMP/ts"
	read -r r rm <"$TMP/tr"
	echo "run $((i + 1)): summary ${s} s (${sm} KB), report ${r} s (${rm} KB)"
	bs=$(best "$bs" "$s")
	br=$(best "$br" "$r")
	rs=$(best "$rs" "$sm")
	rr=$(best "$rr" "$rm")
done
size=$(stat -c %s "$TMP/r.html")
echo
printf 'command                                   wall s   peak RSS MB   (best of %d, alternating)\n' "$REPS"
printf 'dyno analyze summary t.json               %6.2f   %8.0f\n' "$bs" "$(awk -v k="$rs" 'BEGIN {print k / 1024}')"
printf 'dyno report t.json -o r.html              %6.2f   %8.0f\n' "$br" "$(awk -v k="$rr" 'BEGIN {print k / 1024}')"
echo
echo "report time / summary time:  $(awk -v a="$br" -v b="$bs" 'BEGIN {printf "%.2f", a / b}')   (target <= 1.5)"
echo "report HTML size:            $(awk -v s="$size" 'BEGIN {printf "%.2f", s / 1e6}') MB  (target < 5 MB)"
echo "charts in the report:        $(grep -o '<svg class="chart"' "$TMP/r.html" | wc -l), largest point list $(grep -o 'points="[^"]*"' "$TMP/r.html" | awk '{print NF}' | sort -n | tail -1) points"
