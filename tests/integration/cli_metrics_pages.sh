#!/usr/bin/env bash
# dyno metrics follows getMetrics pages: a real daemon over a fixture /proc
# with 5,000 CPUs (~40,000 keys a tick at 1 s) holds, after 8 ticks, an
# answer of ~7 MB: more than the kernel takes at once on loopback (~4 MB
# here) plus --rpc_max_queued_bytes (lowered to 64 KiB), so the daemon drops
# the connection of a client that reads.  Before paging, dyno metrics got
# "connection closed after 3919868 of the 8844466 announced answer bytes".
# With --history_max_answer_bytes=60000 the answer comes in pages of at most
# 60,000 bytes; dyno metrics (table and --json) must get every sample:
# --json is checked against unpaged answers up to the newest tick dyno saw:
# the key set (narrow name globs), every key's sample times (those of
# "uptime"), and the values of a sample of keys (by name).
source "$(dirname "$0")/tracing-lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
N=5000 MIN_BYTES=$((4 << 20))
if grep -qa __asan_init "$DYNOLOG"; then
	# a sanitizer daemon cannot tick 40,000 keys a second (its loop then
	# starves RPC): 500 CPUs, still ~12 pages, without the 4 MiB premise
	N=500 MIN_BYTES=0
fi
F=$WORK/fixture
mkdir -p "$F"
cp -r "$TESTDATA/procfs/basic/t0/." "$F/"
{
	echo "cpu  1000 100 500 8000 50 10 20 5 0 0"
	for ((i = 0; i < N; i++)); do echo "cpu$i 500 50 250 4000 25 5 10 3 0 0"; done
	grep -v '^cpu' "$TESTDATA/procfs/basic/t0/proc/stat"
} >"$F/proc/stat"
echo "0-$((N - 1))" >"$F/sys/devices/system/cpu/online"
start_daemon --procfs_root="$F/proc" --sysfs_root="$F/sys" --kernel_monitor_reporting_interval_s=1 \
	--rpc_max_queued_bytes=65536 --history_max_answer_bytes=60000 --history_max_series=100000
ticks() { rpc '{"fn":"getMetrics","names":["uptime"]}' | grep -o '\],\[' | wc -l; }
# 8 points; a deadline, not a count of tries (each try may wait for an answer)
end=$((SECONDS + 60))
while [ "$(ticks)" -lt 7 ]; do
	[ $SECONDS -lt $end ] || fail "fewer than 8 ticks in 60 s"
	sleep 0.2
done
M=("$DYNO" metrics --hostname 127.0.0.1 --port "$PORT")
"${M[@]}" >"$WORK/table" 2>"$WORK/table.err" || fail "dyno metrics: $(cat "$WORK/table.err")"
"${M[@]}" --json >"$WORK/json" 2>"$WORK/json.err" || fail "dyno metrics --json: $(cat "$WORK/json.err")"
# two daemons at once (the same one by two names): pages in rounds
"$DYNO" metrics --hostnames "127.0.0.1:$PORT,localhost:$PORT" --names 'cpu_u_ms*' --json >"$WORK/many" \
	2>"$WORK/many.err" || fail "dyno metrics --hostnames: $(cat "$WORK/many.err")"
[ -s "$WORK/many.err" ] && fail "noise: $(cat "$WORK/many.err")"
[ -s "$WORK/table.err" ] && fail "noise: $(cat "$WORK/table.err")"
[ -s "$WORK/json.err" ] && fail "noise: $(cat "$WORK/json.err")"
python3 - "$PORT" "$WORK/json" "$WORK/table" "$WORK/many" "$MIN_BYTES" <<'PY' || fail "python check"
import json, random, re, socket, struct, sys

port, jpath, tpath, mpath = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
raw = open(jpath, "rb").read()
ans = json.loads(raw)
assert set(ans) == {"interval_s", "metrics", "window_s"}, sorted(ans)
got = ans["metrics"]
keys = list(got)
assert keys == sorted(keys, key=lambda k: k.encode()), "keys out of order"
assert len(raw) > int(sys.argv[5]), f"the answer is only {len(raw)} bytes: too small to be dropped unpaged"
newest = max(p[0] for pts in got.values() for p in pts)

