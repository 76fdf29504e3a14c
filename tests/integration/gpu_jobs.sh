#!/usr/bin/env bash
# Per-job GPU accounting end to end (collect/gpu_jobs.c): the real daemon,
# our fake NVML listing processes on 2 GPUs (a third cannot list them), and
# a fixture /proc (--procfs_root) where pid 100 is in SLURM job 4242 by its
# environment, pid 101 in the same job by its cgroup (v1; no environ: the
# unreadable case), pid 200 in a Kubernetes pod (systemd cgroup driver) and
# pid 300 in a plain cgroup.  GPU-seconds and energy per job and per user on
# Prometheus (job_id/kind/user labels), in the JSON log and from getMetrics
# equal the arithmetic below; with no process list, nothing (never 0).
set -euo pipefail
. "$(dirname "$0")/lib/telemetry.sh"
LIB=$PWD/$BUILD/libfake-nvml.so
[ -f "$LIB" ] || { echo "needs $LIB (make)"; exit 1; }
fail() { echo "FAIL: $*"; tail -n 20 "$T"/*.log 2>/dev/null; exit 1; }

P=$T/proc
mkproc() { # pid uid cgroup-text [environ (printf format)]
	mkdir -p "$P/$1"
	echo "$1 (python) S 1 $1 $1 0 -1 4194560 100 0 0 0 50 10 0 0 20 0 4 0 9000$1 1000000 250" >"$P/$1/stat"
	printf 'Name:\tpython\nPid:\t%s\nUid:\t%s\t%s\t%s\t%s\nGid:\t0\t0\t0\t0\n' "$1" "$2" "$2" "$2" "$2" >"$P/$1/status"
	printf '%s\n' "$3" >"$P/$1/cgroup"
	if [ $# -ge 4 ]; then printf "$4" >"$P/$1/environ"; fi
}
POD=1234abcd-5678-90ef-1234-567890abcdef
CTR=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkproc 100 1000 '0::/user.slice/user-1000.slice/session-1.scope' 'PATH=/bin\0SLURM_JOB_ID=4242\0HOME=/root\0'
mkproc 101 1000 $'4:memory:/slurm/uid_1000/job_4242/step_0\n1:name=systemd:/user.slice\n0::/'
mkproc 200 0 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD//-/_}.slice/cri-containerd-$CTR.scope" ''
mkproc 300 1001 '0::/user.slice/user-1001.slice/session-7.scope' 'PATH=/bin\0'

# Ticks 1-4 list the processes, later ones none.  Tick 1 sets the baselines
# (listing and energy); ticks 2-4 are charged 1 s each:
#   GPU 0: jobs 4242 and the pod, 0.5 s each; energy 2000+3000+4000 mJ
#   GPU 1: jobs 4242 and the session, 0.5 s each; energy 3 x 1000 mJ
L0='100:1000+200:2000'
L1='101:500+300'
cat >"$T/script" <<S
gpus 3
uuid 0 GPU-0
uuid 1 GPU-1
name 0 NVIDIA H100 80GB HBM3
energy 0 1000,3000,6000,10000
energy 1 0,1000,2000,3000
procs 0 $L0,$L0,$L0,$L0,-
procs 1 $L1,$L1,$L1,$L1,-
procs 2 E3
S

run_daemon() { # name script flags...
	local name=$1 script=$2
	shift 2
	FAKE_NVML_SCRIPT=$script "$DYNOLOG" --port=0 --use_prometheus --prometheus_port=0 --procfs_root="$P" \
		--kernel_monitor_reporting_interval_s=60 --enable_gpu_monitor --dcgm_reporting_interval_s=1 \
		--nvml_library="$LIB" --json_format=jsonl --json_log_file="$T/$name.jsonl" "$@" 2>"$T/$name.log" &
	PIDS+=($!)
	wait_for grep -q 'serving Prometheus' "$T/$name.log" || fail "$name: no Prometheus"
	PORT=$(prom_port_from_log "$T/$name.log")
	RPC=$(sed -n 's/.*RPC server listening on .* port \([0-9][0-9]*\).*/\1/p' "$T/$name.log" | head -n 1)
}

