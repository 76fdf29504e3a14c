#!/usr/bin/env bash
# dyno report on bad input: a trace without GPU events still gets a report
# (the CPU side, and why the GPU side is empty); a directory with one rank
# that is not a trace at all and one cut short reports the others and names
# both (exit 3, partial); the report is valid UTF-8 and self-contained;
# usage errors are exit 2 and write nothing.
set -uo pipefail
[ -d "$TESTDATA/traces/trace_filter" ] || { echo "no test traces in $TESTDATA"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# no GPU events: a report, its CPU side, and the reason
"$DYNO" report "$TESTDATA/traces/rank_non_gpu" -o "$tmp/cpu.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || bad "no-GPU trace: exit $rc: $(cat "$tmp/err")"
grep -q 'temporal: no GPU events (no row has a stream)' "$tmp/cpu.html" || bad "no-GPU: the reason is missing"
grep -q 'no GPU events: only the CPU side is analysed' "$tmp/cpu.html" || bad "no-GPU: the rank's state is missing"
grep -q 'Time per user annotation on the CPU' "$tmp/cpu.html" || bad "no-GPU: no CPU side"
grep -q 'id="insights"' "$tmp/cpu.html" || bad "no-GPU: no insights section"

# a job of four ranks: two fine, one not a trace, one truncated
mkdir "$tmp/job"
cp "$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz" "$TESTDATA/traces/trace_filter/sampled_rank-1.json.gz" "$tmp/job/"
echo 'this is not a trace' >"$tmp/job/rank-2.json"
zcat "$TESTDATA/traces/trace_filter/sampled_rank-1.json.gz" | sed 's/"rank": 1,/"rank": 3,/' | head -c 300000 >"$tmp/job/rank-3.json"
"$DYNO" report "$tmp/job" -o "$tmp/job.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] || bad "damaged job: exit $rc, want 3: $(cat "$tmp/err")"
grep -q 'rank-2.json: byte 0 .*this file is left out' "$tmp/job.html" || bad "the unreadable rank is not named in the report"
grep -q 'rank-2.json.*left out' "$tmp/err" || bad "the unreadable rank is not named on stderr: $(cat "$tmp/err")"
grep -q 'PARTIAL results: damaged trace, rank 3: .*rank-3.json: byte 300000' "$tmp/job.html" ||
	bad "the truncated rank is not named"
grep -q 'wrote .*job.html.* 3 ranks.*PARTIAL' "$tmp/err" || bad "stderr summary: $(cat "$tmp/err")"
for r in 0 1 3; do grep -q ">rank $r<" "$tmp/job.html" || bad "rank $r missing from the charts"; done
# every file is valid UTF-8 and loads nothing
for f in "$tmp/cpu.html" "$tmp/job.html"; do
	iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1 || bad "$f is not valid UTF-8"
	grep -Eq '<script|<link|src="http|href="http' "$f" && bad "$f loads something"
done

# every file unreadable: an error, nothing written
mkdir "$tmp/none"; echo '{' >"$tmp/none/a.json"
"$DYNO" report "$tmp/none" -o "$tmp/none.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ ! -e "$tmp/none.html" ] || bad "all unreadable: exit $rc or a file written"
grep -q 'a.json' "$tmp/err" || bad "all unreadable: the file is not named: $(cat "$tmp/err")"

# usage
"$DYNO" report "$TESTDATA/traces/rank_non_gpu" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- '-o FILE is required' "$tmp/err" || bad "no -o: exit $rc: $(cat "$tmp/err")"
"$DYNO" report "$TESTDATA/traces/rank_non_gpu" -o /nonexistent/dir/r.html 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || bad "unwritable -o: exit $rc"
"$DYNO" report "$TESTDATA/traces/rank_non_gpu" -o "$tmp/x.html" --metrics /nonexistent 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/x.html" ] || bad "unreadable --metrics: exit $rc"
ls "$tmp" | grep -q '\.tmp\.' && bad "a temporary file was left behind"
# a JSON file beside the traces that is no trace (a config.json): named and
# left out, the report whole (exit 0), as `dyno analyze` does
mkdir "$tmp/cfg"
cp "$TESTDATA/traces/trace_filter/"*.json.gz "$tmp/cfg/"
echo '{"lr": 0.1}' >"$tmp/cfg/config.json"
"$DYNO" report "$tmp/cfg" -o "$tmp/cfg.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || bad "a directory with a config.json: exit $rc: $(cat "$tmp/err")"
grep -q 'config.json: .*not a Kineto trace; this file is left out' "$tmp/err" || bad "config.json not named: $(cat "$tmp/err")"
grep -q 'PARTIAL' "$tmp/err" && bad "config.json made the report partial: $(cat "$tmp/err")"
[ $fail -eq 0 ] && echo "no-GPU trace reported with its reason; damaged job: the others reported, both damages named"
exit $fail
