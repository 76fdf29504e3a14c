#!/usr/bin/env bash
# The keep-alive extension with the real daemon binary: pipelined requests
# with "keepalive": true on one connection get their answers in order,
# byte-exact; the request without it is the last; the daemon closes a
# connection at --rpc_max_requests_per_connection; an upstream request (no
# "keepalive") still gets one answer and the close; the exit summary counts
# the kept-open requests.
source "$(dirname "$0")/tracing-lib.bash"
start_daemon --rpc_max_requests_per_connection=2 --rpc_timeout_ms=2000
frame() { # native (little-endian here) int32 length + body
	local n=${#1}
	printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8 & 255)))\\x00\\x00%s" "$1"
}
ka='{"fn":"getStatus","keepalive":true}'
{ frame "$ka"; frame '{"fn":"dcgmProfResume"}'; } >"$WORK/two"
"$RPC" --port="$PORT" --raw --timeout_ms=5000 <"$WORK/two" >"$WORK/answers" || fail "two requests: rc $?"
{ frame '{"status":1}'; frame '{"status":false}'; } | cmp - "$WORK/answers" || fail "two answers on one connection"
# four pipelined keep-alive requests, limit 2: two answers, then the close
{ frame "$ka"; frame "$ka"; frame "$ka"; frame "$ka"; } >"$WORK/four"
"$RPC" --port="$PORT" --raw --timeout_ms=5000 <"$WORK/four" >"$WORK/answers" || fail "four requests: rc $?"
{ frame '{"status":1}'; frame '{"status":1}'; } | cmp - "$WORK/answers" || fail "limit of 2 requests"
# upstream framing untouched: one answer, then the close
printf '\x12\x00\x00\x00{"fn":"getStatus"}' >"$WORK/framed"
"$RPC" --port="$PORT" --raw <"$WORK/framed" >"$WORK/answer"
printf '\x0c\x00\x00\x00{"status":1}' | cmp - "$WORK/answer" || fail "upstream getStatus answer"
stop_daemon
grep -q 'RPC: 3 connections, 5 answered, .* 2 keep-alive requests' "$WORK/daemon.log" ||
	fail "counters: $(grep 'RPC:' "$WORK/daemon.log")"
echo ok
