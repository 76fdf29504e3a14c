#!/usr/bin/env bash
# The real default endpoint, @dynolog@ with its trailing NUL (addrlen 11),
# exercised in a private network namespace so it cannot collide with a
# daemon already running on this host.  Skips where unprivileged user and
# network namespaces are not available.
set -uo pipefail
: "${BUILD:=build}" "${DYNOLOG:=$PWD/$BUILD/dynolog}"
if ! unshare -rn true 2>/dev/null; then
	echo "no unprivileged network namespaces (unshare -rn)"
	exit 77
fi
WORK=$(mktemp -d /tmp/dyno-it-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
unshare -rn bash -c '
	set -e
	"$1" --port=0 --use_JSON=false --enable_ipc_monitor 2>"$3/d.log" &
	D=$!
	for i in $(seq 100); do grep -q "IPC endpoint listening at @dynolog@" "$3/d.log" && break; sleep 0.05; done
	grep -q "@dynolog@" /proc/net/unix || { echo "no @dynolog@ in /proc/net/unix"; exit 1; }
	"$2" --run_s=1 --poll_interval_ms=100 >"$3/k.log"
	grep -q registered "$3/k.log" || { echo "default-name client got no answer"; cat "$3/k.log"; exit 1; }
	kill $D; wait $D
' _ "$DYNOLOG" "$PWD/$BUILD/fake-kineto" "$WORK" || { cat "$WORK"/*.log; exit 1; }
echo ok
