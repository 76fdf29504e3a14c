#!/usr/bin/env bash
# analysis_cost.sh [BUILD] - what one analysis run alone costs next to our
# own load of the same trace, in the same run (`dyno analyze A --timings`:
# load and analyses phases, best of REPS), on a real trace scaled to MB
# (build/bench/trace_gen, default 200 MB of ns_resolution_trace, which has
# user annotations and aten operators) and on two shared traces as they are,
# with HTA's recorded in-process time of the same call on the unscaled trace
# (tests/data/conformance/<name>/results.json, stage seconds; HTA itself is
# not run here).  Not a test: it never fails on speed.
#
# cupti, which needs a trace with CUPTI counters, runs on cupti_profiler
# scaled to MB and as it is instead.
#
# Env: ANALYSES (default "annotations op-kernels"), MB, REPS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-200}
REPS=${REPS:-3}
ANALYSES=${ANALYSES:-annotations op-kernels}
GEN=$O/bench/trace_gen DYNO=$O/dyno
[ -x "$GEN" ] && [ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-analysis-cost.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

BASE_NAME=ns_resolution_trace
BASE=$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
"$GEN" "$BASE" --mb "$MB" >"$TMP/t.json"

# the HTA stage of an analysis in results.json
stage() {
	case $1 in
	annotations) echo user_annotation ;;
	op-kernels) echo aten_op_delay ;;
	*) echo "$1" ;;
	esac
}
hta_seconds() { # hta_seconds CASE STAGE -> seconds, or "-" (failed / not run)
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["stages"].get(sys.argv[2], {})
print(s["seconds"] if s.get("status") == "ok" else "-")' "$TESTDATA/conformance/$1/results.json" "$2"
}
# best of REPS: "load analyses" seconds from --timings
timed() { # timed ANALYSIS PATH
	local best="" i line
	for ((i = 0; i < REPS; i++)); do
		line=$("$DYNO" analyze "$1" "$2" -q --timings 2>&1 >/dev/null |
			awk '/^  load / {l = $2} /^  analyses / {a = $2} END {print l, a}')
		if [ -z "$best" ] || awk -v a="${line#* }" -v b="${best#* }" 'BEGIN {exit !(a < b)}'; then
			best=$line
		fi
	done
	echo "$best"
}

printf "%-14s %-34s %9s %11s %14s %14s\n" analysis trace "load s" "analysis s" "analysis/load" "HTA call s"
row() { # row ANALYSIS LABEL PATH CASE
	local l a h
	read -r l a < <(timed "$1" "$3")
	h=$(hta_seconds "$4" "$(stage "$1")")
	printf "%-14s %-34s %9.3f %11.4f %14.4f %14s\n" "$1" "$2" "$l" "$a" \
		"$(awk -v a="$a" -v l="$l" 'BEGIN {print (l > 0 ? a / l : 0)}')" "$h"
}
CUPTI=$TESTDATA/traces/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz
for a in $ANALYSES; do
	if [ "$a" = cupti ]; then
		[ -f "$TMP/c.json" ] || "$GEN" "$CUPTI" --mb "$MB" >"$TMP/c.json"
		row "$a" "cupti_profiler x${MB} MB" "$TMP/c.json" cupti_profiler
		row "$a" cupti_profiler "$CUPTI" cupti_profiler
		continue
	fi
	row "$a" "$BASE_NAME x${MB} MB" "$TMP/t.json" "$BASE_NAME"
	row "$a" nccl_parser_config "$TESTDATA/traces/nccl_parser_config/nccl_data.json.gz" nccl_parser_config
	row "$a" trace_filter "$TESTDATA/traces/trace_filter" trace_filter__dir_2ranks
done
echo "(HTA call s: the unscaled trace, in-process, from results.json; '-': HTA failed or skipped it)"
