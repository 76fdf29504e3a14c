#!/usr/bin/env bash
# analyze_patterns.sh - `dyno analyze patterns` end to end: the
# frequent_patterns.csv that --csv-dir writes is byte for byte HTA's
# frequent_patterns_<op>.csv for every operator table of the conformance
# set (HTA's rank, min_pattern_len 3); nothing to analyse (an operator no
# event names, a trace without GPU events) is a note and
# exit status 4; no --operator, a bad --min-len or --top-k is a usage error (2); summary
# does not run it.
set -uo pipefail
[ -d "$TESTDATA/conformance" ] || { echo "no $TESTDATA/conformance"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 compared=0
while IFS=$'\t' read -r name kind input; do
	[ "$kind" = file ] || [ "$kind" = dir ] || continue
	for ref in "$TESTDATA/conformance/$name"/frequent_patterns_*.csv; do
		[ -e "$ref" ] || continue
		op=$(basename "$ref" .csv)
		op=${op#frequent_patterns_}
		op=${op/_/::}
		rm -rf "$T/out" && mkdir "$T/out"
		"$DYNO" analyze patterns "$TESTDATA/traces/$input" --operator "$op" --csv-dir "$T/out" -q >/dev/null 2>"$T/err"
		rc=$?
		[ $rc -eq 0 ] && [ ! -s "$T/err" ] || { echo "FAIL $name $op: exit status $rc"; cat "$T/err"; fail=1; }
		cmp -s "$T/out/frequent_patterns.csv" "$ref" || { echo "FAIL $name $op: differs from HTA's"; fail=1; }
		compared=$((compared + 1))
	done
done < <(tail -n +2 "$TESTDATA/conformance/MANIFEST.tsv")
echo "compared $compared CSV files"
[ $compared -eq 9 ] || { echo "FAIL: compared $compared, want 9"; fail=1; }

A=$TESTDATA/traces/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz
"$DYNO" analyze patterns "$A" --operator aten::nothing --format csv >"$T/o1" 2>"$T/e1"; rc=$?
[ $rc -eq 4 ] && grep -q "no event name contains 'aten::nothing'" "$T/e1" && [ "$(wc -l <"$T/o1")" -eq 1 ] ||
	{ echo "FAIL: absent operator ($rc)"; cat "$T/e1"; fail=1; }
"$DYNO" analyze patterns "$TESTDATA/traces/cpu_only/"*.gz --operator aten::linear >"$T/o2" 2>&1; rc=$?
[ $rc -eq 4 ] && grep -q "no GPU events" "$T/o2" || { echo "FAIL: no GPU ($rc)"; cat "$T/o2"; fail=1; }
# no --operator: a usage error before any loading (a path that does not
# exist would be exit 1 if it were loaded first)
"$DYNO" analyze patterns "$T/not-loaded.json" >"$T/o3" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -qF "dyno analyze patterns: --operator NAME is required" "$T/o3" ||
	{ echo "FAIL: no --operator ($rc)"; cat "$T/o3"; fail=1; }
"$DYNO" analyze patterns "$A" --operator aten::linear --min-len 0 2>"$T/e4"; rc=$?
[ $rc -eq 2 ] && grep -qF "bad --min-len 0 (at least 1)" "$T/e4" || { echo "FAIL: --min-len 0 ($rc)"; cat "$T/e4"; fail=1; }
"$DYNO" analyze patterns "$A" --operator aten::linear --top-k -1 2>"$T/e5"; rc=$?
[ $rc -eq 2 ] && grep -qF "bad --top-k -1" "$T/e5" || { echo "FAIL: --top-k -1 ($rc)"; cat "$T/e5"; fail=1; }
"$DYNO" analyze patterns "$A" --operator "" 2>"$T/e6"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--operator: an empty name" "$T/e6" || { echo "FAIL: --operator '' ($rc)"; cat "$T/e6"; fail=1; }
"$DYNO" analyze patterns "$A" --operator aten::linear --patterns-rank 5 >"$T/o7" 2>&1; rc=$?
[ $rc -eq 4 ] && grep -q "rank 5 is not among the selected ranks" "$T/o7" || { echo "FAIL: --patterns-rank 5 ($rc)"; cat "$T/o7"; fail=1; }
# --patterns-trace: HTA's overlaid trace, gzip by name, valid JSON with the
# marks; an OUT in a missing directory is refused before loading (2)
"$DYNO" analyze patterns "$A" --operator aten::conv2d --patterns-trace "$T/ov.json.gz" -q >"$T/o9" 2>"$T/e9"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$T/e9" ] && [ "$(zcat "$T/ov.json.gz" | grep -o '"Patterns":{' | wc -l)" -gt 0 ] &&
	zcat "$T/ov.json.gz" | "$DYNO" json -q - || { echo "FAIL: --patterns-trace ($rc)"; cat "$T/e9"; fail=1; }
"$DYNO" analyze patterns "$A" --operator aten::conv2d --patterns-trace "$T/nodir/ov.json" 2>"$T/e10"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--patterns-trace $T/nodir/ov.json: directory $T/nodir" "$T/e10" ||
	{ echo "FAIL: --patterns-trace in a missing directory ($rc)"; cat "$T/e10"; fail=1; }
# summary has no operator name: it neither runs nor lists patterns
rm -rf "$T/out" && mkdir "$T/out"
"$DYNO" analyze summary "$A" --operator aten::linear --csv-dir "$T/out" -q >"$T/o8" 2>&1
[ -e "$T/out/temporal_breakdown.csv" ] && [ ! -e "$T/out/frequent_patterns.csv" ] && ! grep -q "^patterns" "$T/o8" ||
	{ echo "FAIL: summary ran patterns"; fail=1; }
exit $fail
