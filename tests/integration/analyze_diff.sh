#!/usr/bin/env bash
# analyze_diff.sh - `dyno analyze diff CONTROL TEST` end to end: on the
# conformance manifest's diff cases the CSVs it writes (--csv-dir) are
# byte-identical to HTA's compare_traces_*.csv and ops_diff.csv holds
# ops_diff.json's names; the options pick the table shown; a rank missing
# on one side, a wrong number of inputs and a bad --device give a clear
# message and exit status 2; an iteration a side lacks is a note, no rows.
set -uo pipefail
[ -d "$TESTDATA/conformance" ] || { echo "no $TESTDATA/conformance"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 compared=0
tr=$TESTDATA/traces

while IFS=$'\t' read -r name kind input; do
	[ "$kind" = diff ] || continue
	read -r control test <<<"$input"
	rm -rf "$T/out" && mkdir "$T/out"
	"$DYNO" analyze diff "$tr/$control" "$tr/$test" --csv-dir "$T/out" -q >/dev/null 2>"$T/stderr"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$T/stderr" ]; then
		echo "FAIL $name: exit status $rc"; cat "$T/stderr"; fail=1; continue
	fi
	for ref in "$TESTDATA/conformance/$name"/compare_traces_*.csv; do
		compared=$((compared + 1))
		if ! cmp -s "$ref" "$T/out/$(basename "$ref")"; then
			echo "FAIL $name: $(basename "$ref") differs from HTA's"; fail=1
		fi
	done
	# ops_diff.csv: as many names per category as ops_diff.json (the unit
	# test analyze_diff_conformance compares the names)
	for c in added deleted increased decreased unchanged; do
		a=$(grep -c "^$c," "$T/out/ops_diff.csv")
		b=$(awk -v c="\"$c\":" '$1 == c { on = ($2 != "[]," && $2 != "[]"); next }
			on && /^ *\]/ { on = 0 } on { n++ } END { print n + 0 }' \
			"$TESTDATA/conformance/$name/ops_diff.json")
		[ "$a" = "$b" ] || { echo "FAIL $name: ops_diff $c: $a names, HTA $b"; fail=1; }
	done
done < <(tail -n +2 "$TESTDATA/conformance/MANIFEST.tsv")
echo "compared $compared CSV files"
[ $compared -eq 12 ] || { echo "FAIL: expected 12 CSVs compared"; fail=1; }

c=$tr/trace_diff/control t=$tr/trace_diff/test
# the default shows compare_traces_all then ops_diff; the options pick
# another compare table, byte for byte the --csv-dir file
check_shown() { # FILE ARGS...
	local f=$1; shift
	"$DYNO" analyze diff "$c" "$t" "$@" --format csv -q >"$T/shown.csv" 2>/dev/null
	awk 'NR == 1, /^$/ { if ($0 != "") print }' "$T/shown.csv" >"$T/first.csv"
	cmp -s "$T/first.csv" "$TESTDATA/conformance/diff__trace_diff/$f" ||
		{ echo "FAIL: diff $* does not show $f"; fail=1; }
}
check_shown compare_traces_all.csv
check_shown compare_traces_gpu.csv --device gpu
check_shown compare_traces_cpu_short.csv --device cpu --short-names
grep -q '^added,CompiledFunction$' "$T/shown.csv" || { echo "FAIL: ops_diff not shown"; fail=1; }

expect() { # STATUS MESSAGE ARGS...
	local want=$1 msg=$2; shift 2
	"$DYNO" analyze "$@" >"$T/o" 2>"$T/e"
	local rc=$?
	if [ $rc -ne "$want" ] || ! grep -q -- "$msg" "$T/e" "$T/o"; then
		echo "FAIL: dyno analyze $*: exit $rc (want $want), no '$msg'"; cat "$T/e"; fail=1
	fi
}
# control is rank 3, test rank 1: each side's first rank by default; a
# rank one side lacks is refused
expect 0 'control: rank 3, ProfilerStep#1009' diff "$c" "$t"
expect 0 'test: rank 1, ProfilerStep#1009' diff "$c" "$t"
expect 2 'rank 3 is not in .*test' diff "$c" "$t" --ranks 3
expect 2 'compares one rank of each side' diff "$c" "$t" --ranks 1,3
expect 2 'expected CONTROL and TEST' diff "$c"
expect 2 "bad --device 'tpu'" diff "$c" "$t" --device tpu
expect 1 'no/such' diff "$c" "$T/no/such"
# an iteration: the one asked for on both sides, or a note and no rows
expect 0 'test: rank 1, ProfilerStep#1012' diff "$c" "$t" --iteration 1012
expect 0 'no ProfilerStep#7 (it has 6 iterations, 1009..1014): trace diff unavailable' \
	diff "$c" "$t" --iteration 7 --format json
"$DYNO" analyze diff "$c" "$t" --iteration 7 --format csv -q 2>/dev/null | grep -q ',=$\|,+$\|,-$' &&
	{ echo "FAIL: rows for a missing iteration"; fail=1; }
# the same trace on both sides: nothing changed
"$DYNO" analyze diff "$c" "$c" --format csv -q 2>/dev/null | grep -v '^$' | cut -d, -f1 | sort -u >"$T/cats"
grep -q '^added$\|^deleted$\|^increased$\|^decreased$' "$T/cats" && { echo "FAIL: self diff changed"; fail=1; }
# summary does not run the diff
"$DYNO" analyze summary "$c" --format json -q | grep -q compare_traces && { echo "FAIL: diff in summary"; fail=1; }
exit $fail