run_daemon jobs "$T/script"
# six GPU ticks: everything charged has been published
wait_for bash -c "[ \$(grep -c gpu_uuid '$T/jobs.jsonl') -ge 6 ]" || fail "fewer than 6 GPU ticks"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/page.txt"
if command -v promtool >/dev/null; then promtool check metrics <"$T/page.txt" || fail "promtool"; fi
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }'; }
check() { # family labels want
	local line
	line=$(grep -F "$1{$2}" "$T/page.txt" || true)
	[ -n "$line" ] || fail "Prometheus lacks $1{$2}: $(grep -F "$1" "$T/page.txt")"
	near "${line##* }" "$3" || fail "Prometheus: $1{$2} is ${line##* }, want $3"
}
JS='job_id="4242",kind="slurm",user="1000"'
JK="job_id=\"$POD\",kind=\"kubernetes\",user=\"0\",container=\"$CTR\""
JC='job_id="/user.slice/user-1001.slice/session-7.scope",kind="cgroup",user="1001"'
check dynolog_gpu_job_seconds_total "$JS" 3
check dynolog_gpu_job_seconds_total "$JK" 1.5
check dynolog_gpu_job_seconds_total "$JC" 1.5
check dynolog_gpu_job_energy_joules_total "$JS" 6
check dynolog_gpu_job_energy_joules_total "$JK" 4.5
check dynolog_gpu_job_energy_joules_total "$JC" 1.5
check dynolog_gpu_user_seconds_total 'user="1000"' 3
check dynolog_gpu_user_seconds_total 'user="0"' 1.5
check dynolog_gpu_user_seconds_total 'user="1001"' 1.5
check dynolog_gpu_user_energy_joules_total 'user="1000"' 6
check dynolog_gpu_user_energy_joules_total 'user="0"' 4.5
check dynolog_gpu_user_energy_joules_total 'user="1001"' 1.5
check dynolog_gpu_processes 'gpu="0",uuid="GPU-0",model="NVIDIA H100 80GB HBM3"' 0
grep -q '^# TYPE dynolog_gpu_job_seconds_total counter$' "$T/page.txt" || fail "GPU-seconds is not a counter"
[ "$(grep -c '^dynolog_gpu_job_seconds_total{' "$T/page.txt")" = 3 ] || fail "want 3 jobs: $(grep job_seconds "$T/page.txt")"
# GPU 2 cannot list its processes: absent, never 0; no job is "unknown"
if grep -q 'gpu_processes{gpu="2"' "$T/page.txt" || grep -q '"gpu_processes.2"' "$T/jobs.jsonl"; then
	fail "GPU 2's process count published though NVML could not list it"
fi
if grep -q 'unknown' "$T/page.txt"; then fail "a process without a job: $(grep unknown "$T/page.txt")"; fi

# the JSON log, tick by tick: tick 1 charges nothing, ticks 2-4 their share
grep gpu_uuid "$T/jobs.jsonl" >"$T/gpu.jsonl"
t1=$(sed -n 1p "$T/gpu.jsonl")
for kv in '"gpu_processes.0":2' '"gpu_processes.1":2' '"gpu_process.0:100":"compute"' \
	'"gpu_process_memory_bytes.0:200":2000' '"gpu_job_seconds.4242":0' '"gpu_job_memory_bytes.4242":1500' \
	'"gpu_job_user.4242":"1000"' '"gpu_job_kind.4242":"slurm"'; do
	grep -qF "$kv" <<<"$t1" || fail "tick 1 lacks $kv: $t1"
done
if grep -qF '"gpu_process_memory_bytes.1:300"' <<<"$t1"; then fail "pid 300's memory is not available, yet published"; fi
if grep -qF 'gpu_job_energy_mj' <<<"$t1"; then fail "tick 1 has energy (no baseline yet)"; fi
for tick in 2:1500 3:2000 4:2500; do
	l=$(sed -n "${tick%:*}p" "$T/gpu.jsonl")
	for kv in '"gpu_job_seconds.4242":1' "\"gpu_job_seconds.$POD\":0.5" "\"gpu_job_energy_mj.4242\":${tick#*:}" \
		'"gpu_user_seconds.1001":0.5'; do
		grep -qF "$kv" <<<"$l" || fail "tick ${tick%:*} lacks $kv: $l"
	done
done
t6=$(sed -n 6p "$T/gpu.jsonl")
for kv in '"gpu_processes.0":0' '"gpu_job_seconds.4242":0' '"gpu_job_energy_mj.4242":0'; do
	grep -qF "$kv" <<<"$t6" || fail "tick 6 lacks $kv: $t6"
