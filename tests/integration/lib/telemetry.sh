# Helpers shared by the telemetry integration tests (sourced, not run).
# Each test gets a scratch dir $T, removed on exit with every process the
# test started (by pid, never by name).
T=$(mktemp -d)
PIDS=()
cleanup() {
	local rc=$?
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT

# A TCP port nothing answers on right now (bash's /dev/tcp connect fails).
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}

# wait_for CMD...: retry for up to 20 s.
wait_for() {
	for _ in $(seq 200); do "$@" && return 0; sleep 0.1; done
	return 1
}

# The port dynolog printed for its Prometheus endpoint (started with port 0).
prom_port_from_log() {
	sed -n 's|.*serving Prometheus metrics on http://[^ ]*:\([0-9]*\)/metrics.*|\1|p' "$1" | tail -n 1
}
