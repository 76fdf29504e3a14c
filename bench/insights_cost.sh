#!/usr/bin/env bash
# insights_cost.sh [BUILD] - what `dyno analyze insights` costs next to
# `dyno analyze summary` on the same trace, whole process, interleaved runs
# (summary, insights, summary, ...: the VM's state moves both alike), best
# and median of REPS each, and the ratio (issue #33: insights <= 1.5x
# summary on the largest shared trace).  Also the H200 traces with planted
# bottlenecks.  Not a test: it never fails on speed.
#
# Env: REPS (default 11), TRACES (default: trace_diff/control and the H200
# dataloader traces).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
REPS=${REPS:-11}
DYNO=$O/dyno
[ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
TRACES=${TRACES:-"$TESTDATA/traces/trace_diff/control/control.json.gz $TESTDATA/h200-insights/dataloader.steps.pt.trace.json.gz $TESTDATA/h200-insights/dataloader.span.pt.trace.json.gz"}

ms() { # ms CMD...: wall milliseconds of one run
	local s e
	s=$(date +%s%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}
stats() { # stats US...: "best median" in ms
	printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END{printf "%.1f %.1f", v[1]/1000, v[int((NR+1)/2)]/1000}'
}
printf '%-44s %16s %16s %12s\n' trace "summary best/med" "insights best/med" "ratio (med)"
for t in $TRACES; do
	s=() i=()
	for _ in $(seq "$REPS"); do
		s+=("$(ms "$DYNO" analyze summary "$t" -q -f csv)")
		i+=("$(ms "$DYNO" analyze insights "$t" -q -f csv)")
	done
	read -r sb sm <<<"$(stats "${s[@]}")"
	read -r ib im <<<"$(stats "${i[@]}")"
	printf '%-44s %7s/%-8s %7s/%-8s %12s\n' "$(basename "$(dirname "$t")")/$(basename "$t" | cut -c1-28)" \
		"$sb" "$sm ms" "$ib" "$im ms" "$(awk -v a="$im" -v b="$sm" 'BEGIN{printf "%.2fx", a/b}')"
done
