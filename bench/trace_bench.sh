#!/usr/bin/env bash
# trace_bench.sh - `dyno analyze` load + summary speed and memory against
# `zcat FILE >/dev/null` and HTA, on a real trace scaled up (not a test: it
# prints figures and ratios, it never fails on speed).
#
#   bench/trace_bench.sh [BUILD_DIR]        (env: MB=size of the scaled trace,
#                                            default 500; BASE=trace to scale)
#
# The summary is printed as tables (the launch table as counts), as a user
# sees it.  Steps: trace_gen scales BASE (default the ns-resolution trace from
# ../shared/traces) to MB megabytes of JSON, gzip -6 makes the .json.gz; each
# command runs under GNU time (wall seconds, peak RSS).  Then a 2-rank
# directory (two MB/2 files) with --threads 1 vs --threads 2.  HTA figures
# come from ../shared/conformance/hta-timings.md for BASE, scaled linearly
# to MB (HTA itself was not run here).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:-build}
SHARED=${DYNO_SHARED:-$(cd .. && pwd)/shared}
MB=${MB:-500}
BASE=${BASE:-$SHARED/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz}
HTA_NAME=${HTA_NAME:-ns_resolution_trace}
GEN=$O/bench/trace_gen DYNO=$O/dyno
[ -x "$GEN" ] && [ -x "$DYNO" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dyno-trace-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

measure() { # measure OUTVAR cmd...  -> "secs rss_kb"
	local var=$1; shift
	local t=$TMP/time.out
	/usr/bin/time -f "%e %M" -o "$t" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
	printf -v "$var" '%s' "$(tail -n 1 "$t")"
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
measure JSON "$DYNO" analyze summary "$TMP/t.json" -q
measure JSONGZ "$DYNO" analyze summary "$TMP/t.json.gz" -q

mkdir "$TMP/dir"
"$GEN" "$BASE" --mb $((MB / 2)) --rank 0 >"$TMP/dir/rank-0.json" 2>/dev/null
"$GEN" "$BASE" --mb $((MB / 2)) --rank 1 >"$TMP/dir/rank-1.json" 2>/dev/null
cat "$TMP"/dir/*.json >/dev/null
measure DIR1 "$DYNO" analyze summary "$TMP/dir" -q --threads 1
measure DIR2 "$DYNO" analyze summary "$TMP/dir" -q --threads 2
LOAD=$(cut -d' ' -f1 /proc/loadavg)

# HTA: load seconds, process seconds, RSS MB and uncompressed bytes of BASE
read -r HTA_LOAD HTA_PROC HTA_RSS < <(awk -F'|' -v n="$HTA_NAME" '
	/^## Load/ {s=1} s && $2 ~ " "n" " {gsub(/ /,""); print $3, $4, $5; exit}' "$SHARED/conformance/hta-timings.md")
HTA_BYTES=$(awk -F'|' -v n="$HTA_NAME" '$2 ~ " "n" " {gsub(/[ ,]/,"",$4); print $4; exit}' "$SHARED/conformance/hta-timings.md")

python3 - "$RAW" "$GZ" "$ZCAT" "$CAT" "$JSON" "$JSONGZ" "$DIR1" "$DIR2" "$HTA_LOAD" "$HTA_PROC" "$HTA_RSS" "$HTA_BYTES" "$TOK" "$JSON1" "$LOAD" <<'PY'
import sys
raw, gz = int(sys.argv[1]), int(sys.argv[2])
def p(s): a, b = s.split(); return float(a), int(b) / 1024
zc, ct, js, jg, d1, d2 = (p(x) for x in sys.argv[3:9])
hl, hp, hr, hb = float(sys.argv[9]), float(sys.argv[10]), float(sys.argv[11]), int(sys.argv[12])
tok, j1 = p(sys.argv[13]), p(sys.argv[14])
print(f"(load average at the end: {sys.argv[15]} on this 2-core machine; timings are noisy when it is above 1)")
scale = raw / hb
mb = raw / 1e6
print(f"\ntrace: {mb:.0f} MB JSON, {gz/1e6:.0f} MB gzip ({scale:.0f}x the HTA reference trace)")
print(f"{'command':44} {'wall s':>8} {'peak RSS MB':>12}")
rows = [("cat t.json >/dev/null", ct), ("zcat t.json.gz >/dev/null", zc),
        ("dyno json t.json (core tokenizer only)", tok),
        ("dyno analyze summary t.json --threads 1", j1),
        ("dyno analyze summary t.json", js), ("dyno analyze summary t.json.gz", jg),
        ("dyno analyze summary dir (2 ranks) -j1", d1), ("dyno analyze summary dir (2 ranks) -j2", d2)]
for n, (s, r) in rows:
    print(f"{n:44} {s:8.2f} {r:12.0f}")
print(f"{'HTA load, extrapolated (x' + format(scale, '.0f') + ')':44} {hl*scale:8.2f} {hr*scale:12.0f}")
print()
print(f"load+summary speed on .json:     {mb/js[0]:8.0f} MB/s   (target >= 1000; tokenizer alone {mb/tok[0]:.0f} MB/s)")
print(f".json.gz time / zcat time:       {jg[0]/zc[0]:8.2f}        (target <= 1.25)")
print(f"peak RSS / uncompressed size:    {js[1]*1024*1024/raw:8.3f}        (target <= 0.3)")
print(f"2-rank dir, -j1 time / -j2 time: {d1[0]/d2[0]:8.2f}        (target ~2 on 2 cores)")
print(f"HTA load time / ours (.json):    {hl*scale/js[0]:8.1f}x       (HTA {hb/1e6/hl:.0f} MB/s measured on {hb/1e6:.0f} MB)")
print(f"HTA RSS / ours:                  {hr*scale/js[1]:8.1f}x")
PY
