#!/usr/bin/env bash
# The dyno dispatcher: help for every subcommand, unknown commands, and
# `dyno json` reporting FILE:LINE:COLUMN of the first error of a trace.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$DYNO" --help >"$tmp/help"
grep -q '^commands:' "$tmp/help"
# every listed command answers --help with a usage line and exit 0
for cmd in $(sed -n '/^commands:/,/^$/p' "$tmp/help" | awk 'NF>1 {print $1}'); do
	"$DYNO" "$cmd" --help >"$tmp/cmdhelp"
	grep -q "^usage: dyno $cmd" "$tmp/cmdhelp" || { echo "no help for $cmd"; exit 1; }
	"$DYNO" help "$cmd" >"$tmp/cmdhelp"
	grep -q "^usage: dyno $cmd" "$tmp/cmdhelp"
done
# an option's default is said once: a help text that gives it in words is
# not followed by the sentinel's number ("(default: the first selected)
# (default: -1)")
for cmd in $(sed -n '/^commands:/,/^$/p' "$tmp/help" | awk 'NF>1 {print $1}') "trigger add" "warehouse report" \
	"warehouse ingest" "warehouse gpu-hours"; do
	# shellcheck disable=SC2086
	"$DYNO" $cmd --help >"$tmp/cmdhelp"
	if grep -E '\(default[ :].*\(default: ' "$tmp/cmdhelp"; then echo "dyno $cmd --help says a default twice"; exit 1; fi
done
# summary's line names what it leaves out, as the table of analyses says
# (the help into a file first: grep -q ends at its match, and under
# pipefail dyno's SIGPIPE on the rest of the text failed the check)
"$DYNO" analyze --help >"$tmp/ahelp"
grep -q '^  summary  *all of the above but critical-path, patterns, diff, insights$' "$tmp/ahelp" ||
	{ echo "analyze --help: summary line: $(grep '^  summary' "$tmp/ahelp")"; exit 1; }
[[ "$("$DYNO" --version)" =~ ^dyno\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
if "$DYNO" frobnicate 2>"$tmp/err"; then exit 1; fi
grep -q "unknown command 'frobnicate'" "$tmp/err"
# values that silently meant something else: usage errors (2) before any
# daemon is asked (port 1: nothing listens)
for bad in "--iterations 0" "--duration-ms 0"; do
	rc=0
	# shellcheck disable=SC2086
	"$DYNO" gputrace --log-file "$tmp/t.json" $bad --port 1 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] && grep -q -- "$bad: " "$tmp/err" || { echo "gputrace $bad: exit $rc: $(cat "$tmp/err")"; exit 1; }
done

# a real trace truncated in the middle: error with file, line, column and offset
trace="$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz"
zcat "$trace" >"$tmp/full.json"
head -c 100000 "$tmp/full.json" >"$tmp/cut.json"
"$DYNO" json "$tmp/cut.json" 2>"$tmp/err" && exit 1
grep -Eq "^$tmp/cut.json:[0-9]+:[0-9]+: error: .*\(byte offset [0-9]+\)$" "$tmp/err"
"$DYNO" json "$tmp/full.json" | grep -q 'valid JSON'
# a corrupted byte deep inside a pretty-printed trace: the reported line is that byte's
zcat "$TESTDATA/traces/critical_path/alexnet/"*.json.gz >"$tmp/full.json"
grep -q '"' <(sed -n 500p "$tmp/full.json")
sed '500s/"/@/' "$tmp/full.json" >"$tmp/bad.json"
"$DYNO" json "$tmp/bad.json" 2>"$tmp/err" && exit 1
grep -q "^$tmp/bad.json:500:" "$tmp/err"

# dyno json reads .json.gz (by its magic bytes), from a file or stdin
# redirected from one; offsets are in the uncompressed text
"$DYNO" json "$trace" | grep -q 'valid JSON, [0-9]* uncompressed bytes'
"$DYNO" json - <"$trace" | grep -q 'valid JSON'
zcat "$trace" | "$DYNO" json - | grep -q 'valid JSON'
head -c 30000 "$trace" >"$tmp/cut.json.gz"
"$DYNO" json "$tmp/cut.json.gz" 2>"$tmp/err" && exit 1
grep -Eq "^$tmp/cut.json.gz:[0-9]+:[0-9]+: error: .*truncated.*\(uncompressed byte offset [0-9]+\)$" "$tmp/err"
# gzip on a pipe cannot be inflated there: said, not parsed as garbage
cat "$trace" | "$DYNO" json - 2>"$tmp/err" && exit 1
grep -q 'gzip data on a pipe' "$tmp/err"

# dyno --help names the global options that upstream's dyno takes before
# the command
grep -q -- '--hostname' "$tmp/help"
grep -q -- '--port' "$tmp/help"
