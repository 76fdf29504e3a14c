#!/usr/bin/env bash
# A request's JSON tree is built only after its token and "fn" are checked,
# and only up to RPC_MAX_VALUES values (issue #35 item 2).  A 1 MB body of
# {"fn":"getStatus","x":[0,0,...]} (~500,000 values) was parsed into a
# ~40 MB tree before the token was even checked: VmHWM 5.7 -> 47 MB with
# a wrong token.  Now: a wrong token is refused without a tree, the right
# token gets "request too large", an unknown fn is closed, and the peak
# RSS grows by less than 8 MB over ten such requests; a request of honest
# size still works.  Loopback only, a few seconds.
source "$(dirname "$0")/tracing-lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
# Under AddressSanitizer freed bodies wait in its quarantine (256 MB by
# default) and count in the RSS: a small one, and twice the room (a tree
# of the old code took ~40 MB a request either way).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
LIMIT_KB=8192
case "$(ldd "$DYNOLOG" 2>/dev/null)" in *libasan*) LIMIT_KB=16384 ;; esac
printf 'correct-horse-battery\n' >"$WORK/tok"
chmod 600 "$WORK/tok"
start_daemon --rpc_bind=127.0.0.1 --rpc_token_file="$WORK/tok"
python3 - "$PORT" "$DPID" "$LIMIT_KB" >"$WORK/load.out" 2>&1 <<'PY' || fail "$(cat "$WORK/load.out")"
import socket, struct, sys
port, dpid, limit_kb = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

def hwm_kb():
    with open(f"/proc/{dpid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

def call(body):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(struct.pack("<i", len(body)) + body)
    data = b""
    while True:
        c = s.recv(1 << 16)
        if not c:
            break
        data += c
    s.close()
    return data[4:].decode()

# the largest body under --rpc_max_frame (1 MiB): ~500,000 values
def big(head):
    zeros = b",".join([b"0"] * 520000)
    return b'{' + head + b',"x":[' + zeros + b']}'

ok = call(b'{"fn":"getStatus","token":"correct-horse-battery"}')
assert ok == '{"status":1}', ok
before = hwm_kb()
for _ in range(4):
    r = call(big(b'"fn":"getStatus","token":"wrong"'))
    assert "unauthorized" in r, r[:200]
mid = hwm_kb()
print(f"VmHWM {before} -> {mid} kB after four wrong tokens")
assert mid - before < limit_kb, f"peak RSS grew by {mid - before} kB with a wrong token"
for _ in range(3):
    r = call(big(b'"token":"correct-horse-battery","fn":"getStatus"'))
    assert "request too large" in r, r[:200]
for _ in range(3):
    r = call(big(b'"fn":"noSuchFunction","token":"correct-horse-battery"'))
    assert r == "", r[:200]
# deep nesting is refused before a tree as well (the tokenizer's depth)
r = call(b'{"fn":"getStatus","token":"correct-horse-battery","x":' + b"[" * 100 + b"]" * 100 + b"}")
assert r == "", r[:200]
after = hwm_kb()
print(f"VmHWM {before} -> {after} kB")
assert after - before < limit_kb, f"peak RSS grew by {after - before} kB"
ok = call(b'{"fn":"getStatus","token":"correct-horse-battery","pids":[' + b",".join([b"1"] * 1000) + b"]}")
assert ok == '{"status":1}', ok
PY
cat "$WORK/load.out"
stop_daemon
echo ok
