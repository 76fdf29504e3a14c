#!/usr/bin/env bash
# Fan-out against real daemons: 64 dynolog processes on loopback ports, one
# `dyno gputrace --hostnames ...` call; every daemon must answer (no process
# is registered, so each reports no match), then the same with one daemon
# killed must exit 1 and name it.
set -uo pipefail
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# --port=0: the kernel picks free ports (fixed ones can be taken on a busy
# machine); each daemon logs the port it got.
for i in $(seq 0 63); do
	"$DYNOLOG" --port=0 --use_JSON=false >/dev/null 2>"$tmp/d$i.err" &
	pids+=($!)
done
ports=()
for i in $(seq 0 63); do
	port=
	for _ in $(seq 300); do
		port=$(sed -n 's/.*RPC server listening on .* port \([0-9]*\).*/\1/p' "$tmp/d$i.err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "daemon $i did not start its RPC server:"; cat "$tmp/d$i.err"; exit 1; }
	ports+=("$port")
done
hosts=
for p in "${ports[@]}"; do hosts+="${hosts:+,}127.0.0.1:$p"; done
# wait until all answer
for _ in $(seq 100); do
	"$DYNO" version --hostnames "$hosts" --timeout-s 2 >"$tmp/v" 2>&1 && break
	sleep 0.2
done
grep -q '64 hosts: 64 ok, 0 failed' "$tmp/v" || { echo "daemons not up:"; tail -5 "$tmp/v"; exit 1; }

"$DYNO" gputrace --hostnames "$hosts" --log-file '/tmp/fan_{host}.json' >"$tmp/g" 2>&1
rc=$?
[ $rc = 0 ] || { echo "gputrace exit $rc"; cat "$tmp/g"; exit 1; }
grep -q '64 hosts: 0 ok, 64 without a matching process, 0 failed' "$tmp/g" || { cat "$tmp/g"; exit 1; }
[ "$(grep -c 'no-match' "$tmp/g")" = 64 ] || { cat "$tmp/g"; exit 1; }
grep -q 'synchronized start for all daemons: PROFILE_START_TIME=' "$tmp/g" || { cat "$tmp/g"; exit 1; }

kill "${pids[7]}"; wait "${pids[7]}" 2>/dev/null
"$DYNO" gputrace --hostnames "$hosts" --log-file '/tmp/fan_{host}.json' --timeout-s 2 >"$tmp/g2" 2>&1
rc=$?
[ $rc = 1 ] || { echo "exit $rc with a dead daemon"; cat "$tmp/g2"; exit 1; }
grep -q "127.0.0.1:${ports[7]} .*FAILED" "$tmp/g2" || { cat "$tmp/g2"; exit 1; }
grep -q '64 hosts: 0 ok, 63 without a matching process, 1 failed' "$tmp/g2" || { cat "$tmp/g2"; exit 1; }
echo ok
