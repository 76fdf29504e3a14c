#!/usr/bin/env bash
# stdout and stderr on one pipe (`dyno analyze ... 2>&1 | less`): every
# stderr line (load warnings, the rank listing, CSV notes) comes before the
# results and no line mixes both; they used to land inside a result line
# ("...  9loaded 2 rank(s) in 0.078 s").  The merged output must be exactly
# the stderr lines followed by the stdout lines of separate runs.
set -uo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
norm() { sed -E 's/ in [0-9.]+ s$/ in T s/' "$1"; }
for d in trace_filter ns_resolution_trace; do
	in=$TESTDATA/traces/$d
	[ -d "$in" ] || { echo "no traces at $in"; exit 77; }
	for f in table csv json; do
		"$DYNO" analyze summary "$in" -f $f 2>&1 | cat >"$tmp/both"
		"$DYNO" analyze summary "$in" -f $f 2>"$tmp/err" >"$tmp/out"
		cat <(norm "$tmp/err") "$tmp/out" >"$tmp/want"
		if ! cmp -s <(norm "$tmp/both") "$tmp/want"; then
			echo "FAIL $d -f $f: merged output is not stderr then stdout:"
			diff <(norm "$tmp/both") "$tmp/want" | head -6 | cut -c1-200
			fail=1
		fi
		n=$((n + 1))
	done
done
[ $fail -eq 0 ] && echo "$n merged outputs: stderr lines first, no line mixed"
exit $fail
