#!/usr/bin/env bash
# --rpc_token_file must be a private regular file: a FIFO (which used to
# hang the daemon in open() with SIGTERM already blocked), a directory, a
# world-readable file and an oversized file are refused at start-up with a
# clear message and exit 1, quickly; a 0600 file works.
source "$(dirname "$0")/tracing-lib.bash"
expect_refused() { # expect_refused PATTERN TOKEN_PATH
	local rc=0
	timeout -s KILL 5 "$DYNOLOG" --port=0 --use_JSON=false --rpc_token_file="$2" 2>"$WORK/err.log" || rc=$?
	[ "$rc" = 1 ] || fail "$2: exit $rc (137 = hung): $(cat "$WORK/err.log")"
	grep -q "$1" "$WORK/err.log" || fail "$2: message: $(cat "$WORK/err.log")"
	grep -q Sanitizer "$WORK/err.log" && fail "$(cat "$WORK/err.log")"
	return 0
}
mkfifo -m 600 "$WORK/fifo"
expect_refused 'not a regular file' "$WORK/fifo"
expect_refused 'not a regular file' "$WORK"
printf 'correct-horse-battery\n' >"$WORK/open"
chmod 644 "$WORK/open"
expect_refused 'readable by other users' "$WORK/open"
head -c 100000 /dev/zero | tr '\0' a >"$WORK/big"
chmod 600 "$WORK/big"
expect_refused 'larger than' "$WORK/big"
# a private token file still works
printf 'correct-horse-battery\n' >"$WORK/ok"
chmod 600 "$WORK/ok"
start_daemon --rpc_token_file="$WORK/ok"
r=$(rpc '{"fn":"getStatus","token":"correct-horse-battery"}')
[ "$r" = '{"status":1}' ] || fail "good token: $r"
stop_daemon
echo ok
