#!/usr/bin/env bash
# dyno metrics against a real daemon: byte counters print as exact
# integers (not 2.48295e+10), --since 0 (the documented default) is
# accepted, --names that match nothing is an error naming them (exit 1),
# and a connection error prints no table header.
set -uo pipefail
tmp=$(mktemp -d)
dpid=
cleanup() { [ -n "$dpid" ] && kill "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$DYNOLOG" --port=0 --use_JSON=false --kernel_monitor_reporting_interval_s=1 2>"$tmp/d.log" &
dpid=$!
port=
for _ in $(seq 200); do
	port=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$tmp/d.log" | head -n 1)
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || fail "daemon did not start: $(cat "$tmp/d.log")"
M=("$DYNO" metrics --hostname 127.0.0.1 --port "$port")
# wait for a byte counter with a sample (rx/tx bytes, memory sizes are large)
for _ in $(seq 200); do
	"${M[@]}" --since 0 >"$tmp/o" 2>&1 && grep -Eq '_bytes.* [0-9]{7,} ' "$tmp/o" && break
	sleep 0.1
done
grep -Eq '_bytes.* [0-9]{7,} ' "$tmp/o" || fail "no exact byte counter: $(cat "$tmp/o")"
grep -q 'e+' "$tmp/o" && fail "exponent notation: $(cat "$tmp/o")"
head -n 1 "$tmp/o" | grep -q '^METRIC ' || fail "no header: $(cat "$tmp/o")"
"${M[@]}" --names 'nosuch*' >"$tmp/n" 2>"$tmp/ne"
rc=$?
[ $rc = 1 ] || fail "--names nosuch* exit $rc: $(cat "$tmp/n" "$tmp/ne")"
grep -q "no metric matched --names nosuch\*" "$tmp/ne" || fail "$(cat "$tmp/ne")"
[ -s "$tmp/n" ] && fail "a table without rows: $(cat "$tmp/n")"
kill "$dpid"; wait "$dpid" 2>/dev/null; dpid=
"${M[@]}" >"$tmp/c" 2>"$tmp/ce" && fail "metrics from a stopped daemon"
grep -q 'Connection refused' "$tmp/ce" || fail "$(cat "$tmp/ce")"
[ -s "$tmp/c" ] && fail "output before the connection error: $(cat "$tmp/c")"
echo ok
