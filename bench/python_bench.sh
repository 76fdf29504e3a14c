#!/usr/bin/env bash
# python_bench.sh - dynolite's Python API against the CLI for the same work:
# `TraceAnalysis(trace_files=[T]) + get_temporal_breakdown()` in Debian's
# python3 vs `dyno analyze temporal T`, on a real trace scaled to MB
# megabytes (default 1000: the issue's 1 GB).  Prints the wall time and peak
# RSS of each (best of REPS runs, alternated so that a drift of this shared
# machine hits both alike), the ratios (targets: time <= 1.2x, RSS <= 1.5x),
# and python's own baseline (importing dynolite, numpy and pandas) so the
# ratio can be read as engine + interpreter.  Never fails on speed.
#
#   bench/python_bench.sh [BUILD_DIR]       (env: MB, REPS (default 3), BASE, PYTHON)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-${O:-build}}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-1000}
REPS=${REPS:-3}
BASE=${BASE:-$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz}
GEN=$O/bench/trace_gen DYNO=$O/dyno LIB=$PWD/$O/libdynolite.so
PY=${PYTHON:-/usr/bin/python3} # the python whose pandas is measured (Debian's by default)
[ -x "$GEN" ] && [ -x "$DYNO" ] && [ -e "$LIB" ] || { echo "build first: make" >&2; exit 1; }
"$PY" -c 'import pandas' 2>/dev/null || { echo "python3-pandas missing (scripts/install-deps.sh)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-python-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export DYNOLITE_LIB=$LIB PYTHONPATH=$PWD/python PYTHONDONTWRITEBYTECODE=1

one_run() { # one_run cmd... -> "secs rss_kb"
	/usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
	tail -n 1 "$TMP/time"
}
best() { # best "s m" "s m" -> fastest time, largest RSS
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ");
		if (a == "") { print b; exit } s = x[1] < y[1] ? x[1] : y[1]; m = x[2] > y[2] ? x[2] : y[2]; print s, m }'
}

echo "== generating a ${MB} MB trace from $(basename "$BASE")"
"$GEN" "$BASE" --mb "$MB" >"$TMP/t.json"
cat "$TMP/t.json" >/dev/null # page cache, as for every run below
cat >"$TMP/hta.py" <<PY
from dynolite import TraceAnalysis
analyzer = TraceAnalysis(trace_files=["$TMP/t.json"], trace_dir="")
df = analyzer.get_temporal_breakdown()
assert len(df) == 1
PY
# a notebook's view: the imports done before, only the two calls timed
cat >"$TMP/calls.py" <<PY
import time
import dynolite, numpy, pandas
t0 = time.perf_counter()
analyzer = dynolite.TraceAnalysis(trace_files=["$TMP/t.json"], trace_dir="")
df = analyzer.get_temporal_breakdown()
print("%.4f" % (time.perf_counter() - t0))
assert len(df) == 1
PY
cat >"$TMP/imports.py" <<PY
import dynolite, numpy, pandas
PY
CLI= PYR= IMP= CALLS=
for ((i = 0; i < REPS; i++)); do
	c=$("$PY" "$TMP/calls.py")
	if [ -z "$CALLS" ] || awk -v a="$c" -v b="$CALLS" 'BEGIN {exit !(a < b)}'; then CALLS=$c; fi
	CLI=$(best "$CLI" "$(one_run "$DYNO" analyze temporal "$TMP/t.json" -q)")
	PYR=$(best "$PYR" "$(one_run "$PY" "$TMP/hta.py")")
	IMP=$(best "$IMP" "$(one_run "$PY" "$TMP/imports.py")")
done
read -r cs cm <<<"$CLI"
read -r ps pm <<<"$PYR"
read -r is im <<<"$IMP"
echo "trace: $(($(stat -c %s "$TMP/t.json") / 1000000)) MB of JSON; best of $REPS runs; $(nproc) cores"
printf '%-58s %8s %10s\n' "command" "wall s" "peak RSS"
printf '%-58s %8.2f %7d MB\n' "dyno analyze temporal T" "$cs" $((cm / 1024))
printf '%-58s %8.2f %7d MB\n' "python3: TraceAnalysis(T) + get_temporal_breakdown()" "$ps" $((pm / 1024))
printf '%-58s %8.2f %7d MB\n' "python3: import dynolite, numpy, pandas (baseline)" "$is" $((im / 1024))
printf '%-58s %8.2f %10s\n' "python3, imports done: the two calls alone (in-process)" "$CALLS" "-"
awk -v cs="$cs" -v cm="$cm" -v ps="$ps" -v pm="$pm" 'BEGIN {
	printf "ratio python / CLI: time %.2fx (target <= 1.2x), peak RSS %.2fx (target <= 1.5x)\n", ps / cs, pm / cm }'
awk -v cs="$cs" -v c="$CALLS" 'BEGIN {
	printf "ratio of the two calls in a python that has imported pandas / CLI process: %.2fx\n", c / cs }'
