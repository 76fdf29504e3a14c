#!/usr/bin/env bash
# JSON reader throughput on the largest shared trace, against zcat of the
# same file measured in the same run.
set -euo pipefail
largest=$(find "$TESTDATA/traces" -name '*.json*' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)
raw=$(zcat -f "$largest" | wc -c)
"$O/bench/bench_json" "$largest" 10 | tee /tmp/bench_json.$$
best=1e9
for _ in 1 2 3 4 5; do
	s=$(date +%s.%N); zcat -f "$largest" >/dev/null; e=$(date +%s.%N)
	best=$(awk -v a="$best" -v s="$s" -v e="$e" 'BEGIN{b = e - s; print (b < a) ? b : a}')
done
mem=$(awk '/memory mode/ {print $4}' /tmp/bench_json.$$)
rm -f /tmp/bench_json.$$
awk -v raw="$raw" -v t="$best" -v mem="$mem" 'BEGIN {
	z = raw / t / 1e6
	printf "  zcat         : %8.1f MB/s of output  (%.3f s, best of 5)\n", z, t
	printf "  reader / zcat: %.2fx  (the reader parses faster than zcat inflates)\n", mem / z
}'
