#!/usr/bin/env bash
# A trace without GPU events (tests/data/traces/cpu_only): every analysis
# run alone says its result is unavailable/undefined for the rank, launch
# included (it said "0 launches"); no note claims a count of zero.  summary
# skips the analyses that need GPU rows, one line each with the reason (and
# the skipped_analyses object in JSON), and runs the rest (annotations).
# Each analysis asked for alone exits 4 there, and 0 when another selected
# rank has GPU rows.
set -uo pipefail
in=$TESTDATA/traces/cpu_only
[ -d "$in" ] || { echo "no trace at $in"; exit 77; }
out=$("$DYNO" analyze summary "$in" -q 2>&1); rc=$?
fail=0
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; fail=1; }
if grep -q "0 launches" <<<"$out"; then echo "FAIL: launch says 0 launches"; fail=1; fi
for a in temporal kernels kernel-distribution overlap launch counters; do
	grep -Eq "^$a +no GPU events \(no row has a stream\)$" <<<"$out" ||
		{ echo "FAIL: summary does not say why $a was skipped"; fail=1; }
done
grep -Eq "^idle +no kernel, memcpy or memset on any stream$" <<<"$out" ||
	{ echo "FAIL: summary does not say why idle was skipped"; fail=1; }
if grep -q "Temporal breakdown" <<<"$out"; then echo "FAIL: summary ran temporal"; fail=1; fi
# no empty counters tables ("(no rows)"): listed as skipped instead
if grep -q "Queue length per stream" <<<"$out"; then echo "FAIL: summary printed counters' empty tables"; fail=1; fi
grep -q "^gloo:all_reduce " <<<"$out" || { echo "FAIL: summary did not run annotations"; fail=1; }
json=$("$DYNO" analyze summary "$in" -q --format json)
python3 -c '
import json, sys
t = json.loads(sys.argv[1])[-1]
assert t["name"] == "skipped_analyses", t["name"]
got = {r["analysis"]: r["reason"] for r in t["rows"]}
assert got["launch"] == "no GPU events (no row has a stream)", got
assert "annotations" not in got, got
' "$json" || { echo "FAIL: JSON has no skipped_analyses with the reasons"; fail=1; }
{ "$DYNO" analyze launch "$in" -q || true; } | grep -q "rank 34: no GPU events (no row has a stream): launch statistics unavailable" ||
	{ echo "FAIL: launch does not say unavailable"; fail=1; }
for a in temporal idle launch; do
	{ "$DYNO" analyze $a "$in" -q || true; } | grep -Eq "rank 34: .*(unavailable|undefined)" ||
		{ echo "FAIL: $a does not say unavailable"; fail=1; }
done
# one rule for the exit status: an analysis asked for that is undefined on
# every selected rank exits 4 (critical-path and cupti did; temporal, idle,
# kernels, overlap, launch, counters and op-kernels exited 0); defined on
# one rank of the selection, 0
for a in temporal idle kernels kernel-distribution overlap launch counters op-kernels critical-path cupti; do
	"$DYNO" analyze $a "$in" -q >/dev/null 2>&1; rc=$?
	[ $rc -eq 4 ] || { echo "FAIL: $a on a trace without GPU rows exits $rc, not 4"; fail=1; }
done
gpu=$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz
for a in temporal idle kernels overlap launch counters op-kernels; do
	"$DYNO" analyze $a "$gpu" "$in"/*.gz -q >/dev/null 2>&1; rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: $a on a GPU rank and a rank without GPU rows exits $rc, not 0"; fail=1; }
done
[ $fail -eq 0 ] && echo "no-GPU trace: unavailable in every analysis"
exit $fail
