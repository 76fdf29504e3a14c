#!/usr/bin/env bash
# dyno pointed at an HTTP server (a Prometheus port, a proxy in front of
# one) must say so instead of "invalid answer length 1347703880" ("HTTP"
# read as a length prefix).  The listener is a tiny python3 HTTP server on
# loopback that answers any request, as nginx does, with 400 Bad Request.
set -uo pipefail
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
python3 - "$tmp/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.settimeout(30)
    try:
        c.recv(4096)
        body = b"<html><body>400 Bad Request</body></html>\n"
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                  b"Connection: close\r\n\r\n%s" % (len(body), body))
    except OSError:
        pass
    c.close()
PY
srv=$!
for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { echo "FAIL: the HTTP listener did not start"; exit 1; }
port=$(cat "$tmp/port")
for cmd in status version; do
	"$DYNO" $cmd --hostname 127.0.0.1 --port "$port" --timeout-s 30 >"$tmp/o" 2>&1 && { echo "FAIL: $cmd exit 0"; cat "$tmp/o"; exit 1; }
	grep -q 'not a dynolog RPC server (it answered HTTP)' "$tmp/o" || { echo "FAIL: $cmd:"; cat "$tmp/o"; exit 1; }
done
"$DYNO" version --hostnames "127.0.0.1:$port" --timeout-s 30 >"$tmp/o" 2>&1
grep -q 'it answered HTTP' "$tmp/o" || { echo "FAIL: fan-out:"; cat "$tmp/o"; exit 1; }
echo ok
