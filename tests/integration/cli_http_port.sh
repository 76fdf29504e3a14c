#!/usr/bin/env bash
# dyno pointed at an HTTP server (a Prometheus port, a proxy in front of
# one) must say so instead of "invalid answer length 1347703880" ("HTTP"
# read as a length prefix).  The listener is a tiny python3 HTTP server on
# loopback that answers any request, as nginx does, with 400 Bad Request;
# then our own daemon's Prometheus port, an HTTP server that waits for a
# whole request line: it must recognise dyno's RPC frame and answer 400 at
# once (before, dyno waited its whole --timeout-s for "no complete answer").
set -uo pipefail
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill $srv 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
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

# Our daemon's Prometheus port (libmicrohttpd waits for a request line that
# an RPC frame never completes).  --timeout-s is long, so an answer that
# only comes with the timeout fails on the message, not on timing.
"$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 --kernel_monitor_reporting_interval_s=1 \
	--json_log_file=/dev/null 2>"$tmp/dynolog.log" &
dpid=$!
srv="$srv $dpid"
for _ in $(seq 200); do grep -q 'serving Prometheus' "$tmp/dynolog.log" && break; sleep 0.05; done
pport=$(sed -n 's|.*serving Prometheus metrics on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$tmp/dynolog.log" | tail -n 1)
[ -n "$pport" ] || { echo "FAIL: no Prometheus port in the daemon's log:"; cat "$tmp/dynolog.log"; exit 1; }
rport=$(sed -n 's|.*RPC server listening on .* port \([0-9]*\).*|\1|p' "$tmp/dynolog.log" | head -n 1)
for cmd in status version; do
	"$DYNO" $cmd --hostname 127.0.0.1 --port "$pport" --timeout-s 20 >"$tmp/o" 2>&1 && { echo "FAIL: $cmd exit 0"; cat "$tmp/o"; exit 1; }
	grep -q 'not a dynolog RPC server (it answered HTTP)' "$tmp/o" || { echo "FAIL: prometheus port, $cmd:"; cat "$tmp/o"; exit 1; }
done
# what the 400 says, read as a client that speaks dynolog RPC would send it
python3 - "$pport" >"$tmp/answer" <<'PY'
import socket, struct, sys
body = b'{"fn":"getStatus"}'
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(struct.pack("<i", len(body)) + body)
out = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    out += d
sys.stdout.write(out.decode())
PY
head -n 1 "$tmp/answer" | grep -q '^HTTP/1.1 400 ' || { echo "FAIL: answer:"; cat "$tmp/answer"; exit 1; }
grep -q "dynolog's Prometheus port" "$tmp/answer" || { echo "FAIL: answer body:"; cat "$tmp/answer"; exit 1; }
if [ -n "$rport" ]; then
	grep -q "RPC is on port $rport" "$tmp/answer" || { echo "FAIL: answer does not name RPC port $rport:"; cat "$tmp/answer"; exit 1; }
fi
# and the port still serves HTTP, also to a client that sends its request in pieces
python3 - "$pport" >"$tmp/page" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
for piece in (b"GE", b"T /metr", b"ics HTTP/1.0\r\n\r\n"):
    s.sendall(piece)
    time.sleep(0.05)
out = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    out += d
sys.stdout.write(out.decode())
PY
head -n 1 "$tmp/page" | grep -Eq '^HTTP/1.[01] (200|503) ' || { echo "FAIL: /metrics in pieces:"; head -c 300 "$tmp/page"; exit 1; }
"$DYNO" status --hostname 127.0.0.1 --port "$rport" --timeout-s 20 >"$tmp/o" 2>&1 || { echo "FAIL: status on the RPC port:"; cat "$tmp/o"; exit 1; }
echo ok
