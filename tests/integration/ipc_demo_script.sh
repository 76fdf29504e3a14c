#!/usr/bin/env bash
# The README's demo (scripts/demo-tracing.sh) runs start to finish and
# leaves one trace per rank, ranks 0 and 1.
set -euo pipefail
: "${BUILD:=build}"
out=$(scripts/demo-tracing.sh "$BUILD" 2>&1) || { echo "$out"; exit 1; }
dir=$(echo "$out" | sed -n 's/^# files kept in //p')
[ -d "$dir" ] || { echo "$out"; exit 1; }
trap 'rm -rf "$dir"' EXIT
n=$(ls "$dir"/trace_*.json | wc -l)
[ "$n" = 2 ] || { echo "expected 2 traces, got $n"; echo "$out"; exit 1; }
cat "$dir"/trace_*.json | grep -o '"rank": [01]' | sort | tr '\n' ' ' | grep -qx '"rank": 0 "rank": 1 ' ||
	{ echo "ranks wrong"; exit 1; }
echo ok
