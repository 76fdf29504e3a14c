#!/usr/bin/env bash
# dyno warehouse on a real PostgreSQL server: the same suite as
# warehouse.sh (tests/integration/lib/warehouse.bash).  The server is this
# test's own (tests/integration/lib/pg.bash: initdb and pg_ctl of Debian's
# postgresql-15 on a private data directory, socket directory and loopback
# port, as the user 'nobody' when run as root), stopped on exit.
set -uo pipefail
[ -r "$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz" ] || { echo "no test traces"; exit 77; }
tmp=$(mktemp -d)
. "$(dirname "$0")/lib/pg.bash"
trap 'pg_stop; rm -rf "$tmp"' EXIT
pg_start
rc=$?
[ $rc -eq 0 ] || exit $rc

. "$(dirname "$0")/lib/warehouse.bash"
WH_DB=$PG_URL
# a port nothing listens on: one taken and closed just now
WH_DOWN=postgresql://dyno@127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')/postgres?connect_timeout=5
wh_sql() { psql "$WH_DB" -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
wh_refuse_on() {
	wh_sql "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN RAISE EXCEPTION 'refused by test'; END \$\$" >/dev/null
	wh_sql "CREATE TRIGGER refuse BEFORE INSERT ON kernels FOR EACH ROW EXECUTE FUNCTION refuse()" >/dev/null
}
wh_refuse_off() { wh_sql "DROP TRIGGER refuse ON kernels" >/dev/null; }

wh_series "$tmp/s"
wh_suite "$tmp/s"
exit $wh_fail
