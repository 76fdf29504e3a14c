#!/usr/bin/env bash
# gpusnoop --trace's per-device counters and large-allocation instants,
# through real uprobes on the stand-in runtime: build/gpusnoop-devices
# (tests/gpusnoop/devices.c) allocates on devices chosen by cudaSetDevice,
# cudaGetDevice and the driver's contexts, from three threads.  Checks the
# exact final bytes of each device's counter ("unknown" where the device
# cannot be known, "host" for pinned memory), that they add up to the
# report's memory + handles, an instant event for each allocation of at
# least --trace-min-bytes and for no other, the bound on their number
# (--trace-max-instants: the rest counted and said), and the trace against
# Perfetto's rules (build/trace-check).
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"

SNOOP_CMD=$BUILD/gpusnoop-devices snoop "$tmp/report.txt" --trace "$tmp/trace.json" --trace-min-bytes 2097152
cat "$tmp/report.txt"
grep -q '^never freed (memory): 23214672 bytes in 16 allocations ' "$tmp/report.txt"
grep -q '^never freed (handles): 2126152 bytes in 3 allocations ' "$tmp/report.txt"
"$BUILD/trace-check" "$tmp/trace.json"

# device -> its last point (the closing one: the report's moment)
last() {
	grep "\"name\":\"gpusnoop bytes on device $1\",\"ph\":\"C\"" "$tmp/trace.json" | tail -n 1 |
		sed -n 's/.*"args":{"bytes":\([0-9]*\)}}.*/\1/p'
}
declare -A want=([unknown]=55000 [host]=26000 [0]=41000 [1]=18874368 [2]=4205304 [3]=19000 [5]=2097152 [6]=23000)
sum=0
for d in "${!want[@]}"; do
	got=$(last "$d")
	echo "device $d: $got bytes (want ${want[$d]})"
	[ "$got" = "${want[$d]}" ] || { echo "device $d: wrong final bytes"; exit 1; }
	sum=$((sum + got))
done
# no other device (4 only had a context pushed; 99 does not exist)
[ "$(grep -o '"name":"gpusnoop bytes on device [^"]*"' "$tmp/trace.json" | sort -u | wc -l)" -eq "${#want[@]}" ]
[ "$sum" -eq $((23214672 + 2126152)) ]
# device 1 went up to 16 MiB + 3 MiB before the 3 MiB were freed
grep -q '"name":"gpusnoop bytes on device 1",.*"args":{"bytes":19922944}}' "$tmp/trace.json"

# instants: the allocations of at least 2 MiB, in order, and no other
grep '"ph":"i"' "$tmp/trace.json" | sed 's/.*"name":"\([^"]*\)".*"bytes":\([0-9]*\),.*"space":"\([a-z]*\)".*"device":"\([^"]*\)".*/\1 \2 \3 \4/' >"$tmp/instants"
cat "$tmp/instants"
diff - "$tmp/instants" <<'END'
cudaMalloc 16777216 memory 1
cudaMalloc 3145728 memory 1
cudaMallocAsync 2097152 memory 1
cudaMalloc 4194304 memory 2
cuMemCreate 2097152 handles 5
END
# on the thread that allocated
[ "$(grep -c "\"ph\":\"i\",\"pid\":$prog,\"tid\":$prog," "$tmp/trace.json")" -eq 5 ]

# bounded: two shown, three counted and said (in the trace and on stderr)
SNOOP_CMD=$BUILD/gpusnoop-devices snoop "$tmp/report2.txt" --trace "$tmp/trace2.json" --trace-min-bytes 2097152 \
	--trace-max-instants 2
"$BUILD/trace-check" "$tmp/trace2.json"
[ "$(grep -c '"ph":"i","pid":[0-9]*,"tid":[0-9]*,.*"s":"t"' "$tmp/trace2.json")" -eq 2 ]
grep -q '"name":"gpusnoop: large allocations left out","ph":"i",.*"args":{"left_out":3,"shown":2,"min_bytes":2097152}}' "$tmp/trace2.json"
grep -q "^gpusnoop: $tmp/trace2.json: 3 allocations of at least 2097152 bytes left out of the timeline (it shows the first 2, --trace-max-instants)$" "$tmp/snoop.err"

# the default size (16 MiB): only the 16 MiB cudaMalloc
SNOOP_CMD=$BUILD/gpusnoop-devices snoop "$tmp/report3.txt" --trace "$tmp/trace3.json"
[ "$(grep -c '"ph":"i"' "$tmp/trace3.json")" -eq 1 ]
grep -q '"name":"cudaMalloc","ph":"i",.*"bytes":16777216,' "$tmp/trace3.json"
