#!/usr/bin/env bash
# `dyno analyze cupti` end to end: on the CUPTI range-profiler trace,
# --csv-dir writes cupti_counters_0.csv with HTA's rows (HTA's file, its
# counter columns reordered by name: HTA's order is Python set order) and
# exit 0; on a trace without CUPTI counters, the note and exit 4, and
# summary skips it with the reason (terminal and JSON).
set -uo pipefail
in=$TESTDATA/traces/cupti_profiler
other=$TESTDATA/traces/critical_path/alexnet
want=$TESTDATA/conformance/cupti_profiler/cupti_counters_0.csv
[ -d "$in" ] && [ -d "$other" ] && [ -f "$want" ] || { echo "no traces"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$DYNO" analyze cupti "$in" -q --csv-dir "$tmp"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: cupti exit $rc on the cupti trace"; fail=1; }
python3 - "$want" "$tmp/cupti_counters_0.csv" <<'PY' || { echo "FAIL: cupti_counters_0.csv differs from HTA's"; fail=1; }
import csv, sys
w = list(csv.reader(open(sys.argv[1])))
g = list(csv.reader(open(sys.argv[2])))
assert len(w) == len(g) == 78, (len(w), len(g))
assert sorted(w[0]) == sorted(g[0]), set(w[0]) ^ set(g[0])
pos = {c: i for i, c in enumerate(g[0])}
for a, b in zip(w[1:], g[1:]):
    for j, c in enumerate(w[0]):
        assert a[j] == b[pos[c]], (c, a[j][:60], b[pos[c]][:60])
PY
out=$("$DYNO" analyze cupti "$other" -q); rc=$?
[ $rc -eq 4 ] || { echo "FAIL: cupti exit $rc without counters (want 4)"; fail=1; }
grep -q "rank 0: no CUPTI counters (no cuda_profiler_range events" <<<"$out" ||
	{ echo "FAIL: no note without counters: $out"; fail=1; }
"$DYNO" analyze summary "$other" -q | grep -Eq "^cupti +no CUPTI counters \(no cuda_profiler_range events\)$" ||
	{ echo "FAIL: summary does not say why cupti was skipped"; fail=1; }
"$DYNO" analyze summary "$in" -q --format json | python3 -c '
import json, sys
t = json.load(sys.stdin)
names = [x["name"] for x in t]
assert "cupti_counters_0" in names, names
assert all(r["analysis"] != "cupti" for r in t[-1]["rows"]), t[-1]
' || { echo "FAIL: summary on the cupti trace has no cupti table"; fail=1; }
[ $fail -eq 0 ] && echo "cupti: HTA's rows, exit 4 and a note without counters, summary skip reason"
exit $fail
