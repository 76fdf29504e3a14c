#!/usr/bin/env bash
# compare_builds.sh OLD_BUILD NEW_BUILD - the same work on two builds of
# dynolite, measured alternately in one run (A B A B ...), so that a drift
# of a shared machine's speed hits both sides alike: for a refactor that
# must not change speed ("within noise"), and for a change meant to.
#
#   dyno analyze summary on a MB-megabyte trace (.json and .json.gz),
#     best wall time and largest peak RSS of REPS runs each;
#   the daemon's host collection cycle (bench/collect_cycle: CPU per tick
#     with every sink), median of REPS runs;
#   the RPC server under upstream's one-connection-per-request pattern
#     (each build's bench/tracing_rpc, 2 client threads), best of REPS.
# Prints each figure for both builds and NEW/OLD.  Env: MB (200), REPS (5).
# Not run by bench/run.sh (it needs two builds).  Never fails on speed.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: compare_builds.sh OLD_BUILD NEW_BUILD}
NEW=${2:?usage: compare_builds.sh OLD_BUILD NEW_BUILD}
MB=${MB:-200} REPS=${REPS:-5}
TMP=$(mktemp -d /tmp/dyno-compare.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
for b in "$OLD" "$NEW"; do
	[ -x "$b/dyno" ] && [ -x "$b/dynolog" ] && [ -x "$b/bench/collect_cycle" ] && [ -x "$b/bench/tracing_rpc" ] ||
		{ echo "$b: not a complete build (make first)" >&2; exit 1; }
done
BASE=tests/data/traces/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
"$NEW/bench/trace_gen" "$BASE" --mb "$MB" >"$TMP/t.json"
gzip -6 -c "$TMP/t.json" >"$TMP/t.json.gz"

one() { /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>&1; tail -n 1 "$TMP/time"; }
best() { sort -n | head -n 1; }
maxrss() { sort -n | tail -n 1; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (a > 0 ? b / a : 0)}'; }

echo "compare_builds: OLD=$OLD NEW=$NEW, $MB MB trace, $REPS alternating runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %12s %12s %9s\n' figure OLD NEW NEW/OLD
for f in t.json t.json.gz; do
	: >"$TMP/a" && : >"$TMP/b"
	for ((i = 0; i < REPS; i++)); do
		one "$OLD/dyno" analyze summary "$TMP/$f" -q >>"$TMP/a"
		one "$NEW/dyno" analyze summary "$TMP/$f" -q >>"$TMP/b"
	done
	a=$(cut -d' ' -f1 "$TMP/a" | best) b=$(cut -d' ' -f1 "$TMP/b" | best)
	printf '%-44s %12s %12s %9s\n' "analyze summary $f: best wall s" "$a" "$b" "$(ratio "$a" "$b")"
	a=$(cut -d' ' -f2 "$TMP/a" | maxrss) b=$(cut -d' ' -f2 "$TMP/b" | maxrss)
	printf '%-44s %12s %12s %9s\n' "analyze summary $f: peak RSS kB" "$a" "$b" "$(ratio "$a" "$b")"
done

# collect_cycle prints "full tick ... N us" lines; keep the full tick's CPU
cyc() { "$1/bench/collect_cycle" 200 2>/dev/null | awk '/full tick/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) {print $i; exit}}'; }
: >"$TMP/a" && : >"$TMP/b"
for ((i = 0; i < REPS; i++)); do cyc "$OLD" >>"$TMP/a"; cyc "$NEW" >>"$TMP/b"; done
a=$(median <"$TMP/a") b=$(median <"$TMP/b")
printf '%-44s %12s %12s %9s\n' "collection cycle, full tick: CPU us (median)" "$a" "$b" "$(ratio "$a" "$b")"

# RPC: each build's own bench/tracing_rpc (its server code against its own
# blocking baseline server, in process); the getStatus rate with new
# connections (upstream's pattern), 2 client threads, best of REPS
rpc_rate() { "$1/bench/tracing_rpc" 2>/dev/null | awk '/upstream pattern/ {s = 1} s && /dynolog getStatus, 2 client threads/ {print $(NF-2); exit}'; }
: >"$TMP/a" && : >"$TMP/b"
for ((i = 0; i < REPS; i++)); do rpc_rate "$OLD" >>"$TMP/a"; rpc_rate "$NEW" >>"$TMP/b"; done
a=$(sort -n "$TMP/a" | tail -n 1) b=$(sort -n "$TMP/b" | tail -n 1)
printf '%-44s %12s %12s %9s\n' "RPC getStatus, new connections, 2 thr: req/s" "$a" "$b" "$(ratio "$a" "$b")"
