#!/usr/bin/env bash
# The daemon's memory stays bounded against clients that do not read: 20,000
# processes with 64-pid ancestries registered over the abstract IPC socket
# (raw datagrams, as any local user can send), then for 12 s fresh connections (a 4 KiB receive
# buffer, so the daemon's kernel cannot take whole answers) keep sending
# {"fn":"getProcesses"} and never read, and 20 keep-alive connections
# pipeline 500 requests each without reading.  The daemon's VmRSS must stay
# under 64 MB, 96 under AddressSanitizer (it grew by hundreds of MB when every answer listed every
# process and unsent answers were kept without limit), getProcesses must
# say it was truncated, and the daemon must still answer afterwards.
# Loopback only, about 20 s.  (Before the cap: 395 MB.)  The registry
# admits 16 processes per sender socket and a quarter of the table per
# user, so the load comes from 1,250 sockets into a table of 100,000.
source "$(dirname "$0")/tracing-lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
# --ipc_bpf_filter=off: the load is 20,000 registrations from one process
# in a few seconds, which the kernel's datagram budget would mostly drop
# Under AddressSanitizer (make check SAN=1) freed blocks wait in a
# quarantine of up to 256 MB before reuse, so the RSS counted every answer
# ever freed (75 MB seen in CI on a fast run, 2,550 connections): a small
# quarantine, and room for the allocator's redzones and shadow (the base
# alone is ~32 MB there, ~20 without).  Unbounded, this load reached 395 MB.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
LIMIT_MB=64
case "$(ldd "$DYNOLOG" 2>/dev/null)" in *libasan*) LIMIT_MB=96 ;; esac
start_daemon --rpc_bind=127.0.0.1 --ipc_max_processes=100000 --ipc_bpf_filter=off
python3 - "$IPCNAME" "$PORT" "$DPID" "$LIMIT_MB" >"$WORK/load.out" 2>&1 <<'EOF' || fail "load: $(cat "$WORK/load.out")"
import os, resource, select, socket, struct, sys, time

name, port, dpid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
NPROC, LIMIT_KB = 20000, int(sys.argv[4]) * 1024

def rss_kb():
    with open(f"/proc/{dpid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("daemon gone")

def reader_that_does_not_read():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    return s

def frame(body):
    b = body.encode()
    return struct.pack("<i", len(b)) + b

def call(body):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(frame(body))
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    return data[4:].decode() if len(data) >= 4 else ""

# Kineto's poll ("req", type 2): int32 type, int32 n, int64 job, n int32 pids
daemon = f"\0{name}\0"
ipc = None
for i in range(NPROC):
    if i % 16 == 0:  # a new sender: the registry takes 16 per socket
        if ipc:
            ipc.close()
        ipc = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ipc.bind(f"\0dyno_it_load_{os.getpid()}_{i // 16}\0")
        ipc.setblocking(True)
    # the longest ancestry Kineto sends (64 pids): 11 MB if all were listed
    pids = [1000000 + i] + [900000 + i // 16 + k for k in range(63)]
    body = struct.pack("<iiq", 2, len(pids), 0) + struct.pack(f"<{len(pids)}i", *pids)
    msg = struct.pack("<Q", len(body)) + b"req".ljust(32, b"\0") + body
    ipc.sendto(msg, daemon)
    while select.select([ipc], [], [], 0)[0]:
        ipc.recv(64)  # the daemon's replies: drop them
deadline = time.time() + 20
while True:
    a = call('{"fn":"getProcesses"}')
    if a.startswith('{"count":%d,' % NPROC):
        break
    if time.time() > deadline:
        raise SystemExit("registrations did not arrive: " + a[:200])
    time.sleep(0.1)
if not a.endswith(',"truncated":true}') or a.count('"jobId"') != 1000:
    raise SystemExit("getProcesses not capped: %d bytes, %d listed" % (len(a), a.count('"jobId"')))
base = rss_kb()

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held, peak = [], base
ka = frame('{"fn":"getProcesses","keepalive":true}') * 500
for _ in range(20):
    s = reader_that_does_not_read()
    s.setblocking(False)
    try:
        s.send(ka)
    except BlockingIOError:
        pass
    held.append(s)
end = time.time() + 12
while time.time() < end:
    for _ in range(200):  # never read; the daemon keeps at most 256 open
        if len(held) >= hard - 64 or time.time() >= end:
            break
        s = reader_that_does_not_read()
        s.sendall(frame('{"fn":"getProcesses"}'))
        held.append(s)
    peak = max(peak, rss_kb())
    time.sleep(0.25)
peak = max(peak, rss_kb())
print(f"VmRSS {base} kB after registering {NPROC} processes, peak {peak} kB with {len(held)} non-reading connections")
if peak > LIMIT_KB:
    raise SystemExit(f"daemon RSS reached {peak} kB (limit {LIMIT_KB} kB)")
for s in held:
    s.close()
if call('{"fn":"getStatus"}') != '{"status":1}':
    raise SystemExit("daemon stopped answering")
EOF
cat "$WORK/load.out"
kill -0 "$DPID" || fail "daemon died"
# dyno says the list is partial
: "${DYNO:=$PWD/$BUILD/dyno}"
"$DYNO" status --hostname 127.0.0.1 --port "$PORT" >"$WORK/status" 2>&1 || fail "status: $(cat "$WORK/status")"
grep -q '^processes: 20000 registered, 1000 listed (the daemon truncated its list' "$WORK/status" ||
	fail "status: $(head -n 5 "$WORK/status")"
grep -q '^  (the daemon listed 1000 of its 20000 processes)$' "$WORK/status" || fail "status: $(tail -n 3 "$WORK/status")"
stop_daemon
grep -q Sanitizer "$WORK/daemon.log" && fail "sanitizer: $(cat "$WORK/daemon.log")"
echo ok
