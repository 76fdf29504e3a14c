#!/usr/bin/env bash
# --slurm-job on a machine without squeue: one clear error (the child used
# to print its own "cannot run" line before the parent printed the reason),
# usage exit status 2.
set -uo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cmd in status gputrace; do
	extra=
	[ $cmd = gputrace ] && extra="--log-file /tmp/t.json"
	PATH="$tmp" "$DYNO" $cmd --slurm-job 123 $extra >"$tmp/o" 2>&1
	rc=$?
	[ $rc = 2 ] || { echo "FAIL: $cmd exit $rc"; cat "$tmp/o"; exit 1; }
	[ "$(grep -c 'squeue' "$tmp/o")" = 1 ] || { echo "FAIL: $cmd:"; cat "$tmp/o"; exit 1; }
	grep -q 'cannot run squeue: No such file or directory (not installed or not on PATH?)' "$tmp/o" ||
		{ echo "FAIL: $cmd:"; cat "$tmp/o"; exit 1; }
done
echo ok
