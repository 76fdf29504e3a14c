#!/usr/bin/env bash
# The FLOPs/s estimate end to end with the fake NVML (tests/fake/nvml.c):
# per GPU model, scripted pipe activities and SM clock, the value on the
# JSON log and on Prometheus equals the arithmetic done here from the
# scripted inputs and the peak table (data/gpu-peaks.tsv, found by the
# daemon next to its build directory); absent (never 0) without GPM, for
# a model the table lacks, without a clock, and with a bad table (named
# with file:line).
set -euo pipefail
[ -n "${DEBUG:-}" ] && set -x
. "$(dirname "$0")/lib/telemetry.sh"
LIB=$PWD/$BUILD/libfake-nvml.so
TABLE=$PWD/data/gpu-peaks.tsv
[ -f "$LIB" ] || { echo "needs $LIB (make)"; exit 1; }
fail() { echo "FAIL: $*"; tail -n 20 "$T"/*.log 2>/dev/null; exit 1; }

# GPM metric ids: 5 any tensor, 13 FP16, 12 FP32, 11 FP64 (percent); GPU 0
# also has the tensor split: 7 HMMA, 6 DFMA, 9 IMMA
cat >"$T/script" <<'S'
gpus 5
name 0 NVIDIA H100 80GB HBM3
uuid 0 GPU-00000000-0000-0000-0000-000000000000
clock_sm 0 1650
gpm 0 5 60
gpm 0 7 45
gpm 0 6 10
gpm 0 9 5
gpm 0 13 10
gpm 0 12 5
gpm 0 11 0
name 1 NVIDIA A100-SXM4-80GB
uuid 1 GPU-11111111-0000-0000-0000-000000000000
clock_sm 1 1410
gpm 1 5 40
gpm 1 13 0.5
gpm 1 12 30
gpm 1 11 0
name 2 NVIDIA H100 PCIe
clock_sm 2 1755
nogpm 2
name 3 NVIDIA Foo 9000
clock_sm 3 1500
gpm 3 5 50
gpm 3 13 1
gpm 3 12 1
gpm 3 11 1
name 4 NVIDIA H100 80GB HBM3
gpm 4 5 50
gpm 4 13 1
gpm 4 12 1
gpm 4 11 0
S

run_daemon() { # log-name flags...
	local name=$1
	shift
	FAKE_NVML_SCRIPT=$T/script "$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 \
		--kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor --dcgm_reporting_interval_s=1 \
		--nvml_library="$LIB" --json_format=jsonl --json_log_file="$T/$name.jsonl" "$@" 2>"$T/$name.log" &
	PIDS+=($!)
	wait_for grep -q 'serving Prometheus' "$T/$name.log" || fail "$name: no Prometheus"
	PORT=$(prom_port_from_log "$T/$name.log")
}

# peak MATCH PIPE: "tflops mhz" of the table's row
peak() { awk -F'\t+' -v m="$1" -v p="$2" '!/^#/ && $1 == m && $3 == p { print $4, $5 }' "$TABLE"; }
# term ACTIVITY% MATCH PIPE CLOCK: activity x peak x clock / quoted clock, FLOP/s
term() { read -r tf mhz < <(peak "$2" "$3"); awk -v a="$1" -v t="$tf" -v m="$mhz" -v c="$4" 'BEGIN { printf "%.17g\n", a / 100 * t * 1e12 * c / m }'; }
sum() { awk '{ s += $1 } END { printf "%.17g\n", s }'; }
H100='H100 80GB HBM3|H100 SXM'
# GPU 0: GPM's split: HMMA at the FP16/BF16 rate, DFMA at the FP64 tensor
# rate, IMMA none (the any-tensor 60 % unused)
want0=$({ term 45 "$H100" tensor_fp16 1650; term 10 "$H100" tensor_fp64 1650; term 10 "$H100" fp16 1650
	term 5 "$H100" fp32 1650; } | sum)
pct0=$(awk -v f="$want0" -v t="$(peak "$H100" tensor_fp16 | cut -d' ' -f1)" 'BEGIN { printf "%.17g\n", 100 * f / (t * 1e12) }')
# GPU 1: no split: all tensor activity at the FP16/BF16 rate, also with an
# idle FP16 pipe and a busy FP32 one (a BF16 training loop on an H200 looks
# so; this was once taken for TF32)
want1=$({ term 40 A100-SXM4 tensor_fp16 1410; term 0.5 A100-SXM4 fp16 1410; term 30 A100-SXM4 fp32 1410; } | sum)
pct1=$(awk -v f="$want1" -v t="$(peak A100-SXM4 tensor_fp16 | cut -d' ' -f1)" 'BEGIN { printf "%.17g\n", 100 * f / (t * 1e12) }')
[ -n "$want0" ] && [ -n "$want1" ] || fail "the table lacks the rows this test reads"
# at the published resolution (gpu_flops.h, printf's rounding): FLOP/s to 4
# significant digits, % of peak to 0.01 (test_gpu_flops.c checks the sums unrounded)
want0=$(awk -v v="$want0" 'BEGIN { printf "%.3e\n", v }')
want1=$(awk -v v="$want1" 'BEGIN { printf "%.3e\n", v }')
pct0=$(awk -v v="$pct0" 'BEGIN { printf "%.2f\n", v }')
pct1=$(awk -v v="$pct1" 'BEGIN { printf "%.2f\n", v }')

# near GOT WANT: equal to 1e-9 relative (the daemon prints shortest round-trip doubles)
near() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-9 * w) }'; }
json_val() { grep -o "\"$1\":[^,}]*" <<<"$2" | cut -d: -f2; }

# ---- the default table (the source tree's), every case ----
run_daemon full
wait_for grep -q '"gpu_flops.1"' "$T/full.jsonl" || fail "no gpu_flops.1 on the JSON log"
grep -q "GPU peak table: [0-9]* models from .*/data/gpu-peaks.tsv" "$T/full.log" || fail "table not found by default"
last=$(grep '"gpu_flops.0"' "$T/full.jsonl" | tail -n 1)
near "$(json_val gpu_flops.0 "$last")" "$want0" || fail "JSON gpu_flops.0: want $want0: $last"
near "$(json_val gpu_flops_peak_pct.0 "$last")" "$pct0" || fail "JSON gpu_flops_peak_pct.0: want $pct0: $last"
near "$(json_val gpu_flops.1 "$last")" "$want1" || fail "JSON gpu_flops.1: want $want1: $last"
near "$(json_val gpu_flops_peak_pct.1 "$last")" "$pct1" || fail "JSON gpu_flops_peak_pct.1: want $pct1: $last"
for g in 2 3 4; do
	if grep -q "\"gpu_flops[a-z_]*\.$g\"" "$T/full.jsonl"; then fail "GPU $g has a FLOPs estimate: $last"; fi
done
# the first GPU tick has no GPM values, so no estimate either
if head -n 1 "$T/full.jsonl" | grep -q gpu_flops; then fail "an estimate without GPM samples"; fi
grep -q 'GPU 3 (NVIDIA Foo 9000) is not in the GPU peak table' "$T/full.log" || fail "unknown model not said"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
if command -v promtool >/dev/null; then promtool check metrics <"$T/page.txt" || fail "promtool"; fi
L0='gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000",model="NVIDIA H100 80GB HBM3"'
L1='gpu="1",uuid="GPU-11111111-0000-0000-0000-000000000000",model="NVIDIA A100-SXM4-80GB"'
prom() { grep -F "$1{$2}" "$T/page.txt" | sed 's/.* //'; }
near "$(prom dynolog_gpu_flops_per_second "$L0")" "$want0" || fail "Prometheus GPU 0: $(grep flops "$T/page.txt")"
near "$(prom dynolog_gpu_flops_per_second "$L1")" "$want1" || fail "Prometheus GPU 1: $(grep flops "$T/page.txt")"
near "$(prom dynolog_gpu_flops_peak_ratio "$L1")" "$(awk -v p="$pct1" 'BEGIN { printf "%.17g", p / 100 }')" ||
	fail "Prometheus ratio GPU 1: $(grep flops "$T/page.txt")"
[ "$(grep -c '^dynolog_gpu_flops_per_second{' "$T/page.txt")" = 2 ] || fail "want 2 FLOPs series: $(grep flops "$T/page.txt")"
grep -q '^# TYPE dynolog_gpu_flops_per_second gauge$' "$T/page.txt" || fail "FLOPs family type"
# the split's own series, GPU 0 only (GPU 1's fake has no such GPM metrics: absent, not 0)
[ "$(prom dynolog_gpu_pipe_tensor_hmma_active_ratio "$L0")" = 0.45 ] || fail "HMMA series: $(grep tensor_ "$T/page.txt")"
[ "$(prom dynolog_gpu_pipe_tensor_dfma_active_ratio "$L0")" = 0.1 ] || fail "DFMA series: $(grep tensor_ "$T/page.txt")"
[ "$(prom dynolog_gpu_pipe_tensor_imma_active_ratio "$L0")" = 0.05 ] || fail "IMMA series: $(grep tensor_ "$T/page.txt")"
if grep -q "^dynolog_gpu_pipe_tensor_hmma_active_ratio{gpu=\"1\"" "$T/page.txt"; then fail "GPU 1 has an HMMA series"; fi

# ---- dcgm-exporter's names: the estimate (no DCGM field) keeps its dynolog name ----
run_daemon dcgm --prometheus_names=dcgm
wait_for grep -q '"gpu_flops.1"' "$T/dcgm.jsonl" || fail "dcgm: no gpu_flops.1 on the JSON log"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
near "$(prom dynolog_gpu_flops_per_second "$L0")" "$want0" || fail "dcgm: Prometheus GPU 0: $(grep flops "$T/page.txt")"
near "$(prom dynolog_gpu_flops_per_second "$L1")" "$want1" || fail "dcgm: Prometheus GPU 1: $(grep flops "$T/page.txt")"
grep -q "^DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",.*} 0.6$" "$T/page.txt" || fail "dcgm: tensor activity: $(grep TENSOR "$T/page.txt")"
[ "$(grep -c '^dynolog_gpu_flops_per_second{' "$T/page.txt")" = 2 ] || fail "dcgm: want 2 FLOPs series"

