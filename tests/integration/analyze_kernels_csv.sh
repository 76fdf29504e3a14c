#!/usr/bin/env bash
# `dyno analyze kernels|overlap --format csv` against HTA's own CSV files,
# byte for byte, on every trace of tests/data/conformance/MANIFEST.tsv:
# kernel_type_breakdown.csv, kernel_metrics.csv (HTA defaults),
# kernel_metrics_all.csv (num_kernels=10**12, duration_ratio=1.0) and
# comm_comp_overlap.csv.  Then --csv-dir, the table and JSON formats, and
# bad options.
set -uo pipefail
M=$TESTDATA/conformance/MANIFEST.tsv
[ -r "$M" ] || { echo "no conformance data at $TESTDATA"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
while IFS=$'\t' read -r name kind input; do
	[ "$kind" = file ] || [ "$kind" = dir ] || continue
	in=$TESTDATA/traces/$input
	ref=$TESTDATA/conformance/$name
	check() { # file analysis options...
		local f=$1; shift
		[ -e "$ref/$f" ] || return 0
		"$DYNO" analyze "$@" "$in" --format csv -q >"$tmp/out.csv" 2>"$tmp/err"
		local rc=$?
		# 4: undefined on every rank (no GPU rows), HTA's empty frame
		# written all the same (docs/analyze.md, exit status)
		if { [ $rc -ne 0 ] && [ $rc -ne 4 ]; } || [ -s "$tmp/err" ]; then
			echo "FAIL $name: dyno analyze $* exited $rc:"; head -3 "$tmp/err"; fail=1; return
		fi
		if ! cmp -s "$tmp/out.csv" "$ref/$f"; then
			echo "FAIL $name/$f differs:"; diff "$tmp/out.csv" "$ref/$f" | head -5 | cut -c1-200; fail=1
		fi
		n=$((n + 1))
	}
	check kernel_type_breakdown.csv kernels
	check kernel_metrics.csv kernels --top
	check kernel_metrics_all.csv kernels --top --num-kernels 1000000000000 --duration-ratio 1
	check kernel_metrics_all.csv kernels --top --all-kernels
	check comm_comp_overlap.csv overlap
done < <(tail -n +2 "$M")
echo "$n CSV files compared"
[ $n -ge 100 ] || { echo "FAIL: only $n files compared"; fail=1; }

# --csv-dir writes both kernel tables whatever is shown
d=$TESTDATA/traces/trace_filter
"$DYNO" analyze kernels "$d" -q --csv-dir "$tmp" >/dev/null || { echo "FAIL: --csv-dir"; fail=1; }
cmp -s "$tmp/kernel_metrics.csv" "$TESTDATA/conformance/trace_filter__dir_2ranks/kernel_metrics.csv" ||
	{ echo "FAIL: --csv-dir kernel_metrics.csv"; fail=1; }
cmp -s "$tmp/kernel_type_breakdown.csv" "$TESTDATA/conformance/trace_filter__dir_2ranks/kernel_type_breakdown.csv" ||
	{ echo "FAIL: --csv-dir kernel_type_breakdown.csv"; fail=1; }

# --ranks: one rank of the 2-rank directory gives HTA's single-file results
# (durations do not depend on the alignment)
"$DYNO" analyze kernels "$d" --ranks 1 --top -q --format csv |
	cmp -s - "$TESTDATA/conformance/trace_filter__sampled_rank-1/kernel_metrics.csv" ||
	{ echo "FAIL: --ranks 1 kernel_metrics"; fail=1; }
"$DYNO" analyze kernels "$d" --ranks 0 -q --format csv |
	cmp -s - "$TESTDATA/conformance/trace_filter__sampled_rank-0/kernel_type_breakdown.csv" ||
	{ echo "FAIL: --ranks 0 kernel_type_breakdown"; fail=1; }
"$DYNO" analyze overlap "$d" --ranks 1 -q --format csv |
	cmp -s - "$TESTDATA/conformance/trace_filter__sampled_rank-1/comm_comp_overlap.csv" ||
	{ echo "FAIL: --ranks 1 overlap"; fail=1; }

# the terminal table and JSON carry the same numbers
"$DYNO" analyze overlap "$d" -q >"$tmp/t.txt" || fail=1
grep -Eq '^ +1 +20\.05$' "$tmp/t.txt" || { echo "FAIL: table"; cat "$tmp/t.txt"; fail=1; }
"$DYNO" analyze kernel-distribution "$d" --format json -q >"$tmp/j.json" || fail=1
"$DYNO" json "$tmp/j.json" >/dev/null || { echo "FAIL: JSON output does not parse"; fail=1; }
grep -q '"kernel_rank_spread"' "$tmp/j.json" || { echo "FAIL: no spread table"; fail=1; }
grep -q '"mean (us)":39065.4' "$tmp/j.json" || { echo "FAIL: no NCCL mean"; fail=1; }

# a rank without communication: empty value, and a note saying why
"$DYNO" analyze overlap "$TESTDATA/traces/ns_resolution_trace" 2>&1 | grep -q 'no communication kernels' ||
	{ echo "FAIL: NaN note"; fail=1; }

# bad options are refused with a message, not a crash
for bad in "--duration-ratio 1.5" "--num-kernels 0" "--num-kernels x"; do
	"$DYNO" analyze kernels "$d" $bad >"$tmp/o" 2>"$tmp/e"
	rc=$?
	[ $rc -eq 2 ] && [ -s "$tmp/e" ] || { echo "FAIL: '$bad' gave exit $rc"; cat "$tmp/e"; fail=1; }
done
exit $fail
