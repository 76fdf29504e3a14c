#!/usr/bin/env bash
# analyze_golden.sh - every output of `dyno analyze` (each analysis in csv,
# json and table form, summary's --csv-dir files, the options that change
# tables) on every test trace is byte for byte the one checked in under
# tests/data/analyze-golden/ (written by its make.sh before the analysis
# table refactor).  A deliberate change of output regenerates them.
set -uo pipefail
G=$TESTDATA/analyze-golden
. "$G/cases.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 n=0
while IFS=$'\t' read -r out input args; do
	mkdir -p "$T/$(dirname "$out")"
	ins=()
	for i in $input; do ins+=("$TESTDATA/traces/$i"); done
	# shellcheck disable=SC2086
	if [[ $out == *csvdir ]]; then
		mkdir -p "$T/$out"
		"$DYNO" analyze $args "${ins[@]}" -q --csv-dir "$T/$out" >/dev/null 2>&1 || true
		diff -r "$G/$out" "$T/$out" >"$T/d" 2>&1 || { echo "FAIL $out ($args $input)"; head -5 "$T/d"; fail=1; }
	else
		"$DYNO" analyze $args "${ins[@]}" -q >"$T/$out" 2>/dev/null || echo "exit $?" >>"$T/$out"
		cmp -s "$G/$out" "$T/$out" || { echo "FAIL $out ($args $input)"; diff "$G/$out" "$T/$out" | head -5; fail=1; }
	fi
	n=$((n + 1))
done < <(golden_cases "$TESTDATA/conformance/MANIFEST.tsv")
echo "compared $n outputs"
[ "$n" -ge 400 ] || { echo "FAIL: only $n outputs compared"; fail=1; }
exit $fail
