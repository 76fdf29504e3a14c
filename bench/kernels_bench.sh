#!/usr/bin/env bash
# kernels_bench.sh - the kernel analyses' cost on a real trace scaled up by
# trace_gen (default: trace_diff/control, which has compute, NCCL and memory
# kernels), in one run with the load and the temporal breakdown as
# baselines, plus the end-to-end `dyno analyze kernels|overlap` wall time and
# peak RSS.  Figures only; never fails on speed.
#
#   bench/kernels_bench.sh [BUILD_DIR]     (env: MB=scaled size, default 300)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-300}
BASE=${BASE:-$TESTDATA/traces/trace_diff/control/control.json.gz}
[ -x "$O/bench/trace_gen" ] && [ -x "$O/bench/kernels_bench" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-kernels-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo "== generating a ${MB} MB trace from $(basename "$BASE")"
"$O/bench/trace_gen" "$BASE" --mb "$MB" >"$TMP/t.json"
cat "$TMP/t.json" >/dev/null
"$O/bench/kernels_bench" "$TMP/t.json" 3
echo
printf '%-40s %8s %12s\n' "command" "wall s" "peak RSS MB"
for a in temporal "kernels --top" overlap kernel-distribution; do
	/usr/bin/time -f "%e %M" -o "$TMP/time" "$O/dyno" analyze $a "$TMP/t.json" -q --format csv >/dev/null
	read -r s kb <"$TMP/time"
	printf '%-40s %8s %12d\n' "dyno analyze $a" "$s" $((kb / 1024))
done
