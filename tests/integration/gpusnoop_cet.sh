#!/usr/bin/env bash
# gpusnoop on libraries built with -fcf-protection, where every function
# starts with endbr64: the kernel cannot emulate that instruction in a
# uprobe's trap and single-steps it (a second trap: ~10x the cost in a VM,
# bench/gpusnoop.sh).  gpusnoop puts each probe after it, on the
# instruction the kernel can emulate.  build/gpusnoop-leaky runs on the
# stand-in runtime and driver built that way (build/cet/, found first
# through LD_LIBRARY_PATH: leaky's RUNPATH comes after it).  Checks: -v
# says where each probe sits and what it replaces; the report is the same
# exact one gpusnoop_leaks.sh checks on the plain build (arguments and
# stacks read right from the moved probes); --probe-at-entry puts them back
# on the endbr64 and says so (the report notes the single-stepped probes).
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"
[ "$(uname -m)" = x86_64 ] || { echo "skip: endbr64 is x86-64's"; exit 77; }
skip_unless_bpf
cet=$BUILD/cet
[ -e "$cet/libcudart-fake.so" ] || { echo "$cet/libcudart-fake.so not built"; exit 1; }
export SNOOP_CMD="env LD_LIBRARY_PATH=$cet $BUILD/gpusnoop-leaky"

snoop "$tmp/moved.txt" -v
cat "$tmp/snoop.err" "$tmp/moved.txt"
# the CET build is the one probed (13 functions, 7 of them with a return probe)
grep -q "^gpusnoop: probe cudaMalloc in .*/cet/libcudart-fake.so+0x[0-9a-f]* (after its endbr64): push, emulated in the trap$" "$tmp/snoop.err"
grep -q "^gpusnoop: probe cudaMallocHost in .*/cet/libcudart-fake.so+0x[0-9a-f]* (after its endbr64): push, emulated in the trap$" "$tmp/snoop.err"
grep -q "^gpusnoop: probe cuMemFree_v2 in .*/cet/libcuda-fake.so+0x[0-9a-f]* (after its endbr64): " "$tmp/snoop.err"
# every probe moved: no function of the CET build keeps its probe on an endbr64
n=$(grep -c '^gpusnoop: probe ' "$tmp/snoop.err")
[ "$n" -eq 13 ] # the 13 functions of --events mem, in the two files
[ "$(grep -c '^gpusnoop: probe .* (after its endbr64): ' "$tmp/snoop.err")" -eq "$n" ]
if grep -q ': endbr64, single-stepped' "$tmp/snoop.err"; then echo "a probe left on an endbr64"; exit 1; fi
grep -q '^gpusnoop: pid [0-9]*, .* (process exited), 20 probes in 2 files$' "$tmp/moved.txt"
leaky_report "$tmp/moved.txt"

# on the entry: every probe on its endbr64, said per probe and in the report
snoop "$tmp/entry.txt" -v --probe-at-entry
cat "$tmp/entry.txt"
grep -q "^gpusnoop: probe cudaMalloc in .*/cet/libcudart-fake.so+0x[0-9a-f]*: endbr64, single-stepped (a second trap)$" "$tmp/snoop.err"
[ "$(grep -c ': endbr64, single-stepped (a second trap)$' "$tmp/snoop.err")" -eq "$n" ]
grep -q "^note: $n of the probes sit on an instruction the kernel single-steps" "$tmp/entry.txt"
leaky_report "$tmp/entry.txt"

# the JSON report counts them
snoop "$tmp/entry.json" --probe-at-entry --format json
"$DYNO" json -q "$tmp/entry.json"
grep -q "\"probes_single_stepped\":$n," "$tmp/entry.json"
snoop "$tmp/moved.json" --format json
moved=$(grep -o '"probes_single_stepped":[0-9]*' "$tmp/moved.json" | cut -d: -f2)
echo "single-stepped probes: $n on the entry, $moved after the endbr64"
[ "$moved" -lt "$n" ]
