#!/usr/bin/env bash
# `make bench`: run every benchmark program in BUILD/bench and every
# bench/*.sh script (except this one).  Benchmarks print figures and ratios
# against baselines measured in the same run; they never fail on speed.
set -uo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
for b in "$O"/bench/*; do
	[ -x "$b" ] || continue
	echo "### $(basename "$b")"
	"$b"
	echo
done
for s in bench/*.sh; do
	[ "$(basename "$s")" = run.sh ] && continue
	echo "### $(basename "$s" .sh)"
	bash "$s" "$O"
	echo
done
