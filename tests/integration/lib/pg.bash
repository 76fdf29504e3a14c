# A private PostgreSQL server for a test or bench (warehouse_pg.sh,
# bench/warehouse.sh): Debian's postgresql-15 initdb and pg_ctl on a data
# directory, Unix socket directory and loopback port of its own, trust
# authentication for that loopback server only, run as the unprivileged
# user 'nobody' when the caller is root (postgres refuses root).
#
#   pg_start   -> 0 and PG_URL set, 77 with the reason on stdout when there
#                 is no server to run, 1 when it fails to start; its files
#                 in a directory of its own (readable by 'nobody')
#   pg_stop    immediate shutdown, files removed (call it from a trap)

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_DIR=
PG_AS=()

pg_as() { (cd "$PG_DIR" && LC_ALL=C "${PG_AS[@]}" "$@"); }

pg_start() {
	[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] ||
		{ echo "no PostgreSQL server in $PGBIN (scripts/install-deps.sh installs postgresql)"; return 77; }
	command -v psql >/dev/null || { echo "no psql"; return 77; }
	PG_DIR=$(mktemp -d /tmp/dyno-pg.XXXXXX) || return 1
	chmod 755 "$PG_DIR"
	mkdir -p "$PG_DIR/data" "$PG_DIR/sock"
	if [ "$(id -u)" = 0 ]; then
		id nobody >/dev/null 2>&1 || { echo "running as root and no user 'nobody' to run postgres as"; return 77; }
		PG_AS=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --)
		chown nobody "$PG_DIR/data" "$PG_DIR/sock"
	fi
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	pg_as "$PGBIN/initdb" -D "$PG_DIR/data" -U dyno --auth=trust -E UTF8 --no-sync >"$PG_DIR/initdb.log" 2>&1 ||
		{ echo "initdb failed:"; cat "$PG_DIR/initdb.log"; return 1; }
	pg_as "$PGBIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/sock/server.log" -w -t 60 \
		-o "-p $port -k $PG_DIR/sock -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1 ||
		{ echo "postgres did not start:"; cat "$PG_DIR/sock/server.log"; return 1; }
	PG_URL=postgresql://dyno@127.0.0.1:$port/postgres
}

pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	[ -d "$PG_DIR/data" ] && pg_as "$PGBIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$PG_DIR"
	PG_DIR=
}
