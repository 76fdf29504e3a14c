#!/usr/bin/env bash
# Run each fuzzer for a bounded time over its seed corpus (fuzz/corpus/<name>).
# Usage: fuzz-smoke.sh SECONDS FUZZER...
set -uo pipefail
secs=$1; shift
fail=0
for f in "$@"; do
	name=$(basename "$f")
	corpus=fuzz/corpus/${name#fuzz_}
	work=$(mktemp -d)
	echo "fuzz-smoke: $name for ${secs}s (seeds: $corpus)"
	if ! "$f" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" "$work" "$corpus" >"$work/log" 2>&1; then
		echo "fuzz-smoke: $name FAILED"; tail -n 40 "$work/log"; fail=1
		# keep what reproduces it: the input beside the fuzzers (git
		# ignores fuzz/crash-*), and in the log when it is small, since a
		# CI machine is gone afterwards (run it: FUZZER FILE)
		for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
			[ -f "$a" ] || continue
			cp "$a" "fuzz/$(basename "$a")"
			echo "fuzz-smoke: input kept as fuzz/$(basename "$a")"
			if [ "$(stat -c %s "$a")" -le 8192 ]; then
				echo "fuzz-smoke: input, base64: $(base64 -w0 "$a")"
			fi
		done
	else
		grep -E 'stat::number_of_executed_units|Done' "$work/log" | tail -n 2
	fi
	rm -rf "$work"
done
exit $fail
