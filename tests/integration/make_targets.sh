#!/usr/bin/env bash
# make_targets.sh - the Makefile's user-facing targets do what the README
# says.  `make run RUN_ARGS=...` adds to the safe defaults (the loopback
# allow-list, the IPC monitor) instead of replacing them, and builds dyno
# (the README's next command is `build/dyno status`): the command make
# would run is taken from `make -n` and run, with a few flags of the test's
# own added, and its log must show the allow-list and the IPC endpoint.
# `make install PREFIX=DIR` puts the programs, the systemd unit (pointing
# at PREFIX's program and config files), the config files (an existing one
# kept), the GPU peak table (found by the installed daemon) and the docs
# under DIR.
set -uo pipefail
cd "$(dirname "$0")/../.."
W=$(mktemp -d /tmp/dyno-make-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
MK=(make --no-print-directory O="$BUILD")
[[ "$BUILD" == */san ]] && MK+=(SAN=1)

# ---- make run ----
"${MK[@]}" -n run RUN_ARGS="--kernel_monitor_reporting_interval_s=1" >"$W/run.n" 2>&1 || bad "make -n run: $(cat "$W/run.n")"
grep -q -- "--no-print-directory $BUILD/dynolog $BUILD/dyno" "$W/run.n" || bad "make run does not build dyno: $(cat "$W/run.n")"
line=$(grep '^exec ' "$W/run.n")
for want in --enable_ipc_monitor --rpc_allow=127.0.0.0/8,::1/128 --kernel_monitor_reporting_interval_s=1; do
	[[ " $line " == *" $want "* ]] || bad "make run RUN_ARGS=... lacks $want: $line"
done
# the last --kernel_monitor_reporting_interval_s counts: RUN_ARGS's
[[ "$line" == *"--kernel_monitor_reporting_interval_s=1"* && "${line##*interval_s=5}" == *"interval_s=1"* ]] ||
	bad "RUN_ARGS's interval is not the last one: $line"
# run it: a fixture /proc, a free port, an IPC name of its own, two ticks
R=$W/root
cp -r tests/data/procfs/basic/t0 "$R"
# shellcheck disable=SC2086 # the words make would run
${line#exec } --procfs_root="$R/proc" --sysfs_root="$R/sys" --port=0 --ipc_endpoint_name="dyno-make-$$" \
	--ipc_bpf_filter=false --exit_after_ticks=2 >"$W/run.out" 2>"$W/run.log" || bad "make run's command failed: $(tail -n 5 "$W/run.log")"
grep -q 'allow-list on' "$W/run.log" || bad "make run: no RPC allow-list: $(grep RPC "$W/run.log")"
grep -q "IPC endpoint listening at @dyno-make-$$@" "$W/run.log" || bad "make run: no IPC monitor: $(cat "$W/run.log")"
grep -q 'kernel monitor every 1s' "$W/run.log" || bad "make run: RUN_ARGS's interval not used: $(cat "$W/run.log")"

# ---- make install ----
P=$W/prefix
"${MK[@]}" -s install PREFIX="$P" >"$W/inst.out" 2>&1 || bad "make install: $(tail -n 5 "$W/inst.out")"
for f in bin/dynolog bin/dyno bin/gpusnoop; do [ -x "$P/$f" ] || bad "make install: no $f"; done
for f in share/dynolite/gpu-peaks.tsv share/doc/dynolite/README.md share/doc/dynolite/daemon.md \
	lib/systemd/system/dynolog.service etc/dynolog.gflags etc/dynolog.json; do
	[ -s "$P/$f" ] || bad "make install: no $f"
done
U=$P/lib/systemd/system/dynolog.service
grep -qx "ExecStart=$P/bin/dynolog --flagfile=$P/etc/dynolog.gflags --config=$P/etc/dynolog.json" "$U" ||
	bad "unit's ExecStart: $(grep ExecStart "$U")"
"$P/bin/dyno" --version | grep -q '^dyno ' || bad "installed dyno does not run"
# the unit's command runs (its flags and config files), for two ticks
echo "--exit_after_ticks=2" >>"$P/etc/dynolog.gflags"
cmd=$(sed -n 's/^ExecStart=//p' "$U")
# shellcheck disable=SC2086
$cmd --port=0 --kernel_monitor_reporting_interval_s=1 --procfs_root="$R/proc" --sysfs_root="$R/sys" \
	>/dev/null 2>"$W/unit.log" || bad "the unit's command failed: $(tail -n 5 "$W/unit.log")"
# the installed daemon finds the installed GPU peak table (a fake GPU)
if [ -f "$BUILD/libfake-nvml.so" ]; then
	"$P/bin/dynolog" --port=0 --kernel_monitor_reporting_interval_s=1 --enable_gpu_monitor \
		--nvml_library="$PWD/$BUILD/libfake-nvml.so" --procfs_root="$R/proc" --sysfs_root="$R/sys" \
		--exit_after_ticks=1 >/dev/null 2>"$W/gpu.log"
	grep -q "GPU peak table: [0-9]* models from $P/bin/../share/dynolite/gpu-peaks.tsv" "$W/gpu.log" ||
		bad "the installed daemon did not find its GPU peak table: $(grep -i peak "$W/gpu.log")"
fi
# a second install keeps the administrator's config
"${MK[@]}" -s install PREFIX="$P" >/dev/null 2>&1 || bad "second make install"
grep -q -- "--exit_after_ticks=2" "$P/etc/dynolog.gflags" || bad "make install overwrote an edited flag file"
exit $fail
