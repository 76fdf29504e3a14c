#!/usr/bin/env bash
# A damaged trace (a real one cut short, as an interrupted copy leaves it):
# the results are partial and every output says so: the table title, a
# "partial" field in JSON, a stderr line for CSV (HTA's format, unchanged)
# even with -q, and exit status 3 (docs/analyze.md).  A complete trace
# stays 0 with no mark.
set -uo pipefail
src=$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz
[ -r "$src" ] || { echo "no trace at $src"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
head -c 100000 "$src" >"$tmp/t.json.gz"
bad() { echo "FAIL: $*"; fail=1; }

for a in temporal summary launch; do
	"$DYNO" analyze $a "$tmp/t.json.gz" -q >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 3 ] || bad "$a table: exit $rc, want 3"
	n=$(grep -c '\[PARTIAL: damaged trace, rank 0: .*truncated' "$tmp/out")
	[ "$n" -ge 1 ] || bad "$a table: no PARTIAL title: $(head -2 "$tmp/out")"
done

"$DYNO" analyze temporal "$tmp/t.json.gz" -q -f json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] || bad "json: exit $rc, want 3"
python3 - "$tmp/out" <<'PY' || bad "json: no partial field"
import json, sys
t = json.load(open(sys.argv[1]))
assert t and all(x.get("partial") is True and "truncated" in x["partial_reason"] for x in t), t
PY

"$DYNO" analyze temporal "$tmp/t.json.gz" -q -f csv >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] || bad "csv: exit $rc, want 3"
head -1 "$tmp/out" | grep -q '^rank,idle_time' || bad "csv: stdout is not HTA's CSV: $(head -1 "$tmp/out")"
grep -qi 'partial' "$tmp/out" && bad "csv: the mark is in the CSV"
grep -q '^dyno analyze: PARTIAL results: damaged trace, rank 0: .*truncated' "$tmp/err" ||
	bad "csv -q: nothing on stderr: $(cat "$tmp/err")"

# --csv-dir: files written, exit 3
mkdir "$tmp/d"
"$DYNO" analyze temporal "$tmp/t.json.gz" -q --csv-dir "$tmp/d" >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] && [ -s "$tmp/d/temporal_breakdown.csv" ] || bad "csv-dir: exit $rc or no file"

# the complete trace: 0, no mark
"$DYNO" analyze temporal "$src" -q -f json >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] || bad "complete trace: exit $rc"
grep -q partial "$tmp/out" && bad "complete trace marked partial"
[ $fail -eq 0 ] && echo "partial results marked in table, JSON, CSV stderr; exit 3"
exit $fail
