# Helpers shared by the gpusnoop integration tests (sourced, not run).
# A scratch dir $tmp, removed on exit with every process the test started
# (by pid, never by name), and the dance every test does: start a program
# that waits for a line on a FIFO (build/gpusnoop-leaky, or $SNOOP_CMD),
# run `dyno gpusnoop` on it, release the program once the probes are
# attached, wait for both.  A kernel that refuses BPF skips the test (77).
tmp=$(mktemp -d)
pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT

# wait_ready FILE: the program has printed "ready" (its libraries are
# mapped: the FIFO's open precedes its exec, so its pid is a shell until then)
wait_ready() { wait_for "$1" '^ready$'; }

# wait_for FILE PATTERN: up to 30 s for a line matching PATTERN (grep -E),
# else fail showing FILE
wait_for() {
	for _ in $(seq 600); do
		grep -Eqs "$2" "$1" && return 0
		sleep 0.05
	done
	echo "no '$2' in $1:"
	cat "$1"
	exit 1
}

# start_leaky NAME: build/gpusnoop-leaky holding after its work
# (LEAKY_HOLD=1), its stdin the FIFO $tmp/NAME.go written through fd 8
# (one line: work; another: exit), its stdout $tmp/NAME.out; ready; $leaky
start_leaky() {
	mkfifo "$tmp/$1.go"
	LEAKY_HOLD=1 "$BUILD/gpusnoop-leaky" <"$tmp/$1.go" >"$tmp/$1.out" &
	leaky=$!
	pids+=("$leaky")
	exec 8>"$tmp/$1.go"
	wait_ready "$tmp/$1.out"
}

# snoop_start OUT [GPUSNOOP ARGS...]: $prog waits on the FIFO (its stdout
# in $tmp/prog.out, where it says "ready"), $snooper is gpusnoop on it (stdout OUT, stderr
# $tmp/snoop.err), attached; fd 7 writes the program's stdin.
snoop_start() {
	local out=$1
	shift
	# gone first: a background job's redirection truncates them only once
	# it runs, and what the last run left must not be read as this one's
	rm -f "$tmp/go" "$tmp/prog.out" "$tmp/snoop.err"
	mkfifo "$tmp/go"
	# shellcheck disable=SC2086 # SNOOP_CMD is words: "env VAR=1 PROGRAM ARGS"
	${SNOOP_CMD:-$BUILD/gpusnoop-leaky} <"$tmp/go" >"$tmp/prog.out" &
	prog=$!
	prog_waited=
	pids+=("$prog")
	exec 7>"$tmp/go"
	wait_ready "$tmp/prog.out"
	# shellcheck disable=SC2086 # SNOOP_WRAP is words: "nice -n 19 taskset -c 0"
	${SNOOP_WRAP:-} "$DYNO" gpusnoop --pid "$prog" "$@" >"$out" 2>"$tmp/snoop.err" &
	snooper=$!
	pids+=("$snooper")
	for _ in $(seq 300); do
		grep -qs '^gpusnoop: watching' "$tmp/snoop.err" && break
		kill -0 "$snooper" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -qs '^gpusnoop: watching' "$tmp/snoop.err"; then
		rc=0
		wait "$snooper" || rc=$?
		if [ "$rc" -eq 4 ]; then
			echo "skip: BPF refused here ($(tail -n 1 "$tmp/snoop.err"))"
			exit 77
		fi
		cat "$tmp/snoop.err"
		echo "gpusnoop did not start (exit $rc)"
		exit 1
	fi
}

snoop_go() { echo go >&7; }

# the program's exit (once), for tests that stop gpusnoop meanwhile
snoop_wait_prog() {
	[ -n "$prog_waited" ] || wait "$prog"
	prog_waited=1
}

snoop_end() {
	exec 7>&-
	snoop_wait_prog
	wait "$snooper"
	rm -f "$tmp/go"
}

# snoop OUT [GPUSNOOP ARGS...]: the whole run
snoop() {
	snoop_start "$@"
	snoop_go
	snoop_end
}

# group FILE BYTES COUNT SPACE VIA FUNCTION SOURCE: a leak group's header,
# then the leaking function as its first frame, with file:line
group() {
	grep -A1 -x "$2 bytes in $3 allocations ($4) via $5" "$1" | tail -n 1 |
		grep -Eq "^    $6 \(.*$7:[0-9]+\)$" ||
		{ echo "no group: $*"; exit 1; }
}

# leaky_report FILE: the report (table) of a whole build/gpusnoop-leaky run
# with --events mem: every figure and leak group tests/gpusnoop/leaky.c plants
leaky_report() {
	grep -q '^seen: 28 allocations, 15 frees ' "$1"
	grep -q '^lost: 0 records dropped (ring buffer full), 0 calls untracked' "$1"
	grep -q '^never freed (memory): 3177042 bytes in 17 allocations ' "$1"
	grep -q '^never freed (handles): 2097152 bytes in 1 allocations ' "$1"
	grep -q '^never freed (mapped): 0 bytes in 0 allocations ' "$1"
	# each leak group: its header, then the leaking function as the first frame
	group "$1" 3145728 3 memory cudaMalloc leak_here tests/gpusnoop/leaky\.c
	group "$1" 2097152 1 handles cuMemCreate leak_handle tests/gpusnoop/leaky\.c
	group "$1" 12345 1 memory cuMemAlloc_v2 leak_driver tests/gpusnoop/leaky\.c
	group "$1" 10000 10 memory cudaMalloc leak_in_thread tests/gpusnoop/leaky\.c
	group "$1" 777 1 memory cudaMallocHost leak_host tests/gpusnoop/leaky\.c
	[ "$(grep -A1 -x '4096 bytes in 1 allocations (memory) via cudaMallocAsync' "$1" | grep -c '^    leak_async (')" -eq 2 ]
	# no other group
	[ "$(grep -c ' bytes in .* allocations (.*) via ' "$1")" -eq 7 ]
}

# skip_unless_bpf: exit 77 where the kernel refuses BPF, before anything
# else is started; leaves $sleeper, a process with no CUDA library mapped
skip_unless_bpf() {
	sleep 60 &
	sleeper=$!
	pids+=("$sleeper")
	local rc=0
	"$DYNO" gpusnoop --pid "$sleeper" --duration 0.01 --lib "$BUILD/libcudart-fake.so" >/dev/null 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 4 ]; then
		echo "skip: BPF refused here ($(tail -n 1 "$tmp/err"))"
		exit 77
	fi
}

# start_daemon NAME [FLAGS...]: dynolog on a free port; sets port_NAME
# (its log in $tmp/NAME.err)
start_daemon() {
	local name=$1
	shift
	# created here: the redirection below runs in the forked child, maybe
	# after the loop's first read
	: >"$tmp/$name.err"
	"$DYNOLOG" --port=0 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	pids+=($!)
	local p=
	for _ in $(seq 300); do
		p=$(sed -n 's/.*RPC server listening on .* port \([0-9]*\).*/\1/p' "$tmp/$name.err")
		[ -n "$p" ] && break
		sleep 0.1
	done
	[ -n "$p" ] || { echo "daemon $name did not start"; cat "$tmp/$name.err"; exit 1; }
	eval "port_$name=$p"
}
