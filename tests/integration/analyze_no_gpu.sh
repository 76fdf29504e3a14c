#!/usr/bin/env bash
# A trace without GPU events (tests/data/traces/cpu_only): every analysis
# says its result is unavailable/undefined for the rank, launch included
# (it said "0 launches"); no note claims a count of zero.
set -uo pipefail
in=$TESTDATA/traces/cpu_only
[ -d "$in" ] || { echo "no trace at $in"; exit 77; }
out=$("$DYNO" analyze summary "$in" -q 2>&1); rc=$?
fail=0
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; fail=1; }
if grep -q "0 launches" <<<"$out"; then echo "FAIL: launch says 0 launches"; fail=1; fi
grep -q "rank 34: no GPU events (no row has a stream): launch statistics unavailable" <<<"$out" ||
	{ echo "FAIL: launch does not say unavailable"; fail=1; }
for a in temporal idle launch; do
	"$DYNO" analyze $a "$in" -q | grep -Eq "rank 34: .*(unavailable|undefined)" ||
		{ echo "FAIL: $a does not say unavailable"; fail=1; }
done
[ $fail -eq 0 ] && echo "no-GPU trace: unavailable in every analysis"
exit $fail
