#!/usr/bin/env bash
# Run every benchmark program (build/bench/*) in turn; each prints its own
# figures and its ratio to a baseline measured in the same run.  Benchmarks
# never fail on speed: a non-zero exit means the benchmark itself broke.
# Usage: bench/run.sh BUILD_DIR [NAME-SUBSTRING]
set -uo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
FILTER=${2:-}
rc=0
for b in "$O"/bench/*; do
	[ -x "$b" ] || continue
	name=$(basename "$b")
	if [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]]; then continue; fi
	echo "== $name"
	"$b" || { echo "bench $name failed (exit $?)"; rc=1; }
	echo
done
exit $rc
