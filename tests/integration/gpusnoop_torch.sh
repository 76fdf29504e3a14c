#!/usr/bin/env bash
# gpusnoop where the CUDA functions are not exported, and --torch, on
# build/gpusnoop-torchy (tests/gpusnoop/torchy.c):
# - a runtime linked statically into another library (libtorch_cuda-fake.so:
#   the functions are local symbols in its .symtab): found there, the leak
#   exact, its function named;
# - the same library stripped: exit 5, naming the stripped file;
# - --torch on a stand-in for PyTorch's caching allocator
#   (libc10_cuda-fake.so, its C++ symbols): block-level leaks (torch space)
#   apart from the segments the cache holds (memory space), with and
#   without the cache (PYTORCH_NO_CUDA_MEMORY_CACHING=1); C++ frames
#   demangled in the leak stacks and the sync stacks (and kept mangled
#   beside in the JSON); its tensor deleter static (found in .symtab), and
#   that stripped (the tensor path not probed, said);
# - --torch where no allocator is mapped: said, and the rest still probed.
set -euo pipefail
. "$(dirname "$0")/lib/gpusnoop.sh"
torchy="$BUILD/gpusnoop-torchy"
lib=$(cd "$BUILD" && pwd)

SNOOP_CMD="$torchy static $lib/libtorch_cuda-fake.so" snoop "$tmp/static.txt"
cat "$tmp/static.txt"
# 13 memory functions in one file, none exported (torchy itself imports none)
grep -q '^gpusnoop: pid [0-9]*, .* (process exited), 20 probes in 1 files$' "$tmp/static.txt"
grep -q '^never freed (memory): 8192 bytes in 2 allocations ' "$tmp/static.txt"
grep -q '^seen: 3 allocations, 2 frees ' "$tmp/static.txt"
# every group is static_leak's (one call site, or two where the compiler unrolled the loop)
[ "$(grep -A1 -E '^[0-9]+ bytes in [0-9]+ allocations \(memory\) via cudaMalloc$' "$tmp/static.txt" |
	grep -Ec '^    static_leak \(.*tests/gpusnoop/torch_cuda_fake\.c:[0-9]+\)$')" -eq \
	"$(grep -Ec ' bytes in [0-9]+ allocations \(.*\) via ' "$tmp/static.txt")" ]

rc=0
SNOOP_CMD="$torchy static $lib/libtorch_cuda-fake-stripped.so" bash -c '
	. "$(dirname "$0")/lib/gpusnoop.sh"; snoop_start "$1"' "$0" "$tmp/stripped.txt" >"$tmp/stripped.out" 2>&1 || rc=$?
cat "$tmp/stripped.out"
[ "$rc" -eq 1 ] # snoop_start: gpusnoop did not start...
grep -q '^gpusnoop did not start (exit 5)$' "$tmp/stripped.out"
grep -q "^gpusnoop: warning: /proc/[0-9]*/root$lib/libtorch_cuda-fake-stripped.so is stripped (no .symtab) and exports none of the probed functions: a CUDA runtime linked into it cannot be found without its symbols$" "$tmp/stripped.out"
grep -q '^gpusnoop: process [0-9]* maps no file holding the probed CUDA functions (cudaMalloc, cuMemAlloc_v2, ...) that can be found: 1 stripped file(s) named like CUDA libraries may hold them' "$tmp/stripped.out"

# --torch with the cache: 3 tensors of 1000 bytes, one freed; a 5000-byte
# workspace freed; the cache's one 2 MiB segment stays (memory, not torch)
SNOOP_CMD="$torchy torch $lib/libc10_cuda-fake.so" snoop "$tmp/torch.txt" --torch --format json
"$DYNO" json -q "$tmp/torch.txt"
cat "$tmp/torch.txt"
grep -q '"events":\["mem","torch"\],"probes":27,"files":3,' "$tmp/torch.txt"
grep -q '"leaked":{"memory":{"bytes":2097152,"count":1,.*"torch":{"bytes":2000,"count":2,"peak_bytes":7000}}' "$tmp/torch.txt"
grep -q '{"bytes":2000,"count":2,"space":"torch","via":\["NativeCachingAllocator::allocate"\],"stack":\[{"addr":"0x[0-9a-f]*","function":"leak_tensors",' "$tmp/torch.txt"
# allocate and raw_alloc, one block each (malloc, inside both, not probed): 4 torch + 1 segment
grep -q '"allocations":5,"frees":2,"unmatched_frees":0,' "$tmp/torch.txt"
# the JSON frame: demangled, with the mangled symbol beside
grep -q '"function":"c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void\*\*, signed char, unsigned long, CUstream_st\*)","offset":[0-9]*,"symbol":"_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator6mallocEPPvamP11CUstream_st",' "$tmp/torch.txt"

