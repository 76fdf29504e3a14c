#!/usr/bin/env bash
# trace_bench.sh - `dyno analyze` load + summary speed and memory against
# `zcat FILE >/dev/null` and HTA, on a real trace scaled up (not a test: it
# prints figures and ratios, it never fails on speed).
#
#   bench/trace_bench.sh [BUILD_DIR]        (env: REPS=runs per command, best wall
#                                            time kept, default 3; MB=size of the scaled trace,
#                                            default 500; BASE=trace to scale)
#
# The summary is printed as tables (the launch table as counts), as a user
# sees it.  Steps: trace_gen scales BASE (default the ns-resolution trace from
# tests/data/traces) to MB megabytes of JSON, gzip -6 makes the .json.gz; each
# command runs under GNU time (wall seconds, peak RSS).  Then a 2-rank
# directory (two MB/2 files) with --threads 1 vs --threads 2, and the
# phases of each as `dyno analyze --timings` reports them (after-parse =
# finish of the slowest rank + set finish + analyses + output).  HTA figures
# come from tests/data/conformance/hta-timings.md for BASE, scaled linearly
# to MB (HTA itself was not run here).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
TESTDATA=${DYNO_TESTDATA:-$PWD/tests/data}
MB=${MB:-500}
BASE=${BASE:-$TESTDATA/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz}
HTA_NAME=${HTA_NAME:-ns_resolution_trace}
GEN=$O/bench/trace_gen DYNO=$O/dyno
[ -x "$GEN" ] && [ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-trace-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

REPS=${REPS:-3}
one_run() { # one_run cmd... -> "secs rss_kb faults" of one run under GNU time
	local t=$TMP/time.out
	/usr/bin/time -f "%e %M %R" -o "$t" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
	tail -n 1 "$t"
}
keep_best() { # keep_best VAR "secs rss faults": fastest run's time and faults, largest RSS
	local var=$1 s m f bs bm bf
	read -r s m f <<<"$2"
	if [ -z "${!var:-}" ]; then printf -v "$var" '%s %s %s' "$s" "$m" "$f"; return; fi
	read -r bs bm bf <<<"${!var}"
	if awk -v a="$s" -v b="$bs" 'BEGIN {exit !(a < b)}'; then bs=$s bf=$f; fi
	[ "$m" -gt "$bm" ] && bm=$m
	printf -v "$var" '%s %s %s' "$bs" "$bm" "$bf"
}
measure() { # measure OUTVAR cmd...  -> "secs rss_kb faults": best wall time of REPS runs,
	#                                      largest peak RSS, minor page faults of the best run
	local var=$1 i; shift
	unset "$var"
	for ((i = 0; i < REPS; i++)); do keep_best "$var" "$(one_run "$@")"; done
}
# measure_pair VA VB: the commands in arrays CMD_A and CMD_B, run alternately
# (A B A B ...) so that a drift of this shared machine's speed, which is
# common over a minute, hits both sides of a ratio alike (only for commands
# with the same allocation policy, see JSONSP below)
measure_pair() {
	local i
	unset "$1" "$2"
	for ((i = 0; i < REPS; i++)); do
		keep_best "$1" "$(one_run "${CMD_A[@]}")"
		keep_best "$2" "$(one_run "${CMD_B[@]}")"
	done
}

echo "== generating a ${MB} MB trace from $(basename "$BASE")"
"$GEN" "$BASE" --mb "$MB" >"$TMP/t.json"
gzip -6 -c "$TMP/t.json" >"$TMP/t.json.gz"
RAW=$(stat -c %s "$TMP/t.json"); GZ=$(stat -c %s "$TMP/t.json.gz")
cat "$TMP/t.json" >/dev/null # page cache, as for every run below

measure ZCAT zcat "$TMP/t.json.gz"
measure CAT cat "$TMP/t.json"
measure TOK "$DYNO" json -q "$TMP/t.json"
measure JSON1 "$DYNO" analyze summary "$TMP/t.json" -q --threads 1
# not alternated: a --small-pages run leaves the memory it freed in 4 KiB
# pieces (on this VM handed back to the hypervisor), and the huge-page run
# right after it pays 0.3-0.4 s more system time refilling 2 MiB pages;
# so the --small-pages runs come last, after the directory's
measure JSON "$DYNO" analyze summary "$TMP/t.json" -q
measure JSONGZ "$DYNO" analyze summary "$TMP/t.json.gz" -q

mkdir "$TMP/dir"
"$GEN" "$BASE" --mb $((MB / 2)) --rank 0 >"$TMP/dir/rank-0.json" 2>/dev/null
"$GEN" "$BASE" --mb $((MB / 2)) --rank 1 >"$TMP/dir/rank-1.json" 2>/dev/null
cat "$TMP"/dir/*.json >/dev/null
CMD_A=("$DYNO" analyze summary "$TMP/dir" -q --threads 1) CMD_B=("$DYNO" analyze summary "$TMP/dir" -q --threads 2)
measure_pair DIR1 DIR2
measure JSONSP "$DYNO" analyze summary "$TMP/t.json" -q --small-pages # last: see above
LOAD=$(cut -d' ' -f1 /proc/loadavg)

# per-phase wall times from `dyno analyze --timings` (best of 3 runs by
# total): parse and finish of the slowest rank, the set steps, the analyses
phases() { # phases PATH THREADS -> "total parse finish set analyses output"
	local best="" line
	for _ in 1 2 3; do
		line=$("$DYNO" analyze summary "$1" -q --timings --threads "$2" 2>&1 >/dev/null | awk '
			/^    rank / { for (i = 1; i < NF; i++) { if ($i == "parse") p = $(i + 1); if ($i == "finish") f = $(i + 1) }
				if (p > mp) mp = p; if (f > mf) mf = f }
			/set finish/ { s = $NF }
			/^  analyses/ { a = $2 }
			/^  output/ { o = $2 }
			/^  total/ { t = $2 }
			END { print t, mp, mf, s, a, o }')
		if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN { split(a, A, " "); split(b, B, " "); exit !(A[1] < B[1]) }'; then
			best=$line
		fi
	done
	echo "$best"
}
PH_F1=$(phases "$TMP/t.json" 1); PH_F2=$(phases "$TMP/t.json" 2)
PH_D1=$(phases "$TMP/dir" 1); PH_D2=$(phases "$TMP/dir" 2)

# HTA: load seconds, process seconds, RSS MB and uncompressed bytes of BASE
read -r HTA_LOAD HTA_PROC HTA_RSS < <(awk -F'|' -v n="$HTA_NAME" '
	/^## Load/ {s=1} s && $2 ~ " "n" " {gsub(/ /,""); print $3, $4, $5; exit}' "$TESTDATA/conformance/hta-timings.md")
HTA_BYTES=$(awk -F'|' -v n="$HTA_NAME" '$2 ~ " "n" " {gsub(/[ ,]/,"",$4); print $4; exit}' "$TESTDATA/conformance/hta-timings.md")

# report (awk: no dependency beyond the base system)
awk -v raw="$RAW" -v gz="$GZ" -v zc="$ZCAT" -v ct="$CAT" -v js="$JSON" -v jg="$JSONGZ" \
	-v d1="$DIR1" -v d2="$DIR2" -v hl="$HTA_LOAD" -v hr="$HTA_RSS" -v hb="$HTA_BYTES" \
	-v tok="$TOK" -v j1="$JSON1" -v jsp="$JSONSP" -v load="$LOAD" -v reps="$REPS" \
	-v pf1="$PH_F1" -v pf2="$PH_F2" -v pd1="$PH_D1" -v pd2="$PH_D2" 'BEGIN {
	split(zc, ZC, " "); split(ct, CT, " "); split(js, JS, " "); split(jg, JG, " ")
	split(d1, D1, " "); split(d2, D2, " "); split(tok, TK, " "); split(j1, J1, " "); split(jsp, SP, " ")
	scale = raw / hb; mb = raw / 1e6
	printf "(load average at the end: %s on this 2-core machine; timings are noisy when it is above 1)\n", load
	printf "\ntrace: %.0f MB JSON, %.0f MB gzip (%.0fx the HTA reference trace)\n", mb, gz / 1e6, scale
	printf "%-44s %8s %12s %12s   (best of %d runs)\n", "command", "wall s", "peak RSS MB", "page faults", reps
	row("cat t.json >/dev/null", CT); row("zcat t.json.gz >/dev/null", ZC)
	row("dyno json t.json (core tokenizer only)", TK)
	row("dyno analyze summary t.json --threads 1", J1)
	row("dyno analyze summary t.json", JS); row("dyno analyze summary t.json --small-pages", SP)
	row("dyno analyze summary t.json.gz", JG)
	row("dyno analyze summary dir (2 ranks) -j1", D1); row("dyno analyze summary dir (2 ranks) -j2", D2)
	printf "%-44s %8.2f %12.0f %12s\n", sprintf("HTA load, extrapolated (x%.0f)", scale), hl * scale, hr * scale, "-"
	printf "\nload+summary speed on .json:     %8.0f MB/s   (target >= 1000; tokenizer alone %.0f MB/s)\n", mb / JS[1], mb / TK[1]
	printf ".json.gz time / zcat time:       %8.2f        (target <= 1.25)\n", JG[1] / ZC[1]
	printf "peak RSS / uncompressed size:    %8.3f        (target <= 0.3)\n", JS[2] * 1024 / raw
	printf "2-rank dir, -j1 time / -j2 time: %8.2f        (target ~2 on 2 cores)\n", D1[1] / D2[1]
	printf "huge pages: --small-pages / default time %.2f, page faults %.0fx fewer, RSS %+.0f%%\n", SP[1] / JS[1], SP[3] / (JS[3] ? JS[3] : 1), (JS[2] / SP[2] - 1) * 100
	printf "HTA load time / ours (.json):    %8.1fx       (HTA %.0f MB/s measured on %.0f MB)\n", hl * scale / JS[1], hb / 1e6 / hl, hb / 1e6
	printf "HTA RSS / ours:                  %8.1fx\n", hr * scale / (JS[2] / 1024)
	printf "\nphases (dyno analyze --timings, wall s, best of 3; finish and parse: slowest rank)\n"
	printf "%-30s %7s %7s %7s %7s %8s %7s %11s\n", "", "total", "parse", "finish", "set", "analyses", "output", "after-parse"
	phase("t.json --threads 1", pf1); phase("t.json --threads 2", pf2)
	phase("dir (2 ranks) --threads 1", pd1); phase("dir (2 ranks) --threads 2", pd2)
	split(pd1, P1, " "); split(pd2, P2, " ")
	printf "2-rank dir (--timings totals), -j1 / -j2: %.2f\n", P1[1] / P2[1]
}
function phase(name, s,   P) {
	split(s, P, " ")
	printf "%-30s %7.3f %7.3f %7.3f %7.3f %8.3f %7.3f %11.3f\n", name, P[1], P[2], P[3], P[4], P[5], P[6], P[3] + P[4] + P[5] + P[6]
}
function row(name, a) { printf "%-44s %8.2f %12.0f %12d\n", name, a[1], a[2] / 1024, a[3] }'

# counters (HTA's queue length and memory bandwidth) alone against our load
# of the same file, from `--timings` (best of 3 runs by analysis time), and
# HTA's recorded seconds for the two (hta-timings.md, scaled like its load)
read -r C_LOAD C_AN < <(for _ in 1 2 3; do
	"$DYNO" analyze counters "$TMP/t.json" -q --timings 2>&1 >/dev/null |
		awk '/^  load/ {l = $2} /^    counters/ {c += $NF} END {print l, c}'
done | sort -k2 -g | head -n 1)
read -r HTA_Q HTA_M < <(awk -F'|' -v n="$HTA_NAME" '/^\| trace \| temporal/ {s = 1}
	s && $2 ~ " "n" " {split($8, q, " "); split($9, m, " "); print q[1], m[1]; exit}' "$TESTDATA/conformance/hta-timings.md")
awk -v l="$C_LOAD" -v a="$C_AN" -v q="$HTA_Q" -v m="$HTA_M" -v raw="$RAW" -v hb="$HTA_BYTES" 'BEGIN {
	s = raw / hb
	printf "\ncounters on t.json: %.3f s analysis = %.1f%% of our load (%.3f s); HTA queue_length + memory_bw %.2f + %.2f s x%.0f = %.1f s (%.0fx ours)\n",
		a, 100 * a / l, l, q, m, s, (q + m) * s, (q + m) * s / (a > 0 ? a : 1e-3)
}'

# patterns (HTA's frequent CUDA kernel sequences) alone against our load of
# the same file, from `--timings` (best of 3 runs by analysis time): on
# t.json (aten::mm; HTA raises on this ns trace, so no HTA figure), and on
# the trace_diff traces for the two operators HTA's recorded stage ran
# (aten::linear + aten::addmm; hta-timings.md, frequent_patterns column)
pat_time() { # pat_time FILE OP... -> "load analysis" (analysis summed over the OPs)
	local f=$1 op l a tl=0 ta=0; shift
	for op in "$@"; do
		read -r l a < <(for _ in 1 2 3; do
			"$DYNO" analyze patterns "$f" --operator "$op" -q --timings 2>&1 >/dev/null |
				awk '/^  load/ {l = $2} /^    patterns/ {c += $NF} END {print l, c}'
		done | sort -k2 -g | head -n 1)
		tl=$(awk -v a="$tl" -v b="$l" 'BEGIN {print a + b}')
		ta=$(awk -v a="$ta" -v b="$a" 'BEGIN {print a + b}')
	done
	echo "$tl $ta"
}
read -r P_LOAD P_AN < <(pat_time "$TMP/t.json" aten::mm)
awk -v l="$P_LOAD" -v a="$P_AN" 'BEGIN {
	printf "\npatterns on t.json (aten::mm): %.3f s analysis = %.1f%% of our load (%.3f s)\n", a, 100 * a / l, l }'
for pc in control:trace_diff__control test:trace_diff__test; do
	f=$TESTDATA/traces/trace_diff/${pc%%:*}/${pc%%:*}.json.gz
	[ -e "$f" ] || continue
	read -r P_LOAD P_AN < <(pat_time "$f" aten::linear aten::addmm)
	HTA_P=$(awk -F'|' -v n="${pc#*:}" '/^\| trace \| temporal/ {s = 1}
		s && $2 ~ " "n" " {split($10, p, " "); print p[1]; exit}' "$TESTDATA/conformance/hta-timings.md")
	awk -v n="${pc#*:}" -v l="$P_LOAD" -v a="$P_AN" -v h="$HTA_P" 'BEGIN {
		printf "patterns on %s (aten::linear + aten::addmm): %.3f s analysis = %.1f%% of our load (%.3f s for the two); HTA %.2f s (%.0fx ours)\n",
			n, a, 100 * a / l, l, h, h / (a > 0 ? a : 1e-3) }'
done
