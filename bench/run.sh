#!/usr/bin/env bash
# Run every benchmark script bench/bench_*.sh with the build dir.  Benchmarks
# print figures and ratios against a baseline measured in the same run; they
# never fail on speed.  Usage: bench/run.sh [BUILD_DIR] [NAME-SUBSTRING]
set -uo pipefail
cd "$(dirname "$0")/.."
export O=${1:-build} SHARED=${DYNO_SHARED:-$(cd .. && pwd)/shared}
for b in bench/bench_*.sh; do
	[ -n "${2:-}" ] && [[ "$b" != *"$2"* ]] && continue
	echo "=== $b"
	bash "$b" || echo "(benchmark $b exited $?)"
done