s, calls = None, 0
def call(req):
    global s, calls
    if calls % 500 == 0:  # under --rpc_max_requests_per_connection
        if s:
            s.close()
        s = socket.create_connection(("127.0.0.1", port))
    calls += 1
    body = json.dumps(req).encode()
    s.sendall(struct.pack("=i", len(body)) + body)
    def read(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            assert c, "closed"
            b += c
        return b
    (n,) = struct.unpack("=i", read(4))
    return json.loads(read(n))

# every key is there: the keys of each family enumerated with exact names
# and two-digit globs (each answer of a few hundred keys over the last
# second, whole), the other keys by name
fam = re.compile(r"^(.*\.cpu)\d+$")
fams = sorted({fam.match(k).group(1) for k in keys if fam.match(k)})
others = [k for k in keys if not fam.match(k)]
groups = [others]
for f in fams:
    groups.append([f + str(d) for d in range(10)])
    g = [f + str(d) + "*" for d in range(10, 100)]
    groups += [g[i:i + 3] for i in range(0, len(g), 3)]
seen = set()
for names in groups:
    a = call({"fn": "getMetrics", "keepalive": True, "since_s": 1, "names": names})
    assert "truncated" not in a, f"a reference answer was paged: {names}"
    seen.update(a["metrics"])
assert seen == set(keys), f"{len(seen - set(keys))} keys missing from dyno metrics, {len(set(keys) - seen)} extra"
# every key's samples are the ticks up to the newest dyno saw (a key of
# deltas starts one tick late), none twice, none missing
ticks = [p[0] for p in call({"fn": "getMetrics", "keepalive": True, "names": ["uptime"]})["metrics"]["uptime"]
         if p[0] <= newest]
assert len(ticks) >= 8, ticks
bad = [k for k in keys if [p[0] for p in got[k]] != ticks[len(ticks) - len(got[k]):] or len(got[k]) < len(ticks) - 1]
assert not bad, f"{len(bad)} keys with missing or repeated samples, first {bad[0]}: {got[bad[0]]} vs {ticks}"
# and the values: 300 keys at random and the non-CPU ones, against their
# own answers (20 names a request, whole)
sample = others + random.Random(1).sample(keys, 300)
for i in range(0, len(sample), 20):
    a = call({"fn": "getMetrics", "keepalive": True, "names": sample[i:i + 20]})
    assert "truncated" not in a, "a reference answer was paged"
    for k, pts in a["metrics"].items():
        assert got[k] == [p for p in pts if p[0] <= newest], f"{k}: {got[k]} vs {pts}"
npts = sum(len(v) for v in got.values())

# the two daemons' answers (asked last): each the cpu_u_ms keys, merged
# whole, the samples dyno saw first and newer ones after
lines = open(mpath).read().splitlines()
assert lines[-1] == "2 hosts: 2 ok, 0 failed", lines[-1]
assert len(lines) == 3, len(lines)
for line in lines[:2]:
    label, text = line.split(" ", 1)
    a = json.loads(text)
    assert set(a) == {"interval_s", "metrics", "window_s"}, (label, sorted(a))
    mk = [k for k in keys if k.startswith("cpu_u_ms")]
    assert list(a["metrics"]) == mk, label
    for k in mk:
        assert [p for p in a["metrics"][k] if p[0] <= newest] == got[k], (label, k)

rows = open(tpath).read().splitlines()
assert rows[0].startswith("METRIC "), rows[0]
names = [r.split()[0] for r in rows[1:]]
assert names == keys, f"table rows {len(names)} vs {len(keys)} keys"
for r in rows[1:]:
    k, n = r.split()[:2]
    assert 1 <= int(n) <= len(got[k]), r  # the table was asked first
print(f"{len(keys)} keys, {npts} points, {len(raw)} bytes in pages")
PY
echo ok
