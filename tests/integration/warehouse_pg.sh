#!/usr/bin/env bash
# dyno warehouse on a real PostgreSQL server: the same suite as
# warehouse.sh (tests/integration/lib/warehouse.bash).  The server is this
# test's own: initdb and pg_ctl of Debian's postgresql-15 on a private data
# directory, Unix socket directory and loopback port, run as the unprivileged
# user 'nobody' when the test runs as root (postgres refuses root), trust
# authentication for that loopback server only; stopped on exit.
set -uo pipefail
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] || { echo "no PostgreSQL server in $PGBIN (scripts/install-deps.sh installs postgresql)"; exit 77; }
command -v psql >/dev/null || { echo "no psql"; exit 77; }
[ -r "$TESTDATA/traces/trace_filter/sampled_rank-0.json.gz" ] || { echo "no test traces"; exit 77; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
as_pg=()
if [ "$(id -u)" = 0 ]; then
	id nobody >/dev/null 2>&1 || { echo "running as root and no user 'nobody' to run postgres as"; exit 77; }
	as_pg=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --)
fi
mkdir -p "$tmp/data" "$tmp/sock"
[ ${#as_pg[@]} -eq 0 ] || chown nobody "$tmp/data" "$tmp/sock"
pg() { (cd "$tmp" && LC_ALL=C "${as_pg[@]}" "$@"); }
stop() { pg "$PGBIN/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1; rm -rf "$tmp"; }
trap stop EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pg "$PGBIN/initdb" -D "$tmp/data" -U dyno --auth=trust -E UTF8 --no-sync >"$tmp/initdb.log" 2>&1 ||
	{ echo "FAIL: initdb"; cat "$tmp/initdb.log"; exit 1; }
pg "$PGBIN/pg_ctl" -D "$tmp/data" -l "$tmp/sock/server.log" -w -t 60 \
	-o "-p $port -k $tmp/sock -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1 ||
	{ echo "FAIL: postgres did not start"; cat "$tmp/sock/server.log"; exit 1; }

. "$(dirname "$0")/lib/warehouse.bash"
WH_DB=postgresql://dyno@127.0.0.1:$port/postgres
# a port nothing listens on: the server's, once stopped, would race; one
# taken and closed just now is as good
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
