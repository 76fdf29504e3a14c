#!/usr/bin/env bash
# analyze_cli.sh - `dyno analyze` end to end on every shared trace: the CSVs
# it writes (--csv-dir) must be byte-identical to HTA's (op-kernels: the same
# lines, in our order of equal counts)
# (tests/data/conformance/<case>/), JSON output must be valid JSON, and bad
# input must give a clear message and the right exit status.
set -uo pipefail
[ -d "$TESTDATA/conformance" ] || { echo "no $TESTDATA/conformance"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 compared=0

# counters' summaries (pandas describe) and bandwidth series (running sums)
# end in float digits that depend on pandas' summation internals: there the
# same rows and texts, and numbers within 1e-12 relative; where HTA wrote
# an empty frame, our empty table (docs/analyze.md)
counters_near() { # counters_near OURS HTA
	case $(basename "$1") in
	queue_length_summary.csv | memory_bw_summary.csv | memory_bw_time_series_rank*.csv) ;;
	*) return 1 ;;
	esac
	# HTA's empty describe() frame (every bandwidth 0): our header, no rows
	if [ "$(cat "$2")" = "index,count,mean,std,min,25%,50%,75%,max" ]; then
		[ "$(wc -l <"$1")" -eq 1 ]
		return
	fi
	awk -F, 'NR == FNR { a[FNR] = $0; n = FNR; next }
		{ m = FNR; k = split(a[FNR], x, ","); if (k != NF) bad = 1
		  for (i = 1; i <= NF && !bad; i++) {
			if (x[i] == $i) continue
			if (x[i] !~ /^-?[0-9.e+-]+$/ || $i !~ /^-?[0-9.e+-]+$/) { bad = 1; break }
			d = x[i] - $i; if (d < 0) d = -d; s = x[i] < 0 ? -x[i] : x[i]
			if (d > 1e-12 * s && d > 1e-300) bad = 1 } }
		END { exit bad || m != n }' "$2" "$1"
}
# same_by_name OURS HTA: the same header names and rows, each cell equal
same_by_name() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
g, w = (list(csv.reader(open(f, newline=""))) for f in sys.argv[1:3])
pos = {c: i for i, c in enumerate(g[0])}
ok = len(g) == len(w) and sorted(g[0]) == sorted(w[0])
ok = ok and all(a[j] == b[pos[c]] for a, b in zip(w[1:], g[1:]) for j, c in enumerate(w[0]))
sys.exit(0 if ok else 1)
PY
}
while IFS=$'\t' read -r name kind input; do
	[ "$kind" = file ] || [ "$kind" = dir ] || continue
	rm -rf "$T/out" && mkdir "$T/out"
	"$DYNO" analyze summary "$TESTDATA/traces/$input" --csv-dir "$T/out" -q >"$T/stdout" 2>"$T/stderr"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$T/stderr" ]; then
		echo "FAIL $name: exit status $rc"; cat "$T/stderr"; fail=1; continue
	fi
	for f in "$T"/out/*.csv; do
		ref="$TESTDATA/conformance/$name/$(basename "$f")"
		[ -e "$ref" ] || continue
		compared=$((compared + 1))
		if [[ $(basename "$f") == aten_op_kernels_and_delay_rank* ]]; then
			# HTA orders rows of equal counts by an unstable sort
			# (docs/analyze.md): the same lines, byte for byte, in any order
			if ! cmp -s <(head -n 1 "$f"; tail -n +2 "$f" | LC_ALL=C sort) \
				<(head -n 1 "$ref"; tail -n +2 "$ref" | LC_ALL=C sort); then
				echo "FAIL $name: $(basename "$f") has other lines than HTA's"; fail=1
			fi
		elif [[ $(basename "$f") == cupti_counters_* ]]; then
			# HTA's counter columns come in Python set order
			# (docs/analyze.md): the same cells, byte for byte, by column name
			same_by_name "$f" "$ref" ||
				{ echo "FAIL $name: $(basename "$f") has other cells than HTA's"; fail=1; }
		elif ! cmp -s "$f" "$ref" && ! counters_near "$f" "$ref"; then
			echo "FAIL $name: $(basename "$f") differs from HTA's"; diff "$f" "$ref" | head -5; fail=1
		fi
	done
	# the JSON rendering parses
	"$DYNO" analyze summary "$TESTDATA/traces/$input" --format json -q >"$T/j.json" &&
		"$DYNO" json -q "$T/j.json" || { echo "FAIL $name: --format json"; fail=1; }
done < <(tail -n +2 "$TESTDATA/conformance/MANIFEST.tsv")
echo "compared $compared CSV files"
[ $compared -ge 60 ] || { echo "FAIL: too few CSVs compared"; fail=1; }

# summary --format csv: the tables one after another, a blank line between
# them; each block is byte for byte one of the --csv-dir files
rm -rf "$T/sc" && mkdir "$T/sc"
"$DYNO" analyze summary "$TESTDATA/traces/trace_filter" --format csv --csv-dir "$T/sc" -q >"$T/sc.csv"
awk -v d="$T/sc" 'BEGIN { n = 1 } /^$/ { n++; next } { print > (d "/block" n) }' "$T/sc.csv"
nblocks=0
for b in "$T"/sc/block*; do
	nblocks=$((nblocks + 1)) match=
	for f in "$T"/sc/*.csv; do cmp -s "$b" "$f" && match=$f; done
	[ -n "$match" ] || { echo "FAIL: summary csv block $(basename "$b") is no --csv-dir file"; head -2 "$b"; fail=1; }
done
[ "$nblocks" -ge 8 ] || { echo "FAIL: summary csv has $nblocks blank-line separated tables"; fail=1; }

# a table is readable text with the analysis title
"$DYNO" analyze temporal "$TESTDATA/traces/trace_filter" >"$T/t.txt" 2>/dev/null
grep -q "^Temporal breakdown" "$T/t.txt" || { echo "FAIL: table output"; fail=1; }
# no GPU: a note on stderr (csv), no zero row
"$DYNO" analyze temporal "$TESTDATA/traces/cpu_only/"*.gz --format csv >"$T/c.csv" 2>"$T/c.err"
[ "$(wc -l <"$T/c.csv")" -eq 1 ] && grep -q "unavailable" "$T/c.err" || { echo "FAIL: cpu_only"; fail=1; }

# --threads never changes the output (analyses of every rank run in
# parallel and are put together in rank order); --timings reports the
# phases on stderr and leaves stdout alone
D2="$TESTDATA/traces/trace_filter"
"$DYNO" analyze summary "$D2" -q --threads 1 >"$T/j1" 2>&1 || { echo "FAIL: summary --threads 1"; fail=1; }
for j in 2 3 0; do
	"$DYNO" analyze summary "$D2" -q --threads $j >"$T/jn" 2>&1 || { echo "FAIL: summary --threads $j"; fail=1; }
	cmp -s "$T/j1" "$T/jn" || { echo "FAIL: summary --threads $j differs from --threads 1"; fail=1; }
done
# huge pages are an allocation policy only (--small-pages turns them off)
"$DYNO" analyze summary "$D2" -q --threads 1 --small-pages >"$T/jsp" 2>&1 || { echo "FAIL: --small-pages"; fail=1; }
cmp -s "$T/j1" "$T/jsp" || { echo "FAIL: --small-pages changed the output"; fail=1; }
"$DYNO" analyze summary "$D2" -q --threads 2 --timings >"$T/jt" 2>"$T/timings" || { echo "FAIL: --timings"; fail=1; }
cmp -s "$T/j1" "$T/jt" || { echo "FAIL: --timings changed stdout"; fail=1; }
for want in "timings (wall seconds):" "rank 0: " "rank 1: " "set finish" "analyses " "launch, rank 1: " "total "; do
	grep -qF "$want" "$T/timings" || { echo "FAIL: --timings output lacks '$want'"; cat "$T/timings"; fail=1; }
done
# the default thread count is the cores this process may run on (its
# affinity, as nproc counts), not the machine's: pinned to one core, one
# thread (a 16-core host pinned to 2 had started 16 gzip parsers; a CPU
# quota lowers it too, which nproc does not count: tests/unit)
if command -v taskset >/dev/null; then
	taskset -c "$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')" \
		"$DYNO" analyze summary "$D2" -q --timings >/dev/null 2>"$T/pinned" || { echo "FAIL: pinned summary"; fail=1; }
	grep -q "^  analyses .* (1 thread)$" "$T/pinned" || { echo "FAIL: pinned to one core, not one thread"; cat "$T/pinned"; fail=1; }
fi

# bad input: clear messages, exit 1 (load) or 2 (usage)
"$DYNO" analyze temporal /nonexistent.json 2>"$T/e1"; rc=$?
[ $rc -eq 1 ] && grep -q "/nonexistent.json: No such file" "$T/e1" || { echo "FAIL: missing file ($rc)"; fail=1; }
"$DYNO" analyze bogus "$TESTDATA/traces/trace_filter" 2>"$T/e2"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown analysis" "$T/e2" || { echo "FAIL: unknown analysis ($rc)"; fail=1; }
"$DYNO" analyze temporal "$TESTDATA/traces/trace_filter" --format xml 2>"$T/e3"; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: bad format ($rc)"; fail=1; }
"$DYNO" analyze kernels "$TESTDATA/traces/trace_filter" --top 3 2>"$T/e7"; rc=$?
[ $rc -eq 2 ] && grep -qF "unexpected argument '3': --top takes no value" "$T/e7" || { echo "FAIL: --top 3 ($rc)"; cat "$T/e7"; fail=1; }
"$DYNO" analyze idle "$TESTDATA/traces/trace_filter" --ranks 0,7 2>"$T/e6"; rc=$?
[ $rc -eq 2 ] && grep -q "rank 7 is not in" "$T/e6" || { echo "FAIL: --ranks with a missing rank ($rc)"; fail=1; }
"$DYNO" analyze idle "$TESTDATA/traces/trace_filter" --ranks 1 --format csv >"$T/r1.csv" 2>/dev/null
[ "$(cut -d, -f1 "$T/r1.csv" | sort -u | tr '\n' ' ')" = "1 rank " ] || { echo "FAIL: --ranks 1"; cat "$T/r1.csv"; fail=1; }
printf '{"traceEvents": [{"ph": "X", "cat": "kernel"' >"$T/cut.json"
"$DYNO" analyze temporal "$T/cut.json" 2>"$T/e4"; rc=$?
[ $rc -eq 1 ] && grep -q "cut.json: byte " "$T/e4" || { echo "FAIL: truncated json ($rc)"; cat "$T/e4"; fail=1; }
# --csv-dir: a missing directory is named as missing, a file as not a directory
"$DYNO" analyze temporal "$TESTDATA/traces/trace_filter" --csv-dir "$T/nope" 2>"$T/e8"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--csv-dir $T/nope: no such directory (create it first)" "$T/e8" ||
	{ echo "FAIL: --csv-dir missing ($rc)"; cat "$T/e8"; fail=1; }
: >"$T/afile"
"$DYNO" analyze temporal "$TESTDATA/traces/trace_filter" --csv-dir "$T/afile" 2>"$T/e9"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--csv-dir $T/afile: not a directory" "$T/e9" ||
	{ echo "FAIL: --csv-dir on a file ($rc)"; cat "$T/e9"; fail=1; }
# truncated gzip with events: analysed, with a warning naming the file, and
# exit 3 (partial results; tests/integration/analyze_partial.sh has the rest)
src="$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
head -c 700000 "$src" >"$T/rank-5.json.gz"
"$DYNO" analyze temporal "$T/rank-5.json.gz" --format csv >"$T/o5" 2>"$T/e5"; rc=$?
[ $rc -eq 3 ] && grep -q "gzip stream truncated" "$T/e5" && grep -q "^0," "$T/o5" || { echo "FAIL: truncated gzip ($rc)"; cat "$T/e5"; fail=1; }
# critical-path --write-trace: HTA's overlay (gzip by name), the note
# saying what was written; a directory that does not exist is a usage error
# before any load (tests/unit/test_analyze_critical_path.c compares the file
# with HTA's own overlay)
sa="$TESTDATA/traces/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"
"$DYNO" analyze critical-path "$sa" --write-trace "$T/cp.json.gz" >"$T/cp.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -qF "written to $T/cp.json.gz (624 events marked, 192 flows)" "$T/cp.out" &&
	[ "$(gzip -dc "$T/cp.json.gz" | grep -c '"cat":"critical_path"')" -eq 384 ] ||
	{ echo "FAIL: critical-path --write-trace ($rc)"; cat "$T/cp.out"; fail=1; }
"$DYNO" analyze critical-path "$sa" --write-trace "$T/nope/cp.json" 2>"$T/e10"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--write-trace $T/nope/cp.json: directory $T/nope" "$T/e10" && [ ! -e "$T/nope" ] ||
	{ echo "FAIL: critical-path --write-trace into a missing directory ($rc)"; cat "$T/e10"; fail=1; }
exit $fail
