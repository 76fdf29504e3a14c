#!/usr/bin/env bash
# Run every test: the unit test binary, then each tests/integration/*.sh.
# Usage: tests/run.sh BUILD_DIR [FILTER]
# Prints one line per test and a closing "N passed, N failed"; exits 1 on
# any failure.  Integration scripts get DYNOLOG, DYNO, BUILD and TESTDATA in
# the environment and pass by exiting 0 (77 = skipped, with a reason).
set -uo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
FILTER=${2:-}
export BUILD=$O DYNOLOG=$PWD/$O/dynolog DYNO=$PWD/$O/dyno
export TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
export DYNO_TESTDATA=$TESTDATA
passed=0 failed=0 skipped=0

out=$(mktemp)
if [ -n "$FILTER" ]; then "$O/unit-tests" "$FILTER" | tee "$out"; else "$O/unit-tests" | tee "$out"; fi
read -r up uf < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$out" | tail -n 1)
if [ -z "${up:-}" ]; then
	echo "FAIL unit-tests (runner crashed)"; failed=$((failed + 1))
else
	passed=$((passed + up)); failed=$((failed + uf))
fi
rm -f "$out"

for t in tests/integration/*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]]; then continue; fi
	log=$(mktemp)
	timeout 600 bash "$t" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok   $name"; passed=$((passed + 1))
	elif [ $rc -eq 77 ]; then
		echo "skip $name: $(tail -n 1 "$log")"; skipped=$((skipped + 1))
	else
		echo "FAIL $name (exit $rc)"; sed 's/^/    /' "$log" | tail -n 40; failed=$((failed + 1))
	fi
	rm -f "$log"
done

if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
