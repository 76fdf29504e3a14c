#!/usr/bin/env bash
# Connections to the Prometheus port that never send 4 bytes cannot lock
# real scrapes out (issue #35 item 4).  With every undecided slot taken
# (--prometheus_max_connections, 1,024 by default, 32 here), a new
# connection used to be closed on arrival: 1,100 idle connections made
# every real scrape fail until their --prometheus_timeout_s ran out.  Now
# the connection held longest is closed for the newcomer, so scrapes made
# while 3x the cap of idle connections are held (and renewed) all succeed.
source "$(dirname "$0")/tracing-lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
start_daemon --use_prometheus --prometheus_address=127.0.0.1 --prometheus_port=0 \
	--prometheus_max_connections=32 --prometheus_timeout_s=60 --kernel_monitor_reporting_interval_s=1
PROM=$(sed -n 's|.*serving Prometheus metrics on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$WORK/daemon.log" | head -n 1)
[ -n "$PROM" ] || fail "no Prometheus port"
python3 - "$PROM" >"$WORK/load.out" 2>&1 <<'PY' || fail "$(cat "$WORK/load.out")"
import socket, sys, time
port = int(sys.argv[1])

def idle():
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    return s

def scrape():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            data += c
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    return data.startswith(b"HTTP/1.1 200") and b"dynolog_" in data

held = [idle() for _ in range(96)]
time.sleep(0.5)  # the daemon has accepted them all: every slot is taken
ok = 0
for i in range(10):
    ok += scrape()
    held += [idle() for _ in range(8)]  # the flood goes on between scrapes
print(f"{ok}/10 scrapes answered with {len(held)} idle connections opened")
assert ok == 10, f"only {ok}/10 scrapes answered"
PY
cat "$WORK/load.out"
stop_daemon
grep -q 'closing the oldest for a new one' "$WORK/daemon.log" || fail "eviction not logged"
echo ok
