#!/usr/bin/env bash
# make.sh DYNO - (re)write tests/data/analyze-golden/ with DYNO's outputs
# for every case of cases.sh.  A name ending in "csvdir" is a directory:
# the files --csv-dir writes (stdout is not kept).  stderr is not kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/.." && pwd)
DYNO=$(realpath "${1:?usage: make.sh DYNO}")
. "$here/cases.sh"
find "$here" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
while IFS=$'\t' read -r out input args; do
	mkdir -p "$here/$(dirname "$out")"
	ins=()
	for i in $input; do ins+=("$data/traces/$i"); done
	# shellcheck disable=SC2086
	if [[ $out == *csvdir ]]; then
		mkdir -p "$here/$out"
		"$DYNO" analyze $args "${ins[@]}" -q --csv-dir "$here/$out" >/dev/null 2>&1 || true
	else
		"$DYNO" analyze $args "${ins[@]}" -q >"$here/$out" 2>/dev/null || echo "exit $?" >>"$here/$out"
	fi
done < <(golden_cases "$data/conformance/MANIFEST.tsv")
