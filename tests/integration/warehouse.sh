#!/usr/bin/env bash
# dyno warehouse on SQLite (the default database): the suite of
# tests/integration/lib/warehouse.bash -- ingest of a generated series of
# real traces, a damaged one recorded as failed, re-ingest changes nothing,
# the planted regression found and no unchanged kernel flagged, the
# reports' sums, a refused write leaves no half trace, a missing database,
# a bad row read back, a newer schema.  warehouse_pg.sh runs the same on
# PostgreSQL.
set -uo pipefail
[ -r "$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz" ] || { echo "no test traces"; exit 77; }
command -v sqlite3 >/dev/null || { echo "no sqlite3 (scripts/install-deps.sh installs it)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/warehouse.bash"

WH_DB=$tmp/w.db
WH_DOWN=$tmp/no/such/dir/w.db
wh_sql() { sqlite3 -batch -noheader "$WH_DB" "$1"; }
wh_refuse_on() { wh_sql "CREATE TRIGGER refuse BEFORE INSERT ON kernels BEGIN SELECT RAISE(ABORT, 'refused by test'); END"; }
wh_refuse_off() { wh_sql "DROP TRIGGER refuse"; }

wh_series "$tmp/s"
wh_suite "$tmp/s"
exit $wh_fail
