#!/usr/bin/env bash
# Run every benchmark script bench/*.sh (this one excepted).  A script runs
# its programs from $O/bench/ and prints figures and ratios against a
# baseline measured in the same run.  Benchmarks never fail on speed: a
# non-zero exit means the benchmark itself broke.
# Usage: bench/run.sh [BUILD_DIR] [NAME-SUBSTRING]
set -uo pipefail
cd "$(dirname "$0")/.."
export O=${1:-build} TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
# bench/soak.sh: the issue's 10-minute abuse soak unless told otherwise
export SOAK_SECONDS=${SOAK_SECONDS:-600}
rc=0
for b in bench/*.sh; do
	name=$(basename "$b" .sh)
	# compare_builds needs two builds: run it by hand
	[ "$name" = run ] || [ "$name" = compare_builds ] && continue
	[ -n "${2:-}" ] && [[ "$name" != *"$2"* ]] && continue
	echo "=== $name"
	bash "$b" || { echo "bench $name failed (exit $?)"; rc=1; }
	echo
done
exit $rc
