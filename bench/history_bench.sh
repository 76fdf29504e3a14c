#!/usr/bin/env bash
# The compressed history against the ring it replaced, in the same run:
# heap bytes for an hour of 1 s ticks (host keys alone, host + 8 GPUs x 40
# keys) and getMetrics latency (best of N; and the whole window in the
# daemon's 1 MiB pages, the first page and all of them, against one
# unbounded answer of the same run), from bench/history_bench.c
# built twice: $O/bench/history_bench (blocks) and, with -DHISTORY_RING,
# against src/daemon/publish/history.c as of $HISTORY_RING_COMMIT (the
# last ring).  Without git (a tarball) only the blocks' figures print.
# GPU=busy (the default): 8 GPUs x 40 keys as the daemon publishes them
# under a training job, noisy readings drawn afresh each tick; GPU=idle:
# nothing running; GPU=random: full-precision random readings, the model
# before decimal coding (see history_bench.c).  Then what each kind of GPU
# key costs (kB, bits a point with the blocks' overhead).
# Usage: O=build bench/history_bench.sh [TICKS] [QUERIES]
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
TICKS=${1:-3601} REPS=${2:-10}
RING_COMMIT=${HISTORY_RING_COMMIT:-29e740d}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

GPU=${GPU:-busy}
"$O/bench/history_bench" "$TICKS" "$REPS" "$T/keys" "$GPU" >"$T/new"
if git cat-file -e "$RING_COMMIT:src/daemon/publish/history.c" 2>/dev/null; then
	git show "$RING_COMMIT:src/daemon/publish/history.c" >"$T/history_ring.c"
	# the ring's object first: the archive's history.o is then never pulled in
	${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -Isrc/daemon/publish -DHISTORY_RING \
		-o "$T/history_bench_ring" bench/history_bench.c "$T/history_ring.c" \
		"$O/libdyno_daemon.a" "$O/libdyno_core.a" -lz -lm -lpthread -ldl
	"$T/history_bench_ring" "$TICKS" "$REPS" "$T/keys" "$GPU" >"$T/old"
else
	echo "(no git history: the ring is not built; blocks only)"
	: >"$T/old"
fi
grep -v '^kind\.' "$T/new" >"$T/new.v" || true
awk '
	{ split($1, a, "."); v[a[1], a[2]] = $2; have[a[1]] = 1 }
	function row(label, k, unit, div) {
		if (have["ring"])
			printf "  %-34s %12.1f %s  ring %12.1f %s  blocks/ring %.3f\n", label, v["blocks", k] / div, unit,
				v["ring", k] / div, unit, v["ring", k] ? v["blocks", k] / v["ring", k] : 0
		else
			printf "  %-34s %12.1f %s\n", label, v["blocks", k] / div, unit
	}
	END {
		printf "history_bench: %d ticks at 1 s, %d host keys (live kernel collector), %d GPU keys (8 x 40, %s)\n",
			v["blocks", "ticks"], v["blocks", "host_keys"], v["blocks", "gpu_keys"], gpu
		row("heap, host keys", "host_bytes", "kB", 1000)
		row("heap, host + GPU keys", "host_gpu_bytes", "kB", 1000)
		row("heap, the GPU part", "gpu_bytes", "kB", 1000)
		row("getMetrics, all host keys", "query_all_us", "ms", 1000)
		row("getMetrics, one key", "query_one_us", "us", 1)
		row(sprintf("getMetrics, gpu_* (%d keys)", v["blocks", "query_gpu_keys"]), "query_gpu_us", "ms", 1000)
		printf "  %-34s %12.1f ms  (first of %d pages of 1 MiB: %.1f ms; pages/whole %.2f)\n", \
			"getMetrics, all host keys, paged", v["blocks", "pages_all_us"] / 1000, v["blocks", "pages"], \
			v["blocks", "page_first_us"] / 1000, \
			v["blocks", "query_all_us"] ? v["blocks", "pages_all_us"] / v["blocks", "query_all_us"] : 0
		row("VmHWM of the bench process", "vm_hwm_kb", "MB", 1000)
		if (have["ring"])
			print (v["blocks", "answers_fnv"] == v["ring", "answers_fnv"] ? \
				"  answers: byte for byte the same (FNV-1a of every getMetrics body)" : \
				"  ANSWERS DIFFER between ring and blocks")
	}' gpu="$GPU" "$T/new.v" "$T/old"
if grep -q '^kind\.' "$T/new"; then
	echo "  where the GPU keys' bytes go ($GPU):"
	grep '^kind\.' "$T/new" | awk -F'\t' -v ticks="$TICKS" '{
		k = substr($1, 6); printf "    %-22s %4d keys %9.1f kB  %5.1f bits a point\n", k, $2, $3 / 1000, $3 * 8 / ($2 * ticks) }'
fi