# ---- a bad table: said with file:line, the daemon runs on, no FLOPs series ----
printf '# a table\nH100 80GB HBM3\t132\ttensor_fp16\t989.4\t1830\tsrc\nH100 80GB HBM3\t132\tfp33\t1\t1980\tsrc\n' >"$T/bad.tsv"
run_daemon bad --gpu_peaks_file="$T/bad.tsv"
wait_for bash -c "[ \$(grep -c gpu_name '$T/bad.jsonl') -ge 3 ]" || fail "bad: fewer than 3 GPU ticks"
grep -q "GPU peak table: $T/bad.tsv:3: unknown pipe 'fp33'" "$T/bad.log" || fail "bad table not named with file:line"
if grep -q gpu_flops "$T/bad.jsonl"; then fail "bad: FLOPs without a table"; fi
grep -q '"tensorcore_active.0":0.6' "$T/bad.jsonl" || fail "bad: the other GPU metrics stopped"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/bad.txt"
if grep -q flops "$T/bad.txt"; then fail "bad: FLOPs series on Prometheus"; fi
grep -q '^dynolog_gpu_sm_clock_hertz{gpu="0"' "$T/bad.txt" || fail "bad: GPU series missing"
# a table that is not there: the same
run_daemon none --gpu_peaks_file="$T/no-such.tsv"
wait_for bash -c "[ \$(grep -c gpu_name '$T/none.jsonl') -ge 3 ]" || fail "none: fewer than 3 GPU ticks"
grep -q "GPU peak table: $T/no-such.tsv: No such file" "$T/none.log" || fail "missing table not said"
if grep -q gpu_flops "$T/none.jsonl"; then fail "none: FLOPs without a table"; fi
echo ok
