#!/usr/bin/env bash
# dynolog starts, logs one JSON line of real host metrics per interval, and
# exits 0 on SIGTERM and on SIGINT; bad flags exit 2 with a message.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${pid:-}" ] && kill -9 $pid 2>/dev/null; true' EXIT

"$DYNOLOG" --help >"$tmp/help"
grep -q -- '--kernel_monitor_reporting_interval_s' "$tmp/help"
grep -q -- '--flagfile=FILE' "$tmp/help"   # the parser takes it: the list names it

# bad input at the boundary: clear message, exit 2
if "$DYNOLOG" --kernel_monitor_reporting_interval_s=0 2>"$tmp/err"; then exit 1; fi
grep -q 'out of range' "$tmp/err"
if "$DYNOLOG" --no_such_flag 2>"$tmp/err"; then exit 1; fi
grep -q "unknown option '--no_such_flag'" "$tmp/err"

for sig in TERM INT; do
	"$DYNOLOG" --port=0 --kernel_monitor_reporting_interval_s=1 >"$tmp/out" 2>"$tmp/log" &
	pid=$!
	# wait for the second line: the first has no CPU deltas yet
	for _ in $(seq 100); do [ "$(wc -l <"$tmp/out")" -ge 2 ] && break; sleep 0.1; done
	kill -$sig $pid
	rc=0; wait $pid || rc=$?
	pid=
	[ $rc -eq 0 ] || { echo "exit status $rc after SIG$sig"; cat "$tmp/log"; exit 1; }
	grep -q 'shutting down' "$tmp/log"
	line=$(sed -n 2p "$tmp/out")
	case "$line" in "time = "*" data = {"*) ;; *) echo "bad line: $line"; exit 1;; esac
	# real values from /proc: uptime is a positive integer, cpu_util a "%.3f" string
	echo "$line" | grep -Eq '"uptime":[1-9][0-9]*'
	echo "$line" | grep -Eq '"cpu_util":"[0-9]+\.[0-9]{3}"'
	echo "$line" | grep -Eq '"mem_total_bytes":[1-9][0-9]*'
done

# the JSON part is valid JSON for our own reader
sed -n 2p "$tmp/out" | sed 's/^time = [^ ]* data = //' >"$tmp/data.json"
"$DYNO" json -q "$tmp/data.json"

# procfs and sysfs roots without the files: metrics are absent, never zero
mkdir -p "$tmp/emptyproc"
"$DYNOLOG" --port=0 --procfs_root="$tmp/emptyproc" --sysfs_root="$tmp/emptyproc" --kernel_monitor_reporting_interval_s=1 \
	--exit_after_ticks=2 >"$tmp/out" 2>"$tmp/log"
[ ! -s "$tmp/out" ] || { echo "published values without a source:"; cat "$tmp/out"; exit 1; }
grep -q 'uptime unavailable' "$tmp/log"
[ "$(grep -c 'uptime unavailable' "$tmp/log")" -eq 1 ] # said once, not every tick

# --version: "dynolog <version>" on stdout, exit 0, like "dyno --version"
"$DYNOLOG" --version >"$tmp/ver"
grep -Eq '^dynolog [0-9]+\.[0-9]+\.[0-9]+' "$tmp/ver" || { echo "bad --version: $(cat "$tmp/ver")"; exit 1; }
[ "$(wc -l <"$tmp/ver")" -eq 1 ]
