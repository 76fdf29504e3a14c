#!/usr/bin/env bash
# dyno report with the row filters of dyno analyze (--ranks, --iterations,
# --time-range): the page says what was selected, covers only those ranks,
# and its insights are exactly `dyno analyze insights` with the same
# filters (every rule's measured text and every finding's evidence is on
# the page, HTML-escaped); the unfiltered numbers are not.  Bad filters are
# exit 2, a rank not in the inputs 2, a selection that keeps nothing 4, and
# none of them writes a file.
set -uo pipefail
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
[ -d "$TESTDATA/traces/trace_filter" ] || { echo "no test traces in $TESTDATA"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# same: the page PAGE holds the rules' measured texts and the findings'
# evidence of `dyno analyze insights INPUT FILTERS...`; differs: that
# text of the unfiltered run is not on it (the filter changed it)
same() {
	local page=$1 input=$2 rule=$3
	shift 3
	"$DYNO" analyze insights "$input" -q -f json "$@" >"$tmp/f.json" || { bad "analyze insights $*"; return; }
	"$DYNO" analyze insights "$input" -q -f json >"$tmp/all.json" || { bad "analyze insights"; return; }
	python3 - "$page" "$tmp/f.json" "$tmp/all.json" "$rule" <<'EOF' || fail=1
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
def esc(s):  # as src/report/html.c escapes
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;")):
        s = s.replace(a, b)
    return s
def tables(p):
    return {t["name"]: t for t in json.load(open(p))}
f, a, rule = tables(sys.argv[2]), tables(sys.argv[3]), sys.argv[4]
ok = True
for r in f["insight_rules"]["rows"]:
    if esc(r["measured"]) not in page:
        print(f"FAIL: {sys.argv[1]}: the rule {r['rule']} does not say what analyze says: {r['measured']}")
        ok = False
for r in f["insights"]["rows"]:
    if esc(r["evidence"]) not in page:
        print(f"FAIL: {sys.argv[1]}: finding {r['rule']} rank {r['rank']} missing: {r['evidence'][:120]}")
        ok = False
m = {r["rule"]: r["measured"] for r in f["insight_rules"]["rows"]}
u = {r["rule"]: r["measured"] for r in a["insight_rules"]["rows"]}
if m[rule] == u[rule] or esc(u[rule]) in page:
    print(f"FAIL: {sys.argv[1]}: {rule} is the unfiltered one: {u[rule]}")
    ok = False
sys.exit(0 if ok else 1)
EOF
}

# --ranks: one rank of two
"$DYNO" report "$TESTDATA/traces/trace_filter" --ranks 1 -o "$tmp/r1.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || bad "--ranks 1: exit $rc: $(cat "$tmp/err")"
grep -q 'Selection: ranks 1\.' "$tmp/r1.html" || bad "--ranks 1: the page does not say so"
grep -q ': 1 rank, ' "$tmp/r1.html" || bad "--ranks 1: the header does not count one rank"
grep -q 'wrote .*r1.html.*, 1 rank$' "$tmp/err" || bad "--ranks 1: stderr: $(cat "$tmp/err")"
grep -q '>rank 0<' "$tmp/r1.html" && bad "--ranks 1: rank 0 is on the page"
same "$tmp/r1.html" "$TESTDATA/traces/trace_filter" load-imbalance --ranks 1

# --iterations: two steps of six
control="$TESTDATA/traces/trace_diff/control/control.json.gz"
"$DYNO" report "$control" --iterations 1010-1011 -o "$tmp/it.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || bad "--iterations: exit $rc: $(cat "$tmp/err")"
grep -q 'Selection: iterations 1010-1011\.' "$tmp/it.html" || bad "--iterations: the page does not say so"
same "$tmp/it.html" "$control" host-gap --iterations 1010-1011

# --time-range, with --ranks
"$DYNO" report "$TESTDATA/traces/trace_filter" --ranks 0 --time-range 0:200000 -o "$tmp/tr.html" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "--time-range: exit $rc: $(cat "$tmp/err")"
grep -q 'Selection: ranks 0; events starting in \[0:200000) us\.' "$tmp/tr.html" || bad "--time-range: not said"
same "$tmp/tr.html" "$TESTDATA/traces/trace_filter" exposed-comm --ranks 0 --time-range 0:200000

# errors: exit status, message, no file
err() { # err WANT_RC MESSAGE_RE ARGS...
	local want=$1 re=$2
	shift 2
	"$DYNO" report "$@" -o "$tmp/bad.html" 2>"$tmp/err"; rc=$?
	[ $rc -eq "$want" ] && grep -Eq -- "$re" "$tmp/err" && [ ! -e "$tmp/bad.html" ] ||
		bad "report $*: exit $rc (want $want), $(cat "$tmp/err")"
}
err 2 "bad --iterations 'x'" "$control" --iterations x
err 2 "bad --time-range '5:1'" "$control" --time-range 5:1
err 2 "bad --ranks '1,a'" "$control" --ranks 1,a
err 2 "--ranks: rank 7 is not in the inputs \(ranks: 0 1\)" "$TESTDATA/traces/trace_filter" --ranks 7
err 4 "the selection keeps no event: --iterations 99-99" "$control" --iterations 99
ls "$tmp" | grep -q '\.tmp\.' && bad "a temporary file was left behind"
[ $fail -eq 0 ] && echo "--ranks, --iterations, --time-range: the page and its insights are dyno analyze's with them"
exit $fail
