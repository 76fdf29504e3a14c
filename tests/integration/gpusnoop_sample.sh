#!/usr/bin/env bash
# --launch-sample: the launch probes attached for a window of each period,
# detached between, the counts scaled by the time they counted.  The
# program is build/gpusnoop-churn on a wall-clock schedule (CHURN_PACE_US:
# one pair and one cudaLaunchKernel every 1 ms, 3,000 in all, whatever the
# probes cost), so the true count is known.  Checks: the report says the
# launches were sampled (share, counted, counting seconds) and its estimate
# is near the truth (the schedule's slack: 25%); the table says so too;
# the breakpoint itself comes and goes (the probed instruction's first
# byte read from the process's memory: int3 while a window is open, the
# original byte between: the traps, not only the counting, are gone);
# --launch-sample 100 counts every launch and leaves the breakpoint in.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"
skip_unless_bpf
export SNOOP_CMD="env CHURN_THREADS=1 CHURN_PAIRS=3000 CHURN_PACE_US=1000 CHURN_LAUNCH=1 CHURN_STACKS=1 CHURN_DEPTH=0 CHURN_LEAKS=0 CHURN_WINDOW=1 $BUILD/gpusnoop-churn"

# watch_byte PID FILE-OFFSET MAPPED-FILE OUT: the byte at that file offset in
# the process's memory, every 20 ms until the process exits, one per line
watch_byte() {
	python3 - "$@" <<'EOF' &
import sys, time
pid, off, path, out = int(sys.argv[1]), int(sys.argv[2], 16), sys.argv[3], sys.argv[4]
addr = None
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5] == path:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        moff = int(f[2], 16)
        if moff <= off < moff + (hi - lo):
            addr = lo + off - moff
with open(out, "w") as o:
    if addr is None:
        o.write("unmapped\n")
        sys.exit(0)
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as m:
            while True:
                m.seek(addr)
                b = m.read(1)
                if len(b) != 1: # the process is gone
                    break
                o.write(b.hex() + "\n")
                o.flush()
                time.sleep(0.02)
    except OSError:
        pass
EOF
	pids+=($!)
}

# where the probe on cudaLaunchKernel sits (-v), and that file's real path
probe_at() {
	local line
	line=$(grep '^gpusnoop: probe cudaLaunchKernel in ' "$tmp/snoop.err")
	off=$(sed -n 's/.*+0x\([0-9a-f]*\).*/\1/p' <<<"$line")
	file=$(sed -n 's|^gpusnoop: probe cudaLaunchKernel in /proc/[0-9]*/root\(/[^+]*\)+0x.*|\1|p' <<<"$line")
	[ -n "$off" ] && [ -n "$file" ] || { echo "no probe line: $line"; exit 1; }
}

snoop_start "$tmp/sampled.json" -v --events launch --launch-sample 20 --launch-period 1 --format json
probe_at
watch_byte "$prog" "$off" "$file" "$tmp/bytes.txt"
snoop_go
snoop_end
cat "$tmp/prog.out" "$tmp/sampled.json"
"$DYNO" json -q "$tmp/sampled.json"
grep -q '^done pairs=3000 ' "$tmp/prog.out"
total=$(grep -o '"launches":{"total":[0-9]*' "$tmp/sampled.json" | grep -o '[0-9]*$')
counted=$(grep -o '"sampled":{"percent":20,"counted":[0-9]*' "$tmp/sampled.json" | grep -o '[0-9]*$')
on=$(grep -o '"counting_seconds":[0-9.e+-]*' "$tmp/sampled.json" | cut -d: -f2)
echo "launches: 3000 made, $counted counted in $on s, $total estimated"
# three windows of 0.2 s in a ~3 s run: ~600 counted, and the estimate near 3000
[ "$counted" -gt 0 ] && [ "$counted" -lt 1500 ]
awk -v o="$on" 'BEGIN { exit !(o > 0.3 && o < 1.5) }'
[ "$total" -gt 2250 ] && [ "$total" -lt 3750 ]
grep -q "\"by_function\":{\"cudaLaunchKernel\":$total,\"cuLaunchKernel\":0," "$tmp/sampled.json"
# the breakpoint came and went: int3 (cc) in a window, the push (55) between
sort "$tmp/bytes.txt" | uniq -c
grep -qx cc "$tmp/bytes.txt"
grep -qx 55 "$tmp/bytes.txt"

# the table says it is an estimate, and from what
snoop "$tmp/sampled.txt" --events launch --launch-sample 20 --launch-period 1
cat "$tmp/sampled.txt"
grep -Eq '^launches: [0-9]+ \(.*\): cudaLaunchKernel [0-9]+, ' "$tmp/sampled.txt"
grep -Eq '^  estimated over the run: ~[0-9]+ \([0-9.]+/s\): the launch probes counted the above in [0-9.]+ s of [0-9.]+ s \(--launch-sample 20; 100: every launch\)$' "$tmp/sampled.txt"

# every launch: exact, no estimate, the breakpoint in all along
snoop_start "$tmp/all.json" -v --events launch --launch-sample 100 --format json
probe_at
watch_byte "$prog" "$off" "$file" "$tmp/bytes.txt"
snoop_go
snoop_end
cat "$tmp/all.json"
grep -q '"launches":{"total":3000,"per_second":[0-9.e+-]*,"by_function":{"cudaLaunchKernel":3000,' "$tmp/all.json"
if grep -q '"sampled"' "$tmp/all.json"; then echo "sampled at 100%"; exit 1; fi
sort "$tmp/bytes.txt" | uniq -c
[ "$(sort -u "$tmp/bytes.txt")" = cc ]

# the option's bounds
rc=0
"$DYNO" gpusnoop --pid "$$" --launch-sample 0 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'launch-sample' "$tmp/err"
rc=0
"$DYNO" gpusnoop --pid "$$" --launch-period 0.1 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q '^gpusnoop: --launch-period must be within 0.2 and 3600 s$' "$tmp/err"