# without the cache: each tensor is its own cudaMalloc, freed by
# uncached_delete (found in .symtab); raw_alloc still caches
SNOOP_CMD="env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $torchy torch $lib/libc10_cuda-fake.so" snoop "$tmp/nocache.txt" --torch \
	--events mem,sync
cat "$tmp/nocache.txt"
grep -q '^never freed (torch): 2000 bytes in 2 allocations ' "$tmp/nocache.txt"
grep -q '^never freed (memory): 2099152 bytes in 3 allocations ' "$tmp/nocache.txt"
# C++ frames demangled (libstdc++'s __cxa_demangle)
grep -A1 -x '2000 bytes in 2 allocations (memory) via cudaMalloc' "$tmp/nocache.txt" |
	grep -q '^    c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long) (.*tests/gpusnoop/c10_cuda_fake\.c:[0-9]*)$'
if grep -q '_ZN' "$tmp/nocache.txt"; then echo "a frame left mangled"; exit 1; fi
# and in the sync stacks: torchy's two c10::cuda::device_synchronize() calls
grep -q '^synchronisations: 2 .*cudaDeviceSynchronize 2,' "$tmp/nocache.txt"
[ "$(grep -A1 -E '^1 synchronisations .* via cudaDeviceSynchronize$|^2 synchronisations .* via cudaDeviceSynchronize$' "$tmp/nocache.txt" |
	grep -Ec '^    c10::cuda::device_synchronize\(\) \(.*tests/gpusnoop/c10_cuda_fake\.c:[0-9]+\)$')" -ge 1 ]
[ "$(grep -A1 -E '^[0-9]+ synchronisations ' "$tmp/nocache.txt" | grep -c '^    ')" -eq \
	"$(grep -A1 -E '^[0-9]+ synchronisations ' "$tmp/nocache.txt" | grep -c '^    c10::cuda::device_synchronize() (')" ]
grep -A1 -x '2000 bytes in 2 allocations (torch) via NativeCachingAllocator::allocate' "$tmp/nocache.txt" | grep -q '^    leak_tensors ('

# the tensor deleter static, as in PyTorch 2.11's wheel (mangled with an L,
# in .symtab only): found, and the same leaks as with the exported one
SNOOP_CMD="$torchy torch $lib/libc10_cuda-fake-static.so" snoop "$tmp/static-del.txt" --torch --format json
grep -q '"events":\["mem","torch"\],"probes":27,"files":3,' "$tmp/static-del.txt"
grep -q '"leaked":{"memory":{"bytes":2097152,"count":1,.*"torch":{"bytes":2000,"count":2,"peak_bytes":7000}}' "$tmp/static-del.txt"
grep -q '"allocations":5,"frees":2,"unmatched_frees":0,' "$tmp/static-del.txt"
# ... and stripped: the deleter is nowhere, so the tensor path is not probed
# (every tensor would look never freed; on a real H200 run 1.47 GB of them
# did); the workspace (raw_alloc/raw_delete) and the cache's cudaMalloc are
SNOOP_CMD="$torchy torch $lib/libc10_cuda-fake-static-stripped.so" snoop "$tmp/nodel.txt" --torch
cat "$tmp/snoop.err" "$tmp/nodel.txt"
grep -q "^gpusnoop: warning: --torch: PyTorch's tensor deleter (local_raw_delete) is in no mapped file (static in newer builds, and this one has no .symtab): tensor blocks would all look never freed, so NativeCachingAllocator::allocate and ::malloc are not probed; raw_alloc/raw_delete and the CUDA calls under the cache are$" "$tmp/snoop.err"
grep -q '^gpusnoop: --torch: not found in any mapped file, not probed: local_raw_delete, uncached_delete$' "$tmp/snoop.err"
grep -q '^never freed (torch): 0 bytes in 0 allocations ' "$tmp/nodel.txt"
grep -q '^never freed (memory): 2097152 bytes in 1 allocations ' "$tmp/nodel.txt"
grep -q '^seen: 2 allocations, 1 frees ' "$tmp/nodel.txt"

# --torch where no allocator is mapped: every missing function named,
# memory still watched, the torch space absent (not zero)
snoop "$tmp/none.txt" --torch
grep -q '^gpusnoop: warning: --torch: none of its functions found in any mapped file (NativeCachingAllocator::allocate, NativeCachingAllocator::malloc, NativeCachingAllocator::raw_alloc, local_raw_delete, NativeCachingAllocator::raw_delete, uncached_delete)$' "$tmp/snoop.err"
grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$tmp/none.txt"
if grep -q 'torch' "$tmp/none.txt"; then echo "a torch line without its probes"; exit 1; fi