done
if grep -qF 'gpu_job_memory_bytes' <<<"$t6"; then fail "tick 6: memory of jobs with no process"; fi
# getMetrics answers the same per-tick values
"$DYNO" metrics --port="$RPC" --names='gpu_job_seconds.4242' --json >"$T/rpc.json" || fail "getMetrics"
grep -q 'gpu_job_seconds.4242' "$T/rpc.json" || fail "getMetrics lacks gpu_job_seconds.4242: $(head -c 400 "$T/rpc.json")"
# [[time_ms, value], ...]: the values sum to the Prometheus total
sum=$(grep -o '"gpu_job_seconds.4242":\[.*\]\]' "$T/rpc.json" | grep -o ',[-0-9.e+]*\]' | tr -d ',]' |
	awk '{ s += $1 } END { print s + 0 }')
near "$sum" 3 || fail "getMetrics: the increments of job 4242 sum to $sum, want 3: $(cat "$T/rpc.json")"

# ---- the warehouse's GPU hours from the same answers (docs/fleet.md) ----
"$DYNO" metrics --port="$RPC" --names='gpu_job_*,gpu_user_*' --json >"$T/scrape.json" || fail "scrape"
W=$T/w.db
for i in 1 2; do # the second time adds nothing
	"$DYNO" warehouse gpu-hours --ingest "$T/scrape.json" --host n1 --db "$W" >"$T/gh.out" || fail "gpu-hours --ingest"
done
"$DYNO" warehouse gpu-hours --label 4242=llama --db "$W" || fail "gpu-hours --label"
gh() { # by key column: the value of column col for key
	"$DYNO" warehouse gpu-hours --by "$1" --format csv --db "$W" | awk -F, -v k="$2" -v c="$3" '$1 == k { print $c }'
}
near "$(gh job 4242 2)" 0.000833333 || fail "job 4242: $(gh job 4242 2) GPU hours, want 3 s"
near "$(gh job "$POD" 2)" 0.000416667 || fail "pod: $(gh job "$POD" 2) GPU hours, want 1.5 s"
near "$(gh job 4242 3)" 1.66667e-06 || fail "job 4242: $(gh job 4242 3) kWh, want 6000 mJ"
near "$(gh user 1000 2)" 0.000833333 || fail "uid 1000: $(gh user 1000 2) GPU hours"
near "$(gh user 1001 2)" 0.000416667 || fail "uid 1001: $(gh user 1001 2) GPU hours"
near "$(gh model llama 2)" 0.000833333 || fail "model llama: $(gh model llama 2)"
near "$(gh model '(no label)' 2)" 0.000833333 || fail "unlabelled: $(gh model '(no label)' 2)"
[ "$(gh job 4242 5)" = 1 ] || fail "job 4242 on $(gh job 4242 5) hosts"
# a damaged scrape: the file and line, nothing stored
printf '{"metrics":{"gpu_job_seconds.9":[[1,-1]]}}\n' >"$T/bad.json"
if "$DYNO" warehouse gpu-hours --ingest "$T/bad.json" --db "$W" 2>"$T/bad.err"; then fail "a negative sample was taken"; fi
grep -q "bad.json: line 1: gpu_job_seconds.9: sample 1 is not" "$T/bad.err" || fail "bad scrape: $(cat "$T/bad.err")"
[ -z "$(gh job 9 2)" ] || fail "job 9 stored from a refused file"

# ---- no process list anywhere (the call is not supported): nothing, never 0 ----
grep -v '^procs' "$T/script" >"$T/script-none"
run_daemon none "$T/script-none"
wait_for bash -c "[ \$(grep -c gpu_uuid '$T/none.jsonl') -ge 3 ]" || fail "none: fewer than 3 GPU ticks"
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/none.txt"
if grep -Eq 'gpu_job|gpu_user|gpu_process' "$T/none.txt" "$T/none.jsonl"; then
	fail "accounting published without process lists: $(grep -E 'gpu_job|gpu_user|gpu_process' "$T/none.txt" | head)"
fi
grep -q 'energy_joules_total{gpu="0"' "$T/none.txt" || fail "none: the GPU metrics themselves are gone"
echo ok
