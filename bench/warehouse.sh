#!/usr/bin/env bash
# warehouse.sh - `dyno warehouse` speed on SQLite and PostgreSQL (figures
# and ratios, never a failure on speed):
#
#   1. ingest rate: a directory of N scaled traces (bench/trace_gen scales
#      a real trace of tests/data to MB megabytes, build/trace-gen gives
#      each copy its own jitter and time), ingested into a fresh database:
#      traces/s and events/s, against the baseline of the same run:
#      `dyno analyze kernels --all-kernels` on each file, one per core (the
#      load and an analysis alone, no database);
#   2. report latency on TRACES ingested traces (default 10,000,
#      synthesized by build/bench/warehouse_bench through the real writer
#      from one real trace's figures): each report's best of 3 and its
#      ratio to the 1 s target.
# PostgreSQL runs only where its server is installed (a private server,
# tests/integration/lib/pg.bash).  Env: N (default 16), MB (default 8),
# TRACES (default 10000), BASE (the trace scaled).
set -uo pipefail
cd "$(dirname "$0")/.."
O=${O:-${1:-build}}
TESTDATA=${TESTDATA:-$PWD/tests/data}
N=${N:-16} MB=${MB:-8} TRACES=${TRACES:-10000}
BASE=${BASE:-$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz}
DYNO=$O/dyno
for b in "$DYNO" "$O/trace-gen" "$O/bench/trace_gen" "$O/bench/warehouse_bench"; do
	[ -x "$b" ] || { echo "build first: make ($b)" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/dyno-wh-bench.XXXXXX)
. tests/integration/lib/pg.bash
trap 'pg_stop; rm -rf "$TMP"' EXIT
now() { date +%s.%N; }

"$O/bench/trace_gen" "$BASE" --mb "$MB" >"$TMP/scaled.json" 2>/dev/null || exit 1
mkdir -p "$TMP/fleet/bench/h1"
for i in $(seq 1 "$N"); do
	"$O/trace-gen" "$TMP/scaled.json" "$TMP/fleet/bench/h1/t$i.json" --seed "$i" --jitter 0.1 \
		--shift-ns $((i * 3600000000000)) || exit 1
done
rm "$TMP/scaled.json"
size=$(du -sm "$TMP/fleet" | cut -f1)
echo "input: $N traces of ~$MB MB ($size MB in all) from $(basename "$BASE"), $(nproc) cores"

t0=$(now)
ls "$TMP"/fleet/bench/h1/*.json | xargs -P "$(nproc)" -n 1 "$DYNO" analyze kernels --all-kernels -q >/dev/null || exit 1
base=$(echo "$(now) - $t0" | bc)
printf '%-32s %8.2f s\n' "baseline: dyno analyze kernels" "$base"

ingest() { # NAME DB
	local t0 out s
	t0=$(now)
	out=$("$DYNO" warehouse ingest "$TMP/fleet" --db "$2") || { echo "$1 ingest failed"; return 1; }
	s=$(echo "$(now) - $t0" | bc)
	printf '%-32s %8.2f s  x%.2f of the baseline  | %s\n' "ingest into $1" "$s" "$(echo "$s / $base" | bc -l)" "$out"
}

ingest sqlite "$TMP/ingest.db"
pg_start >"$TMP/pg.why" && pg_ok=1 || pg_ok=0
if [ $pg_ok = 1 ]; then
	ingest postgresql "$PG_URL"
	psql "$PG_URL" -X -q -c "DROP TABLE traces, iterations, kernel_names, kernels, kernel_types, wh_schema" || exit 1
else
	echo "postgresql: not measured: $(cat "$TMP/pg.why")"
fi

echo
echo "report latency on $TRACES traces (target < 1 s each on SQLite):"
"$O/bench/warehouse_bench" --db "$TMP/reports.db" --template "$BASE" --traces "$TRACES" || exit 1
if [ $pg_ok = 1 ]; then
	"$O/bench/warehouse_bench" --db "$PG_URL" --template "$BASE" --traces "$TRACES" || exit 1
fi
